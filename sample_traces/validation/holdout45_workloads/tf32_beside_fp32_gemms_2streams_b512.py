"""Two MLP branches on two side streams, one multiplying in TF32 and the other in full fp32
(forty-fifth hold-out: tensor-core and FP32-pipe GEMMs of one size side by side): 512 rows
of 2048 fp32 features; each branch four ``Linear(2048, 2048)`` + ReLU. The first branch runs
with ``torch.backends.cuda.matmul.allow_tf32`` on (cuBLAS picks TF32 tensor-core kernels), the
second with it off (FFMA kernels); the flag is set as each branch's operations are issued and
restored after, so eager runs and the captured graph see the same kernels. After the join the
sum of the two outputs and its row means. Eval mode, no gradients. Input: the (512, 2048)
rows. Returns the (512,) means.

    traceinspect profile tf32_beside_fp32_gemms_2streams_b512.py
"""

from __future__ import annotations

from collections.abc import Callable

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor, nn


def _mlp(width: int, depth: int) -> nn.Sequential:
    layers: list[nn.Module] = []
    for _ in range(depth):
        layers += [nn.Linear(width, width), nn.ReLU()]
    return nn.Sequential(*layers)


def _with_tf32(allow: bool, fn: Callable[[], Tensor]) -> Callable[[], Tensor]:
    def run() -> Tensor:
        before = torch.backends.cuda.matmul.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = allow
        try:
            return fn()
        finally:
            torch.backends.cuda.matmul.allow_tf32 = before

    return run


def build(device: torch.device, smoke: bool) -> Built:
    rows, width, depth = (4, 16, 2) if smoke else (512, 2048, 4)
    tf32, fp32 = _mlp(width, depth), _mlp(width, depth)
    model = nn.ModuleList([tf32, fp32]).to(device).eval()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        a, b = fork_join(
            device, streams, [_with_tf32(True, lambda: tf32(x)), _with_tf32(False, lambda: fp32(x))]
        )
        return (a + b).mean(dim=1)

    inputs = [(torch.randn(rows, width, device=device),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"{depth}x Linear {width} in TF32 beside {depth}x Linear {width} in fp32 on 2 side "
        f"streams, {rows} rows",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
