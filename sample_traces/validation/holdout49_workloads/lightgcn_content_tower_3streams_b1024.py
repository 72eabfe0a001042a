"""Top-20 recommendation for 1,024 users by a LightGCN collaborative filter (He et al., 2020)
fused with content towers, the graph propagation, the item content tower and the user profile
tower on three side streams (forty-ninth hold-out: graph collaborative filtering, a memory-bound
gather / atomic scatter branch beside a GEMM branch and a tiny one): a user-item graph of 60,000
users and 40,000 items with 600,000 random interactions (1.2 M directed edges, each weighted 1 /
sqrt(deg(u) deg(i)), the symmetric normalization, made at build), a 64-wide embedding per node
(fp32, ``nn.Embedding``). Side stream 1, the propagation: 3 LightGCN layers, each an
``index_select`` of the 1.2 M source rows (1.2 M x 64 fp32, 307 MB), a multiply by the edge
weights and an ``index_add_`` into a zeroed (100,000 x 64) table (fp32 atomics), then the mean
of the 4 layers' embeddings (the layer-0 one included): some 16 kernels, memory- and
atomic-bound. Side stream 2, the item content tower on 40,000 precomputed 768-wide text features
(bf16, a buffer made at build): ``Linear(768, 2048)`` + GELU, ``Linear(2048, 2048)`` + GELU,
``Linear(2048, 64)``, some 236 GMAC of large GEMMs. Side stream 3, the user profile tower on the
batch's 256-wide profile features: ``Linear(256, 512)`` + GELU, ``Linear(512, 64)``, a few small
kernels. After the join, on the current stream: the batch users' propagated embeddings gathered
and added to their profile vectors, every item's propagated embedding added to its content
vector, the (1,024 x 40,000) scores as one bf16 GEMM and ``topk`` 20 per user. bf16 on a GPU for
the towers and the scores, fp32 for the propagation, eval mode, no gradients. Fork and join are
the project's ``fork_join`` (``wait_stream``, and ``record_stream`` on the branch outputs
outside capture). Inputs: the user ids (1,024,) int64 and their profile features (1,024, 256).
Returns the top-20 scores (1,024, 20) fp32 and item ids (1,024, 20) int64.

    traceinspect profile lightgcn_content_tower_3streams_b1024.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _blocks import mlp_tower
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

LAYERS, TOP_K = 3, 20


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, users, items, interactions, d = 8, 60, 40, 300, 8
        text, content_hidden, profile, profile_hidden = 16, 32, 8, 16
    else:
        batch, users, items, interactions, d = 1024, 60_000, 40_000, 600_000, 64
        text, content_hidden, profile, profile_hidden = 768, 2048, 256, 512
    dtype = low_precision(device)
    nodes = users + items
    u = torch.randint(0, users, (interactions,))
    i = torch.randint(0, items, (interactions,)) + users
    src, dst = torch.cat([u, i]), torch.cat([i, u])
    deg = torch.bincount(dst, minlength=nodes).clamp_(min=1).float()
    weight = (deg[src] * deg[dst]).rsqrt()[:, None].to(device)
    src, dst = src.to(device), dst.to(device)
    table = nn.Embedding(nodes, d).to(device)
    nn.init.normal_(table.weight, std=0.1)
    content = mlp_tower((text, content_hidden, content_hidden, d), nn.GELU)
    user_tower = mlp_tower((profile, profile_hidden, d), nn.GELU)
    towers = nn.ModuleList([content, user_tower]).to(device, dtype).eval()
    item_text = torch.randn(items, text, device=device, dtype=dtype)
    streams = side_streams(device, 3)

    def propagate() -> Tensor:
        e = table.weight
        acc = e
        for _ in range(LAYERS):
            msg = e.index_select(0, src) * weight
            e = torch.zeros_like(e).index_add_(0, dst, msg)
            acc = acc + e
        return acc / (LAYERS + 1)

    @torch.no_grad()
    def step(user_ids: Tensor, profiles: Tensor) -> tuple[Tensor, Tensor]:
        graph, item_vec, user_vec = fork_join(
            device,
            streams,
            [propagate, lambda: content(item_text), lambda: user_tower(profiles)],
        )
        users_e = graph.index_select(0, user_ids) + user_vec.float()
        items_e = graph[users:] + item_vec.float()
        scores = users_e.to(dtype) @ items_e.to(dtype).t()
        values, ids = scores.topk(TOP_K, dim=1)
        return values.float(), ids

    inputs = [
        (
            torch.randint(0, users, (batch,), device=device),
            torch.randn(batch, profile, device=device, dtype=dtype),
        )
        for _ in range(2)
    ]
    description = (
        f"LightGCN {LAYERS} layers over {users}+{items} nodes, {2 * interactions} edges, d{d}, "
        f"item content tower {text}-{content_hidden}-{content_hidden}-{d}, user tower, "
        f"top-{TOP_K}, b{batch}, 3 side streams"
    )
    return Built(step, inputs, description, [table, towers, item_text, src, dst, weight])


if __name__ == "__main__":
    main(build, __doc__)
