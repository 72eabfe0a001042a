"""Simulated int8 quantization, as in quantization-aware inference checks (twenty-second
hold-out): 3 linear layers 1024 -> 1024 whose activations are fake-quantized per tensor
(absolute max over the tensor, scale = amax / 127, round, clamp, rescale) and whose weights
per output channel, on every call; ReLU between layers. Reductions and elementwise kernels
around three small GEMMs. Batch 32 x 1024, fp32.

    traceinspect profile fake_quant_absmax_b32.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor

LAYERS = 3


def fake_quant(t: Tensor, dim: int | None) -> Tensor:
    amax = t.abs().amax() if dim is None else t.abs().amax(dim=dim, keepdim=True)
    scale = amax.clamp_min(1e-8) / 127
    return (t / scale).round().clamp(-127, 127) * scale


def build(device: torch.device, smoke: bool) -> Built:
    batch, d = (2, 16) if smoke else (32, 1024)
    weights = [torch.randn(d, d, device=device) / d**0.5 for _ in range(LAYERS)]
    biases = [torch.randn(d, device=device) / 10 for _ in range(LAYERS)]

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        for i in range(LAYERS):
            x = torch.addmm(biases[i], fake_quant(x, None), fake_quant(weights[i], 1).t())
            if i < LAYERS - 1:
                x = torch.relu(x)
        return x

    inputs = [(torch.randn(batch, d, device=device),) for _ in range(2)]
    return Built(step, inputs, f"{LAYERS} fake-quantized linear layers {d}, b{batch}")


if __name__ == "__main__":
    main(build, __doc__)
