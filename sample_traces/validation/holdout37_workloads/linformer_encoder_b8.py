"""A Linformer encoder (Wang et al., 2020), self-attention with keys and values projected along
the sequence to a fixed length, at batch 8 (thirty-seventh hold-out): 8 sequences of 1,024
tokens of width 256, bf16 on a GPU, eval mode, no gradients. 4 post-LayerNorm layers (as the
RoBERTa-based reference code), 4 heads of 64. Per layer: Q, K, V from three ``Linear(256,
256)``; the keys and the values each projected along the sequence, 1,024 -> 128, by the
layer's own ``Linear(1024, 128, bias=False)`` (E for the keys, F for the values, shared by
the heads: the (8, 1024, 256) tensor transposed to (8, 256, 1024), projected to (8, 256, 128),
viewed per head); ``F.scaled_dot_product_attention`` of the 1,024 queries over the 128
projected keys and values (no mask), per head (8, 4, 1024, 64); ``Linear(256, 256)``, the
residual add and LayerNorm; then the FFN ``Linear(256, 1024)`` + GELU + ``Linear(1024, 256)``,
the residual add and LayerNorm. Input: the (8, 1024, 256) hidden states; returns the output
hidden states of the same shape.

    traceinspect profile linformer_encoder_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

LAYERS, HEADS = 4, 4


class LinformerLayer(nn.Module):
    def __init__(self, d: int, seq: int, proj: int, hidden: int) -> None:
        super().__init__()
        self.q = nn.Linear(d, d)
        self.k = nn.Linear(d, d)
        self.v = nn.Linear(d, d)
        self.e = nn.Linear(seq, proj, bias=False)
        self.f = nn.Linear(seq, proj, bias=False)
        self.out = nn.Linear(d, d)
        self.norm1 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, hidden)
        self.fc2 = nn.Linear(hidden, d)
        self.norm2 = nn.LayerNorm(d)

    def forward(self, x: Tensor) -> Tensor:
        b, s, d = x.shape
        dh = d // HEADS
        q = self.q(x).view(b, s, HEADS, dh).transpose(1, 2)  # (b, h, s, dh)
        k = self.e(self.k(x).transpose(1, 2))  # (b, d, proj)
        v = self.f(self.v(x).transpose(1, 2))
        k = k.view(b, HEADS, dh, -1).transpose(2, 3)  # (b, h, proj, dh)
        v = v.view(b, HEADS, dh, -1).transpose(2, 3)
        att = F.scaled_dot_product_attention(q, k, v)
        x = self.norm1(x + self.out(att.transpose(1, 2).reshape(b, s, d)))
        return self.norm2(x + self.fc2(F.gelu(self.fc1(x))))


def build(device: torch.device, smoke: bool) -> Built:
    batch, seq, d, proj, hidden = (2, 32, 32, 8, 64) if smoke else (8, 1024, 256, 128, 1024)
    dtype = low_precision(device)
    model = nn.Sequential(*(LinformerLayer(d, seq, proj, hidden) for _ in range(LAYERS)))
    model = model.to(device, dtype).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    inputs = [(torch.randn(batch, seq, d, device=device, dtype=dtype),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"Linformer encoder, {LAYERS} post-LN layers d{d}, {HEADS} heads, keys / values "
        f"{seq} -> {proj}, b{batch} x {seq} tokens",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
