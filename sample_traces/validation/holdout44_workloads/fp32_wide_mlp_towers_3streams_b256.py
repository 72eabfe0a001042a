"""Three fp32 MLP towers side by side, one on each of three side streams, their outputs
concatenated and projected after the join (forty-fourth hold-out: long fp32 GEMMs on the FP32
pipes beside each other, where the schedule charges two such kernels the whole of what they
cover): 256 rows, each tower ``Linear(1024, 3072)`` + ReLU, ``Linear(3072, 3072)`` + ReLU,
``Linear(3072, 256)``, fp32 with TF32 left off (torch's default for matmuls), eval mode, no
gradients; after the join ``Linear(768, 128)`` and a row-wise log-softmax. Each tower some
6.8 GFLOP. Inputs: three (256, 1024) fp32 feature blocks. Returns the (256, 128) log-probs.

    traceinspect profile fp32_wide_mlp_towers_3streams_b256.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _blocks import mlp_tower
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor, nn


def build(device: torch.device, smoke: bool) -> Built:
    batch, din, hidden, dout = (4, 16, 24, 8) if smoke else (256, 1024, 3072, 256)
    towers = [mlp_tower([din, hidden, hidden, dout]) for _ in range(3)]
    head = nn.Linear(3 * dout, 128)
    model = nn.ModuleList([*towers, head]).to(device).eval()
    streams = side_streams(device, 3)

    @torch.no_grad()
    def step(a: Tensor, b: Tensor, c: Tensor) -> Tensor:
        outs = fork_join(
            device, streams, [lambda t=t, x=x: t(x) for t, x in zip(towers, (a, b, c), strict=True)]
        )
        return torch.log_softmax(head(torch.cat(outs, dim=1)), dim=1)

    inputs = [
        tuple(torch.randn(batch, din, device=device) for _ in range(3)) for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"3 fp32 MLP towers {din}-{hidden}-{hidden}-{dout} on 3 side streams + concat head, "
        f"b{batch}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
