"""GRU4Rec (Hidasi et al., 2016) as the session tower of a two-tower retrieval step: 64 sessions of
up to 50 clicks encoded by a 2-layer GRU on one side stream, beside an MLP item tower encoding 2048
candidate items from their ids, categories and content features on the other, then, after the join,
every session scored against every candidate and each session's top 20 (sixtieth hold-out: two
concurrent chains of unequal make, fp16: on side stream 1 the item embedding and ``nn.GRU(256, 384,
num_layers 2, bias False)`` over the 50 positions, whose layers cuDNN pipelines over streams of its
own, some 200 small GEMM and cell kernels, then the dense projection and the gather of each
session's last real position; on side stream 2 two embedding gathers, the concatenation and three
GEMMs of 2048 rows (384 -> 512 -> 512 -> 256) with ReLUs and the L2 normalisation, some 15 kernels;
then the (64, 2048) score GEMM and a top-k; some 0.4 to 1 ms of GPU time in all, most of it the
recurrence). The session tower laid out as RUCAIBox/RecBole's ``GRU4Rec`` (``Embedding(n_items, 256,
padding_idx 0)``, embedding dropout off in eval, ``nn.GRU(256, 384, 2, bias False, batch_first)``,
``Linear(384, 256)``, ``gather_indexes`` at ``item_seq_len - 1``: the padded positions after each
session's end run through the GRU too, RecBole packing nothing), the item tower as the usual
two-tower retrieval MLP (the item id's ``Embedding(n_items, 256)``, a category ``Embedding(500,
64)`` and 64 content features concatenated, ``Linear(384, 512)``, ReLU, ``Linear(512, 512)``, ReLU,
``Linear(512, 256)``, L2-normalised), the session vector L2-normalised too and the scores their
cosine over a temperature of 0.05. Fork and join are the project's ``fork_join`` (``wait_stream``,
and ``record_stream`` on the branch outputs outside capture). fp16 weights and activations on a GPU
(fp32 on a CPU), eval, no gradients, random weights (torch's defaults). Inputs (two input sets),
batch first: the sessions' item ids (64, 50) int64, uniform in [1, 100000) up to each session's
length and 0 after it, the lengths (64,) int64, uniform in [5, 50], the candidates' item ids (2048,)
int64, their categories (2048,) int64 and their content features (2048, 64), Gaussian, fp16. Returns
the top-20 scores (64, 20), fp16, and candidate indices (64, 20) int64.

    traceinspect profile gru4rec_session_beside_item_tower_2streams_b64.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

N_ITEMS, N_CATEGORIES, EMBED, HIDDEN, MAX_LEN = 100000, 500, 256, 384, 50
N_CANDIDATES, CONTENT, TOP_K, TEMPERATURE = 2048, 64, 20, 0.05


class GRU4Rec(nn.Module):
    def __init__(self, n_items: int, embed: int, hidden: int) -> None:
        super().__init__()
        self.item_embedding = nn.Embedding(n_items, embed, padding_idx=0)
        self.gru_layers = nn.GRU(embed, hidden, 2, bias=False, batch_first=True)
        self.dense = nn.Linear(hidden, embed)

    def forward(self, item_seq: Tensor, item_seq_len: Tensor) -> Tensor:
        gru_output, _ = self.gru_layers(self.item_embedding(item_seq))
        gru_output = self.dense(gru_output)
        index = (item_seq_len - 1).view(-1, 1, 1).expand(-1, -1, gru_output.shape[-1])
        return gru_output.gather(dim=1, index=index).squeeze(1)  # gather_indexes


class ItemTower(nn.Module):
    def __init__(self, n_items: int, n_categories: int, embed: int, content: int) -> None:
        super().__init__()
        self.item_embedding = nn.Embedding(n_items, embed)
        self.category_embedding = nn.Embedding(n_categories, content)
        self.mlp = nn.Sequential(
            nn.Linear(embed + 2 * content, 512),
            nn.ReLU(),
            nn.Linear(512, 512),
            nn.ReLU(),
            nn.Linear(512, embed),
        )

    def forward(self, ids: Tensor, categories: Tensor, features: Tensor) -> Tensor:
        x = torch.cat(
            (self.item_embedding(ids), self.category_embedding(categories), features), dim=1
        )
        return F.normalize(self.mlp(x), dim=-1)


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, max_len, n_items, embed, hidden, n_cand, content, k = 2, 6, 40, 8, 16, 12, 4, 3
    else:
        batch, max_len, n_items, embed, hidden = 64, MAX_LEN, N_ITEMS, EMBED, HIDDEN
        n_cand, content, k = N_CANDIDATES, CONTENT, TOP_K
    dtype = torch.float16 if device.type == "cuda" else torch.float32
    session_tower = GRU4Rec(n_items, embed, hidden).to(device, dtype).eval()
    item_tower = ItemTower(n_items, N_CATEGORIES, embed, content).to(device, dtype).eval()
    streams = side_streams(device, 2)

    def encode_sessions(item_seq: Tensor, item_seq_len: Tensor) -> Tensor:
        return F.normalize(session_tower(item_seq, item_seq_len), dim=-1)

    @torch.no_grad()
    def step(
        item_seq: Tensor, item_seq_len: Tensor, cand_ids: Tensor, cand_cats: Tensor, feats: Tensor
    ) -> tuple[Tensor, Tensor]:
        sessions, items = fork_join(
            device,
            streams,
            [
                lambda: encode_sessions(item_seq, item_seq_len),
                lambda: item_tower(cand_ids, cand_cats, feats),
            ],
        )
        scores = sessions @ items.t() / TEMPERATURE
        top = scores.topk(k, dim=-1)
        return top.values, top.indices

    def make() -> tuple[Tensor, ...]:
        lengths = torch.randint(5 if not smoke else 2, max_len + 1, (batch,), device=device)
        ids = torch.randint(1, n_items, (batch, max_len), device=device)
        positions = torch.arange(max_len, device=device).unsqueeze(0)
        ids = ids.masked_fill(positions >= lengths.unsqueeze(1), 0)
        return (
            ids,
            lengths,
            torch.randint(1, n_items, (n_cand,), device=device),
            torch.randint(0, N_CATEGORIES, (n_cand,), device=device),
            torch.randn(n_cand, content, device=device, dtype=dtype),
        )

    inputs = [make() for _ in range(2)]
    precision = str(dtype).removeprefix("torch.")
    description = (
        f"GRU4Rec session tower (2-layer GRU {hidden}, {max_len} clicks) beside an item-tower "
        f"MLP ({n_cand} candidates) on 2 side streams, scores + top-{k}, {precision}, b{batch}"
    )
    return Built(step, inputs, description, [session_tower, item_tower])


if __name__ == "__main__":
    main(build, __doc__)
