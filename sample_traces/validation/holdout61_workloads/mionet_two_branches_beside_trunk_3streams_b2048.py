"""MIONet (Jin, Meng and Lu, 2022: a DeepONet for operators of several input functions) evaluated on
a test batch of a diffusion-reaction problem's solution operator, G(f, u0)(x, t), from the source
term f and the initial condition u0, each sampled at 100 sensors, for 2048 pairs of input functions
at all 16,384 points of a 128 x 128 (x, t) grid, with the mean relative L2 error against the
reference solutions (sixty-first hold-out: three concurrent chains of unequal make, fp32 with TF32
on: on side stream 1 the source branch net, on side stream 2 the initial-condition branch net, each
a ReLU MLP 100 -> 256 -> 256 -> 256 -> 256 over 2048 rows, four small GEMMs and three ReLUs; on side
stream 3 the trunk net, a tanh MLP 2 -> 256 -> 256 -> 256 -> 256 over the 16,384 grid points, four
GEMMs and three tanhs on 16 MB; then, after the join, the branches' product, the (2048, 256) x (256,
16384) GEMM (17 GFLOP) into a 134 MB output, the bias, and the per-function relative error (the
difference, two norms over 134 MB each, the divide) and its mean; some 30 kernels, some 0.3 to 0.6
ms of GPU time, the part after the join the most of it). Laid out as DeepXDE's
``MIONetCartesianProd`` (PyTorch backend) with ``merge_operation="mul"``,
``trunk_last_activation=False``, activations ``{"branch1": "relu", "branch2": "relu", "trunk":
"tanh"}`` and Glorot-normal weights with zero biases: y_func = branch1(f) * branch2(u0), y =
einsum("ip,jp->ij", y_func, trunk(x)) + b; DeepXDE's ``mean_l2_relative_error`` on the outputs; the
layer widths are this set's. Fork and join are the project's ``fork_join`` (``wait_stream``, and
``record_stream`` on the branch outputs outside capture). fp32 weights and activations with
``torch.backends.cuda.matmul.allow_tf32`` on (set at build), eval, no gradients. Inputs (two input
sets): the source terms (2048, 100) and the initial conditions (2048, 100), Gaussian, the grid
points (16384, 2) in [0, 1]^2, and the reference solutions (2048, 16384), Gaussian, fp32. Returns
the predictions (2048, 16384) and the mean relative L2 error (a 0-d tensor), fp32.

    traceinspect profile mionet_two_branches_beside_trunk_3streams_b2048.py
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import pairwise

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

SENSORS, WIDTH, DEPTH, GRID, FUNCTIONS = 100, 256, 4, 128, 2048


class FNN(nn.Module):  # DeepXDE's FNN: the activation after every layer but the last
    def __init__(self, sizes: list[int], activation: Callable[[Tensor], Tensor]) -> None:
        super().__init__()
        self.linears = nn.ModuleList(nn.Linear(a, b) for a, b in pairwise(sizes))
        for linear in self.linears:
            nn.init.xavier_normal_(linear.weight)
            nn.init.zeros_(linear.bias)
        self.activation = activation

    def forward(self, x: Tensor) -> Tensor:
        for linear in self.linears[:-1]:
            x = self.activation(linear(x))
        return self.linears[-1](x)


class MIONet(nn.Module):
    def __init__(self, sensors: int, width: int, depth: int) -> None:
        super().__init__()
        self.branch1 = FNN([sensors] + [width] * depth, torch.relu)
        self.branch2 = FNN([sensors] + [width] * depth, torch.relu)
        self.trunk = FNN([2] + [width] * depth, torch.tanh)
        self.b = nn.Parameter(torch.tensor(0.0))


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        functions, sensors, width, depth, grid = 4, 10, 16, 3, 6
    else:
        functions, sensors, width, depth, grid = FUNCTIONS, SENSORS, WIDTH, DEPTH, GRID
    torch.backends.cuda.matmul.allow_tf32 = True  # TF32 GEMMs
    model = MIONet(sensors, width, depth).to(device).eval()
    streams = side_streams(device, 3)

    @torch.no_grad()
    def step(f: Tensor, u0: Tensor, points: Tensor, reference: Tensor) -> tuple[Tensor, Tensor]:
        y_func1, y_func2, y_loc = fork_join(
            device,
            streams,
            [lambda: model.branch1(f), lambda: model.branch2(u0), lambda: model.trunk(points)],
        )
        y_func = torch.mul(y_func1, y_func2)
        y = torch.einsum("ip,jp->ij", y_func, y_loc)
        y += model.b
        error = torch.linalg.vector_norm(reference - y, dim=1) / torch.linalg.vector_norm(
            reference, dim=1
        )
        return y, error.mean()

    axis = torch.linspace(0, 1, grid, device=device)
    points = torch.stack(torch.meshgrid(axis, axis, indexing="ij"), dim=-1).reshape(-1, 2)
    inputs = [
        (
            torch.randn(functions, sensors, device=device),
            torch.randn(functions, sensors, device=device),
            points,
            torch.randn(functions, grid * grid, device=device),
        )
        for _ in range(2)
    ]
    description = (
        f"MIONet: two branch nets ({sensors} sensors) and a trunk net ({grid * grid} points), "
        f"width {width} x {depth}, on 3 side streams, rel. L2 error, fp32 TF32 on, b{functions}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
