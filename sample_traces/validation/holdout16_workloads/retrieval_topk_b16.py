"""Dense retrieval of the 10 nearest documents for 16 queries from a corpus of 65,536, bf16
(sixteenth hold-out), inference, as a bi-encoder's search step runs it on one GPU without an
index. The query encoder: Linear 384->768, GELU, Linear 768->384; its output L2-normalized
(``F.normalize``). The corpus: 65,536 x 384 embeddings (48 MiB, made at build and normalized
there, as a document encoder's output would be). The similarities: one GEMM, 16 x 384 by
384 x 65,536 (the corpus transposed, a view), 16 x 65,536 in bf16; ``torch.topk`` with k = 10
along the documents (sorted), in fp32 (one conversion kernel before it); then the top
documents' metadata, rows of 16 fp32 values from a 65,536 x 16 table (made at build), gathered
by the returned indices (``F.embedding``: 16 x 10 x 16). 31 kernels, 22 of them the top-k
(over rows of 65,536 torch runs its multi-block radix select: four passes of three kernels,
counts, memsets and prefix scans, then a gather and a sort of the 10), the GEMM reading the
48 MiB corpus the longest. Input: the query features (16 x
384). Returns the top scores (16 x 10, fp32), the document indices (16 x 10, int64) and their
metadata (16 x 10 x 16).

    traceinspect profile retrieval_topk_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

TOP_K, META = 10, 16


def build(device: torch.device, smoke: bool) -> Built:
    queries, d, hidden, docs = (4, 32, 64, 1024) if smoke else (16, 384, 768, 65_536)
    dtype = low_precision(device)
    encoder = nn.Sequential(nn.Linear(d, hidden), nn.GELU(), nn.Linear(hidden, d))
    encoder = encoder.to(device=device, dtype=dtype).eval()
    corpus = F.normalize(torch.randn(docs, d, device=device), dim=-1).to(dtype)
    metadata = torch.randn(docs, META, device=device)

    @torch.no_grad()
    def step(features: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        q = F.normalize(encoder(features), dim=-1)
        scores = (q @ corpus.t()).float()  # (Q, docs)
        top, idx = torch.topk(scores, TOP_K, dim=-1)
        return top, idx, F.embedding(idx, metadata)

    inputs = [(torch.randn(queries, d, device=device, dtype=dtype),) for _ in range(2)]
    description = (
        f"dense retrieval, query MLP {d}-{hidden}-{d}, cosine vs {docs} x {d} corpus, "
        f"top-{TOP_K} + metadata gather, {queries} queries"
    )
    return Built(step, inputs, description, [encoder, corpus, metadata])


if __name__ == "__main__":
    main(build, __doc__)
