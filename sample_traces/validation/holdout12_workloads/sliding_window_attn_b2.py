"""Longformer-style sliding-window (local) attention: 2 sequences of 4096 tokens of d 512, bf16
(twelfth hold-out), through 4 post-LayerNorm encoder layers (8 heads of 64), each token
attending to the 128 tokens either side of it (a 257-token band), with no global tokens.
The band is computed in blocks, as Longformer's chunked implementation does: the queries
are cut into 32 blocks of 128 and the keys and values, zero-padded by 128 at each end with
``F.pad``, are cut with ``Tensor.unfold`` (size 384, step 128) into overlapping windows of
the previous, the same and the next block; each query block attends to its 384-key window
(``torch.matmul``, 2 x 8 x 32 x 128 x 384 scores). An additive fp32 bias (32 x 128 x 384,
made once at build: 0 inside the band, -inf outside it and on the padding at the two ends)
is added to the scaled scores, ``softmax`` runs in fp32, and the probabilities, cast back
to bf16, weight the value windows. Each layer: fused qkv Linear 512->1536, the local
attention, output Linear, residual, LayerNorm; GELU MLP 512->2048->512, residual,
LayerNorm. Returns 2 x 4096 x 512.

    traceinspect profile sliding_window_attn_b2.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn


def band_bias(seq: int, w: int) -> Tensor:
    """(blocks, w, 3w) fp32: 0 where query i of block n may see window key j, else -inf."""
    blocks = seq // w
    query = torch.arange(blocks)[:, None, None] * w + torch.arange(w)[None, :, None]
    key = torch.arange(blocks)[:, None, None] * w - w + torch.arange(3 * w)[None, None, :]
    keep = ((key - query).abs() <= w) & (key >= 0) & (key < seq)
    return torch.zeros(keep.shape).masked_fill(~keep, float("-inf"))


class LocalLayer(nn.Module):
    def __init__(self, d: int, heads: int, w: int) -> None:
        super().__init__()
        self.heads, self.dh, self.w = heads, d // heads, w
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.up, self.down = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def attend(self, x: Tensor, bias: Tensor) -> Tensor:
        b, s, d = x.shape
        w, blocks = self.w, s // self.w
        q, k, v = self.qkv(x).view(b, s, 3, self.heads, self.dh).unbind(2)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))  # (B, heads, S, dh)
        q = q.reshape(b, self.heads, blocks, w, self.dh)
        k_win = F.pad(k, (0, 0, w, w)).unfold(2, 3 * w, w)  # (B, heads, blocks, dh, 3w)
        v_win = F.pad(v, (0, 0, w, w)).unfold(2, 3 * w, w).transpose(-1, -2)
        scores = torch.matmul(q, k_win).float() * self.dh**-0.5 + bias
        probs = torch.softmax(scores, dim=-1).to(x.dtype)
        att = torch.matmul(probs, v_win).reshape(b, self.heads, s, self.dh)
        return self.proj(att.transpose(1, 2).reshape(b, s, d))

    def forward(self, x: Tensor, bias: Tensor) -> Tensor:
        x = self.ln1(x + self.attend(x, bias))
        return self.ln2(x + self.down(F.gelu(self.up(x))))


def build(device: torch.device, smoke: bool) -> Built:
    d, heads, layers, seq, w, batch = (32, 4, 4, 64, 8, 2) if smoke else (512, 8, 4, 4096, 128, 2)
    dtype = low_precision(device)
    model = nn.ModuleList(LocalLayer(d, heads, w) for _ in range(layers))
    model = model.to(device=device, dtype=dtype).eval()
    bias = band_bias(seq, w).to(device)

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        for layer in model:
            x = layer(x, bias)
        return x

    inputs = [(torch.randn(batch, seq, d, device=device, dtype=dtype),) for _ in range(2)]
    description = (
        f"sliding-window attention (+-{w} tokens, unfold into {seq // w} blocks), "
        f"{layers} layers x d{d}, batch {batch} x {seq}"
    )
    return Built(step, inputs, description, [model, bias])


if __name__ == "__main__":
    main(build, __doc__)
