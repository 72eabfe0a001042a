"""A ResNet for tabular data (Gorishniy et al., 2021, "Revisiting Deep Learning Models for
Tabular Data") on 512 rows of 256 features, fp32 (seventeenth hold-out), inference. Six
residual blocks, each x + Linear(Dropout(ReLU(Linear(BatchNorm(x))))) with both Linears
256->256 (with bias), batch norm in eval mode (statistics and affine parameters randomized at
build, as trained ones would be) and dropout 0.1 in eval mode (no kernel); then the head,
BatchNorm, ReLU, Linear 256->1. About 33 kernels (per block a batch norm, two GEMMs with
their bias, a ReLU and the residual add; three in the head), each over 512 x 256 values (512
KB) or a GEMM of 67 MFLOP: launch-bound, with medium kernels. Input: the features (512 x
256). Returns the predictions (512 x 1, fp32).

    traceinspect profile tabular_resnet_b512.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn

BLOCKS, DROPOUT = 6, 0.1


class Block(nn.Module):
    def __init__(self, d: int, hidden: int) -> None:
        super().__init__()
        self.body = nn.Sequential(
            nn.BatchNorm1d(d), nn.Linear(d, hidden), nn.ReLU(), nn.Dropout(DROPOUT),
            nn.Linear(hidden, d),
        )  # fmt: skip

    def forward(self, x: Tensor) -> Tensor:
        return x + self.body(x)


def randomize_bn(module: nn.Module) -> None:
    """Trained-looking batch-norm statistics and affine parameters (the defaults are 0 / 1)."""
    for m in module.modules():
        if isinstance(m, nn.BatchNorm1d):
            n = m.num_features
            m.running_mean.copy_(0.1 * torch.randn(n))
            m.running_var.copy_(0.5 + torch.rand(n))
            m.weight.data.copy_(1 + 0.1 * torch.randn(n))
            m.bias.data.copy_(0.1 * torch.randn(n))


def build(device: torch.device, smoke: bool) -> Built:
    batch, d = (16, 32) if smoke else (512, 256)
    model = nn.Sequential(
        *(Block(d, d) for _ in range(BLOCKS)), nn.BatchNorm1d(d), nn.ReLU(), nn.Linear(d, 1)
    )  # fmt: skip
    with torch.no_grad():
        randomize_bn(model)
    model = model.to(device).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    inputs = [(torch.randn(batch, d, device=device),) for _ in range(2)]
    description = (
        f"tabular ResNet, {BLOCKS} blocks (BN, Linear {d}-{d}, ReLU, dropout, Linear {d}-{d}, "
        f"residual) + BN/ReLU/Linear head, batch {batch} x {d}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
