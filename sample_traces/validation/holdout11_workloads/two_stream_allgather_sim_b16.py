"""Communication overlap simulated on one GPU: an all-gather's copies on a side stream beside
the compute, 16 x 256 tokens of d 2048, bf16 (eleventh hold-out). Compute (current
stream): 6 layers of x + GELU(Linear 2048->2048 (LayerNorm(x))), 4096 token rows each.
Communication (side stream, forked from the current stream with ``wait_stream``): a
tensor-parallel all-gather of a 4096 x 8192 MLP activation over 8 simulated ranks, each
rank's 4096 x 1024 column slice (8 MiB, made at build, standing for what the peers send)
copied with ``Tensor.copy_`` into its slot of a receive buffer (8 x 4096 x 1024, made at
build), as NCCL would write it, and then the 8 slots joined along the hidden dimension with
``torch.cat`` into the gathered 4096 x 8192 activation: 64 MiB copied twice, the second
time strided. The current stream joins the side stream (``wait_stream``) before the step
ends; outside graph capture the gathered tensor, made on the side stream, is marked with
``record_stream`` for the current stream. On a CPU everything runs in order on the default
stream. Returns the compute output (16 x 256 x 2048) and the gathered activation (4096 x
8192).

    traceinspect profile two_stream_allgather_sim_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn


class Layer(nn.Module):
    def __init__(self, d: int) -> None:
        super().__init__()
        self.norm, self.linear = nn.LayerNorm(d), nn.Linear(d, d)

    def forward(self, x: Tensor) -> Tensor:
        return x + F.gelu(self.linear(self.norm(x)))


def build(device: torch.device, smoke: bool) -> Built:
    batch, tokens, d, layers, ranks, slice_cols = (
        (2, 4, 32, 6, 8, 4) if smoke else (16, 256, 2048, 6, 8, 1024)
    )
    rows = batch * tokens
    dtype = low_precision(device)
    cuda = device.type == "cuda"
    model = nn.Sequential(*(Layer(d) for _ in range(layers))).to(device=device, dtype=dtype)
    model = model.eval()
    shards = [torch.randn(rows, slice_cols, device=device, dtype=dtype) for _ in range(ranks)]
    recv = torch.empty(ranks, rows, slice_cols, device=device, dtype=dtype)
    side = torch.cuda.Stream(device) if cuda else None

    def all_gather() -> Tensor:
        for slot, shard in zip(recv.unbind(0), shards, strict=True):
            slot.copy_(shard)
        return torch.cat(recv.unbind(0), dim=-1)  # (rows, ranks * slice_cols)

    @torch.no_grad()
    def step(x: Tensor) -> tuple[Tensor, Tensor]:
        if side is None:
            gathered = all_gather()
            return model(x), gathered
        current = torch.cuda.current_stream(device)
        side.wait_stream(current)
        with torch.cuda.stream(side):
            gathered = all_gather()
        y = model(x)
        current.wait_stream(side)
        if not torch.cuda.is_current_stream_capturing():
            gathered.record_stream(current)
        return y, gathered

    inputs = [(torch.randn(batch, tokens, d, device=device, dtype=dtype),) for _ in range(2)]
    description = (
        f"{layers} layers d{d} on {rows} rows + simulated all-gather of {ranks} shards "
        f"({rows}x{slice_cols}) on a side stream"
    )
    return Built(step, inputs, description, [model, *shards, recv])


if __name__ == "__main__":
    main(build, __doc__)
