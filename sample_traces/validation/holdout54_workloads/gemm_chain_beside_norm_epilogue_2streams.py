"""A pipeline-parallel stage overlapping compute with memory traffic: the next micro-batch's
large bf16 GEMMs on one side stream while the other side stream runs the previous micro-batch's
memory-bound epilogue, four long kernels over 64 M fp32 values (fifty-fourth hold-out: four
compute-bound GEMMs of 137 GFLOP each, some 200 us apiece on an H100, beside a copy, an add, a
LayerNorm and a cast each streaming 0.4 to 0.8 GB, some 150 to 270 us apiece: a matrix
chain and a bandwidth-bound chain side by side, not two streaming ones). Side stream 1, the
matmuls: 4096 tokens of width 4096 through 4 ``Linear(4096, 4096, bias=False)`` one after the
other (``F.linear``, bf16 on a GPU, weights Gaussian with std 1 / 64 so the activations keep
their scale), as the up and down projections of the stage's next MLP. Side stream 2, the
epilogue of the previous micro-batch, whose hidden states are (16384, 4096) fp32 (256 MB): the
residual stream cloned into a fresh buffer (``clone``, a copy), the sublayer output added in
place (``add_``), the stage's final ``F.layer_norm`` over the 4096 features (affine parameters
set at build, as after training), and the result cast to bf16 for the point-to-point send to
the next stage (``.to(torch.bfloat16)``; the send itself is not modelled). The two are
independent. Fork and join are the project's ``fork_join`` (``wait_stream``, and
``record_stream`` on the branch outputs outside capture). Eval, no gradients. Inputs (two input
sets): the next micro-batch (4096, 4096) bf16, and the previous one's residual stream and
sublayer output, (16384, 4096) fp32 each, random. Returns the GEMM chain's output (4096, 4096)
and the bf16 send buffer (16384, 4096).

    traceinspect profile gemm_chain_beside_norm_epilogue_2streams.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor

GEMMS = 4


def build(device: torch.device, smoke: bool) -> Built:
    tokens, width, rows = (64, 64, 256) if smoke else (4096, 4096, 16384)
    dtype = low_precision(device)
    weights = [
        (torch.randn(width, width, device=device) / math.sqrt(width)).to(dtype)
        for _ in range(GEMMS)
    ]
    norm_weight = 1.0 + 0.1 * torch.randn(width, device=device)
    norm_bias = 0.05 * torch.randn(width, device=device)
    streams = side_streams(device, 2)

    def matmuls(x: Tensor) -> Tensor:
        for w in weights:
            x = F.linear(x, w)
        return x

    def epilogue(residual: Tensor, sublayer: Tensor) -> Tensor:
        h = residual.clone()
        h.add_(sublayer)
        h = F.layer_norm(h, (width,), norm_weight, norm_bias)
        return h.to(torch.bfloat16)

    @torch.no_grad()
    def step(x: Tensor, residual: Tensor, sublayer: Tensor) -> tuple[Tensor, Tensor]:
        out, send = fork_join(
            device, streams, [lambda: matmuls(x), lambda: epilogue(residual, sublayer)]
        )
        return out, send

    inputs = [
        (
            torch.randn(tokens, width, device=device, dtype=dtype),
            torch.randn(rows, width, device=device),
            torch.randn(rows, width, device=device),
        )
        for _ in range(2)
    ]
    precision = str(dtype).removeprefix("torch.")
    description = (
        f"{GEMMS} x {tokens}x{width}x{width} GEMMs ({precision}) beside clone + add_ + "
        f"LayerNorm + bf16 cast of {rows}x{width} fp32 on 2 side streams"
    )
    return Built(step, inputs, description, [weights, norm_weight, norm_bias])


if __name__ == "__main__":
    main(build, __doc__)
