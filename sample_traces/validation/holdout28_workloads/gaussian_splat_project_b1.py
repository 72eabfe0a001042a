"""Projecting 3D Gaussians to the image plane, as 3D Gaussian splatting's rasterizer does
before sorting (twenty-eighth hold-out): 200,000 Gaussians, fp32, written with PyTorch ops:
unit quaternions to rotation matrices (a dozen elementwise products and sums, ``stack``),
scales to 3D covariances R S Sᵀ Rᵀ (``bmm``), means to camera space (a 4 x 4 view
matrix) and to pixels (fx, fy, cx, cy), the perspective Jacobian per Gaussian, the 2D
covariance J W Σ Wᵀ Jᵀ (two ``bmm``), a low-pass 0.3 px² added, its inverse (the conic),
its eigenvalues' radius (3 sigma), opacity through a sigmoid, and the view-dependent color
from degree-1 spherical harmonics. Returns the visible Gaussians' pixel means, conics,
radii and colors (culled by depth with ``where``, shapes fixed). About 90 memory-bound
kernels over 200,000-element tensors, one stream.

    traceinspect profile gaussian_splat_project_b1.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor

SH_C0, SH_C1 = 0.28209479177387814, 0.4886025119029199


def rotations(q: Tensor) -> Tensor:
    q = q / q.norm(dim=-1, keepdim=True)
    w, x, y, z = q.unbind(-1)
    return torch.stack(
        [
            1 - 2 * (y * y + z * z),
            2 * (x * y - w * z),
            2 * (x * z + w * y),
            2 * (x * y + w * z),
            1 - 2 * (x * x + z * z),
            2 * (y * z - w * x),
            2 * (x * z - w * y),
            2 * (y * z + w * x),
            1 - 2 * (x * x + y * y),
        ],
        dim=-1,
    ).view(-1, 3, 3)


def build(device: torch.device, smoke: bool) -> Built:
    n = 64 if smoke else 200_000
    fx = fy = 1111.0
    cx, cy = 400.0, 300.0
    view = torch.eye(4, device=device)
    view[2, 3] = 4.0  # the camera 4 units back
    rot, trans = view[:3, :3], view[:3, 3]

    @torch.no_grad()
    def step(
        means: Tensor, quats: Tensor, log_scales: Tensor, opacity: Tensor, sh: Tensor
    ) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        r = rotations(quats)
        m = r * log_scales.exp()[:, None, :]
        cov3 = torch.bmm(m, m.transpose(1, 2))
        cam = means @ rot.T + trans
        x, y, z = cam.unbind(-1)
        zc = z.clamp(min=0.2)
        jac = torch.zeros(means.shape[0], 2, 3, device=means.device)
        jac[:, 0, 0] = fx / zc
        jac[:, 0, 2] = -fx * x / (zc * zc)
        jac[:, 1, 1] = fy / zc
        jac[:, 1, 2] = -fy * y / (zc * zc)
        t = jac @ rot
        cov2 = torch.bmm(torch.bmm(t, cov3), t.transpose(1, 2))
        a, b, c = cov2[:, 0, 0] + 0.3, cov2[:, 0, 1], cov2[:, 1, 1] + 0.3
        det = (a * c - b * b).clamp(min=1e-12)
        conic = torch.stack([c / det, -b / det, a / det], dim=-1)
        mid = 0.5 * (a + c)
        radius = torch.ceil(3 * (mid + (mid * mid - det).clamp(min=0.1).sqrt()).sqrt())
        pixel = torch.stack([fx * x / zc + cx, fy * y / zc + cy], dim=-1)
        direction = means - (-trans)
        direction = direction / direction.norm(dim=-1, keepdim=True)
        color = SH_C0 * sh[:, 0] + SH_C1 * (
            -direction[:, 1:2] * sh[:, 1]
            + direction[:, 2:3] * sh[:, 2]
            - direction[:, 0:1] * sh[:, 3]
        )
        color = (color + 0.5).clamp(min=0)
        visible = (z > 0.2) & (torch.sigmoid(opacity) > 1 / 255)
        radius = torch.where(visible, radius, torch.zeros_like(radius))
        return pixel, conic, radius, color * visible[:, None]

    inputs = [
        (
            torch.randn(n, 3, device=device),
            torch.randn(n, 4, device=device),
            torch.randn(n, 3, device=device) * 0.5 - 4,
            torch.randn(n, device=device),
            torch.randn(n, 4, 3, device=device) * 0.3,
        )
        for _ in range(2)
    ]
    return Built(step, inputs, f"Gaussian splat projection, {n} Gaussians", [view])


if __name__ == "__main__":
    main(build, __doc__)
