"""Rendering an analytic signed-distance-field scene by sphere tracing with a fixed number of
steps, normals and soft shadows, written in plain PyTorch as differentiable SDF renderers
write it (thirty-eighth hold-out): one view of 256 x 256 pixels (65,536 rays), fp32
(explicitly, also on a GPU), no gradients, no early exit (every ray takes every step, so
nothing depends on the data). The scene (constants): 8 spheres (centres and radii in
``SPHERES``) joined with a rounded box (centre (0, -0.75, 0), half extents (2.2, 0.15, 2.2),
rounding 0.05) by the polynomial smooth minimum (k 0.25: h = clamp(0.5 + 0.5 (b - a) / k, 0,
1), lerp(b, a, h) - k h (1 - h)), then the hard minimum with the ground plane y = -1. One
evaluation of the SDF on (..., 3) points: the distances to the 8 centres (the points
broadcast against the (8, 3) centres, ``norm`` over the last dimension) minus the radii,
``amin`` over the spheres; the box as |p - c| - half, the norm of its positive part plus the
negative part of its largest coordinate, minus the rounding; the smooth and the hard minimum.
The camera: a pinhole with a 45 degree field of view 4 units from the origin in the direction
of the camera input (its y made |y| + 0.5, normalized), looking at the origin, up +y; the
pixel offsets (65,536, 2) are made at build; the ray directions (1, 65,536, 3) normalized.
Sphere tracing: t from 0, 32 steps of t = min(t + sdf(o + t d), 20). Hit where the final
distance is below 0.01 and t below 20. Normals by the tetrahedron technique, one SDF
evaluation on the 4 offsets (+-1e-3) stacked (4, 1, 65,536, 3). The soft shadow (Quilez's,
k 8) toward the light direction (the light input, its y made |y| + 1, normalized), from the
hit point moved 0.02 along the normal: 16 steps of res = min(res, 8 h / s), s += clamp(h,
0.02, 0.5). Shading: 0.1 + 0.9 max(n . l, 0) x shadow where hit, else the sky 0.6 + 0.4 d_y.
Inputs: the camera direction (1, 3) and the light direction (1, 3), fp32. Returns the image
(1, 256, 256) and the depth (1, 256, 256, t where hit, else 20), fp32.

    traceinspect profile sdf_sphere_trace_soft_shadow_b1.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor

MARCH_STEPS, SHADOW_STEPS, T_MAX, HIT_EPS = 32, 16, 20.0, 0.01
SMOOTH_K, SHADOW_K, NORMAL_H, CAMERA_DISTANCE, FOV_DEG = 0.25, 8.0, 1e-3, 4.0, 45.0
SPHERES = (  # x, y, z, radius
    (-1.6, -0.4, 0.2, 0.6),
    (-0.4, -0.3, -0.9, 0.5),
    (0.8, -0.2, 0.6, 0.7),
    (1.8, -0.45, -0.8, 0.4),
    (0.0, 0.35, 0.0, 0.45),
    (-1.0, -0.3, 1.5, 0.3),
    (1.2, -0.3, 1.8, 0.35),
    (0.2, -0.3, -2.0, 0.3),
)
BOX_CENTRE, BOX_HALF, BOX_ROUNDING, GROUND_Y = (0.0, -0.75, 0.0), (2.2, 0.15, 2.2), 0.05, -1.0
TETRAHEDRON = ((1.0, -1.0, -1.0), (-1.0, -1.0, 1.0), (-1.0, 1.0, -1.0), (1.0, 1.0, 1.0))


def smooth_min(a: Tensor, b: Tensor, k: float) -> Tensor:
    h = (0.5 + 0.5 * (b - a) / k).clamp(0.0, 1.0)
    return torch.lerp(b, a, h) - k * h * (1.0 - h)


class Scene:
    def __init__(self, device: torch.device) -> None:
        spheres = torch.tensor(SPHERES, device=device)
        self.centres, self.radii = spheres[:, :3], spheres[:, 3]
        self.box_centre = torch.tensor(BOX_CENTRE, device=device)
        self.box_half = torch.tensor(BOX_HALF, device=device)

    def sdf(self, p: Tensor) -> Tensor:
        """(..., 3) points -> (...) signed distances."""
        d_spheres = ((p.unsqueeze(-2) - self.centres).norm(dim=-1) - self.radii).amin(dim=-1)
        q = (p - self.box_centre).abs() - self.box_half
        d_box = q.clamp(min=0.0).norm(dim=-1) + q.amax(dim=-1).clamp(max=0.0) - BOX_ROUNDING
        return torch.minimum(smooth_min(d_spheres, d_box, SMOOTH_K), p[..., 1] - GROUND_Y)


def up_direction(v: Tensor, lift: float) -> Tensor:
    """Normalize v after making its y component |y| + lift (above the ground)."""
    return F.normalize(torch.stack([v[:, 0], v[:, 1].abs() + lift, v[:, 2]], dim=-1), dim=-1)


def build(device: torch.device, smoke: bool) -> Built:
    batch, size = (1, 16) if smoke else (1, 256)
    dtype = torch.float32
    scene = Scene(device)
    tan_half = math.tan(math.radians(FOV_DEG) / 2)
    r = (torch.arange(size, device=device, dtype=dtype) + 0.5) / size * 2 - 1
    v, u = torch.meshgrid(-r * tan_half, r * tan_half, indexing="ij")
    pixels = torch.stack([u.flatten(), v.flatten()], dim=-1)  # (n, 2)
    world_up = torch.tensor([0.0, 1.0, 0.0], device=device).expand(batch, 3)
    offsets = torch.tensor(TETRAHEDRON, device=device)[:, None, None, :]  # (4, 1, 1, 3)

    @torch.no_grad()
    def step(camera: Tensor, light: Tensor) -> tuple[Tensor, Tensor]:
        origin = CAMERA_DISTANCE * up_direction(camera, 0.5)  # (b, 3)
        forward = F.normalize(-origin, dim=-1)
        right = F.normalize(torch.linalg.cross(forward, world_up), dim=-1)
        up = torch.linalg.cross(right, forward)
        dirs = (
            forward[:, None]
            + pixels[None, :, 0:1] * right[:, None]
            + pixels[None, :, 1:2] * up[:, None]
        )
        dirs = F.normalize(dirs, dim=-1)  # (b, n, 3)
        o = origin[:, None]
        t = torch.zeros(dirs.shape[:2], device=dirs.device, dtype=dirs.dtype)
        for _ in range(MARCH_STEPS):
            t = (t + scene.sdf(o + t[..., None] * dirs)).clamp(max=T_MAX)
        p = o + t[..., None] * dirs
        hit = (scene.sdf(p) < HIT_EPS) & (t < T_MAX)
        vals = scene.sdf(p + NORMAL_H * offsets)  # (4, b, n)
        normal = F.normalize((vals[..., None] * offsets).sum(dim=0), dim=-1)
        l_dir = up_direction(light, 1.0)[:, None]  # (b, 1, 3)
        start = p + 0.02 * normal
        res = torch.ones_like(t)
        s = torch.full_like(t, 0.02)
        for _ in range(SHADOW_STEPS):
            h = scene.sdf(start + s[..., None] * l_dir)
            res = torch.minimum(res, SHADOW_K * h / s)
            s = s + h.clamp(0.02, 0.5)
        shadow = res.clamp(0.0, 1.0)
        diffuse = (normal * l_dir).sum(dim=-1).clamp(min=0.0) * shadow
        sky = 0.6 + 0.4 * dirs[..., 1]
        image = torch.where(hit, 0.1 + 0.9 * diffuse, sky)
        depth = torch.where(hit, t, torch.full_like(t, T_MAX))
        return image.view(-1, size, size), depth.view(-1, size, size)

    inputs = [
        (
            torch.randn(batch, 3, device=device, dtype=dtype),
            torch.randn(batch, 3, device=device, dtype=dtype),
        )
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"SDF sphere tracing, {len(SPHERES)} spheres + rounded box + plane, {MARCH_STEPS} "
        f"march + {SHADOW_STEPS} soft-shadow steps, fp32, b{batch} at {size}x{size}",
        [pixels, offsets, scene.centres, scene.box_half],
    )


if __name__ == "__main__":
    main(build, __doc__)
