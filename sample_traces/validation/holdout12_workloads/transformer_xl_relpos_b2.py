"""One Transformer-XL segment (Dai et al., 2019) with relative positional attention and a
recurrence memory: 2 sequences, a segment of 512 tokens over a memory of 512, d 512, bf16
(twelfth hold-out), through 4 post-LayerNorm layers of 8 heads of 64, as the reference
``RelPartialLearnableMultiHeadAttn`` (batch first here). The tokens (2 x 512, int64) are
embedded (vocabulary 32000, scaled by sqrt(512)); the sinusoidal relative position
embedding of the 1024 key distances 1023 ... 0 (``sin`` and ``cos`` of an outer product
with 256 inverse frequencies, made in the step, shared by the layers). Each layer: its
memory (2 x 512 x 512, made at build, standing for the previous segment's hidden states)
concatenated in front of the layer input with ``torch.cat``; a fused qkv Linear 512->1536
over the 1024 positions, queries from the last 512; a Linear 512->512 (no bias) of the
position embedding to position keys; content scores ``einsum`` of (queries + the global
content bias u) with the keys, position scores ``einsum`` of (queries + the global position
bias v) with the position keys, the position scores realigned by the relative shift (a
zero column ``torch.cat`` in front, a view as 1025 x 512, the first row dropped, reshaped
back: a copy); their sum scaled, the causal-with-memory mask (made at build: a query sees the whole
memory and the segment up to itself) filled with -inf, ``softmax`` in fp32, the values
weighted, an output Linear 512->512 (no bias), residual, LayerNorm; a ReLU MLP
512->2048->512, residual, LayerNorm. The next segment's memories are the last 512 of each
layer's memory + input. Returns the output (2 x 512 x 512) and the 4 new memories (2 x 512
x 512 each).

    traceinspect profile transformer_xl_relpos_b2.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn


def rel_shift(x: Tensor) -> Tensor:
    """(B, H, q, k) scores over key distances k-1 ... 0 -> aligned with the key positions."""
    b, h, q, k = x.shape
    padded = torch.cat((x.new_zeros(b, h, q, 1), x), dim=-1).view(b, h, k + 1, q)
    return padded[:, :, 1:].reshape(b, h, q, k)


class RelLayer(nn.Module):
    def __init__(self, d: int, heads: int, inner: int) -> None:
        super().__init__()
        self.heads, self.dh = heads, d // heads
        self.qkv = nn.Linear(d, 3 * d)
        self.r_net = nn.Linear(d, d, bias=False)
        self.o_net = nn.Linear(d, d, bias=False)
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.ff1, self.ff2 = nn.Linear(d, inner), nn.Linear(inner, d)

    def forward(self, x: Tensor, mem: Tensor, pos: Tensor, u: Tensor, v: Tensor,
                mask: Tensor) -> tuple[Tensor, Tensor]:  # fmt: skip
        b, q_len, d = x.shape
        cat = torch.cat((mem, x), dim=1)  # (B, klen, d)
        k_len = cat.shape[1]
        heads = self.qkv(cat).view(b, k_len, 3, self.heads, self.dh)
        q, k, val = heads[:, -q_len:, 0], heads[:, :, 1], heads[:, :, 2]
        r_k = self.r_net(pos).view(k_len, self.heads, self.dh)
        ac = torch.einsum("bihd,bjhd->bhij", q + u, k)
        bd = rel_shift(torch.einsum("bihd,jhd->bhij", q + v, r_k))
        scores = (ac + bd).float() * self.dh**-0.5
        probs = torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1).to(x.dtype)
        att = torch.einsum("bhij,bjhd->bihd", probs, val).reshape(b, q_len, d)
        x = self.ln1(x + self.o_net(att))
        return self.ln2(x + self.ff2(torch.relu(self.ff1(x)))), cat[:, -mem.shape[1] :]


class TransformerXL(nn.Module):
    def __init__(self, vocab: int, d: int, heads: int, inner: int, layers: int, batch: int,
                 seg: int, mem: int) -> None:  # fmt: skip
        super().__init__()
        self.scale = d**0.5
        self.embed = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList(RelLayer(d, heads, inner) for _ in range(layers))
        self.u = nn.Parameter(0.02 * torch.randn(heads, d // heads))
        self.v = nn.Parameter(0.02 * torch.randn(heads, d // heads))
        self.d, self.k_len = d, seg + mem
        self.register_buffer("mems", 0.5 * torch.randn(layers, batch, mem, d))
        i, j = torch.arange(seg)[:, None], torch.arange(self.k_len)[None, :]
        self.register_buffer("mask", j > i + mem)  # (seg, klen): True = masked
        self.set_positions()

    def set_positions(self, device: torch.device | None = None) -> None:
        """The key distances and inverse frequencies, fp32 (again after a cast to bf16)."""
        distances = torch.arange(self.k_len - 1, -1, -1.0, device=device)
        inv_freq = 1.0 / 10000 ** (torch.arange(0.0, self.d, 2.0, device=device) / self.d)
        self.register_buffer("distances", distances)
        self.register_buffer("inv_freq", inv_freq)

    def forward(self, tokens: Tensor) -> tuple[Tensor, list[Tensor]]:
        x = self.embed(tokens) * self.scale
        angles = torch.outer(self.distances, self.inv_freq)
        pos = torch.cat((angles.sin(), angles.cos()), dim=-1).to(x.dtype)  # (klen, d)
        new_mems = []
        for layer, mem in zip(self.layers, self.mems.unbind(0), strict=True):
            x, new_mem = layer(x, mem, pos, self.u, self.v, self.mask)
            new_mems.append(new_mem)
        return x, new_mems


def build(device: torch.device, smoke: bool) -> Built:
    vocab, d, heads, inner, layers, batch, seg, mem = (
        (64, 32, 4, 64, 4, 2, 8, 8) if smoke else (32000, 512, 8, 2048, 4, 2, 512, 512)
    )
    dtype = low_precision(device)
    model = TransformerXL(vocab, d, heads, inner, layers, batch, seg, mem)
    model = model.to(device=device, dtype=dtype).eval()
    model.set_positions(device)  # the position sinusoid is made in fp32

    @torch.no_grad()
    def step(tokens: Tensor) -> tuple[Tensor, ...]:
        out, new_mems = model(tokens)
        return (out, *new_mems)

    inputs = [(torch.randint(vocab, (batch, seg), device=device),) for _ in range(2)]
    description = (
        f"Transformer-XL relative-position attention, {layers} layers x d{d}, "
        f"batch {batch} x segment {seg} + memory {mem}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
