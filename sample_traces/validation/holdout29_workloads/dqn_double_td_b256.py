"""A double-DQN learning step (van Hasselt et al., 2016) on a replay batch (twenty-ninth
hold-out): 256 transitions of 64-feature states, 18 actions, fp32. The online network
(MLP 64 -> 512 -> 512 -> 18, ReLU) picks the next action (``argmax``), the target network
(same shape) values it (``gather``); the TD target r + 0.99 (1 - done) Q_target; the
online Q of the taken actions (``gather``), the Huber loss weighted by importance weights,
backpropagated, gradients clipped by their global norm (``clip_grad_norm_`` with foreach),
RMSprop-style updates through ``torch._foreach`` ops, and the new priorities |TD error|
returned. The step restores the online weights and zeroes the squares first, so it depends
only on its inputs; the target network is fixed. One stream.

    traceinspect profile dqn_double_td_b256.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn

GAMMA, LR, ALPHA, EPS, CLIP = 0.99, 2.5e-4, 0.95, 0.01, 10.0


def network(d: int, hidden: int, actions: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Linear(d, hidden),
        nn.ReLU(),
        nn.Linear(hidden, hidden),
        nn.ReLU(),
        nn.Linear(hidden, actions),
    )


def build(device: torch.device, smoke: bool) -> Built:
    batch, d, hidden, actions = (4, 8, 16, 3) if smoke else (256, 64, 512, 18)
    online = network(d, hidden, actions).to(device)
    target = network(d, hidden, actions).to(device).eval()
    params = list(online.parameters())
    for p in params:
        p.grad = torch.zeros_like(p)
    start = [p.detach().clone() for p in params]
    squares = [torch.zeros_like(p) for p in params]

    def step(
        s: Tensor, a: Tensor, r: Tensor, s2: Tensor, done: Tensor, weight: Tensor
    ) -> tuple[Tensor, Tensor]:
        with torch.no_grad():
            torch._foreach_copy_(params, start)
            torch._foreach_zero_(squares)
            next_a = online(s2).argmax(dim=1, keepdim=True)
            next_q = target(s2).gather(1, next_a).squeeze(1)
            td_target = r + GAMMA * (1 - done) * next_q
        online.zero_grad(set_to_none=False)
        q = online(s).gather(1, a.unsqueeze(1)).squeeze(1)
        loss = (weight * F.smooth_l1_loss(q, td_target, reduction="none")).mean()
        loss.backward()
        grads = [p.grad for p in params]
        torch.nn.utils.clip_grad_norm_(params, CLIP, foreach=True)
        with torch.no_grad():
            torch._foreach_mul_(squares, ALPHA)
            torch._foreach_addcmul_(squares, grads, grads, value=1 - ALPHA)
            denom = torch._foreach_sqrt(squares)
            torch._foreach_add_(denom, EPS)
            torch._foreach_addcdiv_(params, grads, denom, value=-LR)
        return loss.detach(), (q - td_target).abs().detach()

    def batch_of() -> tuple[Tensor, ...]:
        return (
            torch.randn(batch, d, device=device),
            torch.randint(0, actions, (batch,), device=device),
            torch.randn(batch, device=device),
            torch.randn(batch, d, device=device),
            (torch.rand(batch, device=device) < 0.05).float(),
            torch.rand(batch, device=device),
        )

    inputs = [batch_of() for _ in range(2)]
    return Built(
        step,
        inputs,
        f"double DQN step {d}-{hidden}-{hidden}-{actions}, b{batch}",
        [online, target, start, squares],
    )


if __name__ == "__main__":
    main(build, __doc__)
