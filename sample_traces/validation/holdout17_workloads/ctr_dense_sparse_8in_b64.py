"""A click-through-rate model on 64 samples fed eight separate inputs, fp32 (seventeenth
hold-out), inference: a small step with many small inputs, so the graph's eight input copies
(a few KB each, six of them 512 bytes) are a visible part of it. The inputs: 13 dense
features (64 x 13), six categorical fields of one id each (64 x 1, int64, in range), each
looked up in its own ``nn.Embedding(1000, 16)`` (six gathers, 64 x 16 each), and a context
vector (64 x 32). The dense features, the six embeddings and the context are concatenated
(64 x 141, one ``torch.cat``) and fed to an MLP 141->256->128->1 with ReLU (three GEMMs with
their bias), then a sigmoid. About 13 kernels (six gathers, the concatenation, three GEMMs,
two ReLUs, the sigmoid; more where a thin fp32 GEMM is a split-K GEMM and its reduction),
none over more than 64 x 256 values: launch-bound. Inputs: the eight tensors above. Returns
the click probabilities (64 x 1, fp32).

    traceinspect profile ctr_dense_sparse_8in_b64.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn

DENSE, FIELDS, VOCAB, DIM, CONTEXT = 13, 6, 1000, 16, 32


def build(device: torch.device, smoke: bool) -> Built:
    batch, w1, w2 = (4, 32, 16) if smoke else (64, 256, 128)
    tables = nn.ModuleList(nn.Embedding(VOCAB, DIM) for _ in range(FIELDS))
    with torch.no_grad():
        for table in tables:
            table.weight.mul_(0.05)
    tables = tables.to(device).eval()
    width = DENSE + FIELDS * DIM + CONTEXT
    mlp = nn.Sequential(
        nn.Linear(width, w1), nn.ReLU(), nn.Linear(w1, w2), nn.ReLU(), nn.Linear(w2, 1)
    ).to(device).eval()  # fmt: skip

    @torch.no_grad()
    def step(
        dense: Tensor,
        ids_0: Tensor,
        ids_1: Tensor,
        ids_2: Tensor,
        ids_3: Tensor,
        ids_4: Tensor,
        ids_5: Tensor,
        context: Tensor,
    ) -> Tensor:
        ids = (ids_0, ids_1, ids_2, ids_3, ids_4, ids_5)
        embedded = [table(i).flatten(1) for table, i in zip(tables, ids, strict=True)]
        return torch.sigmoid(mlp(torch.cat((dense, *embedded, context), dim=1)))

    def make() -> tuple[Tensor, ...]:
        dense = torch.randn(batch, DENSE, device=device)
        ids = [torch.randint(0, VOCAB, (batch, 1), device=device) for _ in range(FIELDS)]
        context = torch.randn(batch, CONTEXT, device=device)
        return (dense, *ids, context)

    inputs = [make() for _ in range(2)]
    description = (
        f"CTR model, {DENSE} dense + {FIELDS} x Embedding({VOCAB}, {DIM}) + {CONTEXT} context "
        f"(8 inputs), cat, MLP {width}-{w1}-{w2}-1 + sigmoid, batch {batch}"
    )
    return Built(step, inputs, description, [tables, mlp])


if __name__ == "__main__":
    main(build, __doc__)
