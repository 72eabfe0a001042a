"""A 6-layer MLP of width 2048 at batch 64 with int8 weights and int8 activations (W8A8, as
torchao's dynamic int8 quantization), the GEMMs in ``torch._int_mm`` (int8 x int8 -> int32,
cuBLASLt) and everything else in fp32 (fourteenth hold-out), inference. The weights are
quantized once at build, symmetric per output channel (scale = absmax of the row / 127, the
int8 values stored 2048 x 2048 and passed to ``_int_mm`` as the transposed view, column-major
as cuBLASLt wants it). Per layer, the activation is quantized per tensor and on the fly:
absmax (``abs``, ``amax``), scale = absmax / 127 (clamped away from zero), divide, ``round``,
``clamp`` to [-127, 127] and a cast to int8; then ``_int_mm`` (64 x 2048 by 2048 x 2048, M >
16 and K, N multiples of 8 as it requires), the int32 result cast to fp32 and dequantized by
the activation scale times the per-channel weight scales, the bias added and SiLU: about 14
kernels per layer, 84 in all, the six int8 GEMMs small: launch-bound. On a CPU (smoke runs)
or where ``torch._int_mm`` is missing, the same quantized values go through a float matmul
of the dequantized activations and weights instead. Input: 64 x 2048 (fp32). Returns 64 x
2048 (fp32).

    traceinspect profile int8_mm_dequant_b64.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor

LAYERS, QMAX = 6, 127


def quantize_weight(w: Tensor) -> tuple[Tensor, Tensor]:
    """Symmetric per-output-channel int8: (N, K) float -> (N, K) int8 and (N,) fp32 scales."""
    scale = w.abs().amax(dim=1).clamp(min=1e-8) / QMAX
    return (w / scale[:, None]).round().clamp(-QMAX, QMAX).to(torch.int8), scale


def quantize_activation(x: Tensor) -> tuple[Tensor, Tensor]:
    """Symmetric per-tensor int8, dynamic: the scale is a 0-d tensor, no host sync."""
    scale = x.abs().amax().clamp(min=1e-8) / QMAX
    return (x / scale).round().clamp(-QMAX, QMAX).to(torch.int8), scale


def build(device: torch.device, smoke: bool) -> Built:
    batch, width = (4, 16) if smoke else (64, 2048)
    use_int_mm = device.type == "cuda" and hasattr(torch, "_int_mm")
    layers = []
    for _ in range(LAYERS):
        w = torch.randn(width, width, device=device) / width**0.5
        wq, w_scale = quantize_weight(w)
        bias = 0.01 * torch.randn(width, device=device)
        # the fallback's dequantized weights, made once (the int8 path never reads them)
        w_deq = None if use_int_mm else wq.float() * w_scale[:, None]
        layers.append((wq, w_scale, bias, w_deq))

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        for wq, w_scale, bias, w_deq in layers:
            xq, x_scale = quantize_activation(x)
            if w_deq is None:
                acc = torch._int_mm(xq, wq.t())  # (M, N) int32
                x = F.silu(acc.float() * (x_scale * w_scale) + bias)
            else:
                x = F.silu(F.linear(xq.float() * x_scale, w_deq, bias))
        return x

    inputs = [(torch.randn(batch, width, device=device),) for _ in range(2)]
    kind = "torch._int_mm" if use_int_mm else "float fallback"
    description = f"W8A8 MLP, {LAYERS} x {width}x{width} ({kind}), batch {batch}"
    return Built(step, inputs, description, [t for layer in layers for t in layer if t is not None])


if __name__ == "__main__":
    main(build, __doc__)
