"""A step fed by many inputs: 12 feature tensors of different shapes for 32 x 64 tokens,
bf16, 8 MiB in all (ninth hold-out): 8 of shape (32, 64, F) with F = 32, 64, 96, 128, 160,
192, 224 and 256, and 4 of shape (32, 64, a, b) with a x b = 4 x 32, 8 x 16, 8 x 32 and
16 x 16 (flattened to 128, 128, 256 and 256 features): 2048 features per token in all. Each
input gets its own LayerNorm over its features, the 12 are concatenated (2048 wide) and go
through an MLP 2048->1024->1024->256 with GELU after the first two layers, then a final
LayerNorm. The 12 tensors are the step's arguments, so a graph replay first copies all 12
into its static inputs. Returns 32 x 64 x 256.

    traceinspect profile input_heavy_b32.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn

FLAT = (32, 64, 96, 128, 160, 192, 224, 256)
GRID = ((4, 32), (8, 16), (8, 32), (16, 16))


def build(device: torch.device, smoke: bool) -> Built:
    batch, tokens, hidden, out, div = (2, 4, 64, 16, 8) if smoke else (32, 64, 1024, 256, 1)
    flat = [f // div for f in FLAT]
    grid = [(a, b // div) for a, b in GRID]
    widths = flat + [a * b for a, b in grid]
    dtype = low_precision(device)
    norms = nn.ModuleList(nn.LayerNorm(w) for w in widths)
    mlp = nn.Sequential(
        nn.Linear(sum(widths), hidden),
        nn.GELU(),
        nn.Linear(hidden, hidden),
        nn.GELU(),
        nn.Linear(hidden, out),
        nn.LayerNorm(out),
    )
    model = nn.ModuleList([norms, mlp]).to(device=device, dtype=dtype).eval()

    @torch.no_grad()
    def step(*features: Tensor) -> Tensor:
        parts = [norm(f.flatten(2)) for norm, f in zip(norms, features, strict=True)]
        return mlp(torch.cat(parts, dim=-1))

    shapes = [(batch, tokens, f) for f in flat] + [(batch, tokens, a, b) for a, b in grid]
    inputs = [tuple(torch.randn(s, device=device, dtype=dtype) for s in shapes) for _ in range(2)]
    size = sum(math.prod(s) for s in shapes) * dtype.itemsize
    description = (
        f"{len(shapes)} inputs ({size / 2**20:.1f} MiB) -> MLP {sum(widths)}->{hidden}->{out}, "
        f"batch {batch} x {tokens}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
