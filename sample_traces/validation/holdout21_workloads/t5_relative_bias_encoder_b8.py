"""Two T5 encoder layers with T5's bucketed relative position bias (Raffel et al., 2020), 8
sequences of 256 tokens, d 512, 8 heads of 64, bf16 (twenty-first hold-out), inference: the
bias is computed every step as T5 does, from the relative positions (``arange``, the
difference, sign and magnitude, the log-spaced buckets with ``log``, ``clamp`` and
``where``, 32 buckets, max distance 128), looked up in an ``nn.Embedding(32, 8)`` and
permuted to heads, then shared by both layers; each layer: RMSNorm (T5's LayerNorm without
mean or bias), Q/K/V/O projections without bias, scores plus the bias, softmax in fp32, the
weighted sum, the residual add, RMSNorm, a ReLU FFN 512->2048->512 and the residual add.
About 60 kernels, a dozen of them in the bucket arithmetic. Input: 8 x 256 x 512. Returns 8
x 256 x 512.

    traceinspect profile t5_relative_bias_encoder_b8.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

BUCKETS, MAX_DISTANCE, LAYERS = 32, 128, 2


def relative_buckets(n: int, device: torch.device) -> Tensor:
    pos = torch.arange(n, device=device)
    rel = pos.unsqueeze(0) - pos.unsqueeze(1)  # key - query
    half = BUCKETS // 2
    bucket = (rel > 0).long() * half
    distance = rel.abs()
    exact = half // 2
    large = exact + (
        torch.log(distance.float().clamp(min=1) / exact)
        / math.log(MAX_DISTANCE / exact)
        * (half - exact)
    ).long()
    large = large.clamp(max=half - 1)
    return bucket + torch.where(distance < exact, distance, large)


class RMSNorm(nn.Module):
    def __init__(self, d: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x: Tensor) -> Tensor:
        variance = x.float().pow(2).mean(-1, keepdim=True)
        return (x.float() * torch.rsqrt(variance + 1e-6)).to(x.dtype) * self.weight


class Layer(nn.Module):
    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = RMSNorm(d), RMSNorm(d)
        self.q, self.k, self.v, self.o = (nn.Linear(d, d, bias=False) for _ in range(4))
        self.wi, self.wo = nn.Linear(d, 4 * d, bias=False), nn.Linear(4 * d, d, bias=False)

    def forward(self, x: Tensor, bias: Tensor) -> Tensor:
        b, n, d = x.shape
        h = self.norm1(x)
        q, k, v = (
            proj(h).view(b, n, self.heads, -1).transpose(1, 2) for proj in (self.q, self.k, self.v)
        )
        scores = (q @ k.transpose(-1, -2)).float() + bias  # T5 does not scale the scores
        att = F.softmax(scores, dim=-1).to(x.dtype) @ v
        x = x + self.o(att.transpose(1, 2).reshape(b, n, d))
        return x + self.wo(F.relu(self.wi(self.norm2(x))))


def build(device: torch.device, smoke: bool) -> Built:
    batch, n, d, heads = (2, 16, 32, 2) if smoke else (8, 256, 512, 8)
    dtype = low_precision(device)
    bias_table = nn.Embedding(BUCKETS, heads)
    layers = nn.ModuleList(Layer(d, heads) for _ in range(LAYERS))
    model = nn.ModuleList([bias_table, layers]).to(device=device, dtype=dtype).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        bias = bias_table(relative_buckets(x.shape[1], x.device)).permute(2, 0, 1).float()
        for layer in layers:
            x = layer(x, bias)
        return x

    inputs = [(torch.randn(batch, n, d, device=device, dtype=dtype),) for _ in range(2)]
    description = f"{LAYERS} T5 encoder layers d{d} {heads} heads, bucketed bias, b{batch} x {n}"
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
