"""One PPO update step (Schulman et al., 2017, the clipped surrogate objective, as CleanRL's
``ppo.py`` computes it) on a minibatch of 2048 samples, fp32 (fifteenth hold-out). The
actor-critic: a shared trunk Linear 64->256, Tanh, Linear 256->256, Tanh, then an actor head
Linear 256->18 (the action logits) and a critic head Linear 256->1 (the value). The loss:
``log_softmax`` of the logits, the log-probabilities of the taken actions (``gather``), the
ratio to the old ones (``exp`` of the difference), the advantages normalized over the minibatch
(mean and standard deviation on the device), the clipped objective -min(ratio A, clip(ratio,
0.8, 1.2) A) averaged, the value loss 0.5 mean (returns - value)^2, the entropy of the policy
(from the log-probabilities) averaged, and loss = policy loss + 0.5 value loss - 0.01 entropy.
Then backward and ``torch.optim.Adam`` (lr 3e-4, eps 1e-5, ``foreach=True``: multi-tensor
kernels over the 8 parameter tensors) with ``capturable=True``, which keeps the step counts on
the device and computes the bias corrections with tensor ops, so the update is graph-safe;
torch allows capturable=True only for GPU parameters, so a CPU (smoke) run uses
capturable=False.

Gradients are zeroed in place (``optimizer.zero_grad(set_to_none=False)``), so they keep their
storage from step to step. Adam's state is allocated at build by one optimizer step over zero
gradients; every step first restores the parameters, both moments (small random values) and the
step counts (10) from a snapshot taken at build (four foreach copies, as the eleventh
hold-out's training step restores its SGD state), so a step depends only on its inputs and
replayed losses compare with eager ones. Inputs (device tensors): the observations (2048 x 64),
the actions taken (2048, int64), their log-probabilities under the old policy (2048; those of
the initial policy plus a little noise, so some ratios are clipped), the advantages and the
returns (2048 each). Returns the loss and its three parts (policy loss, value loss, entropy) as
one tensor of 4.

    traceinspect profile ppo_update_b2048.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn

ACTIONS, CLIP, VALUE_COEF, ENTROPY_COEF, LR = 18, 0.2, 0.5, 0.01, 3e-4


class ActorCritic(nn.Module):
    def __init__(self, obs: int, hidden: int, actions: int) -> None:
        super().__init__()
        self.trunk = nn.Sequential(
            nn.Linear(obs, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh()
        )
        self.actor, self.critic = nn.Linear(hidden, actions), nn.Linear(hidden, 1)

    def forward(self, obs: Tensor) -> tuple[Tensor, Tensor]:
        h = self.trunk(obs)
        return self.actor(h), self.critic(h).squeeze(-1)


def build(device: torch.device, smoke: bool) -> Built:
    batch, obs_dim, hidden = (16, 8, 32) if smoke else (2048, 64, 256)
    model = ActorCritic(obs_dim, hidden, ACTIONS).to(device)
    model.train()
    params = list(model.parameters())
    optimizer = torch.optim.Adam(
        params, lr=LR, eps=1e-5, foreach=True, capturable=device.type == "cuda"
    )
    for p in params:
        p.grad = torch.zeros_like(p)
    optimizer.step()  # allocates Adam's state (zero moments, step counts at 1)
    states = [optimizer.state[p] for p in params]
    exp_avgs = [s["exp_avg"] for s in states]
    exp_avg_sqs = [s["exp_avg_sq"] for s in states]
    steps = [s["step"] for s in states]  # 0-d fp32, on the device when capturable
    start = [p.detach().clone() for p in params]
    exp_avgs0 = [torch.randn_like(m) * 1e-3 for m in exp_avgs]
    exp_avg_sqs0 = [(torch.rand_like(v) + 0.5) * 1e-6 for v in exp_avg_sqs]  # ~ exp_avg^2
    steps0 = [torch.full_like(t, 10.0) for t in steps]  # as if 10 updates were done

    def step(
        obs: Tensor, actions: Tensor, old_logp: Tensor, adv: Tensor, returns: Tensor
    ) -> Tensor:
        with torch.no_grad():
            torch._foreach_copy_(params, start)
            torch._foreach_copy_(exp_avgs, exp_avgs0)
            torch._foreach_copy_(exp_avg_sqs, exp_avg_sqs0)
            torch._foreach_copy_(steps, steps0)
        optimizer.zero_grad(set_to_none=False)
        logits, value = model(obs)
        logp_all = F.log_softmax(logits, dim=-1)
        logp = logp_all.gather(1, actions[:, None]).squeeze(1)
        ratio = torch.exp(logp - old_logp)
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        surrogate = torch.min(ratio * adv, torch.clamp(ratio, 1 - CLIP, 1 + CLIP) * adv)
        policy_loss = -surrogate.mean()
        value_loss = 0.5 * (returns - value).pow(2).mean()
        entropy = -(logp_all.exp() * logp_all).sum(-1).mean()
        loss = policy_loss + VALUE_COEF * value_loss - ENTROPY_COEF * entropy
        loss.backward()
        optimizer.step()
        return torch.stack((loss, policy_loss, value_loss, entropy)).detach()

    def make() -> tuple[Tensor, ...]:
        obs = torch.randn(batch, obs_dim, device=device)
        actions = torch.randint(ACTIONS, (batch,), device=device)
        with torch.no_grad():
            logp = F.log_softmax(model(obs)[0], dim=-1).gather(1, actions[:, None]).squeeze(1)
        old_logp = logp + 0.1 * torch.randn(batch, device=device)
        adv = torch.randn(batch, device=device)
        returns = torch.randn(batch, device=device)
        return obs, actions, old_logp, adv, returns

    inputs = [make() for _ in range(2)]
    total = sum(p.numel() for p in params)
    description = (
        f"PPO update, actor-critic MLP {obs_dim}-{hidden}-{hidden} -> {ACTIONS} logits + value, "
        f"clip {CLIP}, capturable Adam (foreach) over {len(params)} tensors ({total} values), "
        f"batch {batch}"
    )
    return Built(
        step, inputs, description, [model, optimizer, start, exp_avgs0, exp_avg_sqs0, steps0]
    )


if __name__ == "__main__":
    main(build, __doc__)
