"""A DDIM sampler loop: 8 deterministic denoising steps (eta 0, timesteps 999, 874, ..., 124
of a 1000-step linear beta schedule 1e-4..0.02) inside one step, on 4 x 256 latents given in
fp32 (sixth hold-out). Each denoising step computes a sinusoidal timestep embedding (128:
sin and cos of t times 64 frequencies, broadcast to the batch), predicts the noise with an
MLP on [latent, embedding] (Linear 384->512, SiLU, Linear 512->512, SiLU, Linear 512->256,
bf16; latents cast in and the prediction cast back to fp32), then the DDIM update as tensor
ops in fp32: x0 = (x - sqrt(1 - a_t) * eps) / sqrt(a_t), clamped to [-1, 1], and
x = sqrt(a_prev) * x0 + sqrt(1 - a_prev) * eps. The square roots of the cumulative alphas
are precomputed at build as device tensors and indexed with python ints (0-d views, no host
sync).

    traceinspect profile diffusion_sampler_b4.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn

TRAIN_STEPS = 1000


def build(device: torch.device, smoke: bool) -> Built:
    latent, width, emb, batch, steps = (16, 32, 8, 2, 3) if smoke else (256, 512, 128, 4, 8)
    dtype = low_precision(device)
    net = nn.Sequential(
        nn.Linear(latent + emb, width),
        nn.SiLU(),
        nn.Linear(width, width),
        nn.SiLU(),
        nn.Linear(width, latent),
    ).to(device=device, dtype=dtype)
    net.eval()
    betas = torch.linspace(1e-4, 0.02, TRAIN_STEPS, dtype=torch.float64)
    # Index t + 1 holds the cumulative alpha of timestep t; index 0 (t = -1, after the last
    # step) holds 1.
    alphas = torch.cat([torch.ones(1, dtype=torch.float64), torch.cumprod(1 - betas, 0)])
    sqrt_a = alphas.sqrt().float().to(device)
    sqrt_1ma = (1 - alphas).sqrt().float().to(device)
    stride = TRAIN_STEPS // steps
    timesteps = [TRAIN_STEPS - 1 - i * stride for i in range(steps)]
    half = emb // 2
    freqs = torch.exp(-math.log(10_000) * torch.arange(half, dtype=torch.float32) / half)
    freqs = freqs.to(device)

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        for t in timesteps:
            angle = freqs * float(t)
            t_emb = torch.cat([angle.sin(), angle.cos()]).to(dtype).expand(x.shape[0], -1)
            eps = net(torch.cat([x.to(dtype), t_emb], dim=-1)).float()
            now, prev = t + 1, max(t - stride, -1) + 1
            x0 = ((x - sqrt_1ma[now] * eps) / sqrt_a[now]).clamp(-1.0, 1.0)
            x = sqrt_a[prev] * x0 + sqrt_1ma[prev] * eps
        return x

    inputs = [(torch.randn(batch, latent, device=device),) for _ in range(2)]
    description = f"DDIM sampler, {steps} steps of an MLP {width} on {batch} x {latent}"
    return Built(step, inputs, description, [net, sqrt_a, sqrt_1ma, freqs])


if __name__ == "__main__":
    main(build, __doc__)
