"""A siamese fp32 encoder applied to two views on two side streams, a contrastive (InfoNCE)
loss after the join (forty-fourth hold-out: the same long fp32 GEMMs twice, side by side):
384 pairs, the shared tower ``Linear(2048, 4096)`` + GELU, ``Linear(4096, 4096)`` + GELU,
``Linear(4096, 512)``, fp32 with TF32 left off (torch's default for matmuls), eval mode, no
gradients; after the join both embeddings L2-normalized, their (384, 384) similarity over a
temperature of 0.07 and a symmetric cross-entropy against the diagonal. Each view some 31
GFLOP. Inputs: two (384, 2048) fp32 views. Returns the loss (a 0-d fp32 tensor).

    traceinspect profile fp32_siamese_towers_2streams_b384.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _blocks import mlp_tower
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor, nn


def build(device: torch.device, smoke: bool) -> Built:
    batch, din, hidden, dout = (4, 16, 32, 8) if smoke else (384, 2048, 4096, 512)
    tower = mlp_tower([din, hidden, hidden, dout], act=nn.GELU).to(device).eval()
    streams = side_streams(device, 2)
    target = torch.arange(batch, device=device)

    @torch.no_grad()
    def step(x: Tensor, y: Tensor) -> Tensor:
        u, v = fork_join(device, streams, [lambda: tower(x), lambda: tower(y)])
        logits = F.normalize(u, dim=1) @ F.normalize(v, dim=1).T / 0.07
        return 0.5 * (F.cross_entropy(logits, target) + F.cross_entropy(logits.T, target))

    inputs = [
        (torch.randn(batch, din, device=device), torch.randn(batch, din, device=device))
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"siamese fp32 tower {din}-{hidden}-{hidden}-{dout} on 2 views, 2 side streams + "
        f"InfoNCE, b{batch}",
        [tower],
    )


if __name__ == "__main__":
    main(build, __doc__)
