"""Two Mamba blocks (Gu & Dao, 2023) over 4 sequences of 128 tokens, d_model 256, d_state 16, d_conv
4, expand 2 (d_inner 512, dt_rank 16), on the reference path of ``mamba_ssm``: no fused kernels,
``Mamba.forward`` as ``mamba_simple`` runs it without ``causal_conv1d`` and with
``selective_scan_ref``, the sequential scan a Python loop over the 128 positions (fifty-second
hold-out: one stream of some 1,000 tiny kernels, the scan's multiply, add and per-position state
contraction over a (4, 512, 16) fp32 state, 128 KB, launch-bound). Each block is ``mamba_ssm``'s
``Block`` around the mixer, pre-norm with the residual carried beside (residual = hidden + residual,
in the first block the input itself; hidden = mixer(LayerNorm(residual))), and after the last block
the final LayerNorm of hidden + residual, as ``MixerModel`` ends. The mixer: ``in_proj`` (256 ->
1024, no bias) as ``in_proj.weight @ hidden`` laid out (d, b l) and viewed back to (b, d, l), split
into x and z; the causal depthwise ``Conv1d(512, 512, 4, groups 512, padding 3)`` cropped to the
length, SiLU; ``x_proj`` (512 -> 16 + 16 + 16, no bias) to dt, B and C; dt through ``dt_proj.weight
@ dt.t()``; B and C made contiguous as (b, 16, l). ``selective_scan_ref`` in fp32, as the reference
casts: delta = softplus(dt + ``dt_proj.bias``), A = -exp(A_log) (A_log = log 1..16 per channel,
S4D-real), deltaA = exp(einsum('bdl,dn->bdln')), deltaB_u = einsum('bdl,bnl,bdl->bdln') (4 x 512 x
128 x 16 fp32, 16 MB each), then for each position i: x = deltaA[:, :, i] * x + deltaB_u[:, :, i]
and y_i = einsum('bdn,bn->bd', x, C[:, :, i]); the 128 outputs stacked, the skip D u added, gated by
SiLU(z), cast back; ``out_proj`` (512 -> 256, no bias). Initialised as ``mamba_simple`` does
(dt_proj's bias the inverse softplus of a dt drawn log-uniformly in [0.001, 0.1], its weight uniform
in +-dt_rank^-0.5, D ones). bf16 weights and activations on a GPU, the scan in fp32, eval mode, no
gradients, one stream. Input: the token embeddings (4, 128, 256). Returns the normalised hidden
states (4, 128, 256).

    traceinspect profile selective_scan_loop_b4.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

DT_MIN, DT_MAX = 1e-3, 0.1


def selective_scan_ref(
    u: Tensor, delta: Tensor, a: Tensor, b: Tensor, c: Tensor, d: Tensor, z: Tensor, bias: Tensor
) -> Tensor:
    """mamba_ssm's ``selective_scan_ref`` for real A, variable B and C, delta_softplus: u, delta
    and z (b, d, l); a (d, n); b and c (b, n, l); d and bias (d,). Returns (b, d, l)."""
    dtype_in = u.dtype
    u, delta = u.float(), delta.float()
    delta = F.softplus(delta + bias[..., None].float())
    b, c = b.float(), c.float()
    x = a.new_zeros((u.shape[0], a.shape[0], a.shape[1]))
    delta_a = torch.exp(torch.einsum("bdl,dn->bdln", delta, a))
    delta_b_u = torch.einsum("bdl,bnl,bdl->bdln", delta, b, u)
    ys = []
    for i in range(u.shape[2]):
        x = delta_a[:, :, i] * x + delta_b_u[:, :, i]
        ys.append(torch.einsum("bdn,bn->bd", x, c[:, :, i]))
    y = torch.stack(ys, dim=2)  # (b, d, l)
    out = (y + u * d[:, None]) * F.silu(z)
    return out.to(dtype=dtype_in)


class Mamba(nn.Module):
    def __init__(self, d_model: int, d_state: int, d_conv: int, expand: int) -> None:
        super().__init__()
        d_inner = expand * d_model
        self.d_state, self.dt_rank = d_state, math.ceil(d_model / 16)
        self.in_proj = nn.Linear(d_model, 2 * d_inner, bias=False)
        self.conv1d = nn.Conv1d(d_inner, d_inner, d_conv, groups=d_inner, padding=d_conv - 1)
        self.x_proj = nn.Linear(d_inner, self.dt_rank + 2 * d_state, bias=False)
        self.dt_proj = nn.Linear(self.dt_rank, d_inner)
        nn.init.uniform_(self.dt_proj.weight, -(self.dt_rank**-0.5), self.dt_rank**-0.5)
        dt = torch.exp(
            torch.rand(d_inner) * (math.log(DT_MAX) - math.log(DT_MIN)) + math.log(DT_MIN)
        ).clamp(min=1e-4)
        with torch.no_grad():
            self.dt_proj.bias.copy_(dt + torch.log(-torch.expm1(-dt)))  # softplus^-1(dt)
        a = torch.arange(1, d_state + 1, dtype=torch.float32).repeat(d_inner, 1)
        self.A_log = nn.Parameter(torch.log(a))  # noqa: N815 - mamba_ssm's name
        self.D = nn.Parameter(torch.ones(d_inner))  # noqa: N815 - mamba_ssm's name
        self.out_proj = nn.Linear(d_inner, d_model, bias=False)

    def forward(self, hidden: Tensor) -> Tensor:  # hidden: (b, l, d_model)
        batch, seq, d_model = hidden.shape
        xz = self.in_proj.weight @ hidden.permute(2, 0, 1).reshape(d_model, batch * seq)
        xz = xz.view(-1, batch, seq).permute(1, 0, 2)  # (b, 2 d_inner, l)
        a = -torch.exp(self.A_log.float())
        x, z = xz.chunk(2, dim=1)
        x = F.silu(self.conv1d(x)[..., :seq])
        x_dbl = self.x_proj(x.permute(0, 2, 1).reshape(batch * seq, -1))  # (b l, r + 2 n)
        dt, b, c = torch.split(x_dbl, [self.dt_rank, self.d_state, self.d_state], dim=-1)
        dt = (self.dt_proj.weight @ dt.t()).view(-1, batch, seq).permute(1, 0, 2)
        b = b.view(batch, seq, -1).permute(0, 2, 1).contiguous()
        c = c.view(batch, seq, -1).permute(0, 2, 1).contiguous()
        y = selective_scan_ref(x, dt, a, b, c, self.D.float(), z, self.dt_proj.bias.float())
        return self.out_proj(y.permute(0, 2, 1))


class MambaStack(nn.Module):
    def __init__(self, layers: int, d_model: int, d_state: int, d_conv: int, expand: int) -> None:
        super().__init__()
        self.mixers = nn.ModuleList(Mamba(d_model, d_state, d_conv, expand) for _ in range(layers))
        self.norms = nn.ModuleList(nn.LayerNorm(d_model) for _ in range(layers))
        self.norm_f = nn.LayerNorm(d_model)

    def forward(self, hidden: Tensor) -> Tensor:
        residual: Tensor | None = None
        for norm, mixer in zip(self.norms, self.mixers, strict=True):
            residual = hidden if residual is None else hidden + residual
            hidden = mixer(norm(residual))
        return self.norm_f(hidden + residual)


def build(device: torch.device, smoke: bool) -> Built:
    batch, seq, d_model, d_state = (2, 8, 16, 4) if smoke else (4, 128, 256, 16)
    layers, d_conv, expand = 2, 4, 2
    dtype = low_precision(device)
    model = MambaStack(layers, d_model, d_state, d_conv, expand)
    model = model.to(device=device, dtype=dtype).eval()

    @torch.no_grad()
    def step(hidden: Tensor) -> Tensor:
        return model(hidden)

    inputs = [(torch.randn(batch, seq, d_model, device=device, dtype=dtype),) for _ in range(2)]
    description = (
        f"Mamba selective_scan_ref loop: {layers} blocks x {seq} positions, d_model {d_model} "
        f"d_inner {expand * d_model} d_state {d_state}, fp32 scan, b{batch}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
