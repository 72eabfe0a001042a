"""Greedy decoding with a GRU cell for 24 steps (forty-sixth hold-out: a recurrent loop of
small kernels that feeds its own argmax back, all on the device): 32 sequences, an encoder
state of 512 as the first hidden state, ``Embedding(5000, 256)`` of the previous token,
``nn.GRUCell(256, 512)``, ``Linear(512, 5000)`` and ``argmax`` for the next token. bf16 on a GPU,
eval mode, no gradients. Inputs: the (32, 512) encoder states and the (32,) start tokens.
Returns the (32, 24) decoded token ids.

    traceinspect profile gru_cell_greedy_decode_b32.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn


def build(device: torch.device, smoke: bool) -> Built:
    batch, steps, vocab, emb, hidden = (2, 3, 50, 8, 8) if smoke else (32, 24, 5000, 256, 512)
    dtype = low_precision(device)
    embed, cell, out = nn.Embedding(vocab, emb), nn.GRUCell(emb, hidden), nn.Linear(hidden, vocab)
    model = nn.ModuleList([embed, cell, out]).to(device, dtype).eval()

    @torch.no_grad()
    def step(state: Tensor, start: Tensor) -> Tensor:
        h, tok, outs = state, start, []
        for _ in range(steps):
            h = cell(embed(tok), h)
            tok = out(h).argmax(dim=-1)
            outs.append(tok)
        return torch.stack(outs, dim=1)

    inputs = [
        (
            torch.randn(batch, hidden, device=device, dtype=dtype),
            torch.randint(0, vocab, (batch,), device=device),
        )
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"GRUCell {hidden} greedy decode, {steps} steps, vocab {vocab}, b{batch}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
