"""Per-layer probe heads on a side stream (twenty-second hold-out): 4 residual MLP blocks
(LayerNorm, 512 -> 2048 GELU -> 512) on the current stream, an event recorded after each;
then a side stream waits on block i's event and runs a probe head on its output (LayerNorm,
512 -> 64, log-softmax, mean over tokens), the way auxiliary or early-exit heads are
evaluated beside the trunk. The current stream joins the side stream at the end. Batch 16
sequences of 64 tokens, fp32. On a CPU all runs on one stream.

    traceinspect profile aux_probes_side_stream_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn

BLOCKS = 4


class Block(nn.Module):
    def __init__(self, d: int) -> None:
        super().__init__()
        self.norm, self.up, self.down = nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x: Tensor) -> Tensor:
        return x + self.down(F.gelu(self.up(self.norm(x))))


def build(device: torch.device, smoke: bool) -> Built:
    batch, n, d, classes = (2, 4, 16, 8) if smoke else (16, 64, 512, 64)
    blocks = nn.ModuleList([Block(d) for _ in range(BLOCKS)]).to(device).eval()
    probes = nn.ModuleList(
        [nn.Sequential(nn.LayerNorm(d), nn.Linear(d, classes)) for _ in range(BLOCKS)]
    )
    probes = probes.to(device).eval()
    side = torch.cuda.Stream(device) if device.type == "cuda" else None

    def probe(i: int, h: Tensor) -> Tensor:
        return F.log_softmax(probes[i](h), dim=-1).mean(dim=1)

    @torch.no_grad()
    def step(x: Tensor) -> tuple[Tensor, Tensor]:
        if side is None:
            outs = []
            for i in range(BLOCKS):
                x = blocks[i](x)
                outs.append(probe(i, x))
            return x, torch.stack(outs)
        current = torch.cuda.current_stream(device)
        hidden, done = [], []
        for i in range(BLOCKS):
            x = blocks[i](x)
            event = torch.cuda.Event()
            event.record(current)
            hidden.append(x)
            done.append(event)
        outs = []
        for i in range(BLOCKS):
            side.wait_event(done[i])
            with torch.cuda.stream(side):
                outs.append(probe(i, hidden[i]))
        with torch.cuda.stream(side):
            stacked = torch.stack(outs)
        current.wait_stream(side)
        return x, stacked

    inputs = [(torch.randn(batch, n, d, device=device),) for _ in range(2)]
    description = f"{BLOCKS} MLP blocks d{d}, probe heads on a side stream"
    return Built(step, inputs, description, [blocks, probes])


if __name__ == "__main__":
    main(build, __doc__)
