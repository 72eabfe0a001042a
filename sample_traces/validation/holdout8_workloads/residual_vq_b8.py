"""Residual vector quantization (eighth hold-out): 8 x 256 vectors of dim 64, 4 stages, each
against its own codebook of 1024 entries: squared distances by matmul, argmin, an embedding
lookup, the residual passed to the next stage; returns the sum of the quantized stages with a
straight-through residual, flattened, followed by the commitment loss. fp32.

    traceinspect profile residual_vq_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor


def build(device: torch.device, smoke: bool) -> Built:
    batch, length, dim, codes, stages = (2, 4, 8, 16, 2) if smoke else (8, 256, 64, 1024, 4)
    books = [torch.randn(codes, dim, device=device) for _ in range(stages)]
    norms = [(b * b).sum(1) for b in books]

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        flat = x.reshape(-1, dim)
        residual, quantized = flat, torch.zeros_like(flat)
        loss = torch.zeros((), device=flat.device)
        for book, norm in zip(books, norms, strict=True):
            distance = norm - 2 * residual @ book.T
            chosen = F.embedding(distance.argmin(1), book)
            loss = loss + F.mse_loss(residual, chosen)
            quantized = quantized + chosen
            residual = residual - chosen
        out = flat + (quantized - flat)  # straight-through
        return torch.cat((out.reshape(-1), loss.reshape(1)))  # one tensor: values, then loss

    inputs = [(torch.randn(batch, length, dim, device=device),) for _ in range(2)]
    return Built(step, inputs, f"{stages}-stage residual VQ, {codes} codes of {dim}")


if __name__ == "__main__":
    main(build, __doc__)
