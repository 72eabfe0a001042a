"""One Conformer block over 2 x 256 frames of d 256, bf16 (sixth hold-out): a half-step FFN
(LayerNorm, Linear 256->1024, SiLU, Linear 1024->256, x + 0.5 * ffn), multi-head
self-attention (LayerNorm, fused qkv Linear, 4 heads, SDPA, output Linear, residual; no
relative positional encoding), the convolution module (LayerNorm, pointwise Conv1d 256->512,
GLU over channels, depthwise Conv1d kernel 31 padding 15, BatchNorm1d in eval mode with
running statistics set at build, SiLU, pointwise Conv1d 256->256, residual), a second
half-step FFN and a final LayerNorm. No dropout.

    traceinspect profile conformer_block_b2.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn


def half_ffn(d: int, hidden: int) -> nn.Module:
    return nn.Sequential(nn.LayerNorm(d), nn.Linear(d, hidden), nn.SiLU(), nn.Linear(hidden, d))


class ConvModule(nn.Module):
    def __init__(self, d: int, kernel: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.pointwise1 = nn.Conv1d(d, 2 * d, 1)
        self.depthwise = nn.Conv1d(d, d, kernel, padding=kernel // 2, groups=d)
        self.bn = nn.BatchNorm1d(d)
        self.pointwise2 = nn.Conv1d(d, d, 1)
        # As after training: running statistics away from 0 and 1.
        self.bn.running_mean = torch.randn(self.bn.num_features) * 0.1
        self.bn.running_var = torch.rand(self.bn.num_features) + 0.5

    def forward(self, x: Tensor) -> Tensor:  # x: (B, T, d)
        y = F.glu(self.pointwise1(self.norm(x).transpose(1, 2)), dim=1)
        y = self.pointwise2(F.silu(self.bn(self.depthwise(y))))
        return x + y.transpose(1, 2)


class ConformerBlock(nn.Module):
    def __init__(self, d: int, heads: int, hidden: int, kernel: int) -> None:
        super().__init__()
        self.heads = heads
        self.ffn1, self.ffn2 = half_ffn(d, hidden), half_ffn(d, hidden)
        self.att_norm = nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.conv = ConvModule(d, kernel)
        self.final = nn.LayerNorm(d)

    def forward(self, x: Tensor) -> Tensor:
        x = x + 0.5 * self.ffn1(x)
        b, t, d = x.shape
        qkv = self.qkv(self.att_norm(x)).view(b, t, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
        att = F.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2])
        x = x + self.proj(att.transpose(1, 2).reshape(b, t, d))
        x = self.conv(x)
        x = x + 0.5 * self.ffn2(x)
        return self.final(x)


def build(device: torch.device, smoke: bool) -> Built:
    d, heads, hidden, kernel, frames, batch = (
        (32, 2, 64, 7, 16, 2) if smoke else (256, 4, 1024, 31, 256, 2)
    )
    dtype = low_precision(device)
    model = ConformerBlock(d, heads, hidden, kernel).to(device=device, dtype=dtype).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    inputs = [(torch.randn(batch, frames, d, device=device, dtype=dtype),) for _ in range(2)]
    description = f"Conformer block d{d}, conv kernel {kernel}, batch {batch} x {frames}"
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
