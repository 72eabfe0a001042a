"""One beam-search expansion step of a small decoder: 8 sequences x 4 beams (32 rows), bf16
(eleventh hold-out). The decoder: 4 pre-LayerNorm layers of d 512 (8 heads of 64), a
vocabulary of 32000 with the output head tied to the token embedding, learned position
embeddings, and per layer a past-key/value cache of 32 x 8 x 255 x 64 for keys and one for
values, made at build (random, standing for a 255-token prefix). Each layer: LayerNorm,
fused qkv Linear 512->1536, the new key and value appended to the layer's cache with
``torch.cat`` (256 slots), ``F.scaled_dot_product_attention`` of the one query over them, an
output Linear, residual; then LayerNorm, GELU MLP 512->2048->512, residual. Then the search
itself: a final LayerNorm, the logits (32 x 32000), ``log_softmax`` in fp32, plus each
beam's running score; the sums are viewed as 8 x (4 x 32000) and ``topk`` picks the 4 best
continuations per sequence over all beams at once; the source beam (index // 32000) and the
token (index % 32000) follow, the source beams become global rows (plus 4 x the sequence
number), and every layer's extended key and value caches are reordered to them with
``index_select`` on the beam dimension (as a generation loop reorders its past key/values).
Inputs: the beams' last tokens (32 x 1, int64) and their running scores (32, fp32); the
position is 255 in every step and the built caches are only read, so a step depends only
on its input and every shape is fixed. Returns the next tokens (32 x 1), their scores (32),
the source rows (32) and the 8 reordered caches (32 x 8 x 256 x 64 each).

    traceinspect profile beam_search_step_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn


class PastLayer(nn.Module):
    def __init__(self, d: int, heads: int, rows: int, past: int) -> None:
        super().__init__()
        self.heads, self.dh = heads, d // heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        shape = (rows, heads, past, self.dh)
        self.register_buffer("k_past", torch.randn(shape) * 0.5)
        self.register_buffer("v_past", torch.randn(shape) * 0.5)

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:  # x: (rows, 1, d)
        r = x.shape[0]
        q, k, v = self.qkv(self.ln1(x)).view(r, 1, 3, self.heads, self.dh).unbind(2)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))  # (rows, heads, 1, dh)
        keys = torch.cat((self.k_past, k), dim=2)
        values = torch.cat((self.v_past, v), dim=2)
        att = F.scaled_dot_product_attention(q, keys, values)
        x = x + self.proj(att.transpose(1, 2).reshape(r, 1, -1))
        x = x + self.out(F.gelu(self.fc(self.ln2(x))))
        return x, keys, values


class BeamDecoder(nn.Module):
    def __init__(self, layers: int, d: int, heads: int, rows: int, past: int, vocab: int) -> None:
        super().__init__()
        self.position = past
        self.tokens = nn.Embedding(vocab, d)
        self.positions = nn.Embedding(past + 1, d)
        self.blocks = nn.ModuleList(PastLayer(d, heads, rows, past) for _ in range(layers))
        self.ln = nn.LayerNorm(d)

    def forward(self, tokens: Tensor) -> tuple[Tensor, list[Tensor]]:
        x = self.tokens(tokens) + self.positions.weight[self.position]
        caches = []
        for block in self.blocks:
            x, keys, values = block(x)
            caches += [keys, values]
        return F.linear(self.ln(x), self.tokens.weight)[:, 0], caches  # (rows, vocab)


def build(device: torch.device, smoke: bool) -> Built:
    layers, d, heads, past, vocab, batch, beams = (
        (2, 32, 4, 7, 64, 2, 4) if smoke else (4, 512, 8, 255, 32000, 8, 4)
    )
    rows = batch * beams
    dtype = low_precision(device)
    model = BeamDecoder(layers, d, heads, rows, past, vocab).to(device=device, dtype=dtype)
    model = model.eval()
    seq_base = torch.arange(batch, device=device).repeat_interleave(beams) * beams  # (rows,)
    seq_base = seq_base.view(batch, beams)

    @torch.no_grad()
    def step(tokens: Tensor, beam_scores: Tensor) -> tuple[Tensor, ...]:
        logits, caches = model(tokens)
        logp = torch.log_softmax(logits.float(), dim=-1) + beam_scores.unsqueeze(-1)
        scores, index = torch.topk(logp.view(batch, beams * vocab), beams, dim=-1)
        source = torch.div(index, vocab, rounding_mode="floor")
        next_tokens = (index % vocab).view(rows, 1)
        rows_from = (source + seq_base).view(rows)
        reordered = [cache.index_select(0, rows_from) for cache in caches]
        return (next_tokens, scores.view(rows), rows_from, *reordered)

    inputs = [
        (
            torch.randint(0, vocab, (rows, 1), device=device),
            -torch.rand(rows, device=device) * 5,
        )
        for _ in range(2)
    ]
    description = (
        f"beam-search step, {layers} layers x d{d}, {batch} x {beams} beams over {vocab} "
        f"tokens, past {past}"
    )
    return Built(step, inputs, description, [model, seq_base])


if __name__ == "__main__":
    main(build, __doc__)
