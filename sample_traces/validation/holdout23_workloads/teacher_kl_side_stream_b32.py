"""A student and a frozen teacher scored side by side for distillation (twenty-third
hold-out): the student MLP (512 -> 1024 -> 1024 -> 100) on the current stream, the teacher
(512 -> 2048 -> 2048 -> 100) forked onto a side stream, joined back, then the KL divergence
between their temperature-softened distributions and the student's cross-entropy against
the labels. Batch 32, fp32. On a CPU all runs on one stream.

    traceinspect profile teacher_kl_side_stream_b32.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

TEMPERATURE = 2.0


def mlp(d: int, hidden: int, classes: int) -> nn.Module:
    return nn.Sequential(
        nn.Linear(d, hidden),
        nn.GELU(),
        nn.Linear(hidden, hidden),
        nn.GELU(),
        nn.Linear(hidden, classes),
    )


def build(device: torch.device, smoke: bool) -> Built:
    batch, d, small, big, classes = (2, 8, 16, 32, 5) if smoke else (32, 512, 1024, 2048, 100)
    student = mlp(d, small, classes).to(device).eval()
    teacher = mlp(d, big, classes).to(device).eval()
    streams = side_streams(device, 1)

    @torch.no_grad()
    def step(x: Tensor, labels: Tensor) -> Tensor:
        if streams:
            (soft_teacher,) = fork_join(device, streams, [lambda: teacher(x)])
        else:
            soft_teacher = teacher(x)
        logits = student(x)
        kl = F.kl_div(
            F.log_softmax(logits / TEMPERATURE, dim=-1),
            F.log_softmax(soft_teacher / TEMPERATURE, dim=-1),
            log_target=True,
            reduction="batchmean",
        )
        return kl * TEMPERATURE**2 + F.cross_entropy(logits, labels)

    inputs = [
        (torch.randn(batch, d, device=device), torch.randint(0, classes, (batch,), device=device))
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"student {small} / teacher {big} on a side stream, b{batch}",
        [student, teacher],
    )


if __name__ == "__main__":
    main(build, __doc__)
