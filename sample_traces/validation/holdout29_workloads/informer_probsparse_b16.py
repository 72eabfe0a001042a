"""Informer's ProbSparse self-attention (Zhou et al., 2021) over long time series
(twenty-ninth hold-out): 16 series of 720 steps, 512 channels in 8 heads, fp32. Per layer
(2): Q, K, V projections; for each query, its attention to 40 keys sampled at fixed random
positions (chosen at build time) gives a sparsity score (max minus mean); the top 40 queries
by score (``topk``) attend to all keys (``gather`` of the chosen queries, softmax over 720),
the others take the mean of V; the chosen rows are written back (``scatter``) and projected;
then a distilling convolution (Conv1d 3, ELU, MaxPool stride 2) halves the sequence, as in
the encoder. One stream; sorts, gathers and mid-sized GEMMs.

    traceinspect profile informer_probsparse_b16.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn

LAYERS = 2


class ProbAttention(nn.Module):
    def __init__(self, d: int, heads: int, samples: int, top: int) -> None:
        super().__init__()
        self.heads, self.samples, self.top = heads, samples, top
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))
        self.distil = nn.Conv1d(d, d, 3, padding=1)
        self.norm = nn.BatchNorm1d(d)

    def forward(self, x: Tensor, sample_idx: Tensor) -> Tensor:
        b, t, d = x.shape
        h = self.heads

        def split(y: Tensor) -> Tensor:
            return y.view(b, t, h, -1).transpose(1, 2)  # b h t e

        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        scale = 1 / math.sqrt(d // h)
        k_sample = k[:, :, sample_idx[:t]]  # b h t samples e
        qk_sample = (q.unsqueeze(-2) @ k_sample.transpose(-2, -1)).squeeze(-2)
        sparsity = qk_sample.max(dim=-1).values - qk_sample.mean(dim=-1)
        top = sparsity.topk(self.top, dim=-1).indices  # b h top
        idx = top.unsqueeze(-1).expand(-1, -1, -1, q.shape[-1])
        q_top = q.gather(2, idx)
        attn = torch.softmax(q_top @ k.transpose(-2, -1) * scale, dim=-1) @ v
        out = v.mean(dim=2, keepdim=True).expand(-1, -1, t, -1).clone()
        out.scatter_(2, idx, attn)
        y = x + self.o(out.transpose(1, 2).reshape(b, t, d))
        y = F.elu(self.norm(self.distil(y.transpose(1, 2))))
        return F.max_pool1d(y, 3, stride=2, padding=1).transpose(1, 2)


def build(device: torch.device, smoke: bool) -> Built:
    batch, t, d, heads, samples, top = (2, 16, 16, 2, 4, 4) if smoke else (16, 720, 512, 8, 40, 40)
    layers = nn.ModuleList([ProbAttention(d, heads, samples, top) for _ in range(LAYERS)])
    layers = layers.to(device).eval()
    g = torch.Generator().manual_seed(3)
    sample_idx = torch.randint(0, t // 2, (t, samples), generator=g).to(device)

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        for layer in layers:
            x = layer(x, sample_idx)
        return x

    inputs = [(torch.randn(batch, t, d, device=device),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"{LAYERS} ProbSparse attention layers, {t} steps, d{d}, b{batch}",
        [layers, sample_idx],
    )


if __name__ == "__main__":
    main(build, __doc__)
