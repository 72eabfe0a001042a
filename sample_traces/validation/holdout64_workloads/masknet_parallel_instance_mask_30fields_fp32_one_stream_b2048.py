"""MaskNet (Wang, She and Zhang, DLP-KDD 2021, "MaskNet: Introducing Feature-Wise Multiplication to
CTR Ranking Models by Instance-Guided Mask") in its parallel form scoring 2048 impressions of 20
categorical and 10 numeric features, each feature its own input tensor as a feature-dict loader
hands them over (sixty-fourth hold-out: one stream, fp32 with TF32 off, a small graph of many small
inputs and many small kernels: 16 ``nn.Embedding`` lookups of the single-valued fields (16 wide,
tables of 20 to 200,000 rows), 4 ``nn.EmbeddingBag(mode="mean", padding_idx=0)`` over the
multi-valued fields' fixed-length bags of 8 ids (padded with 0), the 10 numeric features each
embedded by a bias-free ``Linear(1, 16)``; the 30 embeddings' concatenation (2048, 480); the
per-field ``LayerNorm(16)`` of each, 30 launches, and their concatenation; three MaskBlocks side by
side, each an instance-guided mask (``Linear(480, 480)``, ReLU, ``Linear(480, 480)``) over the raw
embeddings times the normalised ones, then ``Linear(480, 128)`` without bias, a LayerNorm and a
ReLU; the blocks' concatenation (2048, 384), the MLP of 400, 400 with ReLUs and ``Linear(400, 1)``;
the sigmoid and the log loss; some 100 kernels, nearly all a few microseconds (the largest GEMMs
2048 x 480 x 480), some 0.3 to 0.8 ms of GPU time). Laid out as FuxiCTR's ``MaskNet`` with
``model_type="ParallelMaskNet"`` (its ``MaskBlock``: ``mask_layer`` as ``Linear(input_dim,
hidden_dim * reduction_ratio)``, ReLU, ``Linear(.., hidden_dim)``, ``hidden_layer`` as ``Linear(
hidden_dim, output_dim, bias=False)``, ``LayerNorm``, ReLU, and ``V_mask * V_hidden`` between them;
``emb_layernorm`` on, one ``LayerNorm(embedding_dim)`` a field; ``ParallelMaskNet``'s blocks all on
the same embeddings, concatenated, then its DNN; the numeric features embedded as FuxiCTR's
``FeatureEmbeddingDict`` embeds them, ``Linear(1, embedding_dim, bias=False)``, and its sequence
fields mean-pooled over the non-padding ids), with this set's fields (20 categorical, 4 of them
bags, 10 numeric, embedding dim 16, a sum of 542,010 table rows) and sizes (3 blocks of 128,
reduction ratio 1, DNN 400-400), dropout off in eval. fp32 weights and activations with
``torch.backends.cuda.matmul.allow_tf32`` off (torch's default, set at build), eval, no gradients,
random weights (torch's defaults). Inputs (two input sets): the 16 single-valued fields (2048,)
int64, uniform below their table sizes; the 4 bags (2048, 8) int64, uniform below their table sizes,
0 (padding) in about a third of the slots; the 10 numeric features (2048, 1) fp32, Gaussian; the
click labels (2048,) fp32 of 0s and 1s: 31 inputs. Returns the click probabilities (2048,) and the
log loss (a 0-d fp32 tensor).

    traceinspect profile masknet_parallel_instance_mask_30fields_fp32_one_stream_b2048.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn

SINGLE = (
    1000,
    500,
    200_000,
    50_000,
    300,
    20,
    10_000,
    3_000,
    100,
    60,
    25_000,
    8_000,
    400,
    30,
    90_000,
    150_000,
)
BAGS, BAG_LEN, NUMERIC, EMBED = (2_000, 500, 1_000, 100), 8, 10, 16
BLOCKS, BLOCK_DIM, REDUCTION, DNN = 3, 128, 1, (400, 400)


class MaskBlock(nn.Module):
    def __init__(self, dim: int, out: int) -> None:
        super().__init__()
        self.mask_layer = nn.Sequential(
            nn.Linear(dim, dim * REDUCTION), nn.ReLU(), nn.Linear(dim * REDUCTION, dim)
        )
        self.hidden_layer = nn.Sequential(
            nn.Linear(dim, out, bias=False), nn.LayerNorm(out), nn.ReLU()
        )

    def forward(self, v_emb: Tensor, v_hidden: Tensor) -> Tensor:
        return self.hidden_layer(self.mask_layer(v_emb) * v_hidden)


class ParallelMaskNet(nn.Module):
    def __init__(self, single: tuple[int, ...], bags: tuple[int, ...], numeric: int) -> None:
        super().__init__()
        self.single = nn.ModuleList(nn.Embedding(n, EMBED) for n in single)
        self.bags = nn.ModuleList(
            nn.EmbeddingBag(n, EMBED, mode="mean", padding_idx=0) for n in bags
        )
        self.numeric = nn.ModuleList(nn.Linear(1, EMBED, bias=False) for _ in range(numeric))
        fields = len(single) + len(bags) + numeric
        self.emb_norm = nn.ModuleList(nn.LayerNorm(EMBED) for _ in range(fields))
        dim = fields * EMBED
        self.blocks = nn.ModuleList(MaskBlock(dim, BLOCK_DIM) for _ in range(BLOCKS))
        layers: list[nn.Module] = []
        cin = BLOCKS * BLOCK_DIM
        for units in DNN:
            layers += [nn.Linear(cin, units), nn.ReLU()]
            cin = units
        layers.append(nn.Linear(cin, 1))
        self.dnn = nn.Sequential(*layers)

    def forward(self, single: list[Tensor], bags: list[Tensor], numeric: list[Tensor]) -> Tensor:
        feats = [emb(x) for emb, x in zip(self.single, single, strict=True)]
        feats += [emb(x) for emb, x in zip(self.bags, bags, strict=True)]
        feats += [emb(x) for emb, x in zip(self.numeric, numeric, strict=True)]
        v_emb = torch.cat(feats, dim=1)
        v_hidden = torch.cat([norm(f) for norm, f in zip(self.emb_norm, feats, strict=True)], 1)
        x = torch.cat([block(v_emb, v_hidden) for block in self.blocks], dim=1)
        return torch.sigmoid(self.dnn(x)).squeeze(1)


def build(device: torch.device, smoke: bool) -> Built:
    batch = 16 if smoke else 2048
    single = tuple(min(n, 50) for n in SINGLE) if smoke else SINGLE
    bags = tuple(min(n, 50) for n in BAGS) if smoke else BAGS
    torch.backends.cuda.matmul.allow_tf32 = False  # full fp32 GEMMs (torch's default)
    model = ParallelMaskNet(single, bags, NUMERIC).to(device).eval()
    n_single, n_bags = len(single), len(bags)

    @torch.no_grad()
    def step(*features: Tensor) -> tuple[Tensor, Tensor]:
        ids = list(features[:n_single])
        bag_ids = list(features[n_single : n_single + n_bags])
        numeric = list(features[n_single + n_bags : -1])
        prob = model(ids, bag_ids, numeric)
        return prob, F.binary_cross_entropy(prob, features[-1])

    def input_set() -> tuple[Tensor, ...]:
        ids = [torch.randint(0, n, (batch,), device=device) for n in single]
        bag_ids = [
            torch.randint(1, n, (batch, BAG_LEN), device=device)
            * (torch.rand(batch, BAG_LEN, device=device) > 1 / 3)
            for n in bags
        ]
        numeric = [torch.randn(batch, 1, device=device) for _ in range(NUMERIC)]
        labels = torch.randint(0, 2, (batch,), device=device).float()
        return (*ids, *bag_ids, *numeric, labels)

    inputs = [input_set() for _ in range(2)]
    fields = n_single + n_bags + NUMERIC
    description = (
        f"parallel MaskNet: {n_single} + {n_bags} bag + {NUMERIC} numeric fields ({fields} x "
        f"{EMBED}), {BLOCKS} MaskBlocks of {BLOCK_DIM}, DNN {DNN}, {len(inputs[0])} inputs, "
        f"fp32, one stream, b{batch}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
