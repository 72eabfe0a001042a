"""An FP8 inference MLP stack on 64 tokens, per-tensor scaled ``torch._scaled_mm`` GEMMs with the
activations quantized on the fly (fifty-first hold-out: low-precision inference the way
torchao-style dynamic FP8 lays it out, each GEMM wrapped in a handful of small reductions and
elementwise kernels, some 100 launches around 8 weight-bound GEMMs): 4 feed-forward blocks of 2,048
-> 8,192 -> 2,048. The weights are quantized once at build, per tensor, to ``float8_e4m3fn`` (W x
448 / amax, 448 the e4m3 maximum, clamped and cast) and kept as (out, in) row-major, so each is
passed transposed, the column-major second operand ``_scaled_mm`` wants; their inverse scales (amax
/ 448) are 0-d fp32 device tensors. Every GEMM first quantizes its activation (64 x in)
dynamically, all on the device: amax = max |x|, scale = 448 / max(amax, 1e-12) in fp32, x_fp8 =
clamp(x * scale, -448, 448) cast to e4m3, and the inverse scale 1 / scale; then ``_scaled_mm(x_fp8,
W_fp8.t(), scale_a=1 / scale, scale_b=W's inverse scale, out_dtype=bf16)``. Per block: the up GEMM
(2,048 -> 8,192) + bias + GELU (exact, erf) in bf16, the down GEMM (8,192 -> 2,048) + bias in bf16,
and the residual add. Every dimension is a multiple of 16, as cuBLASLt's FP8 GEMM requires. bf16 on
a GPU (128 MiB of FP8 weights), no gradients, one stream. On a CPU (smoke) torch 2.13's CPU
``_scaled_mm`` accepts the same FP8 operands and scales, so the same code runs, with fp32 in place
of bf16 (``low_precision``) for the output, biases and GELU. Inputs: the token activations (64,
2048). Returns the output activations (64, 2048).

    traceinspect profile fp8_scaled_mm_mlp_b64.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor

FP8 = torch.float8_e4m3fn
FP8_MAX = torch.finfo(FP8).max  # 448
EPS = 1e-12


def quantize_weight(w: Tensor) -> tuple[Tensor, Tensor]:
    """(out, in) fp32 -> the e4m3 weight, row-major (out, in), and its inverse scale (0-d fp32)."""
    scale = FP8_MAX / w.abs().amax().clamp(min=EPS)
    return (w * scale).clamp(-FP8_MAX, FP8_MAX).to(FP8), scale.reciprocal()


def quantize_activation(x: Tensor) -> tuple[Tensor, Tensor]:
    """Dynamic per-tensor quantization on the device: the e4m3 tensor and its inverse scale."""
    amax = x.abs().amax().float()
    scale = FP8_MAX / amax.clamp(min=EPS)
    x_fp8 = (x.float() * scale).clamp(-FP8_MAX, FP8_MAX).to(FP8)
    return x_fp8, scale.reciprocal()


class FP8Linear:
    """A Linear whose weight is pre-quantized to e4m3 with one fp32 scale; bias in ``dtype``."""

    def __init__(self, d_in: int, d_out: int, device: torch.device, dtype: torch.dtype) -> None:
        w = torch.randn(d_out, d_in, device=device) / d_in**0.5
        self.weight, self.weight_inv_scale = quantize_weight(w)
        self.bias = 0.02 * torch.randn(d_out, device=device, dtype=dtype)
        self.dtype = dtype

    def __call__(self, x: Tensor) -> Tensor:
        x_fp8, x_inv_scale = quantize_activation(x)
        y = torch._scaled_mm(
            x_fp8,
            self.weight.t(),  # (in, out), column-major
            scale_a=x_inv_scale,
            scale_b=self.weight_inv_scale,
            out_dtype=self.dtype,
        )
        return y + self.bias


def build(device: torch.device, smoke: bool) -> Built:
    tokens, d, hidden, blocks = (16, 32, 64, 2) if smoke else (64, 2048, 8192, 4)
    dtype = low_precision(device)
    layers = [
        (FP8Linear(d, hidden, device, dtype), FP8Linear(hidden, d, device, dtype))
        for _ in range(blocks)
    ]

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        for up, down in layers:
            x = x + down(F.gelu(up(x)))
        return x

    inputs = [(torch.randn(tokens, d, device=device, dtype=dtype),) for _ in range(2)]
    description = (
        f"FP8 (e4m3) MLP stack, {blocks} blocks {d}->{hidden}->{d}, _scaled_mm with per-tensor "
        f"scales and dynamic activation quantization, {tokens} tokens"
    )
    keep = [
        t for pair in layers for lin in pair for t in (lin.weight, lin.weight_inv_scale, lin.bias)
    ]
    return Built(step, inputs, description, keep)


if __name__ == "__main__":
    main(build, __doc__)
