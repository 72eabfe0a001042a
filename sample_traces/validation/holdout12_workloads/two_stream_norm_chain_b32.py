"""Two independent chains of one step on two streams: a GEMM chain on the current stream and a
LayerNorm / elementwise chain on a side stream, 32 x 64 tokens of d 1024, bf16 (twelfth
hold-out). Current stream: 6 layers of x + GELU(Linear 1024->1024 (x)) over the 2048 token
rows (one GEMM with its bias, a GELU and an add per layer). Side stream, forked from the
current stream with ``wait_stream``: a conditioning branch over a second input of the same
shape, 8 rounds of h + SiLU(LayerNorm(h) x (1 + scale) + shift) with a learned per-channel
scale and shift (per round six small kernels and no GEMM: the LayerNorm, 1 + scale on 1024
values, the multiply, the shift add, the SiLU and the residual add, the others
bandwidth-bound on 4 MiB each). The current
stream joins the side stream (``wait_stream``) and adds the two results; outside graph
capture the side stream's output, allocated on the side stream, is marked with
``record_stream`` for the current stream. On a CPU everything runs in order on the default
stream. Returns the sum and the side output (32 x 64 x 1024 each).

    traceinspect profile two_stream_norm_chain_b32.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn


class GemmLayer(nn.Module):
    def __init__(self, d: int) -> None:
        super().__init__()
        self.linear = nn.Linear(d, d)

    def forward(self, x: Tensor) -> Tensor:
        return x + F.gelu(self.linear(x))


class ModulatedNorm(nn.Module):
    def __init__(self, d: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.scale = nn.Parameter(0.1 * torch.randn(d))
        self.shift = nn.Parameter(0.1 * torch.randn(d))

    def forward(self, h: Tensor) -> Tensor:
        return h + F.silu(self.norm(h) * (1 + self.scale) + self.shift)


def build(device: torch.device, smoke: bool) -> Built:
    batch, tokens, d, gemm_layers, norm_rounds = (2, 4, 32, 6, 8) if smoke else (32, 64, 1024, 6, 8)
    dtype = low_precision(device)
    cuda = device.type == "cuda"
    main_chain = nn.Sequential(*(GemmLayer(d) for _ in range(gemm_layers)))
    side_chain = nn.Sequential(*(ModulatedNorm(d) for _ in range(norm_rounds)))
    main_chain = main_chain.to(device=device, dtype=dtype).eval()
    side_chain = side_chain.to(device=device, dtype=dtype).eval()
    side = torch.cuda.Stream(device) if cuda else None

    @torch.no_grad()
    def step(x: Tensor, cond: Tensor) -> tuple[Tensor, Tensor]:
        if side is None:
            c = side_chain(cond)
            return main_chain(x) + c, c
        current = torch.cuda.current_stream(device)
        side.wait_stream(current)
        with torch.cuda.stream(side):
            c = side_chain(cond)
        y = main_chain(x)
        current.wait_stream(side)
        if not torch.cuda.is_current_stream_capturing():
            c.record_stream(current)
        return y + c, c

    inputs = [
        (
            torch.randn(batch, tokens, d, device=device, dtype=dtype),
            torch.randn(batch, tokens, d, device=device, dtype=dtype),
        )
        for _ in range(2)
    ]
    description = (
        f"{gemm_layers} GEMM layers d{d} on the current stream + {norm_rounds} LayerNorm/"
        f"elementwise rounds on a side stream, batch {batch} x {tokens}"
    )
    return Built(step, inputs, description, [main_chain, side_chain])


if __name__ == "__main__":
    main(build, __doc__)
