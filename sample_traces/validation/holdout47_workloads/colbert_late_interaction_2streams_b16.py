"""ColBERT-style late-interaction scoring of 16 queries against 16 passages with two encoders
of different sizes on two side streams (forty-seventh hold-out: asymmetric towers joined by a
token-level MaxSim rather than a pooled dot product): the query tower embeds 16 x 32 token ids
(vocabulary 30,522, learned positions) and runs 2 pre-norm encoder layers (d_model 384, 6
heads, SDPA attention, a 1536-wide GELU MLP); the passage tower embeds 16 x 256 token ids and
runs 6 such layers with its own weights. Each tower ends with a LayerNorm, a ``Linear(384,
128)`` without bias and an L2 normalization of every token vector. After the join, every
query token is compared with every passage token of every passage (``einsum`` to (16, 16, 32,
256)), the maximum over the passage tokens is summed over the query tokens, giving the (16,
16) score matrix in fp32. bf16 on a GPU, eval mode, no gradients. Fork and join are the
project's ``fork_join`` (``wait_stream``, and ``record_stream`` on the branch outputs outside
capture). Inputs: query ids (16, 32) and passage ids (16, 256), int64. Returns (16, 16).

    traceinspect profile colbert_late_interaction_2streams_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _models import EncoderLayer
from _streams import fork_join, side_streams
from torch import Tensor, nn


class Tower(nn.Module):
    def __init__(self, vocab: int, length: int, d: int, heads: int, layers: int, dim: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(length, d)
        self.layers = nn.Sequential(*(EncoderLayer(d, heads, torch.float32) for _ in range(layers)))
        self.norm = nn.LayerNorm(d)
        self.out = nn.Linear(d, dim, bias=False)

    def forward(self, ids: Tensor) -> Tensor:
        x = self.layers(self.embed(ids) + self.pos.weight)
        return F.normalize(self.out(self.norm(x)), dim=-1)


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, q_len, p_len, vocab, d, heads, dim, q_layers, p_layers = 2, 4, 8, 50, 16, 2, 8, 1, 2
    else:
        batch, q_len, p_len, vocab, d, heads, dim = 16, 32, 256, 30_522, 384, 6, 128
        q_layers, p_layers = 2, 6
    dtype = low_precision(device)
    query = Tower(vocab, q_len, d, heads, q_layers, dim).to(device, dtype).eval()
    passage = Tower(vocab, p_len, d, heads, p_layers, dim).to(device, dtype).eval()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(q_ids: Tensor, p_ids: Tensor) -> Tensor:
        q, p = fork_join(device, streams, [lambda: query(q_ids), lambda: passage(p_ids)])
        sim = torch.einsum("aid,bjd->abij", q, p)
        return sim.amax(dim=-1).float().sum(dim=-1)

    inputs = [
        (
            torch.randint(0, vocab, (batch, q_len), device=device),
            torch.randint(0, vocab, (batch, p_len), device=device),
        )
        for _ in range(2)
    ]
    description = (
        f"ColBERT late interaction, query {q_layers}L x {q_len} tok, passage {p_layers}L x "
        f"{p_len} tok, d{d}, b{batch}, 2 side streams"
    )
    return Built(step, inputs, description, [query, passage])


if __name__ == "__main__":
    main(build, __doc__)
