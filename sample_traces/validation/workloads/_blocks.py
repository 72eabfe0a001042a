"""Building blocks the later hold-out workloads share (plain PyTorch, no traceinspect): a
convolution + BatchNorm + ReLU unit, a pre-norm multi-head attention block on
``F.scaled_dot_product_attention`` (self- or cross-attention, optional rotary embeddings), a
GELU / ReLU / SwiGLU MLP, a residual pre-norm MLP block and a plain Linear tower. A script that
uses them says in its docstring what each computes at its sizes; changing a block here changes
every script that imports it, so a block, once a set is recorded with it, stays as it is."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from torch import Tensor, nn

ACTIVATIONS: dict[str, Callable[[Tensor], Tensor]] = {
    "gelu": F.gelu,
    "relu": F.relu,
    "silu": F.silu,
}


def conv_bn_relu(cin: int, cout: int, stride: int = 1, kernel: int = 3) -> nn.Sequential:
    """``Conv2d(cin, cout, kernel, stride, padding kernel // 2, bias=False)`` + BatchNorm2d +
    ReLU."""
    return nn.Sequential(
        nn.Conv2d(cin, cout, kernel, stride, kernel // 2, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU(),
    )


def rotary_tables(length: int, head_dim: int, base: float = 10000.0) -> tuple[Tensor, Tensor]:
    """The rotary embedding's cos and sin, (length, head_dim) each, fp32: frequencies
    base^(-2i / head_dim) for the head_dim / 2 pairs, repeated for the two halves (the
    rotate-half layout of GPT-NeoX and ESM-2)."""
    inv_freq = base ** (-torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim)
    angles = torch.arange(length, dtype=torch.float32)[:, None] * inv_freq[None]
    angles = torch.cat([angles, angles], dim=-1)
    return angles.cos(), angles.sin()


def apply_rotary(x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
    """Rotate ``x`` (..., length, head_dim) by the tables (length, head_dim): x cos +
    rotate_half(x) sin, rotate_half(x) = [-x2, x1]; in x's dtype."""
    x1, x2 = x.chunk(2, dim=-1)
    rotated = torch.cat([-x2, x1], dim=-1)
    return x * cos.to(x.dtype) + rotated * sin.to(x.dtype)


class Attention(nn.Module):
    """Multi-head attention on ``F.scaled_dot_product_attention``. Self-attention: one fused
    ``Linear(d, 3 d)`` to q, k, v. Cross-attention (``cross=True``): ``Linear(d, d)`` to q and
    ``Linear(d_context, 2 d)`` to k, v from the context. Optional rotary embeddings on q and k
    (``rope=(cos, sin)``), an optional ``attn_mask`` (boolean or additive, broadcast to
    (b, heads, queries, keys)); then ``Linear(d, d)``."""

    def __init__(
        self, d: int, heads: int, cross: bool = False, d_context: int | None = None
    ) -> None:
        super().__init__()
        self.heads, self.head_dim, self.cross = heads, d // heads, cross
        if cross:
            self.q = nn.Linear(d, d)
            self.kv = nn.Linear(d_context or d, 2 * d)
        else:
            self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)

    def forward(
        self,
        x: Tensor,
        context: Tensor | None = None,
        attn_mask: Tensor | None = None,
        rope: tuple[Tensor, Tensor] | None = None,
    ) -> Tensor:
        b, n, d = x.shape
        if self.cross:
            ctx = x if context is None else context
            q = self.q(x).view(b, n, self.heads, self.head_dim)
            k, v = self.kv(ctx).view(b, ctx.shape[1], 2, self.heads, self.head_dim).unbind(2)
        else:
            q, k, v = self.qkv(x).view(b, n, 3, self.heads, self.head_dim).unbind(2)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))  # (b, heads, tokens, head_dim)
        if rope is not None:
            q, k = apply_rotary(q, *rope), apply_rotary(k, *rope)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask)
        return self.proj(out.transpose(1, 2).reshape(b, n, d))


class PreNormAttention(nn.Module):
    """The pre-norm attention block: x + Attention(LayerNorm(x)), the context (cross-attention)
    through its own LayerNorm when ``norm_context``."""

    def __init__(
        self,
        d: int,
        heads: int,
        cross: bool = False,
        d_context: int | None = None,
        norm_context: bool = False,
    ) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.context_norm = nn.LayerNorm(d_context or d) if norm_context else nn.Identity()
        self.attn = Attention(d, heads, cross, d_context)

    def forward(
        self,
        x: Tensor,
        context: Tensor | None = None,
        attn_mask: Tensor | None = None,
        rope: tuple[Tensor, Tensor] | None = None,
    ) -> Tensor:
        if context is not None:
            context = self.context_norm(context)
        return x + self.attn(self.norm(x), context, attn_mask, rope)


class MLP(nn.Module):
    """The transformer MLP: ``Linear(d, hidden)`` + activation (``gelu``, ``relu`` or
    ``silu``) + ``Linear(hidden, d)``; ``swiglu``: ``Linear(d, 2 hidden, bias=False)`` split
    into gate and up, SiLU(gate) x up, ``Linear(hidden, d, bias=False)``."""

    def __init__(self, d: int, hidden: int, act: str = "gelu") -> None:
        super().__init__()
        self.swiglu = act == "swiglu"
        self.act = F.silu if self.swiglu else ACTIVATIONS[act]
        self.up = nn.Linear(d, 2 * hidden if self.swiglu else hidden, bias=not self.swiglu)
        self.down = nn.Linear(hidden, d, bias=not self.swiglu)

    def forward(self, x: Tensor) -> Tensor:
        h = self.up(x)
        if self.swiglu:
            gate, up = h.chunk(2, dim=-1)
            return self.down(F.silu(gate) * up)
        return self.down(self.act(h))


class ResidualMLP(nn.Module):
    """The residual pre-norm MLP block: x + MLP(LayerNorm(x))."""

    def __init__(self, d: int, hidden: int, act: str = "gelu") -> None:
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.mlp = MLP(d, hidden, act)

    def forward(self, x: Tensor) -> Tensor:
        return x + self.mlp(self.norm(x))


def mlp_tower(
    widths: Sequence[int],
    act: Callable[[], nn.Module] = nn.ReLU,
    last_act: bool = False,
) -> nn.Sequential:
    """``Linear(widths[0], widths[1])``, ``act()``, ... ``Linear(widths[-2], widths[-1])``, an
    ``act()`` after the last Linear too when ``last_act``."""
    layers: list[nn.Module] = []
    for i, (cin, cout) in enumerate(zip(widths[:-1], widths[1:], strict=True)):
        layers.append(nn.Linear(cin, cout))
        if last_act or i < len(widths) - 2:
            layers.append(act())
    return nn.Sequential(*layers)
