"""Two Mamba-2 layers (Dao and Gu, 2024) with the SSD (state space duality) scan written in
pure PyTorch, chunked as the paper's minimal reference is (``ssd_minimal_discrete``), no Triton
kernels (forty-second hold-out): 2 sequences of 1,024 tokens, d_model 512, 8 heads of 64
(d_inner 512, expand 1), state 64, one B / C group, chunk 64 (16 chunks), bf16 on a GPU for the
projections and the convolution, the scan and the gated norm in fp32, eval mode, no gradients.
Each layer, pre-norm with a residual: RMSNorm(512); ``Linear(512, 1160, bias=False)`` to z (512),
xBC (512 + 64 + 64) and dt (8); the depthwise causal ``Conv1d(640, 640, 4, groups 640, padding
3)`` on xBC, cut to 1,024 steps, + SiLU; dt = softplus(dt + dt_bias), A = -exp(A_log) per head;
the SSD on X = x dt (2, 16, 64, 8, 64), A dt, B and C (2, 16, 64, 64): the per-chunk cumulative
sum of A dt; the intra-chunk quadratic term, C B^T (2, 16, 64, 64) times the decay mask
exp(segsum(A dt)) (2, 8, 16, 64, 64, the segment sums of a chunk, -inf above the diagonal,
masks made each call as the reference does), times X; each chunk's final state, (B x decay to
the chunk's end)^T X, (2, 8, 16, 64, 64); the inter-chunk state passing, one matmul of the
chunk states with the (17, 17) lower-triangular matrix of cumulative decay products across
chunks, exp(segsum) of the chunk totals padded with a zero initial state; the output
combination, the intra-chunk term + C times each chunk's incoming state times exp(cumsum A dt);
+ D x; the gated RMSNorm, RMSNorm(y x SiLU(z)) with a learned weight; ``Linear(512, 512,
bias=False)``. A final RMSNorm. Input: the hidden states (2, 1024, 512). Returns the hidden
states (2, 1024, 512) (bf16 on a GPU).

    traceinspect profile mamba2_ssd_chunked_b2.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _models import RMSNorm
from torch import Tensor, nn

CONV, EPS = 4, 1e-6


def segsum(x: Tensor) -> Tensor:
    """Stable segment sums: out[..., i, j] = x[..., j+1] + ... + x[..., i] for i >= j, -inf
    above the diagonal."""
    t = x.shape[-1]
    x = x[..., None].expand(*x.shape, t)  # x[..., i, j] = x[..., i]
    strict = torch.tril(torch.ones(t, t, dtype=torch.bool, device=x.device), diagonal=-1)
    x = torch.cumsum(x.masked_fill(~strict, 0), dim=-2)
    lower = torch.tril(torch.ones(t, t, dtype=torch.bool, device=x.device))
    return x.masked_fill(~lower, -torch.inf)


def ssd(x: Tensor, a: Tensor, b: Tensor, c: Tensor, chunk: int) -> Tensor:
    """x (batch, len, heads, p), a (batch, len, heads), b and c (batch, len, n); fp32."""
    batch, length, heads, p = x.shape
    chunks = length // chunk
    x = x.view(batch, chunks, chunk, heads, p).permute(0, 3, 1, 2, 4)  # (b, h, c, l, p)
    a = a.view(batch, chunks, chunk, heads).permute(0, 3, 1, 2)  # (b, h, c, l)
    b, c = (t.view(batch, 1, chunks, chunk, -1) for t in (b, c))  # (b, 1, c, l, n)
    a_cumsum = torch.cumsum(a, dim=-1)
    # 1. intra-chunk: the quadratic, attention-like term with the decay mask
    scores = (c @ b.transpose(-1, -2)) * torch.exp(segsum(a))  # (b, h, c, l, s)
    y_diag = scores @ x
    # 2. each chunk's final state
    decay_states = torch.exp(a_cumsum[..., -1:] - a_cumsum)  # (b, h, c, l)
    states = (x * decay_states[..., None]).transpose(-1, -2) @ b  # (b, h, c, p, n)
    # 3. inter-chunk state passing: cumulative decay products across chunk boundaries
    states = torch.cat([torch.zeros_like(states[:, :, :1]), states], dim=2)
    decay_chunk = torch.exp(segsum(F.pad(a_cumsum[..., -1], (1, 0))))  # (b, h, c+1, c+1)
    states = (decay_chunk @ states.flatten(3)).view(batch, heads, chunks + 1, p, -1)[:, :, :-1]
    # 4. the incoming state's contribution to each chunk's outputs
    y_off = (c @ states.transpose(-1, -2)) * torch.exp(a_cumsum)[..., None]  # (b, h, c, l, p)
    return (y_diag + y_off).permute(0, 2, 3, 1, 4).reshape(batch, length, heads * p)


class Mamba2Mixer(nn.Module):
    def __init__(self, d_model: int, heads: int, head_dim: int, state: int, chunk: int) -> None:
        super().__init__()
        self.heads, self.head_dim, self.state, self.chunk = heads, head_dim, state, chunk
        self.d_inner = heads * head_dim
        self.conv_dim = self.d_inner + 2 * state
        self.in_proj = nn.Linear(d_model, self.d_inner + self.conv_dim + heads, bias=False)
        self.conv1d = nn.Conv1d(
            self.conv_dim, self.conv_dim, CONV, groups=self.conv_dim, padding=CONV - 1
        )
        self.dt_bias = nn.Parameter(torch.rand(heads) * 0.1 - 4)
        self.A_log = nn.Parameter(torch.log(torch.empty(heads).uniform_(1, 16)))
        self.D = nn.Parameter(torch.ones(heads))
        self.norm_weight = nn.Parameter(torch.ones(self.d_inner))
        self.out_proj = nn.Linear(self.d_inner, d_model, bias=False)

    def forward(self, u: Tensor) -> Tensor:  # (b, l, d_model)
        batch, length, _ = u.shape
        z, xbc, dt = self.in_proj(u).split([self.d_inner, self.conv_dim, self.heads], dim=-1)
        xbc = F.silu(self.conv1d(xbc.transpose(1, 2))[..., :length]).transpose(1, 2)
        x, b, c = xbc.float().split([self.d_inner, self.state, self.state], dim=-1)
        dt = F.softplus(dt.float() + self.dt_bias.float())  # (b, l, h)
        a = -torch.exp(self.A_log.float())
        x = x.view(batch, length, self.heads, self.head_dim)
        y = ssd(x * dt[..., None], a * dt, b, c, self.chunk)
        y = y + (x * self.D.float()[:, None]).flatten(2)
        y = y * F.silu(z.float())  # gated RMSNorm
        y = y * torch.rsqrt(y.pow(2).mean(-1, keepdim=True) + EPS) * self.norm_weight.float()
        return self.out_proj(y.to(u.dtype))


class Mamba2(nn.Module):
    def __init__(self, layers: int, d_model: int, dtype: torch.dtype, **mixer: int) -> None:
        super().__init__()
        self.norms = nn.ModuleList(RMSNorm(d_model, dtype) for _ in range(layers))
        self.mixers = nn.ModuleList(Mamba2Mixer(d_model, **mixer) for _ in range(layers))
        self.final = RMSNorm(d_model, dtype)

    def forward(self, h: Tensor) -> Tensor:
        for norm, mixer in zip(self.norms, self.mixers, strict=True):
            h = h + mixer(norm(h))
        return self.final(h)


def build(device: torch.device, smoke: bool) -> Built:
    batch, length, d_model, heads, head_dim, state, chunk = (
        (1, 32, 32, 2, 8, 8, 8) if smoke else (2, 1024, 512, 8, 64, 64, 64)
    )
    layers = 2
    dtype = low_precision(device)
    model = Mamba2(
        layers, d_model, dtype, heads=heads, head_dim=head_dim, state=state, chunk=chunk
    ).to(device, dtype)
    model.eval()

    @torch.no_grad()
    def step(hidden: Tensor) -> Tensor:
        return model(hidden)

    inputs = [(torch.randn(batch, length, d_model, device=device, dtype=dtype),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"Mamba-2 SSD in PyTorch: {layers} layers, d_model {d_model}, {heads} heads x {head_dim}, "
        f"state {state}, chunk {chunk} (quadratic intra-chunk + inter-chunk state passing), "
        f"b{batch} x {length}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
