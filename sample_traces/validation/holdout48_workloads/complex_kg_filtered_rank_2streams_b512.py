"""Filtered link-prediction evaluation of a ComplEx knowledge-graph embedding (Trouillon et al.,
2016) on 512 test triples, tail prediction and head prediction each on its own side stream
(forty-eighth hold-out: knowledge-graph embedding scoring, one query against every entity by a
GEMM, then filtered ranks): WN18RR sizes, 40,943 entities and 11 relations of rank 200, each
embedding stored as [real | imaginary] in one ``nn.Embedding`` row of 400. Tail branch: the
complex product q = h * r of the looked-up head and relation embeddings (four multiplies, a
subtract, an add, a ``cat``), the scores Re(<h, r, conj(e)>) of all entities e as one GEMM
(512 x 400) @ (400 x 40,943). Head branch: w = r * conj(t) and the scores Re(<e, r, conj(t)>) =
e_re w_re - e_im w_im as the same GEMM against the entity table. In each branch the true
entity's score is ``gather``-ed, the other known true triples are masked out
(``masked_fill`` with -inf from a caller-supplied (512, 40,943) boolean filter, about 20 entries
a row, never the true entity) and the rank is 1 + the count of scores above the true one (a
comparison and a ``sum`` over the 21 M scores; ties count in the entity's favour). After the
join, on the current stream: the 1,024 ranks' mean reciprocal rank and hits at 1, 3 and 10
(fp32). bf16 on a GPU (embeddings, GEMMs and scores), no gradients. Fork and join are the
project's ``fork_join`` (``wait_stream``, and ``record_stream`` on the branch outputs outside
capture). Inputs: heads, relations and tails, (512,) int64 each, and the tail and head filters,
(512, 40,943) bool each. Returns (4,) fp32: MRR, hits@1, hits@3, hits@10.

    traceinspect profile complex_kg_filtered_rank_2streams_b512.py
"""

from __future__ import annotations

from functools import partial

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

HITS_AT = (1, 3, 10)


class ComplEx(nn.Module):
    def __init__(self, entities: int, relations: int, rank: int) -> None:
        super().__init__()
        self.ent = nn.Embedding(entities, 2 * rank)
        self.rel = nn.Embedding(relations, 2 * rank)
        with torch.no_grad():
            self.ent.weight.normal_(0, 0.1)
            self.rel.weight.normal_(0, 0.1)

    def tail_scores(self, h: Tensor, r: Tensor) -> Tensor:
        """Re(<h, r, conj(e)>) for every entity e: (b, entities)."""
        h_re, h_im = self.ent(h).chunk(2, dim=-1)
        r_re, r_im = self.rel(r).chunk(2, dim=-1)
        q = torch.cat([h_re * r_re - h_im * r_im, h_re * r_im + h_im * r_re], dim=-1)
        return q @ self.ent.weight.t()

    def head_scores(self, r: Tensor, t: Tensor) -> Tensor:
        """Re(<e, r, conj(t)>) for every entity e: (b, entities)."""
        r_re, r_im = self.rel(r).chunk(2, dim=-1)
        t_re, t_im = self.ent(t).chunk(2, dim=-1)
        q = torch.cat([r_re * t_re + r_im * t_im, r_re * t_im - r_im * t_re], dim=-1)
        return q @ self.ent.weight.t()


def filtered_rank(scores: Tensor, true: Tensor, known: Tensor) -> Tensor:
    """1 + the number of entities, the other known true ones left out, scored above ``true``."""
    target = scores.gather(1, true[:, None])
    return 1 + (scores.masked_fill(known, float("-inf")) > target).sum(dim=1)


def build(device: torch.device, smoke: bool) -> Built:
    batch, entities, relations, rank, density = (
        (4, 50, 3, 8, 0.1) if smoke else (512, 40943, 11, 200, 5e-4)
    )
    dtype = low_precision(device)
    model = ComplEx(entities, relations, rank).to(device, dtype).eval()
    hits_at = torch.tensor(HITS_AT, device=device, dtype=torch.float32)
    streams = side_streams(device, 2)

    def tail_branch(h: Tensor, r: Tensor, t: Tensor, known: Tensor) -> Tensor:
        return filtered_rank(model.tail_scores(h, r), t, known)

    def head_branch(h: Tensor, r: Tensor, t: Tensor, known: Tensor) -> Tensor:
        return filtered_rank(model.head_scores(r, t), h, known)

    @torch.no_grad()
    def step(h: Tensor, r: Tensor, t: Tensor, tail_known: Tensor, head_known: Tensor) -> Tensor:
        ranks = fork_join(
            device,
            streams,
            [partial(tail_branch, h, r, t, tail_known), partial(head_branch, h, r, t, head_known)],
        )
        ranks = torch.cat(ranks).float()
        hits = (ranks[:, None] <= hits_at).float().mean(dim=0)
        return torch.cat([ranks.reciprocal().mean()[None], hits])

    def known(true: Tensor) -> Tensor:
        mask = torch.rand(batch, entities, device=device) < density
        return mask.scatter_(1, true[:, None], False)

    inputs = []
    for _ in range(2):
        h, t = (torch.randint(0, entities, (batch,), device=device) for _ in range(2))
        r = torch.randint(0, relations, (batch,), device=device)
        inputs.append((h, r, t, known(t), known(h)))
    description = (
        f"ComplEx filtered ranking, {entities} entities, rank {rank}, tail and head "
        f"prediction, b{batch}, 2 side streams"
    )
    return Built(step, inputs, description, [model, hits_at])


if __name__ == "__main__":
    main(build, __doc__)
