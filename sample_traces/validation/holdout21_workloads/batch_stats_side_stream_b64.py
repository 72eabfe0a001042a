"""A residual MLP whose per-feature batch statistics are gathered on a side stream beside
the next layer, as monitoring or SyncBatchNorm-style statistics are, 64 x 256 tokens of d
1024, bf16 (twenty-first hold-out), inference: four blocks ``x + Linear(GELU(Linear(x)))``
(1024->2048->1024); after each block the side stream, forked from the current one, computes
the block output's per-feature mean, variance, absolute maximum and fraction of zeros (four
reductions over 16384 x 1024 values, in fp32) into a preallocated (4, 4, 1024) buffer while
the current stream runs the next block; the current stream joins the side stream at the
end. About 40 kernels: GEMMs of 16384 x 1024 x 2048 beside column reductions over 16.8M
values. Input: 64 x 256 x 1024. Returns the output and the statistics buffer.

    traceinspect profile batch_stats_side_stream_b64.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

BLOCKS = 4


class Block(nn.Module):
    def __init__(self, d: int) -> None:
        super().__init__()
        self.up, self.down = nn.Linear(d, 2 * d), nn.Linear(2 * d, d)

    def forward(self, x: Tensor) -> Tensor:
        return x + self.down(F.gelu(self.up(x)))


def build(device: torch.device, smoke: bool) -> Built:
    batch, seq, d = (2, 8, 16) if smoke else (64, 256, 1024)
    dtype = low_precision(device)
    blocks = nn.ModuleList(Block(d) for _ in range(BLOCKS)).to(device=device, dtype=dtype).eval()
    stats = torch.zeros(BLOCKS, 4, d, device=device)
    cuda = device.type == "cuda"
    side = torch.cuda.Stream(device) if cuda else None

    def gather(i: int, h: Tensor) -> None:
        flat = h.reshape(-1, d).float()
        var, mean = torch.var_mean(flat, dim=0)
        stats[i, 0].copy_(mean)
        stats[i, 1].copy_(var)
        stats[i, 2].copy_(flat.abs().amax(dim=0))
        stats[i, 3].copy_((flat == 0).float().mean(dim=0))

    @torch.no_grad()
    def step(x: Tensor) -> tuple[Tensor, Tensor]:
        current = torch.cuda.current_stream(device) if cuda else None
        for i, block in enumerate(blocks):
            x = block(x)
            if side is None or current is None:
                gather(i, x)
                continue
            side.wait_stream(current)
            with torch.cuda.stream(side):
                gather(i, x)
            if not torch.cuda.is_current_stream_capturing():
                x.record_stream(side)
        if side is not None and current is not None:
            current.wait_stream(side)
        return x, stats

    inputs = [(torch.randn(batch, seq, d, device=device, dtype=dtype),) for _ in range(2)]
    description = f"{BLOCKS} residual MLP blocks d{d}, batch statistics on a side stream"
    return Built(step, inputs, description, [blocks, stats])


if __name__ == "__main__":
    main(build, __doc__)
