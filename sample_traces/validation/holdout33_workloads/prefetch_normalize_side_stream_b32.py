"""An input pipeline overlapped with compute on two streams, the way a prefetching data
loader prepares the next batch while the model runs on the current one (thirty-third
hold-out): batches of 32 raw uint8 images of 3 x 128 x 128, already on the device, fp32,
eval mode, no gradients. The step receives the current batch and the next one. On a side
stream, forked from the current stream with ``wait_stream``, the NEXT batch is prepared:
converted to float, divided by 255, normalized per channel with mean / std buffers, and a
fixed half of the batch (chosen beforehand) flipped horizontally by an ``index_select``
with the reversed column order and a ``torch.where``. Meanwhile, on the current stream,
the CURRENT batch is prepared the same way inline and goes through a small conv net: four
3 x 3 convolutions (3 -> 32 -> 64 -> 128 -> 128, stride 2 on the last three) each with
BatchNorm (eval) and ReLU, global average pooling and a Linear(128, 10). The current stream
then joins the side stream (``wait_stream``, and ``record_stream`` on the prepared batch
outside capture). On a CPU the two run in order. Returns the (32, 10) logits of the
current batch and the prepared (32, 3, 128, 128) next batch.

    traceinspect profile prefetch_normalize_side_stream_b32.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from _models import random_batch_norm_stats
from _streams import side_streams
from torch import Tensor, nn


def conv_bn(cin: int, cout: int, stride: int) -> list[nn.Module]:
    return [nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU()]


def build(device: torch.device, smoke: bool) -> Built:
    batch, size = (4, 16) if smoke else (32, 128)
    net = nn.Sequential(
        *conv_bn(3, 32, 1), *conv_bn(32, 64, 2), *conv_bn(64, 128, 2), *conv_bn(128, 128, 2),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, 10),
    )  # fmt: skip
    random_batch_norm_stats(net)
    net = net.to(device).eval()
    mean = torch.tensor([0.485, 0.456, 0.406], device=device).view(1, 3, 1, 1)
    std = torch.tensor([0.229, 0.224, 0.225], device=device).view(1, 3, 1, 1)
    reversed_cols = torch.arange(size - 1, -1, -1, device=device)
    flip = torch.zeros(batch, dtype=torch.bool)
    flip[torch.randperm(batch)[: batch // 2]] = True
    flip = flip.view(batch, 1, 1, 1).to(device)
    streams = side_streams(device, 1)

    def prepare(raw: Tensor) -> Tensor:
        x = (raw.float() / 255.0 - mean) / std
        return torch.where(flip, x.index_select(3, reversed_cols), x)

    @torch.no_grad()
    def step(current_raw: Tensor, next_raw: Tensor) -> tuple[Tensor, Tensor]:
        if not streams:
            return net(prepare(current_raw)), prepare(next_raw)
        side = streams[0]
        current = torch.cuda.current_stream(device)
        side.wait_stream(current)
        with torch.cuda.stream(side):
            prepared = prepare(next_raw)
        logits = net(prepare(current_raw))
        current.wait_stream(side)
        if not torch.cuda.is_current_stream_capturing():
            prepared.record_stream(current)
        return logits, prepared

    inputs = [
        tuple(
            torch.randint(0, 256, (batch, 3, size, size), dtype=torch.uint8, device=device)
            for _ in range(2)
        )
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"next batch normalized + flipped on a side stream beside a 4-conv net, b{batch} at {size}",
        [net, mean, std, reversed_cols, flip],
    )


if __name__ == "__main__":
    main(build, __doc__)
