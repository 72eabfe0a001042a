"""One decode step of beam search, as a seq2seq translator runs it once per output token
(thirty-second hold-out): 4 sentences x 4 beams = 16 hypotheses, fp32, no gradients. Each
hypothesis's previous token goes through an embedding of 8,000 x 256 and a 2-layer
``nn.GRU`` (hidden 512) for one time step, a Linear 512 -> 8,000 gives the logits, and
``log_softmax`` plus the hypothesis's running score gives every continuation's score. The
scores are reshaped to (4, 4 x 8,000) and ``topk(4)`` keeps the best four per sentence;
integer division and remainder by the vocabulary size split each pick into its source beam
and its token, and the GRU's new hidden state is reordered to follow the surviving beams
(``index_select`` on flattened beam indices, the per-sentence offsets built once at
build). No host synchronization: the picks stay on the device. Returns (tokens (16, long),
scores (16,), hidden (2 x 16 x 512)).

    traceinspect profile beam_search_step_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn

BEAMS, LAYERS = 4, 2


class Decoder(nn.Module):
    def __init__(self, vocab: int, emb: int, hidden: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        self.gru = nn.GRU(emb, hidden, num_layers=LAYERS)
        self.proj = nn.Linear(hidden, vocab)

    def forward(self, tokens: Tensor, hidden: Tensor) -> tuple[Tensor, Tensor]:
        out, hidden = self.gru(self.embed(tokens)[None], hidden)  # one time step
        return self.proj(out[0]).log_softmax(-1), hidden


def build(device: torch.device, smoke: bool) -> Built:
    batch, vocab, emb, hidden = (2, 50, 8, 16) if smoke else (4, 8000, 256, 512)
    hyps = batch * BEAMS
    model = Decoder(vocab, emb, hidden).to(device)
    model.eval()
    offsets = torch.arange(batch, device=device)[:, None] * BEAMS  # first hypothesis of each

    @torch.no_grad()
    def step(tokens: Tensor, scores: Tensor, h: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        logp, h = model(tokens, h)  # (hyps, vocab), (LAYERS, hyps, hidden)
        total = (logp + scores[:, None]).view(batch, BEAMS * vocab)
        top_scores, top_idx = total.topk(BEAMS, dim=-1)  # (batch, BEAMS)
        beam = torch.div(top_idx, vocab, rounding_mode="floor")
        token = top_idx % vocab
        src = (beam + offsets).view(-1)  # flat index of each survivor's parent hypothesis
        return token.view(-1), top_scores.view(-1), h.index_select(1, src)

    inputs = [
        (
            torch.randint(0, vocab, (hyps,), device=device),
            -torch.rand(hyps, device=device) * 10,
            torch.randn(LAYERS, hyps, hidden, device=device) * 0.5,
        )
        for _ in range(2)
    ]
    description = (
        f"beam search decode step, {LAYERS}-layer GRU {emb}-{hidden}, vocab {vocab}, "
        f"{batch} x {BEAMS} beams"
    )
    return Built(step, inputs, description, [model, offsets])


if __name__ == "__main__":
    main(build, __doc__)
