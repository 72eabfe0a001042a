"""A deep fp32 MLP on one stream (forty-fourth hold-out: the long fp32 GEMMs of the other
scripts with nothing beside them): 512 rows, ``Linear(2048, 4096)`` + ReLU, three
``Linear(4096, 4096)`` + ReLU, ``Linear(4096, 1000)``, fp32 with TF32 left off (torch's
default for matmuls), eval mode, no gradients, a row-wise log-softmax. Some 118 GFLOP. Inputs:
(512, 2048) fp32 features. Returns the (512, 1000) log-probs.

    traceinspect profile fp32_mlp_one_stream_b512.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _blocks import mlp_tower
from _common import Built, main
from torch import Tensor


def build(device: torch.device, smoke: bool) -> Built:
    batch, din, hidden, dout = (4, 16, 32, 10) if smoke else (512, 2048, 4096, 1000)
    model = mlp_tower([din, hidden, hidden, hidden, hidden, dout]).to(device).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return torch.log_softmax(model(x), dim=1)

    inputs = [(torch.randn(batch, din, device=device),) for _ in range(2)]
    return Built(
        step, inputs, f"fp32 MLP {din}-{hidden}x4-{dout} on one stream, b{batch}", [model]
    )


if __name__ == "__main__":
    main(build, __doc__)
