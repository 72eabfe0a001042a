"""Residual vector quantization of 8 x 256 vectors of dim 64 through 4 stages, each with its
own codebook of 1024 entries, bf16 (ninth hold-out). Per stage: squared distances from the
2048 residual vectors to the 1024 codes via one matmul (|r|^2 - 2 r C^T + |C|^2, the code
norms computed once at build, the sum in fp32), argmin over the codes, an embedding lookup
of the chosen codes, the commitment loss mean((r - q)^2) in fp32 as a tensor (no readback),
then the residual r - q goes to the next stage. The quantized output is the sum of the four
stages' codes, passed straight-through (x + (q - x), as the detached form is written
without autograd). Returns the quantized vectors (8 x 256 x 64), the codes (8 x 256 x 4,
int64) and the summed commitment loss (a 0-d fp32 tensor).

    traceinspect profile vq_codebook_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor


def build(device: torch.device, smoke: bool) -> Built:
    batch, seq, dim, codes, stages = (2, 16, 8, 32, 4) if smoke else (8, 256, 64, 1024, 4)
    dtype = low_precision(device)
    books = [torch.randn(codes, dim, device=device, dtype=dtype) for _ in range(stages)]
    book_sq = [c.float().pow(2).sum(-1) for c in books]  # (codes,) per stage

    @torch.no_grad()
    def step(x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        r = x.reshape(-1, dim)
        total = torch.zeros_like(r)
        loss = torch.zeros((), device=x.device)
        indices = []
        for book, sq in zip(books, book_sq, strict=True):
            scores = (r @ book.t()).float()
            dist = r.float().pow(2).sum(-1, keepdim=True) - 2 * scores + sq
            index = dist.argmin(dim=-1)
            q = F.embedding(index, book)
            loss = loss + (r.float() - q.float()).pow(2).mean()
            total = total + q
            r = r - q
            indices.append(index)
        flat = x.reshape(-1, dim)
        quantized = flat + (total - flat)  # straight-through
        codes_out = torch.stack(indices, dim=-1).view(batch, seq, stages)
        return quantized.view_as(x), codes_out, loss

    inputs = [(torch.randn(batch, seq, dim, device=device, dtype=dtype),) for _ in range(2)]
    description = f"residual VQ, {stages} stages x {codes} codes, {batch * seq} vectors x {dim}"
    return Built(step, inputs, description, [*books, *book_sq])


if __name__ == "__main__":
    main(build, __doc__)
