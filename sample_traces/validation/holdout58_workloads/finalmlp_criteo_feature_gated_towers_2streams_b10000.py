"""FinalMLP (Mao et al., AAAI 2023), the enhanced two-stream MLP for click-through-rate prediction,
scoring 10000 Criteo-style impressions of 39 fields: the field embeddings, then each stream's
feature-selection gate and MLP on its own side stream, then the multi-head bilinear interaction
aggregation (fifty-eighth hold-out: first some 80 tiny kernels on the current stream, a column copy
and an embedding gather per field and their stack; then two concurrent chains of unequal length in
full fp32 (TF32 off), on one side 5 GEMMs of 0.3 to 13 GFLOP over the 10000 rows (the gate 16 ->
1024 -> 512 -> 624 with ReLUs and a sigmoid, the gated features, the MLP 624 -> 1024 -> 512 with
ReLUs), some 40 GFLOP, beside 6 such GEMMs, the second MLP ending in 512 -> 256, some 43 GFLOP, each
GEMM followed by elementwise kernels over up to 41 MB; then some 10 small kernels for the
aggregation: GEMM-bound chains side by side between launch-bound stretches). Laid out as
reczoo/FuxiCTR's ``model_zoo/FinalMLP/src/FinalMLP.py`` with its ``FinalMLP_default`` configuration
(embedding_dim 16, ``mlp1_hidden_units`` [1024, 512], ``mlp2_hidden_units`` [1024, 512, 256], ReLU,
no dropout or batch norm, ``use_fs``, ``fs_hidden_units`` [1024, 512], no gate context features,
``num_heads`` 2, ``batch_size`` 10000) on Criteo's 39 fields as FuxiCTR's Criteo configuration
treats them, all categorical (13 bucketized count features and 26 categorical fields; vocabularies
of 40 to 300000 ids here, some 1.6 M rows in all): ``FeatureEmbedding``, one ``nn.Embedding(vocab,
16)`` per field (``FeatureEmbeddingDict``'s loop) stacked to (10000, 39, 16) and flattened to 624.
Side stream 1, ``FeatureSelection``'s first gate (with no context features its input is the learned
bias ``fs1_ctx_bias`` (1, 16) repeated over the batch; ``MLP_Block`` 16 -> 1024 -> 512 with ReLU,
then ``Linear(512, 624)`` and a sigmoid), times 2, times the flat embedding, then ``mlp1``
(``MLP_Block`` 624 -> 1024 -> 512, a ReLU after each layer); side stream 2, the second gate and
``mlp2`` (624 -> 1024 -> 512 -> 256). Fork and join are the project's ``fork_join``
(``wait_stream``, and ``record_stream`` on the branch outputs outside capture). After the join, on
the current stream, ``InteractionAggregation(512, 256, 1, num_heads=2)``: ``w_x(x) + w_y(y)`` plus,
per head, the bilinear form x_h W_h y_h (the 256-wide head of x times its ``w_xy`` slice (256, 128)
as a batched matmul, then times the 128-wide head of y), summed over the heads; then the sigmoid.
fp32 with TF32 off for matrix multiplications (``torch.backends.cuda.matmul.allow_tf32 = False``,
torch's default, set in build), eval, no gradients, random weights (torch's defaults, FuxiCTR's
embedding initialization N(0, 1e-4), ``w_xy`` Xavier-normal). Input (two input sets): the field ids
(10000, 39) int64, each uniform below its field's vocabulary. Returns the click probabilities
(10000, 1).

    traceinspect profile finalmlp_criteo_feature_gated_towers_2streams_b10000.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

EMBED, MLP1, MLP2, FS_HIDDEN, HEADS = 16, (1024, 512), (1024, 512, 256), (1024, 512), 2
# 13 bucketized count features, then 26 categorical fields (some 1.6 M ids in all)
VOCABS = (
    40, 60, 90, 50, 120, 80, 60, 70, 90, 12, 30, 40, 70,
    1400, 550, 300000, 200000, 300, 24, 12000, 600, 4, 90000, 5500, 250000, 3200, 28, 14000,
    280000, 11, 5600, 2200, 5, 270000, 18, 16, 80000, 100, 60000,
)  # fmt: skip


def mlp_block(widths: tuple[int, ...], out: int | None) -> nn.Sequential:
    """FuxiCTR's MLP_Block: Linear + ReLU per hidden layer; an output Linear + sigmoid when
    ``out`` is given."""
    layers: list[nn.Module] = []
    for cin, cout in zip(widths[:-1], widths[1:], strict=True):
        layers += [nn.Linear(cin, cout), nn.ReLU()]
    if out is not None:
        layers += [nn.Linear(widths[-1], out), nn.Sigmoid()]
    return nn.Sequential(*layers)


class InteractionAggregation(nn.Module):
    def __init__(self, x_dim: int, y_dim: int, heads: int) -> None:
        super().__init__()
        self.heads, self.head_x, self.head_y = heads, x_dim // heads, y_dim // heads
        self.w_x, self.w_y = nn.Linear(x_dim, 1), nn.Linear(y_dim, 1)
        self.w_xy = nn.Parameter(torch.empty(heads * self.head_x * self.head_y, 1))
        nn.init.xavier_normal_(self.w_xy)

    def forward(self, x: Tensor, y: Tensor) -> Tensor:
        output = self.w_x(x) + self.w_y(y)
        head_x = x.view(-1, self.heads, self.head_x)
        head_y = y.view(-1, self.heads, self.head_y)
        xy = torch.matmul(
            torch.matmul(head_x.unsqueeze(2), self.w_xy.view(self.heads, self.head_x, -1)).view(
                -1, self.heads, 1, self.head_y
            ),
            head_y.unsqueeze(-1),
        ).squeeze(-1)
        return output + xy.sum(dim=1)


class FinalMLP(nn.Module):
    def __init__(self, vocabs: tuple[int, ...], e: int) -> None:
        super().__init__()
        self.embeddings = nn.ModuleList(nn.Embedding(v, e) for v in vocabs)
        for emb in self.embeddings:
            nn.init.normal_(emb.weight, std=1e-4)
        feature_dim = e * len(vocabs)
        self.mlp1 = mlp_block((feature_dim, *MLP1), None)
        self.mlp2 = mlp_block((feature_dim, *MLP2), None)
        self.fs1_ctx_bias = nn.Parameter(torch.zeros(1, e))
        self.fs2_ctx_bias = nn.Parameter(torch.zeros(1, e))
        self.fs1_gate = mlp_block((e, *FS_HIDDEN), feature_dim)
        self.fs2_gate = mlp_block((e, *FS_HIDDEN), feature_dim)
        self.fusion = InteractionAggregation(MLP1[-1], MLP2[-1], HEADS)

    def embed(self, ids: Tensor) -> Tensor:
        fields = [emb(ids[:, i]) for i, emb in enumerate(self.embeddings)]
        return torch.stack(fields, dim=1).flatten(start_dim=1)

    def stream(self, flat: Tensor, bias: Tensor, gate: nn.Module, mlp: nn.Module) -> Tensor:
        g = gate(bias.repeat(flat.size(0), 1)) * 2
        return mlp(flat * g)


def build(device: torch.device, smoke: bool) -> Built:
    batch = 64 if smoke else 10000
    vocabs = tuple(min(v, 50) for v in VOCABS) if smoke else VOCABS
    torch.backends.cuda.matmul.allow_tf32 = False  # full fp32 GEMMs
    model = FinalMLP(vocabs, EMBED).to(device).eval()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(ids: Tensor) -> Tensor:
        flat = model.embed(ids)
        x, y = fork_join(
            device,
            streams,
            [
                lambda: model.stream(flat, model.fs1_ctx_bias, model.fs1_gate, model.mlp1),
                lambda: model.stream(flat, model.fs2_ctx_bias, model.fs2_gate, model.mlp2),
            ],
        )
        return torch.sigmoid(model.fusion(x, y))

    def make() -> tuple[Tensor]:
        cols = [torch.randint(0, v, (batch,), device=device) for v in vocabs]
        return (torch.stack(cols, dim=1),)

    inputs = [make() for _ in range(2)]
    description = (
        f"FinalMLP (FuxiCTR default): {len(vocabs)} field embeddings d{EMBED}, gate + MLP "
        f"{list(MLP1)} beside gate + MLP {list(MLP2)} on 2 side streams, 2-head bilinear "
        f"aggregation, b{batch}, fp32 (TF32 off)"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
