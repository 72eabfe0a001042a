"""A PointNet classifier (Qi et al., 2017; no input or feature transform nets) on 8 clouds of
1024 points given as 8 x 3 x 1024, fp32 (eighteenth hold-out), inference. A shared per-point
MLP written as Conv1d with kernel 1, 3->64->128->1024, each followed by BatchNorm1d in eval
mode (statistics and affine parameters randomized at build, as trained ones would be) and
ReLU; a max-pool over the points (``amax`` over the 1024 points: 8 x 1024); then the
classifier, Linear 1024->512, ReLU, Linear 512->256, ReLU, Linear 256->10 (no batch norm
and no dropout in the classifier). The convs on cuDNN (TF32 by torch's default for
convolutions). About 18 kernels (three convs with their bias, three batch norms, three
ReLUs, the max, three GEMMs with their bias and two ReLUs; more where cuDNN adds a kernel to
a conv), the largest over the 8 x 1024 x 1024 map of the last conv (32 MB, 2.1 GFLOP for
the conv): a few memory-bound kernels of some 10-20 us among small ones. Input: the point
cloud (8 x 3 x 1024). Returns the logits (8 x 10, fp32).

    traceinspect profile pointnet_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn

CLASSES = 10


def randomize_bn(module: nn.Module) -> None:
    """Trained-looking batch-norm statistics and affine parameters (the defaults are 0 / 1)."""
    for m in module.modules():
        if isinstance(m, nn.BatchNorm1d):
            n = m.num_features
            m.running_mean.copy_(0.1 * torch.randn(n))
            m.running_var.copy_(0.5 + torch.rand(n))
            m.weight.data.copy_(1 + 0.1 * torch.randn(n))
            m.bias.data.copy_(0.1 * torch.randn(n))


class PointNet(nn.Module):
    def __init__(self, widths: tuple[int, ...], fc: tuple[int, ...]) -> None:
        super().__init__()
        shared: list[nn.Module] = []
        for cin, cout in zip(widths[:-1], widths[1:], strict=True):
            shared += [nn.Conv1d(cin, cout, 1), nn.BatchNorm1d(cout), nn.ReLU()]
        self.shared = nn.Sequential(*shared)
        head: list[nn.Module] = []
        for cin, cout in zip(fc[:-1], fc[1:], strict=True):
            head += [nn.Linear(cin, cout), nn.ReLU()]
        self.head = nn.Sequential(*head, nn.Linear(fc[-1], CLASSES))

    def forward(self, points: Tensor) -> Tensor:  # points: (B, 3, N)
        return self.head(self.shared(points).amax(dim=2))


def build(device: torch.device, smoke: bool) -> Built:
    widths, fc, points, batch = (
        ((3, 8, 16, 64), (64, 32, 16), 64, 2)
        if smoke
        else ((3, 64, 128, 1024), (1024, 512, 256), 1024, 8)
    )
    model = PointNet(widths, fc)
    with torch.no_grad():
        randomize_bn(model)
    model = model.to(device).eval()

    @torch.no_grad()
    def step(cloud: Tensor) -> Tensor:
        return model(cloud)

    inputs = [(torch.randn(batch, 3, points, device=device),) for _ in range(2)]
    description = (
        f"PointNet, shared Conv1d-1x1 MLP {'-'.join(map(str, widths))} + BN + ReLU, max over "
        f"{points} points, FC {'-'.join(map(str, (*fc, CLASSES)))}, batch {batch}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
