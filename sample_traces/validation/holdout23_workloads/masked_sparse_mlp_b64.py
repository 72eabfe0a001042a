"""A pruned MLP whose weights are masked on every call (twenty-third hold-out), as
sparsity-aware training evaluates it: 4 layers 1024 -> 1024, each weight multiplied by a
fixed 2:4 mask (two of every four inputs kept) before the matmul, bias, ReLU; batch 64,
bf16. Four elementwise kernels over 1 M weights beside four small GEMMs.

    traceinspect profile masked_sparse_mlp_b64.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor

LAYERS = 4


def two_of_four(d: int, device: torch.device, dtype: torch.dtype) -> Tensor:
    keep = torch.zeros(d, d // 4, 4, device=device, dtype=dtype)
    keep[:, :, :2] = 1
    return keep.reshape(d, d)


def build(device: torch.device, smoke: bool) -> Built:
    batch, d = (2, 16) if smoke else (64, 1024)
    dtype = low_precision(device)
    weights = [torch.randn(d, d, device=device, dtype=dtype) / d**0.5 for _ in range(LAYERS)]
    biases = [torch.randn(d, device=device, dtype=dtype) / 10 for _ in range(LAYERS)]
    mask = two_of_four(d, device, dtype)

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        for w, b in zip(weights, biases, strict=True):
            x = torch.relu(F.linear(x, w * mask, b))
        return x

    inputs = [(torch.randn(batch, d, device=device, dtype=dtype),) for _ in range(2)]
    return Built(step, inputs, f"{LAYERS} 2:4-masked layers {d}, b{batch}")


if __name__ == "__main__":
    main(build, __doc__)
