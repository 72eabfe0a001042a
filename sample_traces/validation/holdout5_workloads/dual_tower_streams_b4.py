"""Two towers on two CUDA streams joined by events: a text tower (4 x Linear 1024 + GELU on
4 x 128 x 1024) on stream A and an image tower (4 x Conv3x3 64 channels + ReLU on
4 x 64 x 56 x 56) on stream B, each ending in mean pooling and a projection to 256, forked
from the current stream with ``wait_stream`` and joined back by one event per tower; the
current stream then takes the cosine similarity of every text with every image, bf16 (fifth
hold-out). On a CPU the towers run one after the other.

    traceinspect profile dual_tower_streams_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn


def build(device: torch.device, smoke: bool) -> Built:
    d, ch, size, tokens, batch, proj, depth = (
        (32, 8, 8, 4, 2, 16, 2) if smoke else (1024, 64, 56, 128, 4, 256, 4)
    )
    dtype = low_precision(device)
    cuda = device.type == "cuda"
    text = nn.Sequential(*(m for _ in range(depth) for m in (nn.Linear(d, d), nn.GELU())))
    image = nn.Sequential(
        *(m for _ in range(depth) for m in (nn.Conv2d(ch, ch, 3, padding=1), nn.ReLU()))
    )
    text_proj, image_proj = nn.Linear(d, proj), nn.Linear(ch, proj)
    towers = nn.ModuleList([text, image, text_proj, image_proj]).to(device=device, dtype=dtype)
    towers.eval()
    streams = [torch.cuda.Stream(device) for _ in range(2)] if cuda else []

    def text_tower(x: Tensor) -> Tensor:
        return text_proj(text(x).mean(1))

    def image_tower(x: Tensor) -> Tensor:
        return image_proj(image(x).mean((2, 3)))

    def similarity(t: Tensor, i: Tensor) -> Tensor:
        return F.normalize(t, dim=-1) @ F.normalize(i, dim=-1).T

    @torch.no_grad()
    def step(words: Tensor, pixels: Tensor) -> Tensor:
        if not cuda:
            return similarity(text_tower(words), image_tower(pixels))
        current = torch.cuda.current_stream(device)
        outs, done = [], []
        for s, tower, x in zip(streams, (text_tower, image_tower), (words, pixels), strict=True):
            s.wait_stream(current)
            with torch.cuda.stream(s):
                outs.append(tower(x))
                event = torch.cuda.Event()
                event.record(s)
            done.append(event)
        for event, out in zip(done, outs, strict=True):
            current.wait_event(event)
            if not torch.cuda.is_current_stream_capturing():
                out.record_stream(current)
        return similarity(*outs)

    inputs = [
        (
            torch.randn(batch, tokens, d, device=device, dtype=dtype),
            torch.randn(batch, ch, size, size, device=device, dtype=dtype),
        )
        for _ in range(2)
    ]
    description = f"2-stream dual tower: text {depth} x {d}, image {depth} x conv{ch}"
    return Built(step, inputs, description, [towers])


if __name__ == "__main__":
    main(build, __doc__)
