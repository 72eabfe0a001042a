"""DINO projection head on 32 backbone features of d 768, bf16 (seventh hold-out): a 3-layer
MLP 768->2048->2048->256 (GELU after the first two), L2 normalization of the 256-d
bottleneck, a weight-normalized Linear 256->8192 without bias (``parametrizations.
weight_norm``, gain fixed at 1 as in DINO; the weight is renormalized in every step) giving
8192 prototype scores, then the teacher's output: softmax over the prototypes of
(scores - center) / 0.04, in fp32. The center (8192, fp32 buffer) is then updated in place
with an EMA of the batch mean of the scores, momentum 0.9 (``mul_`` and ``add_``: tensor ops
on the device, no readback), so each step also depends on the steps before it. Returns the
32 x 8192 probabilities.

    traceinspect profile dino_head_b32.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn
from torch.nn.utils.parametrizations import weight_norm

TEMPERATURE, MOMENTUM = 0.04, 0.9


class DinoHead(nn.Module):
    def __init__(self, d: int, hidden: int, bottleneck: int, prototypes: int) -> None:
        super().__init__()
        self.mlp = nn.Sequential(
            nn.Linear(d, hidden),
            nn.GELU(),
            nn.Linear(hidden, hidden),
            nn.GELU(),
            nn.Linear(hidden, bottleneck),
        )
        self.last = weight_norm(nn.Linear(bottleneck, prototypes, bias=False))
        with torch.no_grad():
            self.last.parametrizations.weight.original0.fill_(1.0)  # the gain, as DINO
        self.register_buffer("center", torch.zeros(prototypes))

    def forward(self, features: Tensor) -> Tensor:
        z = F.normalize(self.mlp(features), dim=-1)
        scores = self.last(z).float()
        probs = torch.softmax((scores - self.center) / TEMPERATURE, dim=-1)
        self.center.mul_(MOMENTUM).add_(scores.mean(dim=0), alpha=1 - MOMENTUM)
        return probs


def build(device: torch.device, smoke: bool) -> Built:
    d, hidden, bottleneck, prototypes, batch = (
        (32, 64, 16, 128, 4) if smoke else (768, 2048, 256, 8192, 32)
    )
    dtype = low_precision(device)
    model = DinoHead(d, hidden, bottleneck, prototypes).to(device=device, dtype=dtype).eval()
    model.center = model.center.float()  # the center stays fp32

    @torch.no_grad()
    def step(features: Tensor) -> Tensor:
        return model(features)

    inputs = [(torch.randn(batch, d, device=device, dtype=dtype),) for _ in range(2)]
    description = f"DINO head {d}->{hidden}->{bottleneck}->{prototypes}, batch {batch}"
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
