"""One Soft Actor-Critic update (Haarnoja et al., 2018, as CleanRL's ``sac_continuous_action.py``
computes it) on a replay batch of 256 transitions (thirty-fourth hold-out): 17-value
observations, 6-value actions, fp32. Twin Q critics (MLP 17 + 6 -> 256 -> 256 -> 1, ReLU)
and their two target copies; a Gaussian actor (MLP 17 -> 256 -> 256, ReLU, then a mean head
and a log-std head of 6, the log-std squashed by tanh into [-5, 2]) whose sample is
reparameterized (mean + std * noise) and squashed by tanh, its log-probability the Gaussian
one minus sum log(1 - tanh^2 + 1e-6); a learnable log alpha (a 0-d parameter, alpha 0.2 at
build) with target entropy -6.

The step: (1) with no gradients, the actor samples next actions for the next observations,
the target critics value them and the soft TD target is r + 0.99 (1 - done) (min of the two
target Qs - alpha log pi); the critic loss is the sum of both critics' MSE to it, backward,
and ``torch.optim.Adam`` (lr 1e-3) steps both critics. (2) The actor samples actions for
the observations, the updated critics (their parameters frozen with ``requires_grad_(False)``
meanwhile, as Spinning Up does) score them, the actor loss is mean(alpha log pi - min Q),
backward, and Adam (lr 3e-4) steps the actor. (3) The alpha loss -mean(log alpha (log pi +
target entropy)) on the detached log pi, backward, and Adam (lr 1e-3) steps log alpha.
(4) The Polyak update of the target critics, ``torch._foreach_lerp_(targets, critics,
0.005)``. All three Adams run with ``foreach=True`` and ``capturable=True`` on a GPU (step
counts on the device, bias corrections as tensor ops, so the step can be graphed; torch
allows capturable only for GPU parameters, so a CPU smoke run uses capturable=False). Their
state is allocated at build by one step over zero gradients.

The Gaussian noise of both samples is drawn at build and passed in as inputs, so the step
draws no random numbers. Every step first restores the critics, the target critics, the
actor, log alpha and the three Adams' state (small random moments, step counts 10) from
snapshots taken at build (foreach copies) and zeroes the gradients in place
(``zero_grad(set_to_none=False)``), so a step depends only on its inputs and replayed
losses compare with eager ones. Inputs: observations (256, 17), actions (256, 6), rewards
(256,), next observations (256, 17), done flags (256,) as 0/1 floats, noise for the next
actions and noise for the actor's actions (256, 6 each). Returns the critic loss, the actor
loss, the alpha loss and alpha (the value the losses used) as one tensor of 4.

    traceinspect profile sac_update_b256.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn

GAMMA, TAU, Q_LR, POLICY_LR, ALPHA_LR, ALPHA0 = 0.99, 0.005, 1e-3, 3e-4, 1e-3, 0.2
LOG_STD_MIN, LOG_STD_MAX = -5.0, 2.0
HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def mlp(d_in: int, hidden: int, d_out: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Linear(d_in, hidden),
        nn.ReLU(),
        nn.Linear(hidden, hidden),
        nn.ReLU(),
        nn.Linear(hidden, d_out),
    )


class QNet(nn.Module):
    def __init__(self, obs: int, act: int, hidden: int) -> None:
        super().__init__()
        self.net = mlp(obs + act, hidden, 1)

    def forward(self, obs: Tensor, act: Tensor) -> Tensor:
        return self.net(torch.cat([obs, act], dim=1)).squeeze(1)


class Actor(nn.Module):
    def __init__(self, obs: int, act: int, hidden: int) -> None:
        super().__init__()
        self.trunk = nn.Sequential(
            nn.Linear(obs, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU()
        )
        self.mean, self.log_std = nn.Linear(hidden, act), nn.Linear(hidden, act)

    def forward(self, obs: Tensor, noise: Tensor) -> tuple[Tensor, Tensor]:
        """A tanh-squashed reparameterized sample and its log-probability (batch,)."""
        h = self.trunk(obs)
        mean = self.mean(h)
        log_std = torch.tanh(self.log_std(h))
        log_std = LOG_STD_MIN + 0.5 * (LOG_STD_MAX - LOG_STD_MIN) * (log_std + 1)
        std = log_std.exp()
        x = mean + std * noise  # rsample with the noise given
        y = torch.tanh(x)
        log_prob = -((x - mean) ** 2) / (2 * std * std) - log_std - HALF_LOG_2PI
        log_prob = log_prob - torch.log(1 - y * y + 1e-6)
        return y, log_prob.sum(1)


def adam(params: list[nn.Parameter], lr: float, capturable: bool) -> torch.optim.Adam:
    return torch.optim.Adam(params, lr=lr, foreach=True, capturable=capturable)


def build(device: torch.device, smoke: bool) -> Built:
    batch, obs_dim, act_dim, hidden = (8, 5, 3, 16) if smoke else (256, 17, 6, 256)
    q1, q2 = QNet(obs_dim, act_dim, hidden).to(device), QNet(obs_dim, act_dim, hidden).to(device)
    q1_t, q2_t = (
        QNet(obs_dim, act_dim, hidden).to(device),
        QNet(obs_dim, act_dim, hidden).to(device),
    )
    q1_t.load_state_dict(q1.state_dict())
    q2_t.load_state_dict(q2.state_dict())
    actor = Actor(obs_dim, act_dim, hidden).to(device)
    log_alpha = nn.Parameter(torch.tensor(math.log(ALPHA0), device=device))
    for m in (q1, q2, actor):
        m.train()
    q1_t.eval()
    q2_t.eval()
    target_entropy = -float(act_dim)

    q_params = list(q1.parameters()) + list(q2.parameters())
    t_params = [p.requires_grad_(False) for p in (*q1_t.parameters(), *q2_t.parameters())]
    a_params = list(actor.parameters())
    capturable = device.type == "cuda"
    q_opt = adam(q_params, Q_LR, capturable)
    a_opt = adam(a_params, POLICY_LR, capturable)
    alpha_opt = adam([log_alpha], ALPHA_LR, capturable)
    params = [*q_params, *a_params, log_alpha]
    for p in params:
        p.grad = torch.zeros_like(p)
    for opt in (q_opt, a_opt, alpha_opt):
        opt.step()  # allocates Adam's state (zero moments, step counts at 1)
    states = [
        opt.state[p] for opt in (q_opt, a_opt, alpha_opt) for p in opt.param_groups[0]["params"]
    ]
    exp_avgs = [s["exp_avg"] for s in states]
    exp_avg_sqs = [s["exp_avg_sq"] for s in states]
    steps = [s["step"] for s in states]
    live = [*params, *t_params, *exp_avgs, *exp_avg_sqs, *steps]
    snapshot = [
        *(p.detach().clone() for p in params),
        *(p.detach().clone() for p in t_params),
        *(torch.randn_like(m) * 1e-3 for m in exp_avgs),
        *((torch.rand_like(v) + 0.5) * 1e-6 for v in exp_avg_sqs),  # ~ exp_avg^2
        *(torch.full_like(t, 10.0) for t in steps),  # as if 10 updates were done
    ]

    def step(
        obs: Tensor,
        act: Tensor,
        rew: Tensor,
        next_obs: Tensor,
        done: Tensor,
        next_noise: Tensor,
        noise: Tensor,
    ) -> Tensor:
        with torch.no_grad():
            torch._foreach_copy_(live, snapshot)
        for opt in (q_opt, a_opt, alpha_opt):
            opt.zero_grad(set_to_none=False)

        # (1) critics
        with torch.no_grad():
            alpha = log_alpha.exp()
            next_act, next_logp = actor(next_obs, next_noise)
            min_q_next = torch.min(q1_t(next_obs, next_act), q2_t(next_obs, next_act))
            target = rew + GAMMA * (1 - done) * (min_q_next - alpha * next_logp)
        q_loss = F.mse_loss(q1(obs, act), target) + F.mse_loss(q2(obs, act), target)
        q_loss.backward()
        q_opt.step()

        # (2) actor, against the updated critics with their parameters frozen
        for p in q_params:
            p.requires_grad_(False)
        pi, logp = actor(obs, noise)
        min_q_pi = torch.min(q1(obs, pi), q2(obs, pi))
        actor_loss = (alpha * logp - min_q_pi).mean()
        actor_loss.backward()
        for p in q_params:
            p.requires_grad_(True)
        a_opt.step()

        # (3) temperature
        alpha_loss = -(log_alpha * (logp.detach() + target_entropy)).mean()
        alpha_loss.backward()
        alpha_opt.step()

        # (4) Polyak averaging of the target critics
        with torch.no_grad():
            torch._foreach_lerp_(t_params, q_params, TAU)
        return torch.stack((q_loss, actor_loss, alpha_loss, alpha)).detach()

    def transitions() -> tuple[Tensor, ...]:
        return (
            torch.randn(batch, obs_dim, device=device),
            torch.rand(batch, act_dim, device=device) * 2 - 1,
            torch.randn(batch, device=device),
            torch.randn(batch, obs_dim, device=device),
            (torch.rand(batch, device=device) < 0.05).float(),
            torch.randn(batch, act_dim, device=device),
            torch.randn(batch, act_dim, device=device),
        )

    inputs = [transitions() for _ in range(2)]
    description = (
        f"SAC update, twin Q {obs_dim}+{act_dim}-{hidden}-{hidden}-1 + targets, tanh-Gaussian "
        f"actor, learned alpha, 3 Adam (foreach{', capturable' if capturable else ''}), "
        f"Polyak lerp, batch {batch}"
    )
    return Built(
        step,
        inputs,
        description,
        [q1, q2, q1_t, q2_t, actor, log_alpha, q_opt, a_opt, alpha_opt, snapshot],
    )


if __name__ == "__main__":
    main(build, __doc__)
