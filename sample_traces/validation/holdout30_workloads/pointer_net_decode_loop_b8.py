"""A pointer network decoding a tour over 50 cities, greedily, in a Python loop (thirtieth
hold-out): 8 instances, 128-channel embeddings, fp32. The encoder is an LSTM over the city
embeddings (cuDNN); then 50 decode steps, each an ``LSTMCell`` step, additive attention over
the 50 encoded cities (``tanh`` of two projections, a Linear to one logit), the visited
cities masked to -inf (``masked_fill``), ``argmax``, the chosen city's encoding gathered
as the next input and its mask bit set (``scatter``). About 15 small kernels per step,
750 in all; one stream.

    traceinspect profile pointer_net_decode_loop_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn


def build(device: torch.device, smoke: bool) -> Built:
    batch, cities, d = (2, 5, 8) if smoke else (8, 50, 128)
    embed = nn.Linear(2, d)
    encoder = nn.LSTM(d, d, batch_first=True)
    cell = nn.LSTMCell(d, d)
    w_ref, w_query = nn.Linear(d, d, bias=False), nn.Linear(d, d)
    score = nn.Linear(d, 1, bias=False)
    model = nn.ModuleList([embed, encoder, cell, w_ref, w_query, score]).to(device).eval()
    start = torch.zeros(1, d, device=device)

    @torch.no_grad()
    def step(coords: Tensor) -> Tensor:
        enc, (h, c) = encoder(embed(coords))
        h, c = h[0], c[0]
        ref = w_ref(enc)  # batch x cities x d
        visited = torch.zeros(coords.shape[0], cities, dtype=torch.bool, device=coords.device)
        x = start.expand(coords.shape[0], -1)
        tour = []
        for _ in range(cities):
            h, c = cell(x, (h, c))
            logits = score(torch.tanh(ref + w_query(h)[:, None])).squeeze(-1)
            choice = logits.masked_fill(visited, float("-inf")).argmax(dim=-1)
            tour.append(choice)
            visited = visited.scatter(1, choice[:, None], True)
            x = enc.gather(1, choice[:, None, None].expand(-1, 1, d)).squeeze(1)
        return torch.stack(tour, dim=1)

    inputs = [(torch.rand(batch, cities, 2, device=device),) for _ in range(2)]
    return Built(
        step, inputs, f"pointer network greedy decode, {cities} cities, b{batch}", [model, start]
    )


if __name__ == "__main__":
    main(build, __doc__)
