"""A NeRF coarse pass over 4096 rays, 32 samples each (131,072 points), the MLP in bf16 and the
encoding and rendering in fp32 (twelfth hold-out), as in nerf-pytorch's ``render_rays``
without stratified jitter. Inputs: ray origins and directions (4096 x 3 each, fp32). The
sample depths are 32 evenly spaced values between near 2 and far 6 (made at build, so
every step is deterministic); points = origin + depth x direction. Positional encoding
written out as nerf-pytorch's ``Embedder``: the input, then ``sin`` and ``cos`` of the
input times each of 10 frequencies 2^0 ... 2^9 (one multiply and two kernels per
frequency), concatenated: 63 values per point; the unit view direction likewise with 4
frequencies (27 values per ray, broadcast to the ray's samples). The MLP: 8 Linear layers
of 256 with ReLU, the point encoding concatenated again before the sixth; a Linear 256->1
density head; a Linear 256->256 feature layer concatenated with the direction encoding,
Linear 283->128, ReLU, Linear 128->3 colour head. Rendering (``raw2outputs``): distances
between samples (the last one 1e10) times the ray direction's norm, alpha = 1 -
exp(-relu(density) x distance), transmittance by an exclusive ``cumprod`` of 1 - alpha +
1e-10, weights = alpha x transmittance, colour = sum of weights x sigmoid(rgb) over the
samples, depth = sum of weights x depth, accumulated opacity = sum of weights. Returns the
colours (4096 x 3), depths (4096) and opacities (4096).

    traceinspect profile nerf_mlp_b4096.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

NEAR, FAR = 2.0, 6.0


def embed(x: Tensor, freqs: int) -> Tensor:
    """nerf-pytorch's Embedder: x, then sin(x 2^k) and cos(x 2^k) for k < freqs."""
    parts = [x]
    for k in range(freqs):
        scaled = x * float(2**k)
        parts += [torch.sin(scaled), torch.cos(scaled)]
    return torch.cat(parts, dim=-1)


class NeRF(nn.Module):
    def __init__(self, width: int, depth: int, skip: int, pts_dim: int, dir_dim: int) -> None:
        super().__init__()
        self.skip = skip
        self.pts = nn.ModuleList(
            nn.Linear(pts_dim if i == 0 else width + (pts_dim if i == skip else 0), width)
            for i in range(depth)
        )
        self.alpha = nn.Linear(width, 1)
        self.feature = nn.Linear(width, width)
        self.views = nn.Linear(width + dir_dim, width // 2)
        self.rgb = nn.Linear(width // 2, 3)

    def forward(self, pts: Tensor, dirs: Tensor) -> Tensor:  # (N, pts_dim), (N, dir_dim)
        h = pts
        for i, layer in enumerate(self.pts):
            if i == self.skip:
                h = torch.cat((pts, h), dim=-1)
            h = torch.relu(layer(h))
        alpha = self.alpha(h)
        h = torch.relu(self.views(torch.cat((self.feature(h), dirs), dim=-1)))
        return torch.cat((self.rgb(h), alpha), dim=-1)  # (N, 4): rgb, density


def build(device: torch.device, smoke: bool) -> Built:
    rays, samples, width = (64, 8, 32) if smoke else (4096, 32, 256)
    pts_freqs, dir_freqs = 10, 4
    pts_dim, dir_dim = 3 + 6 * pts_freqs, 3 + 6 * dir_freqs
    dtype = low_precision(device)
    model = NeRF(width, 8, 5, pts_dim, dir_dim).to(device=device, dtype=dtype).eval()
    z = torch.linspace(NEAR, FAR, samples, device=device)  # (S,)
    gaps = torch.cat((z[1:] - z[:-1], torch.tensor([1e10], device=device)))  # (S,)

    @torch.no_grad()
    def step(origins: Tensor, directions: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        pts = origins[:, None, :] + directions[:, None, :] * z[None, :, None]  # (R, S, 3)
        viewdirs = F.normalize(directions, dim=-1)
        pts_enc = embed(pts.reshape(-1, 3), pts_freqs).to(dtype)
        dir_enc = embed(viewdirs, dir_freqs).to(dtype)  # (R, dir_dim)
        dir_enc = dir_enc[:, None, :].expand(-1, samples, -1).reshape(-1, dir_dim)
        raw = model(pts_enc, dir_enc).float().view(rays, samples, 4)
        dists = gaps[None, :] * directions.norm(dim=-1, keepdim=True)  # (R, S)
        alpha = 1.0 - torch.exp(-torch.relu(raw[..., 3]) * dists)
        ones = torch.ones(rays, 1, device=alpha.device)
        trans = torch.cumprod(torch.cat((ones, 1.0 - alpha + 1e-10), dim=-1), dim=-1)
        weights = alpha * trans[:, :-1]
        rgb = (weights[..., None] * torch.sigmoid(raw[..., :3])).sum(-2)
        return rgb, (weights * z).sum(-1), weights.sum(-1)

    camera = torch.tensor([0.0, 0.0, 4.0], device=device)  # looking down -z at the origin
    inputs = [
        (
            camera + 0.1 * torch.randn(rays, 3, device=device),
            F.normalize(0.3 * torch.randn(rays, 3, device=device) - camera / 4.0, dim=-1),
        )
        for _ in range(2)
    ]
    description = (
        f"NeRF coarse MLP 8x{width} with positional encoding ({pts_freqs}+{dir_freqs} "
        f"frequencies), {rays} rays x {samples} samples"
    )
    return Built(step, inputs, description, [model, z, gaps])


if __name__ == "__main__":
    main(build, __doc__)
