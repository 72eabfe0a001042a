"""A three-level U-Net whose skip connections are refined on a side stream while the encoder
goes on down, 2 images of 128 x 128, bf16 (twenty-first hold-out), inference: each encoder
level (two 3x3 convolutions with GroupNorm(8) and SiLU, then a stride-2 convolution) hands
its output to a side stream, which refines it for the skip (a 1x1 convolution and
GroupNorm) and records an event, while the current stream continues with the next level;
the decoder waits on each skip's event before it upsamples (nearest), concatenates the skip
and applies two 3x3 convolutions. Widths 32, 64, 128, bottleneck 256. About 60 kernels,
GroupNorms and SiLUs over up to 1M values beside the convolutions. Input: 2 x 3 x 128 x 128.
Returns 2 x 32 x 128 x 128.

    traceinspect profile unet_skip_side_stream_b2.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn


def double(cin: int, cout: int, groups: int) -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, padding=1), nn.GroupNorm(groups, cout), nn.SiLU(),
        nn.Conv2d(cout, cout, 3, padding=1), nn.GroupNorm(groups, cout), nn.SiLU(),
    )  # fmt: skip


class UNet(nn.Module):
    def __init__(self, widths: list[int], groups: int) -> None:
        super().__init__()
        chans = [3, *widths]
        self.down = nn.ModuleList(double(a, b, groups) for a, b in zip(chans, widths, strict=False))
        self.pool = nn.ModuleList(nn.Conv2d(w, w, 3, stride=2, padding=1) for w in widths)
        self.skip = nn.ModuleList(
            nn.Sequential(nn.Conv2d(w, w, 1), nn.GroupNorm(groups, w)) for w in widths
        )
        self.mid = double(widths[-1], 2 * widths[-1], groups)
        ups = [2 * widths[-1], *widths[::-1]]
        self.up = nn.ModuleList(
            double(a + w, w, groups) for a, w in zip(ups, widths[::-1], strict=False)
        )


def build(device: torch.device, smoke: bool) -> Built:
    batch, size, widths, groups = (1, 16, [8, 8, 16], 4) if smoke else (2, 128, [32, 64, 128], 8)
    dtype = low_precision(device)
    net = UNet(widths, groups).to(device=device, dtype=dtype).eval()
    cuda = device.type == "cuda"
    side = torch.cuda.Stream(device) if cuda else None

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        skips: list[tuple[Tensor, torch.cuda.Event | None]] = []
        current = torch.cuda.current_stream(device) if cuda else None
        for down, pool, skip in zip(net.down, net.pool, net.skip, strict=True):
            x = down(x)
            if side is None or current is None:
                skips.append((skip(x), None))
            else:
                side.wait_stream(current)
                with torch.cuda.stream(side):
                    refined = skip(x)
                    ready = torch.cuda.Event()
                    ready.record(side)
                skips.append((refined, ready))
            x = pool(x)
        x = net.mid(x)
        for up, (refined, ready) in zip(net.up, reversed(skips), strict=True):
            if ready is not None and current is not None:
                current.wait_event(ready)
                if not torch.cuda.is_current_stream_capturing():
                    refined.record_stream(current)
            x = F.interpolate(x, scale_factor=2.0, mode="nearest")
            x = up(torch.cat([x, refined], dim=1))
        if side is not None and current is not None:
            current.wait_stream(side)
        return x

    inputs = [(torch.randn(batch, 3, size, size, device=device, dtype=dtype),) for _ in range(2)]
    description = f"U-Net {widths} with skips refined on a side stream, batch {batch} at {size}"
    return Built(step, inputs, description, [net])


if __name__ == "__main__":
    main(build, __doc__)
