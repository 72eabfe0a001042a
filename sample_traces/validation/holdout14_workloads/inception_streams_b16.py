"""Two GoogLeNet Inception modules (Szegedy et al., 2015, 3a and 3b) on 16 maps of 192 channels
at 28 x 28, bf16, with the four branches of each module on four streams (fourteenth
hold-out), inference. Module 3a (192 -> 256 channels): branch 1 a conv1x1 192->64; branch 2
a conv1x1 192->96 then a conv3x3 96->128; branch 3 a conv1x1 192->16 then a conv5x5 16->32;
branch 4 a 3x3 max pool (stride 1, padding 1) then a conv1x1 192->32; every conv with its
bias and a ReLU (the paper's network, no batch norm). Module 3b (256 -> 480) the same with
128, 128->192, 32->96 and 64 channels. Per module, three side streams, each forked from the
current stream with ``wait_stream``, run branches 2, 3 and 4 and each ends by recording an
event; between the fork and the join the current stream itself runs branch 1, so four
streams run at once; it then waits on the three events (``wait_event``) and concatenates the
four branch outputs along the channels (``torch.cat``, a copy). Outside graph capture the
side streams' outputs are marked with ``record_stream`` for the current stream. On a CPU
everything runs in order on the default stream. About 20 kernels per module, small
convolutions over 16 x 28 x 28 pixels. Input: 16 x 192 x 28 x 28. Returns 16 x 480 x 28 x
28.

    traceinspect profile inception_streams_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn


def conv_relu(cin: int, cout: int, kernel: int) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, cout, kernel, padding=kernel // 2), nn.ReLU())


class Inception(nn.Module):
    def __init__(self, cin: int, c1: int, c3r: int, c3: int, c5r: int, c5: int, cp: int) -> None:
        super().__init__()
        self.branches = nn.ModuleList((
            conv_relu(cin, c1, 1),
            nn.Sequential(conv_relu(cin, c3r, 1), conv_relu(c3r, c3, 3)),
            nn.Sequential(conv_relu(cin, c5r, 1), conv_relu(c5r, c5, 5)),
            nn.Sequential(nn.MaxPool2d(3, stride=1, padding=1), conv_relu(cin, cp, 1)),
        ))  # fmt: skip


def build(device: torch.device, smoke: bool) -> Built:
    batch, size, scale = (2, 8, 8) if smoke else (16, 28, 1)
    dtype = low_precision(device)
    cuda = device.type == "cuda"
    specs = [(192, 64, 96, 128, 16, 32, 32), (256, 128, 128, 192, 32, 96, 64)]
    modules = nn.ModuleList(Inception(*(c // scale for c in spec)) for spec in specs)
    modules = modules.to(device=device, dtype=dtype).eval()
    streams = [torch.cuda.Stream(device) for _ in range(3)] if cuda else []

    def inception(module: Inception, x: Tensor) -> Tensor:
        first, *side = module.branches
        if not cuda:
            return torch.cat([branch(x) for branch in module.branches], dim=1)
        current = torch.cuda.current_stream(device)
        outs, done = [], []
        for s, branch in zip(streams, side, strict=True):
            s.wait_stream(current)
            with torch.cuda.stream(s):
                outs.append(branch(x))
                event = torch.cuda.Event()
                event.record(s)
            done.append(event)
        y = first(x)
        for event, out in zip(done, outs, strict=True):
            current.wait_event(event)
            if not torch.cuda.is_current_stream_capturing():
                out.record_stream(current)
        return torch.cat((y, *outs), dim=1)

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        for module in modules:
            x = inception(module, x)
        return x

    cin = specs[0][0] // scale
    inputs = [(torch.randn(batch, cin, size, size, device=device, dtype=dtype),) for _ in range(2)]
    description = (
        f"2 Inception modules (3a, 3b), 4 branches on the current + 3 side streams, "
        f"batch {batch} x {cin} ch x {size}x{size}"
    )
    return Built(step, inputs, description, [modules])


if __name__ == "__main__":
    main(build, __doc__)
