"""FiBiNET (Huang, Zhang and Zhang, 2019: a squeeze-excitation network over the field embeddings and
bilinear feature interactions) scoring a serving batch of 4096 Criteo impressions (sixty-first
hold-out: one stream, fp16: one embedding gather over the 39 fields (13 bucketised numeric, 26
hashed categorical), the SENET layer's field mean and two tiny GEMMs with ReLUs, then the
"field_interaction" bilinear layer on the raw and on the re-weighted embeddings, each two
``index_select`` gathers of the 741 field pairs, (4096, 741, 16) fp16 (97 MB) apiece, and the
per-pair 16 x 16 weights as one batched GEMM over the pairs; the concatenated (4096, 23712)
interactions through the DNN 23712 -> 400 -> 400 -> 400 -> 1, the first a 78 GFLOP GEMM; the
logistic-regression part's gather and sum and the sigmoid; some 30 kernels, mostly memory-bound
gathers, copies and products, some 0.5 to 1 ms of GPU time). Laid out as reczoo/FuxiCTR's
``FiBiNET`` with its vectorised ``BilinearInteractionV2`` (``bilinear_type="field_interaction"``:
the pairs i < j of ``torch.triu_indices``, left and right embeddings by ``index_select``, a weight
per pair, hidden = v_i W_ij, p_ij = hidden * v_j), its ``SqueezeExcitation`` (reduction ratio 3: Z =
mean over the embedding, A = ReLU(W2 ReLU(W1 Z)), both without bias, V = E * A) and
``LogisticRegression`` (a 1-wide embedding summed plus a bias): embedding 16, DNN hidden units [400,
400, 400] with ReLU, batch norm and dropout off, the output a sigmoid of the DNN's logit plus the LR
part; the per-pair product written as ``torch.einsum("bpk,pkl->bpl")``, which runs as one bmm over
the pairs (``torch.matmul`` of the reference would materialise the weights broadcast over the
batch). One embedding table over all fields with per-field offsets: 13 numeric fields of 64 buckets
and 26 categorical fields hashed into 200,000 buckets (5.2 million rows). fp16 weights and
activations on a GPU (fp32 on a CPU), eval, no gradients, random weights (torch's defaults). Input
(two input sets): the field indices (4096, 39) int64, uniform within each field. Returns the click
probabilities (4096, 1).

    traceinspect profile fibinet_criteo_senet_bilinear_fp16_one_stream_b4096.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn

NUMERIC, CATEGORICAL, NUMERIC_BUCKETS, HASH_BUCKETS = 13, 26, 64, 200_000
EMBED, HIDDEN, REDUCTION = 16, (400, 400, 400), 3


class SqueezeExcitation(nn.Module):
    def __init__(self, fields: int, reduction: int) -> None:
        super().__init__()
        reduced = max(1, fields // reduction)
        self.excitation = nn.Sequential(
            nn.Linear(fields, reduced, bias=False),
            nn.ReLU(),
            nn.Linear(reduced, fields, bias=False),
            nn.ReLU(),
        )

    def forward(self, emb: Tensor) -> Tensor:
        return emb * self.excitation(emb.mean(dim=-1)).unsqueeze(-1)


class BilinearInteraction(nn.Module):
    def __init__(self, fields: int, embed: int) -> None:
        super().__init__()
        self.register_buffer("triu_index", torch.triu_indices(fields, fields, offset=1))
        pairs = self.triu_index.shape[1]
        self.bilinear_w = nn.Parameter(torch.empty(pairs, embed, embed))
        nn.init.xavier_normal_(self.bilinear_w)

    def forward(self, emb: Tensor) -> Tensor:
        left = torch.index_select(emb, 1, self.triu_index[0])
        right = torch.index_select(emb, 1, self.triu_index[1])
        return torch.einsum("bpk,pkl->bpl", left, self.bilinear_w) * right


class FiBiNET(nn.Module):
    def __init__(self, field_sizes: list[int], embed: int, hidden: tuple[int, ...]) -> None:
        super().__init__()
        fields = len(field_sizes)
        offsets = torch.tensor([0, *field_sizes[:-1]]).cumsum(0)
        self.register_buffer("offsets", offsets)
        self.embedding = nn.Embedding(sum(field_sizes), embed)
        self.lr_embedding = nn.Embedding(sum(field_sizes), 1)
        self.lr_bias = nn.Parameter(torch.zeros(1))
        self.senet = SqueezeExcitation(fields, REDUCTION)
        self.bilinear1 = BilinearInteraction(fields, embed)
        self.bilinear2 = BilinearInteraction(fields, embed)
        layers: list[nn.Module] = []
        width = fields * (fields - 1) * embed
        for units in hidden:
            layers += [nn.Linear(width, units), nn.ReLU()]
            width = units
        self.dnn = nn.Sequential(*layers, nn.Linear(width, 1))

    def forward(self, x: Tensor) -> Tensor:
        ids = x + self.offsets
        emb = self.embedding(ids)
        p = self.bilinear1(emb)
        q = self.bilinear2(self.senet(emb))
        dnn_out = self.dnn(torch.cat((p, q), dim=1).flatten(1))
        lr_out = self.lr_embedding(ids).sum(dim=1) + self.lr_bias
        return torch.sigmoid(dnn_out + lr_out)


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, numeric, categorical, buckets, embed, hidden = 8, 3, 4, 50, 4, (16, 16)
    else:
        batch, numeric, categorical, buckets, embed, hidden = (
            4096,
            NUMERIC,
            CATEGORICAL,
            HASH_BUCKETS,
            EMBED,
            HIDDEN,
        )
    field_sizes = [NUMERIC_BUCKETS] * numeric + [buckets] * categorical
    dtype = torch.float16 if device.type == "cuda" else torch.float32
    model = FiBiNET(field_sizes, embed, hidden).to(device, dtype).eval()
    sizes = torch.tensor(field_sizes, device=device)

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    def make() -> tuple[Tensor]:
        return ((torch.rand(batch, len(field_sizes), device=device) * sizes).long(),)

    inputs = [make() for _ in range(2)]
    precision = str(dtype).removeprefix("torch.")
    description = (
        f"FiBiNET: {len(field_sizes)} fields x {embed}, SENET + field-interaction bilinear, "
        f"DNN {list(hidden)}, {precision}, one stream, b{batch}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
