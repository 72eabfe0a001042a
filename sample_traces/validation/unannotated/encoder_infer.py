"""Transformer encoder inference: a plain PyTorch loop, no annotations.

nn.TransformerEncoder of 8 nn.TransformerEncoderLayer (d_model 512, 8 heads, FFN 2048,
batch_first, eval: PyTorch's fused encoder fast path), batch 16 x 128 tokens, bf16; the
mean of each output is read back at the end.

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
    layers, d, heads, seq, batch = (2, 16, 2, 8, 2) if args.smoke else (8, 512, 8, 128, 16)
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(d, heads, 4 * d, batch_first=True, dropout=0.0)
    model = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
    model = model.to(device=device, dtype=dtype).eval()

    @torch.no_grad()
    def forward(x: torch.Tensor) -> torch.Tensor:
        return model(x)

    inputs = [torch.randn(batch, seq, d, device=device, dtype=dtype) for _ in range(4)]
    means = [forward(inputs[i % len(inputs)]).mean() for i in range(args.steps)]
    print("output means:", [round(float(m), 4) for m in means[:4]])

    if args.mark:
        import traceinspect

        traceinspect.graph_candidate("step", forward, (inputs[0],))


if __name__ == "__main__":
    main()
