"""A mixture density network head (Bishop, 1994) on 256 samples fed two inputs, fp32
(eighteenth hold-out), inference: the negative log-likelihood of 2-d targets under a mixture
of 8 diagonal Gaussians predicted from 128 features. A trunk MLP 128->256->256 with tanh,
then three heads, Linear 256->8 for the mixture logits, Linear 256->16 for the means (8 x 2)
and Linear 256->16 for the log standard deviations (clamped to [-7, 7]). Per component the
Gaussian log-density of the target, -0.5 * sum(((y - mu) / sigma)^2) - sum(log sigma) -
log(2 pi), plus the mixture's ``log_softmax``; the NLL is minus their ``logsumexp`` over the
8 components. About 27 kernels (five GEMMs with their bias, two tanh, the clamp, some ten
small elementwise ops and two sums, the log-softmax, the log-sum-exp's few kernels; more
where a thin fp32 GEMM is a split-K GEMM and its reduction), none over more than 256 x 256
values: launch-bound. Inputs: the features (256 x 128) and the targets (256 x 2). Returns
the per-sample NLL (256, fp32).

    traceinspect profile mixture_density_head_2in_b256.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn

COMPONENTS, TARGET_DIM = 8, 2
LOG_2PI = math.log(2 * math.pi)


class MixtureDensityHead(nn.Module):
    def __init__(self, features: int, hidden: int) -> None:
        super().__init__()
        self.trunk = nn.Sequential(
            nn.Linear(features, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh()
        )
        self.pi = nn.Linear(hidden, COMPONENTS)
        self.mu = nn.Linear(hidden, COMPONENTS * TARGET_DIM)
        self.log_sigma = nn.Linear(hidden, COMPONENTS * TARGET_DIM)

    def forward(self, x: Tensor, y: Tensor) -> Tensor:
        h = self.trunk(x)
        log_pi = torch.log_softmax(self.pi(h), dim=-1)  # (B, K)
        mu = self.mu(h).view(-1, COMPONENTS, TARGET_DIM)
        log_sigma = self.log_sigma(h).view(-1, COMPONENTS, TARGET_DIM).clamp(-7.0, 7.0)
        z = (y.unsqueeze(1) - mu) * torch.exp(-log_sigma)  # (B, K, D)
        log_prob = -0.5 * (z * z).sum(-1) - log_sigma.sum(-1) - TARGET_DIM * LOG_2PI / 2
        return -torch.logsumexp(log_pi + log_prob, dim=-1)


def build(device: torch.device, smoke: bool) -> Built:
    batch, features, hidden = (8, 16, 32) if smoke else (256, 128, 256)
    model = MixtureDensityHead(features, hidden).to(device).eval()

    @torch.no_grad()
    def step(x: Tensor, y: Tensor) -> Tensor:
        return model(x, y)

    inputs = [
        (torch.randn(batch, features, device=device), torch.randn(batch, TARGET_DIM, device=device))
        for _ in range(2)
    ]
    description = (
        f"mixture density head, MLP {features}-{hidden}-{hidden} tanh, {COMPONENTS} diagonal "
        f"Gaussians in {TARGET_DIM}-d, per-sample NLL (logsumexp), 2 inputs, batch {batch}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
