"""A heterogeneous GraphSAGE link predictor scoring 200000 user-movie pairs on a MovieLens-1M-sized
graph, full-batch, each relation's message passing on its own side stream (fifty-sixth hold-out: two
fork / join rounds, one a layer, of three concurrent chains of some 11 kernels each, an
``index_select`` gather of the source features over the relation's edges, two ``scatter_add_``s (the
degrees and the messages, with atomics) and small GEMMs, over 19 to 205 MB of fp32 messages: memory-
and atomic-bound chains of unequal size, 800000, 800000 and 74120 edges, side by side). Laid out as
PyG's MovieLens link-prediction example (a ``GNN`` of two ``SAGEConv``, ReLU between, made
heterogeneous with ``to_hetero(aggr="sum")``, the movie features through ``Linear(18, 64)`` plus a
learned movie embedding, the user features a learned embedding, a dot-product classifier), with a
third relation added: the graph has 6040 users and 3706 movies (MovieLens-1M's counts), the ratings
as ("user", "rates", "movie") edges, 800000 of them (the training split of the 1000209 ratings,
drawn at random at build), their reverses ("movie", "rev_rates", "user"), and ("movie", "similar",
"movie"), each movie's 20 nearest movies (random at build). Hidden width 64. Each relation's
``SAGEConv`` as PyG computes it with mean aggregation: the messages ``x_src.index_select(0, src)``
(E, 64); PyG's ``scatter(reduce="mean")``: the in-degrees ``count.scatter_add_(0, dst, ones)``,
clamped at 1, the sum ``zeros.scatter_add_(0, dst.view(-1, 1).expand_as(messages), messages)``,
divided by the degrees; then ``lin_l`` (64 -> 64, with bias) on the mean plus ``lin_r`` (64 -> 64,
no bias) on the destination's own features. Per layer, side stream 1 runs "rates", side stream 2
"rev_rates" and side stream 3 "similar" (fork and join are the project's ``fork_join``:
``wait_stream``, and ``record_stream`` on the branch outputs outside capture); after the join, on
the current stream, the movie's two relation outputs stacked and summed (the user's single one kept
as is, as ``HeteroConv``'s ``group`` does) and, after the first layer, ReLU. Before the first round,
on the current stream: the user embeddings (``Embedding(6040, 64)`` of all node ids), the movie
features through ``Linear(18, 64)`` plus ``Embedding(3706, 64)``. After the second: the classifier,
the user and movie rows of each labelled pair gathered and their dot product. fp32 with TF32 on for
matrix multiplications (``torch.backends.cuda.matmul.allow_tf32 = True``, set in build), eval, no
gradients, random weights (torch's defaults). The ``scatter_add_`` sums add with atomics, so a
replay may differ from an eager call in the last bits. Inputs (two input sets): the movies' genre
features (3706, 18), multi-hot at random, and the labelled pairs (2, 200000) int64, half of them
rated pairs, half random. Returns the pair scores (200000,).

    traceinspect profile hetero_sage_movielens_3streams_b1.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

USERS, MOVIES, RATINGS, SIMILAR, GENRES, HIDDEN, PAIRS = 6040, 3706, 800000, 20, 18, 64, 200000
RELATIONS = (
    ("user", "rates", "movie"),
    ("movie", "rev_rates", "user"),
    ("movie", "similar", "movie"),
)


def scatter_mean(src: Tensor, index: Tensor, dim_size: int) -> Tensor:
    """torch_geometric.utils.scatter(src, index, 0, dim_size, reduce="mean")."""
    count = src.new_zeros(dim_size)
    count.scatter_add_(0, index, src.new_ones(src.size(0)))
    count = count.clamp(min=1)
    out = src.new_zeros(dim_size, src.size(1)).scatter_add_(
        0, index.view(-1, 1).expand_as(src), src
    )
    return out / count.view(-1, 1)


class SAGEConv(nn.Module):
    """PyG's SAGEConv (mean aggregation, root weight, no normalization) on a bipartite pair."""

    def __init__(self, c_src: int, c_dst: int, c_out: int) -> None:
        super().__init__()
        self.lin_l = nn.Linear(c_src, c_out)
        self.lin_r = nn.Linear(c_dst, c_out, bias=False)

    def forward(self, x_src: Tensor, x_dst: Tensor, edge_index: Tensor) -> Tensor:
        messages = x_src.index_select(0, edge_index[0])
        out = self.lin_l(scatter_mean(messages, edge_index[1], x_dst.size(0)))
        return out + self.lin_r(x_dst)


class HeteroSAGE(nn.Module):
    def __init__(self, users: int, movies: int, hidden: int) -> None:
        super().__init__()
        self.movie_lin = nn.Linear(GENRES, hidden)
        self.user_emb, self.movie_emb = nn.Embedding(users, hidden), nn.Embedding(movies, hidden)
        self.layers = nn.ModuleList(
            nn.ModuleDict({rel: SAGEConv(hidden, hidden, hidden) for _, rel, _ in RELATIONS})
            for _ in range(2)
        )
        self.register_buffer("user_ids", torch.arange(users))
        self.register_buffer("movie_ids", torch.arange(movies))

    def embed(self, movie_x: Tensor) -> dict[str, Tensor]:
        return {
            "user": self.user_emb(self.user_ids),
            "movie": self.movie_lin(movie_x) + self.movie_emb(self.movie_ids),
        }


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        users, movies, ratings, similar, hidden, pairs = 60, 40, 500, 3, 16, 200
    else:
        users, movies, ratings, similar, hidden = USERS, MOVIES, RATINGS, SIMILAR, HIDDEN
        pairs = PAIRS
    torch.backends.cuda.matmul.allow_tf32 = True  # the workload: TF32 GEMMs
    model = HeteroSAGE(users, movies, hidden).to(device).eval()
    rated = torch.stack(
        (
            torch.randint(0, users, (ratings,), device=device),
            torch.randint(0, movies, (ratings,), device=device),
        )
    )
    near = torch.stack(
        (
            torch.randint(0, movies, (movies * similar,), device=device),
            torch.arange(movies, device=device).repeat_interleave(similar),
        )
    )
    edges = {"rates": rated, "rev_rates": rated.flip(0), "similar": near}
    sizes = {"user": users, "movie": movies}
    streams = side_streams(device, len(RELATIONS))

    def layer(convs: nn.ModuleDict, x: dict[str, Tensor]) -> dict[str, Tensor]:
        outs = fork_join(
            device,
            streams,
            [lambda s=s, r=r, d=d: convs[r](x[s], x[d], edges[r]) for s, r, d in RELATIONS],
        )
        grouped: dict[str, list[Tensor]] = {t: [] for t in sizes}
        for (_, _, d), out in zip(RELATIONS, outs, strict=True):
            grouped[d].append(out)
        return {t: xs[0] if len(xs) == 1 else torch.stack(xs).sum(0) for t, xs in grouped.items()}

    @torch.no_grad()
    def step(movie_x: Tensor, pairs_index: Tensor) -> Tensor:
        x = model.embed(movie_x)
        x = {t: F.relu(v) for t, v in layer(model.layers[0], x).items()}
        x = layer(model.layers[1], x)
        user = x["user"].index_select(0, pairs_index[0])
        movie = x["movie"].index_select(0, pairs_index[1])
        return (user * movie).sum(dim=-1)

    def make() -> tuple[Tensor, Tensor]:
        movie_x = (torch.rand(movies, GENRES, device=device) < 0.15).float()
        pick = torch.randint(0, ratings, (pairs // 2,), device=device)
        negative = torch.stack(
            (
                torch.randint(0, users, (pairs - pairs // 2,), device=device),
                torch.randint(0, movies, (pairs - pairs // 2,), device=device),
            )
        )
        return movie_x, torch.cat((rated[:, pick], negative), dim=1)

    inputs = [make() for _ in range(2)]
    description = (
        f"hetero GraphSAGE (PyG to_hetero, 2 layers d{hidden}) on {users} users / {movies} "
        f"movies, relations rates / rev_rates ({ratings} edges) / similar ({movies * similar}), "
        f"index_select + scatter_add_ mean, one relation per side stream (3), {pairs} pairs "
        f"scored, fp32 TF32"
    )
    return Built(step, inputs, description, [model, rated, near])


if __name__ == "__main__":
    main(build, __doc__)
