"""A soft actor-critic (Haarnoja et al., 2018) evaluation of the actor's objective terms for a
batch of 512 transitions, the actor head and the twin critics on two side streams after a
shared observation encoder, the objective after the join (fortieth hold-out): Humanoid-sized
observations of 376 and actions of 17, bf16 on a GPU for the MLPs (the Gaussian, the tanh
squashing, the log-probabilities and the objective in fp32), no gradients. On the current
stream the shared encoder, ``Linear(376, 256)`` + ReLU and ``Linear(256, 256)`` + ReLU. Actor
head, on one side stream: ``Linear(256, 256)`` + ReLU and ``Linear(256, 34)``, split into the
mean and log standard deviation (clamped to [-20, 2]) of a diagonal Gaussian; the pre-squash
sample mean + std x noise from the given fixed noise, the action its tanh, and its
log-probability, the Gaussian's log density summed over the 17 dimensions minus the tanh
correction 2 (log 2 - u - softplus(-2 u)) summed (the numerically stable form of log(1 -
tanh(u)^2)). Twin critics, on the other side stream: two MLPs on the encoded state
concatenated with the batch's stored actions (273 inputs), 273 -> 256 -> 256 -> 1 with ReLU
(the critics score the stored actions, so the two branches are independent). Fork and join are
the project's ``fork_join`` (``wait_stream``, and ``record_stream`` on the branch outputs
outside capture). After the join, on the current stream, in fp32: alpha = exp(log alpha) (a
fixed log(0.2)), the soft value terms min(Q1, Q2) - alpha x log-prob and their mean over the
batch, and the temperature objective -log alpha x (log-prob + target entropy -17), its mean.
On a CPU the branches run in order. Inputs: observations (512, 376), stored actions (512, 17)
in [-1, 1], noise (512, 17) fp32. Returns the mean soft value and the temperature objective
(scalars) and the sampled actions (512, 17), fp32.

    traceinspect profile actor_critic_2streams_b512.py
"""

from __future__ import annotations

import math
from itertools import pairwise

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

OBS, ACT, LOG_STD_MIN, LOG_STD_MAX, ALPHA = 376, 17, -20.0, 2.0, 0.2
HALF_LOG_2PI, LOG_2 = 0.5 * math.log(2 * math.pi), math.log(2.0)


def mlp(widths: tuple[int, ...], last_relu: bool = False) -> nn.Sequential:
    layers: list[nn.Module] = []
    for i, (cin, cout) in enumerate(pairwise(widths)):
        layers.append(nn.Linear(cin, cout))
        if last_relu or i < len(widths) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


class Actor(nn.Module):
    def __init__(self, hidden: int, act: int) -> None:
        super().__init__()
        self.net = mlp((hidden, hidden, 2 * act))

    def forward(self, feats: Tensor, noise: Tensor) -> tuple[Tensor, Tensor]:
        mean, log_std = self.net(feats).float().chunk(2, dim=-1)
        log_std = log_std.clamp(LOG_STD_MIN, LOG_STD_MAX)
        u = mean + log_std.exp() * noise
        logp = (-0.5 * noise.square() - log_std - HALF_LOG_2PI).sum(dim=-1)
        logp = logp - (2 * (LOG_2 - u - F.softplus(-2 * u))).sum(dim=-1)
        return torch.tanh(u), logp


class TwinCritic(nn.Module):
    def __init__(self, hidden: int, act: int) -> None:
        super().__init__()
        self.q1, self.q2 = (mlp((hidden + act, hidden, hidden, 1)) for _ in range(2))

    def forward(self, feats: Tensor, actions: Tensor) -> tuple[Tensor, Tensor]:
        x = torch.cat([feats, actions], dim=-1)
        return self.q1(x)[:, 0].float(), self.q2(x)[:, 0].float()


def build(device: torch.device, smoke: bool) -> Built:
    batch, obs_dim, act, hidden = (8, 12, 3, 16) if smoke else (512, OBS, ACT, 256)
    dtype = low_precision(device)
    encoder = mlp((obs_dim, hidden, hidden), last_relu=True)
    actor, critic = Actor(hidden, act), TwinCritic(hidden, act)
    model = nn.ModuleList([encoder, actor, critic]).to(device, dtype).eval()
    log_alpha = torch.tensor(math.log(ALPHA), device=device)
    target_entropy = -float(act)
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(obs: Tensor, stored: Tensor, noise: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        feats = encoder(obs)
        (action, logp), (q1, q2) = fork_join(
            device, streams, [lambda: actor(feats, noise), lambda: critic(feats, stored)]
        )
        soft_value = (torch.minimum(q1, q2) - log_alpha.exp() * logp).mean()
        alpha_objective = (-log_alpha * (logp + target_entropy)).mean()
        return soft_value, alpha_objective, action

    inputs = [
        (
            torch.randn(batch, obs_dim, device=device, dtype=dtype),
            (torch.rand(batch, act, device=device) * 2 - 1).to(dtype),
            torch.randn(batch, act, device=device),
        )
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"SAC actor-critic: shared {obs_dim}->{hidden} encoder, tanh-Gaussian actor head and twin "
        f"Q critics on 2 side streams + soft value / temperature terms, b{batch} x {act} actions",
        [model, log_alpha],
    )


if __name__ == "__main__":
    main(build, __doc__)
