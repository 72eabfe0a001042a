"""Reformer LSH self-attention (Kitaev et al., 2020: shared query-key vectors hashed by random
rotations, attention within sorted chunks and the chunk before, several hash rounds combined by
their log-sum-exp) in 2 pre-norm layers with feed-forward over 4 sequences of 4,096 tokens of
width 256 (forty-first hold-out): bf16 on a GPU (the log-sum-exps and the round weights in
fp32), eval mode (dropout off), no gradients, not causal, plain residual layers (not
reversible: the same forward work), every shape static. Each layer: LayerNorm(256); the shared
query-keys ``Linear(256, 256, bias=False)`` and values ``Linear(256, 256, bias=False)``, 4 heads
of 64; hashing, the query-keys times fixed random rotations (64, 4 rounds, 16) drawn at build,
concatenated with their negation and ``argmax`` to one of 32 buckets per round, offset by 32 x
the round; the sort key bucket x 4,096 + position over the 4 x 4,096 = 16,384 (round, position)
slots of each (sequence, head), ``argsort``, and the un-sort permutation by ``scatter_`` of the
slot numbers at the sorted order; the query-keys and values gathered into sorted order, split
into 256 chunks of 64; the keys, the unit-normalized query-keys, of each chunk concatenated with
those of the chunk before (``torch.roll`` over the chunks, the first chunk wrapping to the
last), 128 keys per chunk; the scores (4, 4, 256, 64, 128) from the query-keys scaled by 1 / 8
(exact in bf16), a token's score against itself set to -1e5 (``torch.where`` on the gathered
positions), the softmax over the 128 keys times the values, and the scores' ``logsumexp`` per
query in fp32; outputs and log-sum-exps gathered back to (round, position) order with the
un-sort permutation; the 4 rounds combined, each weighted by the softmax over rounds of its
log-sum-exp, in fp32; ``Linear(256, 256)``, residual add. Then LayerNorm, ``Linear(256,
1024)``, GELU, ``Linear(1024, 256)``, residual add. A final LayerNorm. Input: the embedded
tokens (4, 4096, 256). Returns the (4, 4096, 256) outputs (bf16 on a GPU).

    traceinspect profile reformer_lsh_attn_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

ROUNDS, BUCKETS, CHUNK, LAYERS, SELF_MASK = 4, 32, 64, 2, -1e5


class LSHAttention(nn.Module):
    def __init__(self, d: int, heads: int, buckets: int, chunk: int) -> None:
        super().__init__()
        self.heads, self.dh, self.buckets, self.chunk = heads, d // heads, buckets, chunk
        self.qk, self.v = nn.Linear(d, d, bias=False), nn.Linear(d, d, bias=False)
        self.out = nn.Linear(d, d)
        self.register_buffer("rotations", torch.randn(self.dh, ROUNDS, buckets // 2))
        self.register_buffer("offsets", (torch.arange(ROUNDS) * buckets)[:, None])

    def split(self, t: Tensor) -> Tensor:
        b, n, _ = t.shape
        return t.view(b, n, self.heads, self.dh).transpose(1, 2)  # (b, h, n, dh)

    def forward(self, x: Tensor) -> Tensor:
        b, n, d = x.shape
        qk, v = self.split(self.qk(x)), self.split(self.v(x))
        # hashing: (b, h, rounds, n) buckets, offset per round
        rotated = torch.einsum("bhnd,drk->bhrnk", qk, self.rotations)
        buckets = torch.cat([rotated, -rotated], dim=-1).argmax(dim=-1) + self.offsets
        ticker = torch.arange(ROUNDS * n, device=x.device)
        key = buckets.flatten(2) * n + ticker % n  # (b, h, rounds n)
        order = key.argsort(dim=-1)
        undo = torch.empty_like(order).scatter_(-1, order, ticker.expand_as(order))
        pos = order % n  # the token of each sorted slot
        chunks = ROUNDS * n // self.chunk

        def gather(t: Tensor) -> Tensor:
            idx = pos[..., None].expand(-1, -1, -1, self.dh)
            return t.gather(2, idx).view(b, self.heads, chunks, self.chunk, self.dh)

        sq, sv = gather(qk), gather(v)
        sk = F.normalize(sq, dim=-1)
        sk = torch.cat([sk, sk.roll(1, dims=2)], dim=3)  # the chunk and the one before
        sv = torch.cat([sv, sv.roll(1, dims=2)], dim=3)
        qpos = pos.view(b, self.heads, chunks, self.chunk)
        kpos = torch.cat([qpos, qpos.roll(1, dims=2)], dim=3)
        dots = (sq * self.dh**-0.5) @ sk.transpose(-1, -2)  # (b, h, chunks, chunk, 2 chunk)
        dots = torch.where(qpos[..., None] == kpos[..., None, :], SELF_MASK, dots)
        lse = dots.float().logsumexp(dim=-1)  # (b, h, chunks, chunk)
        so = dots.softmax(dim=-1) @ sv  # (b, h, chunks, chunk, dh)
        # back to (round, position) order, then the rounds combined by their log-sum-exp
        so = so.view(b, self.heads, -1, self.dh)
        o = so.gather(2, undo[..., None].expand(-1, -1, -1, self.dh))
        logits = lse.view(b, self.heads, -1).gather(2, undo)
        o = o.view(b, self.heads, ROUNDS, n, self.dh)
        w = logits.view(b, self.heads, ROUNDS, n, 1).softmax(dim=2)
        att = (o.float() * w).sum(dim=2).to(x.dtype)  # (b, h, n, dh)
        return self.out(att.transpose(1, 2).reshape(b, n, d))


class ReformerLayer(nn.Module):
    def __init__(self, d: int, heads: int, buckets: int, chunk: int) -> None:
        super().__init__()
        self.norm1, self.attn = nn.LayerNorm(d), LSHAttention(d, heads, buckets, chunk)
        self.norm2 = nn.LayerNorm(d)
        self.ffn = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x: Tensor) -> Tensor:
        x = x + self.attn(self.norm1(x))
        return x + self.ffn(self.norm2(x))


def build(device: torch.device, smoke: bool) -> Built:
    batch, seq, d, heads, buckets, chunk = (
        (2, 64, 32, 2, 4, 8) if smoke else (4, 4096, 256, 4, BUCKETS, CHUNK)
    )
    dtype = low_precision(device)
    layers = [ReformerLayer(d, heads, buckets, chunk) for _ in range(LAYERS)]
    model = nn.Sequential(*layers, nn.LayerNorm(d)).to(device, dtype).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    inputs = [(torch.randn(batch, seq, d, device=device, dtype=dtype),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"Reformer LSH attention: {LAYERS} layers, {ROUNDS} hash rounds x {buckets} buckets, "
        f"argsort, chunks of {chunk} + the previous, scatter / gather un-sort, logsumexp round "
        f"combine, FFN, {heads} heads, d{d}, seq {seq}, b{batch}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
