"""A feature-pyramid neck (Lin et al., 2017) over four backbone levels with each level's
lateral and output convolutions forked onto its own side stream, 2 images, bf16 (twentieth
hold-out), inference, fed four inputs: the backbone's C2-C5 maps (256, 512, 1024 and 2048
channels at 64, 32, 16 and 8 pixels square). Each level's 1x1 lateral convolution to 256
channels runs on its own stream; the current stream joins them and runs the top-down path
(nearest upsampling x2 and adds, coarse to fine); then each level's 3x3 output convolution
runs on its stream again, and the current stream joins them. About 20 kernels, the 3x3
convolutions on the finest level (2 x 256 x 64 x 64) the largest. Inputs: the four maps.
Returns the four 256-channel outputs.

    traceinspect profile fpn_lateral_streams_b2.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

LEVELS = [(256, 64), (512, 32), (1024, 16), (2048, 8)]  # channels, size


def build(device: torch.device, smoke: bool) -> Built:
    width, levels, batch = (8, [(c // 64, s // 8) for c, s in LEVELS], 1) if smoke else (
        256,
        LEVELS,
        2,
    )
    dtype = low_precision(device)
    lateral = nn.ModuleList(nn.Conv2d(c, width, 1) for c, _ in levels)
    output = nn.ModuleList(nn.Conv2d(width, width, 3, padding=1) for _ in levels)
    model = nn.ModuleList([lateral, output]).to(device=device, dtype=dtype).eval()
    streams = side_streams(device, len(levels))

    @torch.no_grad()
    def step(*maps: Tensor) -> tuple[Tensor, ...]:
        pairs = zip(maps, lateral, strict=True)
        lat = fork_join(device, streams, [lambda m=m, conv=conv: conv(m) for m, conv in pairs])
        merged = [lat[-1]]
        for feature in reversed(lat[:-1]):
            merged.insert(0, feature + F.interpolate(merged[0], scale_factor=2.0, mode="nearest"))
        pairs = zip(merged, output, strict=True)
        outs = fork_join(device, streams, [lambda m=m, conv=conv: conv(m) for m, conv in pairs])
        return tuple(outs)

    def make() -> tuple[Tensor, ...]:
        return tuple(
            torch.randn(batch, c, s, s, device=device, dtype=dtype) for c, s in levels
        )

    inputs = [make(), make()]
    description = f"FPN neck over {len(levels)} levels, one stream per level, batch {batch}"
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
