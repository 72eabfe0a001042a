"""A Siamese encoder scoring 32 pairs of 512-feature inputs, bf16, with the two towers on two
side streams (fifteenth hold-out), inference. The towers share one encoder of three layers,
each a Linear 512->512, ``LayerNorm`` and GELU. Per layer, two side streams, each forked from
the current stream with ``wait_stream``, run the layer on one tower's activations (side
stream A the first input's, side stream B the second's) and each ends by recording an event;
the current stream waits on the two events (``wait_event``) before the next layer forks
again, so the same two side streams are forked and joined three times in one step, with
nothing on the current stream between a fork and its join. Outside graph capture the side
streams' outputs are marked with ``record_stream`` for the current stream. After the last
join the current stream computes the cosine similarity of the two 512-dimensional embeddings
in fp32. On a CPU everything runs in order on the default stream. Three kernels per layer
and tower (the GEMM with its bias, the norm, the GELU), all small: launch-bound. Inputs: the
two inputs (32 x 512 each). Returns the cosine similarities (32, fp32).

    traceinspect profile siamese_streams_b32.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

LAYERS = 3


def build(device: torch.device, smoke: bool) -> Built:
    batch, d = (4, 32) if smoke else (32, 512)
    dtype = low_precision(device)
    cuda = device.type == "cuda"
    encoder = nn.ModuleList(
        nn.Sequential(nn.Linear(d, d), nn.LayerNorm(d), nn.GELU()) for _ in range(LAYERS)
    )
    encoder = encoder.to(device=device, dtype=dtype).eval()
    streams = [torch.cuda.Stream(device) for _ in range(2)] if cuda else []

    def layer(module: nn.Module, towers: list[Tensor]) -> list[Tensor]:
        if not cuda:
            return [module(x) for x in towers]
        current = torch.cuda.current_stream(device)
        outs, done = [], []
        for s, x in zip(streams, towers, strict=True):
            s.wait_stream(current)
            with torch.cuda.stream(s):
                outs.append(module(x))
                event = torch.cuda.Event()
                event.record(s)
            done.append(event)
        for event, out in zip(done, outs, strict=True):
            current.wait_event(event)
            if not torch.cuda.is_current_stream_capturing():
                out.record_stream(current)
        return outs

    @torch.no_grad()
    def step(a: Tensor, b: Tensor) -> Tensor:
        towers = [a, b]
        for module in encoder:
            towers = layer(module, towers)
        za, zb = towers
        return F.cosine_similarity(za.float(), zb.float(), dim=-1)

    inputs = [
        (
            torch.randn(batch, d, device=device, dtype=dtype),
            torch.randn(batch, d, device=device, dtype=dtype),
        )
        for _ in range(2)
    ]
    description = (
        f"Siamese encoder, {LAYERS} x (Linear {d} + LN + GELU) per tower, towers on 2 side "
        f"streams forked {LAYERS} times, cosine head, batch {batch}"
    )
    return Built(step, inputs, description, [encoder])


if __name__ == "__main__":
    main(build, __doc__)
