"""One greedy decode step of a GPT-2-style decoder with a preallocated KV cache (thirty-third
hold-out): 6 pre-LayerNorm blocks (d_model 768, 12 heads of 64, one fused QKV Linear, GELU
MLP 3072), learned token and position embeddings, a 32,000-word vocabulary and an LM head
tied to the token embedding, bf16 on a GPU, eval mode, no gradients. Batch 4, one token per
sequence. Each layer owns a 256-position K and V cache (4, 12, 256, 64) made at build; the
step writes this token's key and value into it at the input position (``index_copy_`` along
the sequence dimension) and attends over the whole cache with
``F.scaled_dot_product_attention`` and an additive mask that hides the positions beyond the
current one, made inside the step from the position tensor (``arange(256) > pos`` ->
``masked_fill`` with -inf; the arange made once at build). Inputs: token ids (4,) long and
the position as a 1-element long tensor (100 in both input sets, so a step only rewrites
its own cache slot and depends only on its inputs). Returns the greedy next tokens (4,)
long and the logits' max (a 0-d tensor).

    traceinspect profile gpt2_greedy_decode_kv_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn


class Block(nn.Module):
    def __init__(self, d: int, heads: int, hidden: int, batch: int, slots: int) -> None:
        super().__init__()
        self.heads, self.hd = heads, d // heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.out = nn.Linear(d, hidden), nn.Linear(hidden, d)
        shape = (batch, heads, slots, self.hd)
        self.register_buffer("k_cache", torch.randn(shape) * 0.1)
        self.register_buffer("v_cache", torch.randn(shape) * 0.1)

    def forward(self, x: Tensor, pos: Tensor, mask: Tensor) -> Tensor:
        b, _, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, 1, 3, self.heads, self.hd).permute(2, 0, 3, 1, 4)
        self.k_cache.index_copy_(2, pos, k)
        self.v_cache.index_copy_(2, pos, v)
        att = F.scaled_dot_product_attention(q, self.k_cache, self.v_cache, attn_mask=mask)
        x = x + self.proj(att.transpose(1, 2).reshape(b, 1, d))
        return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class GPT2(nn.Module):
    def __init__(
        self, layers: int, d: int, heads: int, hidden: int, vocab: int, batch: int, slots: int
    ) -> None:
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(slots, d)
        self.blocks = nn.ModuleList(Block(d, heads, hidden, batch, slots) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)

    def forward(self, tokens: Tensor, pos: Tensor, mask: Tensor) -> Tensor:
        x = (self.wte(tokens) + self.wpe(pos)).unsqueeze(1)  # (batch, 1, d)
        for block in self.blocks:
            x = block(x, pos, mask)
        return F.linear(self.ln_f(x[:, 0]), self.wte.weight)  # tied LM head


def build(device: torch.device, smoke: bool) -> Built:
    layers, d, heads, hidden, vocab, slots = (
        (2, 32, 2, 64, 50, 16) if smoke else (6, 768, 12, 3072, 32000, 256)
    )
    batch = 4
    dtype = low_precision(device)
    model = GPT2(layers, d, heads, hidden, vocab, batch, slots).to(device, dtype).eval()
    slot_ids = torch.arange(slots, device=device)
    zeros = torch.zeros(1, 1, 1, slots, device=device, dtype=dtype)

    @torch.no_grad()
    def step(tokens: Tensor, pos: Tensor) -> tuple[Tensor, Tensor]:
        mask = zeros.masked_fill((slot_ids > pos).view(1, 1, 1, slots), float("-inf"))
        logits = model(tokens, pos, mask)
        return logits.argmax(-1), logits.max()

    position = torch.tensor([slots * 100 // 256], device=device)
    inputs = [
        (torch.randint(0, vocab, (batch,), device=device), position.clone()) for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"GPT-2 greedy decode, {layers} x d{d}, vocab {vocab}, KV cache {slots}, b{batch}",
        [model, slot_ids, zeros],
    )


if __name__ == "__main__":
    main(build, __doc__)
