"""PointNet classifier (no input or feature transform nets) over 16 clouds of 1024 points
given as 16 x 3 x 1024, bf16 (sixth hold-out): a shared per-point MLP written as Conv1d
kernel 1, 3->64->128->1024, each with BatchNorm1d in eval mode (running statistics set at
build) and ReLU, a max-pool over the points, then the classifier Linear 1024->512 and
512->256 with BatchNorm1d (eval) and ReLU, Linear 256->40 and log_softmax. No dropout.

    traceinspect profile pointnet_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn

CLASSES = 40


def with_bn(layer: nn.Module, bn: nn.BatchNorm1d) -> list[nn.Module]:
    # As after training: running statistics away from 0 and 1.
    bn.running_mean = torch.randn(bn.num_features) * 0.1
    bn.running_var = torch.rand(bn.num_features) + 0.5
    return [layer, bn, nn.ReLU()]


class PointNet(nn.Module):
    def __init__(self, widths: tuple[int, ...], fc: tuple[int, ...]) -> None:
        super().__init__()
        shared: list[nn.Module] = []
        for cin, cout in zip(widths, widths[1:], strict=False):
            shared += with_bn(nn.Conv1d(cin, cout, 1), nn.BatchNorm1d(cout))
        self.shared = nn.Sequential(*shared)
        head: list[nn.Module] = []
        for cin, cout in zip(fc, fc[1:], strict=False):
            head += with_bn(nn.Linear(cin, cout), nn.BatchNorm1d(cout))
        self.head = nn.Sequential(*head, nn.Linear(fc[-1], CLASSES))

    def forward(self, points: Tensor) -> Tensor:  # points: (B, 3, N)
        features = self.shared(points).amax(dim=2)  # (B, widths[-1])
        return torch.log_softmax(self.head(features), dim=-1)


def build(device: torch.device, smoke: bool) -> Built:
    widths, fc, points, batch = (
        ((3, 8, 16, 64), (64, 32, 16), 64, 4)
        if smoke
        else ((3, 64, 128, 1024), (1024, 512, 256), 1024, 16)
    )
    dtype = low_precision(device)
    model = PointNet(widths, fc).to(device=device, dtype=dtype).eval()

    @torch.no_grad()
    def step(points: Tensor) -> Tensor:
        return model(points)

    inputs = [(torch.randn(batch, 3, points, device=device, dtype=dtype),) for _ in range(2)]
    description = f"PointNet {'-'.join(map(str, widths))}, batch {batch} x {points} points"
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
