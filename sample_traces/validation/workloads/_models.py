"""Model pieces the validation workloads share (plain PyTorch, no traceinspect)."""

from __future__ import annotations

import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from torch import Tensor, nn


class RMSNorm(nn.Module):
    def __init__(self, d: int, dtype: torch.dtype, eps: float = 1e-6) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d, dtype=dtype))
        self.eps = eps

    def forward(self, x: Tensor) -> Tensor:
        var = x.float().pow(2).mean(-1, keepdim=True)
        return (x.float() * torch.rsqrt(var + self.eps)).to(x.dtype) * self.weight


class DecoderLayer(nn.Module):
    """A Llama-style decoder layer for one-token decode: RMSNorm, fused QKV, a static KV
    cache written in place at a position held in a tensor (graph-safe), SwiGLU MLP."""

    def __init__(self, d: int, heads: int, batch: int, cache_len: int, dtype: torch.dtype) -> None:
        super().__init__()
        self.heads, self.dh = heads, d // heads
        self.norm1 = RMSNorm(d, dtype)
        self.qkv = nn.Linear(d, 3 * d, bias=False, dtype=dtype)
        self.proj = nn.Linear(d, d, bias=False, dtype=dtype)
        self.norm2 = RMSNorm(d, dtype)
        hidden = int(8 * d / 3) // 64 * 64
        self.gate_up = nn.Linear(d, 2 * hidden, bias=False, dtype=dtype)
        self.down = nn.Linear(hidden, d, bias=False, dtype=dtype)
        shape = (batch, heads, cache_len, self.dh)
        self.register_buffer("k_cache", torch.randn(shape, dtype=dtype) * 0.1)
        self.register_buffer("v_cache", torch.randn(shape, dtype=dtype) * 0.1)
        self.register_buffer("slots", torch.arange(cache_len))

    def forward(self, x: Tensor, pos: Tensor) -> Tensor:
        b = x.shape[0]
        q, k, v = self.qkv(self.norm1(x)).view(b, 1, 3, self.heads, self.dh).unbind(2)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
        self.k_cache.index_copy_(2, pos, k)
        self.v_cache.index_copy_(2, pos, v)
        mask = (self.slots <= pos).view(1, 1, 1, -1)
        att = F.scaled_dot_product_attention(q, self.k_cache, self.v_cache, attn_mask=mask)
        x = x + self.proj(att.transpose(1, 2).reshape(b, 1, -1))
        gate, up = self.gate_up(self.norm2(x)).chunk(2, dim=-1)
        return x + self.down(F.silu(gate) * up)


class Decoder(nn.Module):
    def __init__(
        self,
        layers: int,
        d: int,
        heads: int,
        batch: int,
        cache_len: int,
        vocab: int,
        dtype: torch.dtype,
    ) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, d, dtype=dtype)
        self.blocks = nn.ModuleList(
            DecoderLayer(d, heads, batch, cache_len, dtype) for _ in range(layers)
        )
        self.norm = RMSNorm(d, dtype)
        self.head = nn.Linear(d, vocab, bias=False, dtype=dtype)

    def forward(self, tokens: Tensor, pos: Tensor) -> Tensor:
        """tokens (batch, 1) int64, pos (1,) int64 -> next tokens (batch, 1), greedy."""
        x = self.embed(tokens)
        for blk in self.blocks:
            x = blk(x, pos)
        return self.head(self.norm(x)).argmax(-1)


class EncoderLayer(nn.Module):
    """Pre-norm transformer encoder layer with SDPA attention and a GELU MLP."""

    def __init__(self, d: int, heads: int, dtype: torch.dtype) -> None:
        super().__init__()
        self.heads, self.dh = heads, d // heads
        self.norm1 = nn.LayerNorm(d, dtype=dtype)
        self.qkv = nn.Linear(d, 3 * d, dtype=dtype)
        self.proj = nn.Linear(d, d, dtype=dtype)
        self.norm2 = nn.LayerNorm(d, dtype=dtype)
        self.up = nn.Linear(d, 4 * d, dtype=dtype)
        self.down = nn.Linear(4 * d, d, dtype=dtype)

    def forward(self, x: Tensor) -> Tensor:
        b, s, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, s, 3, self.heads, self.dh).unbind(2)
        att = F.scaled_dot_product_attention(
            q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        )
        x = x + self.proj(att.transpose(1, 2).reshape(b, s, d))
        return x + self.down(F.gelu(self.up(self.norm2(x))))


def encoder(layers: int, d: int, heads: int, dtype: torch.dtype) -> nn.Module:
    return nn.Sequential(*(EncoderLayer(d, heads, dtype) for _ in range(layers)))


class InvertedResidual(nn.Module):
    """MobileNetV2 block: 1x1 expand, 3x3 depthwise, 1x1 project, residual when it fits."""

    def __init__(self, cin: int, cout: int, stride: int, expand: int) -> None:
        super().__init__()
        mid = cin * expand
        layers: list[nn.Module] = []
        if expand != 1:
            layers += [nn.Conv2d(cin, mid, 1, bias=False), nn.BatchNorm2d(mid), nn.ReLU6()]
        layers += [
            nn.Conv2d(mid, mid, 3, stride, 1, groups=mid, bias=False),
            nn.BatchNorm2d(mid),
            nn.ReLU6(),
            nn.Conv2d(mid, cout, 1, bias=False),
            nn.BatchNorm2d(cout),
        ]
        self.body = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x: Tensor) -> Tensor:
        y = self.body(x)
        return x + y if self.residual else y


def mobilenet_v2(width: float = 1.0, classes: int = 1000) -> nn.Module:
    """torchvision's MobileNetV2 layout, written out (17 inverted residual blocks)."""

    def c(n: int) -> int:
        return max(8, int(n * width + 4) // 8 * 8)

    # (expand, channels, repeats, first stride)
    spec = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
            (6, 160, 3, 2), (6, 320, 1, 1)]  # fmt: skip
    cin = c(32)
    layers: list[nn.Module] = [
        nn.Conv2d(3, cin, 3, 2, 1, bias=False),
        nn.BatchNorm2d(cin),
        nn.ReLU6(),
    ]
    for expand, ch, repeats, stride in spec:
        for i in range(repeats):
            layers.append(InvertedResidual(cin, c(ch), stride if i == 0 else 1, expand))
            cin = c(ch)
    last = c(1280)
    layers += [
        nn.Conv2d(cin, last, 1, bias=False),
        nn.BatchNorm2d(last),
        nn.ReLU6(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(last, classes),
    ]
    return nn.Sequential(*layers)


class Bottleneck(nn.Module):
    """ResNet-50 bottleneck: 1x1 reduce, 3x3, 1x1 expand (x4), projection when needed."""

    def __init__(self, cin: int, mid: int, stride: int) -> None:
        super().__init__()
        cout = mid * 4
        self.c1, self.b1 = nn.Conv2d(cin, mid, 1, bias=False), nn.BatchNorm2d(mid)
        self.c2, self.b2 = nn.Conv2d(mid, mid, 3, stride, 1, bias=False), nn.BatchNorm2d(mid)
        self.c3, self.b3 = nn.Conv2d(mid, cout, 1, bias=False), nn.BatchNorm2d(cout)
        self.down: nn.Module = nn.Identity()
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(
                nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout)
            )

    def forward(self, x: Tensor) -> Tensor:
        y = torch.relu(self.b1(self.c1(x)))
        y = torch.relu(self.b2(self.c2(y)))
        return torch.relu(self.b3(self.c3(y)) + self.down(x))


def bottleneck_stack(blocks: tuple[int, ...], width: int = 64) -> nn.Module:
    """A ResNet-50-like net: stem, bottleneck stages with ``blocks`` blocks each, head."""
    layers: list[nn.Module] = [
        nn.Conv2d(3, width, 7, 2, 3, bias=False),
        nn.BatchNorm2d(width),
        nn.ReLU(),
        nn.MaxPool2d(3, 2, 1),
    ]
    cin = width
    for stage, count in enumerate(blocks):
        mid = width * 2**stage
        for i in range(count):
            layers.append(Bottleneck(cin, mid, 2 if stage > 0 and i == 0 else 1))
            cin = mid * 4
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, 1000)]
    return nn.Sequential(*layers)


def random_batch_norm_stats(model: nn.Module) -> None:
    """Give every BatchNorm2d of ``model`` running statistics other than the fresh 0 / 1, so
    an eval-mode step normalizes as a trained network would."""
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.normal_(0, 0.1)
            m.running_var.uniform_(0.5, 1.5)


def conv_input(
    batch: int, size: int, device: torch.device, dtype: torch.dtype, count: int = 2
) -> list[tuple[Tensor]]:
    return [
        (
            torch.randn(batch, 3, size, size, device=device, dtype=dtype).contiguous(
                memory_format=torch.channels_last
            ),
        )
        for _ in range(count)
    ]
