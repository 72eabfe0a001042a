"""One PPO update step (Schulman et al., 2017) of an actor-critic with a hybrid action space,
its policy written with ``torch.distributions``, on a minibatch of 2048 samples, fp32
(fifty-first hold-out: a training step whose loss is built from distribution objects, some 200
small kernels forward, backward, gradient clipping and optimizer together). The model: a
shared trunk ``Linear(64, 256)``, Tanh, ``Linear(256, 256)``, Tanh; a Gaussian head over 6
continuous action dimensions (``Linear(256, 6)`` for the mean, a state-independent log-std
parameter of 6, expanded over the batch) as ``torch.distributions.Normal(mean, std,
validate_args=False)``; a discrete head of 5 actions (``Linear(256, 5)``) as
``torch.distributions.Categorical(logits=..., validate_args=False)``; a critic ``Linear(256,
1)``. The loss: the log-probability of the stored actions (the Normal's summed over its 6
dimensions plus the Categorical's), the ratio exp(log p - old log p) to the stored old
log-probabilities, the advantages normalized over the minibatch (mean and standard deviation on
the device), the clipped surrogate -min(ratio A, clip(ratio, 0.8, 1.2) A) averaged, the clipped
value loss 0.5 mean max((v - R)^2, (v_old + clip(v - v_old, -0.2, 0.2) - R)^2), the entropy (the
Normal's summed plus the Categorical's) averaged, and loss = policy loss + 0.5 value loss - 0.01
entropy. Then ``loss.backward()``, ``torch.nn.utils.clip_grad_norm_(params, 0.5,
foreach=True)`` (the total norm stays on the device and the gradients are multiplied by min(1,
0.5 / (norm + 1e-6)) with no host sync, as torch 2.x does without error_if_nonfinite) and
``torch.optim.Adam`` (lr 3e-4, eps 1e-5, ``foreach=True``, ``capturable=True`` on a GPU so the
step counts live there and the step can be graphed; torch allows capturable only for GPU
parameters, so a CPU smoke run uses capturable=False). No distribution validates its arguments
(validation would read tensors on the host).

The optimizer state is allocated at build by one warm step on zero gradients, then the
parameters and the Adam state (exp_avg, exp_avg_sq, step) are snapshotted; every step first
restores them (foreach copies) and zeroes the gradients in place
(``zero_grad(set_to_none=False)``, so they keep their storage from step to step), so a step
depends only on its inputs and replayed losses compare with eager ones. One stream. Inputs
(device tensors): the observations (2048, 64), the continuous actions (2048, 6), the discrete
actions (2048,) int64, their old log-probabilities (2048; those of the initial policy plus a
little noise, so some ratios are clipped), the advantages, the returns and the old values
(2048 each). Returns the loss, its three parts (policy loss, value loss, entropy) and the
gradient norm before clipping as one tensor of 5.

    traceinspect profile ppo_distributions_loss_b2048.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn
from torch.distributions import Categorical, Normal

CONT, DISC = 6, 5  # continuous action dimensions, discrete actions
CLIP, VALUE_COEF, ENTROPY_COEF, MAX_NORM, LR = 0.2, 0.5, 0.01, 0.5, 3e-4


class HybridActorCritic(nn.Module):
    def __init__(self, obs: int, hidden: int) -> None:
        super().__init__()
        self.trunk = nn.Sequential(
            nn.Linear(obs, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh()
        )
        self.mean = nn.Linear(hidden, CONT)
        self.log_std = nn.Parameter(torch.full((CONT,), -0.5))
        self.logits = nn.Linear(hidden, DISC)
        self.critic = nn.Linear(hidden, 1)

    def forward(self, obs: Tensor) -> tuple[Normal, Categorical, Tensor]:
        h = self.trunk(obs)
        mean = self.mean(h)
        normal = Normal(mean, self.log_std.exp().expand_as(mean), validate_args=False)
        categorical = Categorical(logits=self.logits(h), validate_args=False)
        return normal, categorical, self.critic(h).squeeze(-1)


def log_prob(normal: Normal, categorical: Categorical, cont: Tensor, disc: Tensor) -> Tensor:
    return normal.log_prob(cont).sum(-1) + categorical.log_prob(disc)


def build(device: torch.device, smoke: bool) -> Built:
    batch, obs_dim, hidden = (16, 8, 32) if smoke else (2048, 64, 256)
    model = HybridActorCritic(obs_dim, hidden).to(device).train()
    params = list(model.parameters())
    capturable = device.type == "cuda"
    optimizer = torch.optim.Adam(params, lr=LR, eps=1e-5, foreach=True, capturable=capturable)
    for p in params:
        p.grad = torch.zeros_like(p)
    optimizer.step()  # allocates exp_avg, exp_avg_sq and the step counts
    state = [optimizer.state[p][key] for key in ("exp_avg", "exp_avg_sq", "step") for p in params]
    live = params + state
    snapshot = [t.detach().clone() for t in live]

    def step(
        obs: Tensor,
        cont: Tensor,
        disc: Tensor,
        old_logp: Tensor,
        adv: Tensor,
        returns: Tensor,
        old_values: Tensor,
    ) -> Tensor:
        with torch.no_grad():
            torch._foreach_copy_(live, snapshot)
        optimizer.zero_grad(set_to_none=False)
        normal, categorical, value = model(obs)
        logp = log_prob(normal, categorical, cont, disc)
        entropy = (normal.entropy().sum(-1) + categorical.entropy()).mean()
        ratio = torch.exp(logp - old_logp)
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        surrogate = torch.min(ratio * adv, torch.clamp(ratio, 1 - CLIP, 1 + CLIP) * adv)
        policy_loss = -surrogate.mean()
        value_clipped = old_values + torch.clamp(value - old_values, -CLIP, CLIP)
        value_loss = (
            0.5 * torch.max((value - returns).square(), (value_clipped - returns).square()).mean()
        )
        loss = policy_loss + VALUE_COEF * value_loss - ENTROPY_COEF * entropy
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(params, MAX_NORM, foreach=True)
        optimizer.step()
        return torch.stack((loss, policy_loss, value_loss, entropy, grad_norm)).detach()

    def make() -> tuple[Tensor, ...]:
        obs = torch.randn(batch, obs_dim, device=device)
        with torch.no_grad():
            normal, categorical, value = model(obs)
            cont = normal.sample()
            disc = categorical.sample()
            old_logp = log_prob(normal, categorical, cont, disc)
        old_logp = old_logp + 0.1 * torch.randn(batch, device=device)
        adv = torch.randn(batch, device=device)
        returns = value + torch.randn(batch, device=device)
        old_values = value + 0.1 * torch.randn(batch, device=device)
        return obs, cont, disc, old_logp, adv, returns, old_values

    inputs = [make() for _ in range(2)]
    total = sum(p.numel() for p in params)
    description = (
        f"PPO update, hybrid actions (Normal {CONT}-d + Categorical {DISC}) via "
        f"torch.distributions, MLP {obs_dim}-{hidden}-{hidden}, clipped value loss, "
        f"clip_grad_norm_ (foreach) + Adam (foreach{', capturable' if capturable else ''}) "
        f"over {len(params)} tensors ({total} values), batch {batch}"
    )
    return Built(step, inputs, description, [model, optimizer, snapshot])


if __name__ == "__main__":
    main(build, __doc__)
