"""A Stable-Diffusion-style UNet mid block, as one denoising step runs it at the lowest
resolution (thirty-third hold-out): a (2, 640, 16, 16) feature map, a (2, 1280) timestep
embedding and (2, 77, 768) text tokens, fp16 on a GPU (fp32 on a CPU), eval mode, no
gradients. A ResNet block (GroupNorm(32), SiLU, 3 x 3 convolution; the timestep embedding
through SiLU and a Linear(1280, 640) added per channel; GroupNorm, SiLU, 3 x 3 convolution;
the residual), a transformer block over the 256 positions (GroupNorm, 1 x 1 projection in;
LayerNorm and self-attention with ``F.scaled_dot_product_attention``, 8 heads; LayerNorm
and cross-attention to the 77 text tokens of 768 features; LayerNorm and a GEGLU
feed-forward, 640 -> 2 x 2560 with a GELU gate -> 640; 1 x 1 projection out; the residual),
then a second ResNet block. Returns the (2, 640, 16, 16) output map.

    traceinspect profile sd_unet_midblock_b2.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn

HEADS = 8


class ResBlock(nn.Module):
    def __init__(self, ch: int, temb: int) -> None:
        super().__init__()
        self.norm1, self.conv1 = nn.GroupNorm(32, ch), nn.Conv2d(ch, ch, 3, padding=1)
        self.temb = nn.Linear(temb, ch)
        self.norm2, self.conv2 = nn.GroupNorm(32, ch), nn.Conv2d(ch, ch, 3, padding=1)

    def forward(self, x: Tensor, t_emb: Tensor) -> Tensor:
        h = self.conv1(F.silu(self.norm1(x)))
        h = h + self.temb(F.silu(t_emb))[:, :, None, None]
        h = self.conv2(F.silu(self.norm2(h)))
        return x + h


class Attention(nn.Module):
    def __init__(self, d: int, context: int) -> None:
        super().__init__()
        self.q = nn.Linear(d, d, bias=False)
        self.k = nn.Linear(context, d, bias=False)
        self.v = nn.Linear(context, d, bias=False)
        self.out = nn.Linear(d, d)

    def forward(self, x: Tensor, ctx: Tensor) -> Tensor:
        b, s, d = x.shape

        def heads(t: Tensor) -> Tensor:
            return t.view(b, -1, HEADS, d // HEADS).transpose(1, 2)

        q, k, v = heads(self.q(x)), heads(self.k(ctx)), heads(self.v(ctx))
        att = F.scaled_dot_product_attention(q, k, v)
        return self.out(att.transpose(1, 2).reshape(b, s, d))


class TransformerBlock(nn.Module):
    def __init__(self, ch: int, context: int) -> None:
        super().__init__()
        self.norm, self.proj_in = nn.GroupNorm(32, ch), nn.Conv2d(ch, ch, 1)
        self.ln1, self.self_attn = nn.LayerNorm(ch), Attention(ch, ch)
        self.ln2, self.cross_attn = nn.LayerNorm(ch), Attention(ch, context)
        self.ln3 = nn.LayerNorm(ch)
        self.geglu, self.ff_out = nn.Linear(ch, 2 * 4 * ch), nn.Linear(4 * ch, ch)
        self.proj_out = nn.Conv2d(ch, ch, 1)

    def forward(self, x: Tensor, text: Tensor) -> Tensor:
        b, c, h, w = x.shape
        y = self.proj_in(self.norm(x)).flatten(2).transpose(1, 2)
        n = self.ln1(y)
        y = y + self.self_attn(n, n)
        y = y + self.cross_attn(self.ln2(y), text)
        value, gate = self.geglu(self.ln3(y)).chunk(2, dim=-1)
        y = y + self.ff_out(value * F.gelu(gate))
        y = y.transpose(1, 2).reshape(b, c, h, w)
        return x + self.proj_out(y)


class MidBlock(nn.Module):
    def __init__(self, ch: int, temb: int, context: int) -> None:
        super().__init__()
        self.res1 = ResBlock(ch, temb)
        self.attn = TransformerBlock(ch, context)
        self.res2 = ResBlock(ch, temb)

    def forward(self, x: Tensor, t_emb: Tensor, text: Tensor) -> Tensor:
        return self.res2(self.attn(self.res1(x, t_emb), text), t_emb)


def build(device: torch.device, smoke: bool) -> Built:
    batch, ch, size, temb, tokens, context = (
        (2, 64, 4, 128, 8, 32) if smoke else (2, 640, 16, 1280, 77, 768)
    )
    dtype = torch.float16 if device.type == "cuda" else torch.float32
    model = MidBlock(ch, temb, context).to(device, dtype).eval()

    @torch.no_grad()
    def step(x: Tensor, t_emb: Tensor, text: Tensor) -> Tensor:
        return model(x, t_emb, text)

    inputs = [
        (
            torch.randn(batch, ch, size, size, device=device, dtype=dtype),
            torch.randn(batch, temb, device=device, dtype=dtype),
            torch.randn(batch, tokens, context, device=device, dtype=dtype),
        )
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"SD UNet mid block (ResNet, transformer, ResNet), {ch}x{size}x{size}, "
        f"{tokens} text tokens, b{batch}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
