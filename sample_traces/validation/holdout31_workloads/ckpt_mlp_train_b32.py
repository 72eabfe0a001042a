"""A training step through activation checkpointing (thirty-first hold-out): 6 pre-norm
residual MLP blocks (LayerNorm, Linear 1024 -> 4096, GELU, Linear 4096 -> 1024) over 32
sequences of 16 tokens (512 rows), bf16 on a GPU, each block wrapped in
``torch.utils.checkpoint.checkpoint(use_reentrant=False, preserve_rng_state=False)``: the
forward keeps only the blocks' inputs, and the backward runs each block's forward again
before its own backward. Mean-squared error against a target, backward, and
``torch.optim.SGD`` (momentum 0.9, ``foreach=True``) over the 24 weight and bias tensors
and the 12 LayerNorm ones.

Every step first restores the parameters and momentum buffers from a snapshot taken at build
(foreach copies) and zeroes the gradients in place, so a step depends only on its inputs
and replayed losses compare with eager ones. Returns the loss (a 0-d tensor).

    traceinspect profile ckpt_mlp_train_b32.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn
from torch.utils.checkpoint import checkpoint

BLOCKS, LR, MOMENTUM = 6, 0.01, 0.9


class Block(nn.Module):
    def __init__(self, d: int, hidden: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.up = nn.Linear(d, hidden)
        self.down = nn.Linear(hidden, d)

    def forward(self, x: Tensor) -> Tensor:
        return x + self.down(F.gelu(self.up(self.norm(x))))


def build(device: torch.device, smoke: bool) -> Built:
    rows, d, hidden = (8, 16, 32) if smoke else (512, 1024, 4096)
    dtype = low_precision(device)
    blocks = nn.ModuleList(Block(d, hidden) for _ in range(BLOCKS)).to(device, dtype)
    blocks.train()
    params = list(blocks.parameters())
    optimizer = torch.optim.SGD(params, lr=LR, momentum=MOMENTUM, foreach=True)
    for p in params:
        p.grad = torch.zeros_like(p)
    optimizer.step()
    bufs = [optimizer.state[p]["momentum_buffer"] for p in params]
    start = [p.detach().clone() for p in params]
    bufs0 = [torch.randn_like(p) * 1e-3 for p in params]

    def step(x: Tensor, target: Tensor) -> Tensor:
        with torch.no_grad():
            torch._foreach_copy_(params, start)
            torch._foreach_copy_(bufs, bufs0)
        optimizer.zero_grad(set_to_none=False)
        h = x
        for block in blocks:
            h = checkpoint(block, h, use_reentrant=False, preserve_rng_state=False)
        loss = F.mse_loss(h.float(), target)
        loss.backward()
        optimizer.step()
        return loss.detach()

    inputs = [
        (
            torch.randn(rows, d, device=device, dtype=dtype),
            torch.randn(rows, d, device=device),
        )
        for _ in range(2)
    ]
    description = (
        f"checkpointed MLP training step, {BLOCKS} blocks {d}-{hidden}-{d}, SGD (foreach), "
        f"{rows} rows"
    )
    return Built(step, inputs, description, [blocks, optimizer, start, bufs0])


if __name__ == "__main__":
    main(build, __doc__)
