"""A launch-bound toy server: a deep, narrow MLP whose kernels are far too small to keep a
GPU busy, answering requests of varying batch size.

    traceinspect profile examples/tiny_mlp.py -- --steps 30

The script marks each request with ``traceinspect.region("decode")`` and offers the forward
pass as a CUDA graph candidate, captured for batch buckets 1, 2, 4 and 8 and judged against
the mix of request sizes the server sees. Run plainly (``python examples/tiny_mlp.py``) it
serves its requests and nothing else happens: the region and the candidate cost nothing.
"""

from __future__ import annotations

import argparse

import torch
from torch import nn

import traceinspect

#: Request batch sizes seen by the server, with their counts (a chat-style decode mix:
#: mostly single requests, a tail of larger batches; 12 exceeds every bucket).
REQUEST_MIX = {1: 50, 2: 20, 3: 10, 4: 8, 6: 6, 8: 4, 12: 2}
BUCKETS = [1, 2, 4, 8]


class TinyMLP(nn.Module):
    """``layers`` blocks of Linear -> LayerNorm -> GELU at a small width: ~4 kernels each."""

    def __init__(self, width: int, layers: int) -> None:
        super().__init__()
        self.blocks = nn.Sequential(
            *(
                nn.Sequential(nn.Linear(width, width), nn.LayerNorm(width), nn.GELU())
                for _ in range(layers)
            )
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.blocks(x)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=30, help="requests to serve")
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--layers", type=int, default=16)
    args = parser.parse_args()

    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    model = TinyMLP(args.width, args.layers).to(device).eval()

    @torch.no_grad()
    def forward(x: torch.Tensor) -> torch.Tensor:
        return model(x)

    sizes = [size for size, count in REQUEST_MIX.items() for _ in range(count)]
    order = torch.randperm(len(sizes), generator=torch.Generator().manual_seed(0)).tolist()
    for step in range(args.steps):
        batch = sizes[order[step % len(sizes)]]
        with traceinspect.region("decode"):
            x = torch.randn(batch, args.width, device=device)
            y = forward(x)
    if device == "cuda":
        torch.cuda.synchronize()
    print(f"served {args.steps} requests on {device}; last output {tuple(y.shape)}")

    traceinspect.graph_candidate(
        "mlp",
        forward,
        (torch.randn(1, args.width, device=device),),
        buckets=BUCKETS,
        request_mix=REQUEST_MIX,
    )


if __name__ == "__main__":
    main()
