"""Cross-stitch multi-task networks (Misra et al., 2016) with the two tasks on two side
streams (twenty-fourth hold-out): two task MLPs of 4 layers (512 -> 512, ReLU) over the
same 32 inputs of 512 features, fp32. Every layer is one fork-join — task A's layer on one
stream, task B's on the other, each after ``wait_stream`` and joined back — followed on the
current stream by the cross-stitch unit: a learned 2 x 2 matrix mixing the two activations
(a stack and an ``einsum``). Then the heads: 10 classes for task A, 1 value for task B. Small
GEMMs and elementwise kernels, four joins in a row. On a CPU all runs on one stream.

    traceinspect profile cross_stitch_multitask_2streams_b32.py
"""

from __future__ import annotations

from collections.abc import Callable

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

LAYERS = 4


class CrossStitch(nn.Module):
    def __init__(self, d: int, classes: int) -> None:
        super().__init__()
        self.task_a = nn.ModuleList([nn.Linear(d, d) for _ in range(LAYERS)])
        self.task_b = nn.ModuleList([nn.Linear(d, d) for _ in range(LAYERS)])
        stitch = torch.tensor([[0.9, 0.1], [0.1, 0.9]]).repeat(LAYERS, 1, 1)
        self.stitch = nn.Parameter(stitch + 0.01 * torch.randn(LAYERS, 2, 2))
        self.head_a, self.head_b = nn.Linear(d, classes), nn.Linear(d, 1)


def layer(linear: nn.Module, h: Tensor) -> Callable[[], Tensor]:
    return lambda: torch.relu(linear(h))


def build(device: torch.device, smoke: bool) -> Built:
    batch, d, classes = (2, 8, 10) if smoke else (32, 512, 10)
    model = CrossStitch(d, classes).to(device).eval()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(x: Tensor) -> tuple[Tensor, Tensor]:
        a = b = x
        for i in range(LAYERS):
            a, b = fork_join(
                device, streams, [layer(model.task_a[i], a), layer(model.task_b[i], b)]
            )
            mixed = torch.einsum("ij,jbd->ibd", model.stitch[i], torch.stack([a, b]))
            a, b = mixed.unbind(0)
        return model.head_a(a), model.head_b(b)

    inputs = [(torch.randn(batch, d, device=device),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"cross-stitch 2 tasks x {LAYERS} layers {d} on 2 streams, b{batch}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
