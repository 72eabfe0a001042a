"""Callables that cannot be captured as CUDA graphs, next to one that can.

    traceinspect profile examples/capture_failures.py

``normalize`` reads a value back to the host (``.item()``) and ``positive_sum`` selects with
a boolean mask, whose result size depends on the data: both fail to capture, and the report
names the cause and keeps the first error. ``scaled_gelu`` captures fine.
"""

from __future__ import annotations

import torch

import traceinspect


def normalize(x: torch.Tensor) -> torch.Tensor:
    scale = x.abs().max().item()  # host sync: the GPU must finish before Python continues
    return x / scale


def positive_sum(x: torch.Tensor) -> torch.Tensor:
    return x[x > 0].sum()  # data-dependent shape: a hidden nonzero() and a sync


def scaled_gelu(x: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.gelu(x) * 2.0 + 1.0


def main() -> None:
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    x = torch.randn(4, 512, device=device)
    with traceinspect.region("eager_pass"):
        print(
            f"normalize max {normalize(x).abs().max().item():.3f}, "
            f"positive_sum {positive_sum(x).item():.3f}, "
            f"scaled_gelu mean {scaled_gelu(x).mean().item():.3f}"
        )
    traceinspect.graph_candidate("normalize", normalize, (x,))
    traceinspect.graph_candidate("positive_sum", positive_sum, (x,))
    traceinspect.graph_candidate("scaled_gelu", scaled_gelu, (x,), buckets=[1, 4])


if __name__ == "__main__":
    main()
