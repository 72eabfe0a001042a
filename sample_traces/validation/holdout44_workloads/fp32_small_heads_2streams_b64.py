"""Two stacks of small fp32 heads on two side streams, concatenated after the join
(forty-fourth hold-out: short fp32 GEMMs beside each other, a few µs each, which the schedule
keeps at the slowdown of any matrix kernel): 64 rows, each stack six ``Linear(768, 768)`` +
GELU, fp32 with TF32 left off (torch's default for matmuls), eval mode, no gradients; after
the join ``Linear(1536, 10)``. Inputs: two (64, 768) fp32 feature blocks. Returns the (64, 10)
logits.

    traceinspect profile fp32_small_heads_2streams_b64.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _blocks import mlp_tower
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor, nn


def build(device: torch.device, smoke: bool) -> Built:
    batch, d = (4, 16) if smoke else (64, 768)
    stacks = [mlp_tower([d] * 7, act=nn.GELU, last_act=True) for _ in range(2)]
    head = nn.Linear(2 * d, 10)
    model = nn.ModuleList([*stacks, head]).to(device).eval()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(a: Tensor, b: Tensor) -> Tensor:
        u, v = fork_join(device, streams, [lambda: stacks[0](a), lambda: stacks[1](b)])
        return head(torch.cat([u, v], dim=1))

    inputs = [
        (torch.randn(batch, d, device=device), torch.randn(batch, d, device=device))
        for _ in range(2)
    ]
    return Built(
        step, inputs, f"2 stacks of 6 fp32 heads {d}-{d} on 2 side streams, b{batch}", [model]
    )


if __name__ == "__main__":
    main(build, __doc__)
