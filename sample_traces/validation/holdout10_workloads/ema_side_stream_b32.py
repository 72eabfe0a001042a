"""A forward pass with an EMA update of the weights beside it on a side stream: 32 x 128
tokens of d 1024 through 4 residual MLP blocks, bf16 (tenth hold-out), each x +
Linear(GELU(Linear(LayerNorm(x)))) with 1024->4096->1024: 24 parameter tensors (33.6M
values) in all. The model keeps an exponential moving average of its parameters, an fp32
copy made at build, as EMA/teacher models do; the step first forks a side stream from the
current stream (``wait_stream``) and queues the EMA update there, one tensor at a time:
``ema.mul_(0.999).add_(p, alpha=0.001)``, two elementwise kernels per tensor (48 in all,
from the 4096 x 1024 weights down to the 1024-element biases and norm parameters), reading
the bf16 parameters and updating the fp32 copy in place. The forward pass runs on the
current stream meanwhile (GEMM-heavy: 8 Linears of 4096 token rows, 1024 x 4096 or 4096 x
1024 weights); both only read the parameters. The current stream joins the side stream
(``wait_stream``) before the step ends. The side stream allocates nothing (every update is
in place on tensors made at build), so no ``record_stream`` is needed. The EMA copy changes
every step; the output does not depend on it. On a CPU everything runs in order on the
default stream. Returns 32 x 128 x 1024.

    traceinspect profile ema_side_stream_b32.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

DECAY = 0.999


class Block(nn.Module):
    def __init__(self, d: int, hidden: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.up, self.down = nn.Linear(d, hidden), nn.Linear(hidden, d)

    def forward(self, x: Tensor) -> Tensor:
        return x + self.down(F.gelu(self.up(self.norm(x))))


def build(device: torch.device, smoke: bool) -> Built:
    batch, tokens, d, hidden, blocks = (2, 4, 16, 64, 4) if smoke else (32, 128, 1024, 4096, 4)
    dtype = low_precision(device)
    cuda = device.type == "cuda"
    model = nn.Sequential(*(Block(d, hidden) for _ in range(blocks)))
    model = model.to(device=device, dtype=dtype).eval()
    params = [p.detach() for p in model.parameters()]
    ema = [p.float().clone() for p in params]
    side = torch.cuda.Stream(device) if cuda else None

    def ema_update() -> None:
        for e, p in zip(ema, params, strict=True):
            e.mul_(DECAY).add_(p, alpha=1 - DECAY)

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        if side is None:
            ema_update()
            return model(x)
        current = torch.cuda.current_stream(device)
        side.wait_stream(current)
        with torch.cuda.stream(side):
            ema_update()
        y = model(x)
        current.wait_stream(side)
        return y

    inputs = [(torch.randn(batch, tokens, d, device=device, dtype=dtype),) for _ in range(2)]
    total = sum(p.numel() for p in params)
    description = (
        f"{blocks} MLP blocks {d}->{hidden}, batch {batch} x {tokens}, EMA of {len(params)} "
        f"tensors ({total} values) on a side stream"
    )
    return Built(step, inputs, description, [model, *ema])


if __name__ == "__main__":
    main(build, __doc__)
