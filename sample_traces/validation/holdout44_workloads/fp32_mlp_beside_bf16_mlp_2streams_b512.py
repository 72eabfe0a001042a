"""An fp32 MLP on one side stream beside a bf16 MLP on the other, summed after the join
(forty-fourth hold-out: long fp32 GEMMs on the FP32 pipes beside tensor-core GEMMs, which
the schedule still charges as any matrix kernels): 512 rows; the fp32 branch
``Linear(2048, 2048)`` + ReLU three times then ``Linear(2048, 256)``, TF32 left off (torch's
default for matmuls); the bf16 branch ``Linear(2048, 8192)`` + GELU, ``Linear(8192, 8192)`` +
GELU, ``Linear(8192, 256)`` in bf16 weights and activations; after the join the bf16 output
cast to fp32, the two added and layer-normalized. Eval mode, no gradients. The fp32 branch
some 13.4 GFLOP, the bf16 branch some 88 GFLOP. Inputs: (512, 2048) fp32 features. Returns the
(512, 256) fp32 output.

    traceinspect profile fp32_mlp_beside_bf16_mlp_2streams_b512.py
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
    batch, din, h32, h16, dout = (4, 16, 16, 32, 8) if smoke else (512, 2048, 2048, 8192, 256)
    fp32 = mlp_tower([din, h32, h32, h32, dout]).to(device).eval()
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    half = mlp_tower([din, h16, h16, dout], act=nn.GELU).to(device, dtype).eval()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        a, b = fork_join(device, streams, [lambda: fp32(x), lambda: half(x.to(dtype))])
        return F.layer_norm(a + b.float(), (a.shape[1],))

    inputs = [(torch.randn(batch, din, device=device),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"fp32 MLP {din}-{h32}x3-{dout} beside bf16 MLP {din}-{h16}-{h16}-{dout} on 2 side "
        f"streams, b{batch}",
        [fp32, half],
    )


if __name__ == "__main__":
    main(build, __doc__)
