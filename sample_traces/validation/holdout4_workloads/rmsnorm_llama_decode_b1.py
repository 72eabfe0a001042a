"""Llama-style decode of one token through 8 layers, written out: hand-written RMSNorm,
separate q/k/v projections (d 1024, 8 heads), rotary embedding by hand, SDPA over a 256-slot
KV cache with a fixed mask, SwiGLU MLP (hidden 2816), batch 1, bf16 (fourth hold-out).

The position is a device tensor fixed at build: every step writes the same cache slot with
``index_copy_``, so a step depends only on its input.

    traceinspect profile rmsnorm_llama_decode_b1.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor


def rms_norm(x: Tensor, w: Tensor, eps: float = 1e-6) -> Tensor:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def rotate(x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
    x1, x2 = x.chunk(2, dim=-1)
    return x * cos + torch.cat([-x2, x1], dim=-1) * sin


def build(device: torch.device, smoke: bool) -> Built:
    layers, d, heads, hidden, cache = (2, 32, 2, 64, 16) if smoke else (8, 1024, 8, 2816, 256)
    dtype = low_precision(device)
    dh = d // heads

    def weight(*shape: int) -> Tensor:
        return torch.randn(*shape, device=device, dtype=dtype) / shape[0] ** 0.5

    shapes = {"wq": (d, d), "wk": (d, d), "wv": (d, d), "wo": (d, d),
              "w1": (d, hidden), "w3": (d, hidden), "w2": (hidden, d)}  # fmt: skip
    blocks = [
        {
            **{name: weight(*shape) for name, shape in shapes.items()},
            "n1": torch.ones(d, device=device, dtype=dtype),
            "n2": torch.ones(d, device=device, dtype=dtype),
            "k": torch.randn(1, heads, cache, dh, device=device, dtype=dtype) * 0.1,
            "v": torch.randn(1, heads, cache, dh, device=device, dtype=dtype) * 0.1,
        }
        for _ in range(layers)
    ]
    pos = torch.tensor([cache * 3 // 4], device=device)
    inv_freq = 1.0 / 10000 ** (torch.arange(0, dh, 2, device=device).float() / dh)
    angles = torch.outer(torch.arange(cache, device=device).float(), inv_freq)
    angles = torch.cat([angles, angles], dim=-1)[pos].view(1, 1, 1, dh)
    cos, sin = angles.cos().to(dtype), angles.sin().to(dtype)
    mask = (torch.arange(cache, device=device) <= pos).view(1, 1, 1, cache)

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        for b in blocks:
            h = rms_norm(x, b["n1"])
            q, k, v = ((h @ b["w" + w]).view(1, 1, heads, dh).transpose(1, 2) for w in "qkv")
            b["k"].index_copy_(2, pos, rotate(k, cos, sin))
            b["v"].index_copy_(2, pos, v)
            att = F.scaled_dot_product_attention(rotate(q, cos, sin), b["k"], b["v"], mask)
            x = x + att.transpose(1, 2).reshape(1, 1, d) @ b["wo"]
            h = rms_norm(x, b["n2"])
            x = x + (F.silu(h @ b["w1"]) * (h @ b["w3"])) @ b["w2"]
        return x

    inputs = [(torch.randn(1, 1, d, device=device, dtype=dtype),) for _ in range(2)]
    return Built(step, inputs, f"Llama decode, {layers} layers d{d}, cache {cache}", blocks)


if __name__ == "__main__":
    main(build, __doc__)
