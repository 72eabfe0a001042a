"""A compute-bound conv net: a plain PyTorch inference loop, no annotations.

A VGG-style stack of 10 x (Conv2d 3x3, 256 -> 256 channels + BatchNorm + ReLU) on 64 x
256 x 56 x 56 activations (a 1x1 stem from 3 channels), bf16, channels_last, eval: each
convolution ~0.24 TFLOP, so the GPU is busy far longer than the host takes to launch.

``--mark`` registers one forward pass with ``traceinspect.graph_candidate``.
"""

from __future__ import annotations

import argparse

import torch
from torch import nn


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--device")
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--mark", action="store_true", help="register the step as a graph candidate")
    args = ap.parse_args()
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    depth, ch, size, batch = (2, 8, 8, 2) if args.smoke else (10, 256, 56, 64)
    torch.manual_seed(0)
    layers: list[nn.Module] = [nn.Conv2d(3, ch, 1, bias=False)]
    for _ in range(depth):
        layers += [nn.Conv2d(ch, ch, 3, padding=1, bias=False), nn.BatchNorm2d(ch), nn.ReLU()]
    model = nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(ch, 100))
    model = model.to(device=device, dtype=dtype, memory_format=torch.channels_last).eval()

    @torch.no_grad()
    def forward(x: torch.Tensor) -> torch.Tensor:
        return model(x)

    images = [
        torch.randn(batch, 3, size, size, device=device, dtype=dtype).contiguous(
            memory_format=torch.channels_last
        )
        for _ in range(2)
    ]
    outs = [forward(images[i % len(images)]) for i in range(args.steps)]
    print("predicted classes:", torch.stack(outs).argmax(-1)[:, 0].tolist())

    if args.mark:
        import traceinspect

        traceinspect.graph_candidate("step", forward, (images[0],))


if __name__ == "__main__":
    main()
