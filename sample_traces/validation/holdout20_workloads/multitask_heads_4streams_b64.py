"""A shared trunk and four task heads forked onto four side streams, 64 examples, bf16
(twentieth hold-out), inference, as multi-task ranking models do: the trunk (Linear 512->1024,
ReLU, Linear 1024->512, ReLU) on the current stream; then four heads side by side, each
(Linear 512->256, ReLU, Linear 256->64, ReLU, Linear 64->1, sigmoid) with its own tower
width; the current stream joins them and stacks the four scores. About 30 kernels, all small
(the largest GEMM 64 x 512 x 1024): launch-bound, four short chains in parallel. Input: 64 x
512. Returns 64 x 4.

    traceinspect profile multitask_heads_4streams_b64.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

TASKS = 4


def build(device: torch.device, smoke: bool) -> Built:
    batch, d, hidden, tower = (4, 16, 32, 8) if smoke else (64, 512, 1024, 256)
    dtype = low_precision(device)
    trunk = nn.Sequential(nn.Linear(d, hidden), nn.ReLU(), nn.Linear(hidden, d), nn.ReLU())
    heads = nn.ModuleList(
        nn.Sequential(
            nn.Linear(d, tower), nn.ReLU(), nn.Linear(tower, 64), nn.ReLU(), nn.Linear(64, 1)
        )
        for _ in range(TASKS)
    )
    model = nn.ModuleList([trunk, heads]).to(device=device, dtype=dtype).eval()
    streams = side_streams(device, TASKS)

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        shared = trunk(x)
        scores = fork_join(
            device, streams, [lambda h=head: torch.sigmoid(h(shared)) for head in heads]
        )
        return torch.cat(scores, dim=1)

    inputs = [(torch.randn(batch, d, device=device, dtype=dtype),) for _ in range(2)]
    description = f"trunk {d}->{hidden}->{d} + {TASKS} task heads on {TASKS} streams, b{batch}"
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
