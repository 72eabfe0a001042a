"""A DeltaNet-style recurrent linear-attention layer (Schlag et al., 2021; Yang et al., 2024)
run as a Python loop over time (twenty-fifth hold-out): 4 sequences of 64 tokens, d 256,
4 heads of 64, fp32. Q, K and V projections (256 -> 256, the keys L2-normalized) and a
per-head write strength beta = sigmoid(Linear 256 -> 4) are computed for all tokens at once;
then, for each of the 64 steps, the 4 x 4 x 64 slices q, k, v update the per-head state
S (4 x 4 x 64 x 64) by the delta rule S = S + beta (v - S k) k^T (two ``einsum`` and
elementwise kernels) and read o = S q. The 64 outputs are stacked and go through the output
projection 256 -> 256. Some 400 tiny kernels in a row, launch-bound; one stream.

    traceinspect profile delta_rule_scan_loop_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn


class DeltaRule(nn.Module):
    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.q, self.k, self.v, self.out = (nn.Linear(d, d) for _ in range(4))
        self.beta = nn.Linear(d, heads)

    def forward(self, x: Tensor) -> Tensor:
        b, n, d = x.shape
        h, dh = self.heads, d // self.heads

        def split(t: Tensor) -> Tensor:
            return t.view(b, n, h, dh)

        q, v = split(self.q(x)), split(self.v(x))
        k = F.normalize(split(self.k(x)), dim=-1)
        beta = torch.sigmoid(self.beta(x))  # b x n x h
        state = x.new_zeros(b, h, dh, dh)
        outs = []
        for t in range(n):
            q_t, k_t, v_t = q[:, t], k[:, t], v[:, t]  # b x h x dh
            recalled = torch.einsum("bhij,bhj->bhi", state, k_t)
            delta = (v_t - recalled) * beta[:, t, :, None]
            state = state + torch.einsum("bhi,bhj->bhij", delta, k_t)
            outs.append(torch.einsum("bhij,bhj->bhi", state, q_t))
        return self.out(torch.stack(outs, dim=1).reshape(b, n, d))


def build(device: torch.device, smoke: bool) -> Built:
    batch, n, d, heads = (2, 8, 16, 2) if smoke else (4, 64, 256, 4)
    model = DeltaRule(d, heads).to(device).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    inputs = [(torch.randn(batch, n, d, device=device),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"delta-rule recurrence d{d} {heads} heads, Python loop over {n} steps, b{batch}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
