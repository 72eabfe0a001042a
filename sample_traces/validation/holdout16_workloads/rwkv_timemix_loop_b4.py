"""An RWKV-4 time-mix layer (Peng et al., 2023) run as a recurrence over 32 time steps in a
Python loop, d 256, batch 4, fp32 (sixteenth hold-out), inference, as RWKV's RNN mode runs it
token by token. Per time step t, with x_t (4 x 256) and the previous token x_{t-1} (the token
shift; zeros before the first): the three token-shift mixes x_{t-1} + mu (x_t - x_{t-1}) for
the receptance, key and value (``torch.lerp``, three kernels), the three projections R, K, V
(Linear 256->256, no bias), r = sigmoid(R x_r), then the numerically stable WKV update of
the state (a, b, p) (the numerator, the denominator and the running maximum of the
exponents, zeros and -1e38 before the first step): q = max(p, u + k), wkv = (e^(p - q) a +
e^(u + k - q) v) / (e^(p - q) b + e^(u + k - q)); then q' = max(p + w, k), a <- e^(p + w -
q') a + e^(k - q') v, b <- e^(p + w - q') b + e^(k - q'), p <- q', where w = -exp(decay) is
the per-channel decay (computed once at build, as RWKV's RNN mode does) and u the bonus of
the current token (both fixed); and the output projection O (r * wkv) (Linear 256->256, no
bias). 36 kernels per time step (each of the four thin fp32 GEMMs a split-K GEMM and its
reduction on an H200), none over more than 4 x 256 values, some 1,160 in all with the
state's initialization and the two ``torch.stack`` at the end: launch-bound.
Input: the sequence (4 x 32 x 256). Returns the outputs (4 x 32 x 256) and the final state
(a, b, p stacked: 3 x 4 x 256).

    traceinspect profile rwkv_timemix_loop_b4.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn

State = tuple[Tensor, Tensor, Tensor, Tensor]  # the previous token, a, b, p


class TimeMix(nn.Module):
    """RWKV-4's time mixing, one token at a time."""

    def __init__(self, d: int) -> None:
        super().__init__()
        ratio = torch.arange(d) / max(d - 1, 1)
        self.mix_k = nn.Parameter(ratio.pow(0.5))
        self.mix_v = nn.Parameter(ratio.pow(0.5) * 0.9 + 0.05)
        self.mix_r = nn.Parameter(ratio.pow(0.25))
        decay = -5 + 8 * ratio.pow(1.5)
        self.register_buffer("w", -torch.exp(decay))  # precomputed, as RWKV's RNN mode does
        self.bonus = nn.Parameter(torch.full((d,), math.log(0.3)) + 0.1 * torch.randn(d))
        self.key, self.value, self.receptance, self.output = (
            nn.Linear(d, d, bias=False) for _ in range(4)
        )

    def forward(self, x: Tensor, state: State) -> tuple[Tensor, State]:
        prev, a, b, p = state
        k = self.key(torch.lerp(prev, x, self.mix_k))
        v = self.value(torch.lerp(prev, x, self.mix_v))
        r = torch.sigmoid(self.receptance(torch.lerp(prev, x, self.mix_r)))
        uk = self.bonus + k
        q = torch.maximum(p, uk)
        e1, e2 = torch.exp(p - q), torch.exp(uk - q)
        wkv = (e1 * a + e2 * v) / (e1 * b + e2)
        pw = p + self.w
        q = torch.maximum(pw, k)
        e1, e2 = torch.exp(pw - q), torch.exp(k - q)
        a, b = e1 * a + e2 * v, e1 * b + e2
        return self.output(r * wkv), (x, a, b, q)


def build(device: torch.device, smoke: bool) -> Built:
    batch, steps, d = (2, 4, 16) if smoke else (4, 32, 256)
    layer = TimeMix(d).to(device).eval()

    @torch.no_grad()
    def step(seq: Tensor) -> tuple[Tensor, Tensor]:
        zeros = torch.zeros(seq.shape[0], seq.shape[2], device=seq.device, dtype=seq.dtype)
        state = (zeros, zeros, zeros, torch.full_like(zeros, -1e38))
        outs = []
        for t in range(seq.shape[1]):
            out, state = layer(seq[:, t], state)
            outs.append(out)
        return torch.stack(outs, dim=1), torch.stack(state[1:])

    inputs = [(torch.randn(batch, steps, d, device=device),) for _ in range(2)]
    description = (
        f"RWKV-4 time mix d{d} as a {steps}-step Python loop (token shift, R/K/V, WKV state "
        f"update, output projection), batch {batch}"
    )
    return Built(step, inputs, description, [layer])


if __name__ == "__main__":
    main(build, __doc__)
