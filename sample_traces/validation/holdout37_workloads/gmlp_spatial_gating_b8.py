"""A gMLP encoder (Liu et al., 2021, "Pay Attention to MLPs"), attention-free, at batch 8
(thirty-seventh hold-out): 8 sequences of 256 tokens of width 256, bf16 on a GPU, eval mode,
no gradients. 6 blocks, each x + proj(sgu(gelu(Linear(256, 1536)(LayerNorm(x))))): the 1536
channels split into u and v (768 each, ``chunk``), the spatial gating unit normalizing v
(LayerNorm(768)) and mixing it across the 256 tokens with a dense token-to-token projection
(a (256, 256) weight and a (256,) bias per block, initialized at build as the paper says:
the weights near zero, uniform in [-0.01, 0.01], the biases 1; applied as
``torch.einsum("ts,bsc->btc")`` plus the bias per token), u times the mixed v, then
``Linear(768, 256)`` and the residual add. A final LayerNorm. Input: the (8, 256, 256) token
embeddings; returns the output hidden states of the same shape.

    traceinspect profile gmlp_spatial_gating_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

BLOCKS = 6


class SpatialGatingUnit(nn.Module):
    def __init__(self, channels: int, seq: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(channels)
        self.weight = nn.Parameter(torch.empty(seq, seq).uniform_(-0.01, 0.01))
        self.bias = nn.Parameter(torch.ones(seq))

    def forward(self, x: Tensor) -> Tensor:
        u, v = x.chunk(2, dim=-1)
        v = torch.einsum("ts,bsc->btc", self.weight, self.norm(v)) + self.bias[:, None]
        return u * v


class GMLPBlock(nn.Module):
    def __init__(self, d: int, hidden: int, seq: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.proj_in = nn.Linear(d, hidden)
        self.sgu = SpatialGatingUnit(hidden // 2, seq)
        self.proj_out = nn.Linear(hidden // 2, d)

    def forward(self, x: Tensor) -> Tensor:
        return x + self.proj_out(self.sgu(F.gelu(self.proj_in(self.norm(x)))))


def build(device: torch.device, smoke: bool) -> Built:
    batch, seq, d, hidden = (2, 16, 32, 192) if smoke else (8, 256, 256, 1536)
    dtype = low_precision(device)
    model = nn.Sequential(*(GMLPBlock(d, hidden, seq) for _ in range(BLOCKS)), nn.LayerNorm(d))
    model = model.to(device, dtype).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    inputs = [(torch.randn(batch, seq, d, device=device, dtype=dtype),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"gMLP, {BLOCKS} blocks d{d} -> {hidden} with spatial gating over {seq} tokens, b{batch}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
