"""A Kalman filter tracking 1024 boxes over 16 frames, fp32 (thirteenth hold-out): DeepSORT's
constant-velocity model, state (x, y, aspect, height and their four velocities, 8 values) with
a 4-value measurement (x, y, aspect, height). Inputs: the 1024 means (1024 x 8), their
covariances (1024 x 8 x 8, symmetric positive definite) and 16 frames of measurements (16 x
1024 x 4). Per frame, a predict: mean @ F^T and F P F^T + Q (F: 8 x 8, identity plus dt = 1 on
the position-velocity block; Q diagonal), as batched matmuls against the fixed F. Then an
update in the sequential-processing form (the measurement noise R is diagonal, so the four
measurement components are folded in one at a time with scalar innovations and no matrix
inverse, graph-safe and free of cuSOLVER): for component i, the innovation variance s = P[i, i]
+ R[i], the gain k = P[:, i] / s, the innovation z_i - mean_i, mean += k x innovation
(``addcmul``) and P -= k (P[:, i])^T (``baddbmm`` with alpha -1). About 25 small kernels per
frame, 400 in all, all launch-bound. At the end the 64 innovations and variances per track are
stacked and the Gaussian negative log-likelihood, 0.5 (innovation^2 / s + log s) summed over
them, is taken in one go. Returns the filtered means of every frame (16 x 1024 x 8), the last
covariances (1024 x 8 x 8) and the negative log-likelihood per track (1024).

    traceinspect profile kalman_filter_b1024.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor

STATE, MEAS = 8, 4
Q_DIAG = [1e-2] * 4 + [1e-3] * 4  # process noise: positions, then velocities
R_DIAG = [5e-2, 5e-2, 1e-3, 5e-2]  # measurement noise: x, y, aspect, height


def build(device: torch.device, smoke: bool) -> Built:
    tracks, frames = (4, 3) if smoke else (1024, 16)
    f = torch.eye(STATE, device=device)
    f[:MEAS, MEAS:] = torch.eye(MEAS, device=device)  # position += velocity (dt = 1)
    q = torch.diag(torch.tensor(Q_DIAG, device=device))

    @torch.no_grad()
    def step(mean: Tensor, cov: Tensor, meas: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        filtered, innovs, variances = [], [], []
        for t in range(meas.shape[0]):
            mean = mean @ f.T  # predict
            cov = torch.matmul(torch.matmul(f, cov), f.T) + q
            for i in range(MEAS):  # update, one measurement component at a time
                col = cov[:, :, i]  # P H_i^T, (N, 8)
                s = cov[:, i, i] + R_DIAG[i]  # innovation variance, (N,)
                gain = col / s[:, None]
                innov = meas[t, :, i] - mean[:, i]
                mean = torch.addcmul(mean, gain, innov[:, None])
                cov = torch.baddbmm(cov, gain[:, :, None], col[:, None, :], alpha=-1.0)
                innovs.append(innov)
                variances.append(s)
            filtered.append(mean)
        innov, s = torch.stack(innovs), torch.stack(variances)  # (frames * 4, N)
        nll = 0.5 * (innov * innov / s + torch.log(s)).sum(0)
        return torch.stack(filtered), cov, nll

    def make() -> tuple[Tensor, Tensor, Tensor]:
        mean = torch.randn(tracks, STATE, device=device)
        a = 0.1 * torch.randn(tracks, STATE, STATE, device=device)
        cov = a @ a.transpose(1, 2) + 0.1 * torch.eye(STATE, device=device)
        truth = mean[:, :MEAS] + torch.cumsum(
            mean[None, :, MEAS:] + 0.05 * torch.randn(frames, tracks, MEAS, device=device), 0
        )
        return mean, cov, truth + 0.1 * torch.randn(frames, tracks, MEAS, device=device)

    inputs = [make() for _ in range(2)]
    description = (
        f"Kalman filter, {tracks} tracks (state {STATE}, measurement {MEAS}), "
        f"{frames} predict/sequential-update frames"
    )
    return Built(step, inputs, description, [f, q])


if __name__ == "__main__":
    main(build, __doc__)
