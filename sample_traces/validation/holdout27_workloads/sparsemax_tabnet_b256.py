"""TabNet's attentive transformer with sparsemax (Arik & Pfister, 2021) (twenty-seventh
hold-out): 256 rows of 64 features, fp32, three decision steps. Each step: a Linear 32 -> 64
with BatchNorm gives the feature logits, multiplied by the prior; sparsemax written out (sort
descending, cumulative sum, the support size from a comparison and a sum, the threshold
gathered from the cumulative sum, a clamp); the mask selects features, a GLU block (Linear
64 -> 64 split in two halves, sigmoid gate) transforms them, and the prior is updated by
``relaxation - mask``. Sorts, scans and small GEMMs, about 90 kernels, one stream.

    traceinspect profile sparsemax_tabnet_b256.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn

STEPS, RELAX = 3, 1.3


def sparsemax(z: Tensor) -> Tensor:
    """Sparsemax over the last dimension (Martins & Astudillo, 2016)."""
    ranked, _ = z.sort(dim=-1, descending=True)
    cumulative = ranked.cumsum(dim=-1)
    k = torch.arange(1, z.shape[-1] + 1, device=z.device, dtype=z.dtype)
    support = (1 + k * ranked > cumulative).sum(dim=-1, keepdim=True)
    tau = (cumulative.gather(-1, support - 1) - 1) / support.to(z.dtype)
    return torch.clamp(z - tau, min=0)


class Step(nn.Module):
    def __init__(self, features: int, hidden: int) -> None:
        super().__init__()
        self.attend = nn.Sequential(nn.Linear(hidden, features), nn.BatchNorm1d(features))
        self.glu = nn.Linear(features, 2 * hidden)

    def forward(self, x: Tensor, a: Tensor, prior: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        mask = sparsemax(self.attend(a) * prior)
        value, gate = self.glu(x * mask).chunk(2, dim=-1)
        out = value * torch.sigmoid(gate)
        return out, prior * (RELAX - mask), mask


def build(device: torch.device, smoke: bool) -> Built:
    batch, features, hidden = (4, 8, 4) if smoke else (256, 64, 32)
    steps = nn.ModuleList([Step(features, hidden) for _ in range(STEPS)]).to(device).eval()
    norm = nn.BatchNorm1d(features).to(device).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        x = norm(x)
        a = x.new_zeros(x.shape[0], hidden)
        prior = torch.ones_like(x)
        total = x.new_zeros(x.shape[0], hidden)
        for s in steps:
            a, prior, _ = s(x, a, prior)
            total = total + torch.relu(a)
        return total

    inputs = [(torch.randn(batch, features, device=device),) for _ in range(2)]
    return Built(
        step, inputs, f"TabNet {STEPS} steps, sparsemax over {features}, b{batch}", [steps, norm]
    )


if __name__ == "__main__":
    main(build, __doc__)
