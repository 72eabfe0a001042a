"""A multimodal click-through ranker, AutoInt+ (Song et al., 2019, self-attentive feature
interaction, with the parallel DNN of the "+" variant) over three towers of unequal kinds on
three side streams, the interaction after the join (thirty-ninth hold-out): 128 candidate
items, bf16 on a GPU (the final sigmoid in fp32), eval mode, no gradients. Side stream 1, the
image tower on the item thumbnails (128, 3, 128, 128): four ``Conv2d(3 x 3, stride 2, padding
1, bias=False)`` + BatchNorm (eval, running statistics set at build) + ReLU, 3 -> 32 -> 64 ->
128 -> 256 channels (128 -> 8), the mean over the 8 x 8 positions and ``Linear(256, 64)``. Side
stream 2, the sparse tower on the multi-hot ids (128, 8, 20): 8 fields of 20 ids each, each
field pooled by its own ``nn.EmbeddingBag(100000, 64, mode="sum")`` (2-D ids, no offsets),
stacked to (128, 8, 64): gathers, memory-bound. Side stream 3, the dense tower on the 256 dense
features (128, 256): an MLP 256 -> 512 -> 256 -> 64, ReLU after the first two. Fork and join
are the project's ``fork_join`` (``wait_stream``, and ``record_stream`` on the branch outputs
outside capture). After the join, on the current stream: the 10 field embeddings (image, dense,
the 8 bags) stacked to (128, 10, 64); three AutoInt interacting layers, each multi-head
self-attention over the 10 fields with 2 heads of 32 (``Linear(64, 64, bias=False)`` each for
queries, keys and values, ``F.scaled_dot_product_attention`` scaled by 1 / sqrt(32), the heads
concatenated) plus a ``Linear(64, 64, bias=False)`` residual projection of the layer's input,
then a ReLU; the result flattened (128, 640) into ``Linear(640, 1)``; beside it the DNN on the
flattened field embeddings, 640 -> 256 -> 256 -> 1 with ReLU; the two logits summed and a
sigmoid in fp32. On a CPU the towers run in order. Inputs: thumbnails (128, 3, 128, 128), ids
(128, 8, 20) int64, dense features (128, 256). Returns the (128, 1) click probabilities (fp32).

    traceinspect profile autoint_multimodal_rec_3streams_b128.py
"""

from __future__ import annotations

from itertools import pairwise

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _models import random_batch_norm_stats
from _streams import fork_join, side_streams
from torch import Tensor, nn

FIELDS, INTERACTING_LAYERS, HEADS = 8, 3, 2


class ImageTower(nn.Module):
    def __init__(self, widths: tuple[int, ...], d: int) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        for cin, cout in pairwise(widths):
            layers += [
                nn.Conv2d(cin, cout, 3, 2, 1, bias=False),
                nn.BatchNorm2d(cout),
                nn.ReLU(),
            ]
        self.convs = nn.Sequential(*layers)
        self.proj = nn.Linear(widths[-1], d)

    def forward(self, x: Tensor) -> Tensor:
        return self.proj(self.convs(x).mean(dim=(2, 3)))


class SparseTower(nn.Module):
    def __init__(self, vocab: int, d: int) -> None:
        super().__init__()
        self.bags = nn.ModuleList(nn.EmbeddingBag(vocab, d, mode="sum") for _ in range(FIELDS))

    def forward(self, ids: Tensor) -> Tensor:
        return torch.stack([bag(ids[:, i]) for i, bag in enumerate(self.bags)], dim=1)


class InteractingLayer(nn.Module):
    def __init__(self, d: int) -> None:
        super().__init__()
        self.q = nn.Linear(d, d, bias=False)
        self.k = nn.Linear(d, d, bias=False)
        self.v = nn.Linear(d, d, bias=False)
        self.res = nn.Linear(d, d, bias=False)

    def forward(self, x: Tensor) -> Tensor:
        b, f, d = x.shape
        q, k, v = (
            proj(x).view(b, f, HEADS, d // HEADS).transpose(1, 2)
            for proj in (self.q, self.k, self.v)
        )
        att = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, f, d)
        return F.relu(att + self.res(x))


def mlp(widths: tuple[int, ...]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for i, (cin, cout) in enumerate(pairwise(widths)):
        layers.append(nn.Linear(cin, cout))
        if i < len(widths) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def build(device: torch.device, smoke: bool) -> Built:
    batch, size, bag, vocab, d, widths, dense, hidden = (
        (4, 32, 5, 100, 16, (3, 8, 8, 16, 16), 32, 32)
        if smoke
        else (128, 128, 20, 100_000, 64, (3, 32, 64, 128, 256), 256, 256)
    )
    dtype = low_precision(device)
    fields = FIELDS + 2
    image = ImageTower(widths, d)
    sparse = SparseTower(vocab, d)
    dense_tower = mlp((dense, 2 * dense, dense, d))
    interacting = nn.Sequential(*(InteractingLayer(d) for _ in range(INTERACTING_LAYERS)))
    att_out = nn.Linear(fields * d, 1)
    dnn = mlp((fields * d, hidden, hidden, 1))
    model = nn.ModuleList([image, sparse, dense_tower, interacting, att_out, dnn])
    random_batch_norm_stats(model)
    model.to(device, dtype).eval()
    streams = side_streams(device, 3)

    @torch.no_grad()
    def step(thumbs: Tensor, ids: Tensor, feats: Tensor) -> Tensor:
        img, bags, dns = fork_join(
            device,
            streams,
            [lambda: image(thumbs), lambda: sparse(ids), lambda: dense_tower(feats)],
        )
        x = torch.cat([img[:, None], dns[:, None], bags], dim=1)  # (b, 10, d)
        logit = att_out(interacting(x).flatten(1)) + dnn(x.flatten(1))
        return logit.float().sigmoid()

    inputs = [
        (
            torch.randn(batch, 3, size, size, device=device, dtype=dtype),
            torch.randint(0, vocab, (batch, FIELDS, bag), device=device),
            torch.randn(batch, dense, device=device, dtype=dtype),
        )
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"AutoInt+ multimodal ranker: image CNN / {FIELDS} embedding bags / dense MLP towers on "
        f"3 side streams + {INTERACTING_LAYERS} interacting layers + DNN, b{batch}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
