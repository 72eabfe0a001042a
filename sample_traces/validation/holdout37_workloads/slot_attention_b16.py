"""Slot Attention object discovery (Locatello et al., 2020) at batch 16 (thirty-seventh
hold-out): 16 images of 3 x 64 x 64, bf16 on a GPU, eval mode, no gradients. The CNN encoder:
4 x (``Conv2d(5 x 5, padding 2)`` + ReLU), 3 -> 64 -> 64 -> 64 -> 64 channels at 64 x 64; the
soft position embedding, ``Linear(4, 64)`` of the (64, 64, 4) grid (y, x, 1 - y, 1 - x, made
at build) added to the channels-last features; flattened to 4,096 positions, LayerNorm(64),
``Linear(64, 64)`` + ReLU + ``Linear(64, 64)``. Slot Attention with 7 slots of 64 and 3
iterations: the inputs LayerNorm'd once, keys and values ``Linear(64, 64, bias=False)`` each;
the slots start at mu + exp(log_sigma) x noise, the noise (16, 7, 64) drawn once at build (so
the step is deterministic). Per iteration: LayerNorm of the slots and their query
``Linear(64, 64, bias=False)``; the logits k q^T / 8 (16, 4096, 7, ``einsum``); softmax over
the 7 slots, + 1e-8, each slot's weights divided by their sum over the positions; the updates,
the weighted mean of the values (``einsum`` to (16, 7, 64)); a ``GRUCell(64, 64)`` on the
(112, 64) updates with the previous slots as its state; then slots + MLP(LayerNorm(slots)),
``Linear(64, 128)`` + ReLU + ``Linear(128, 64)``. Input: the images (16, 3, 64, 64). Returns
the slots (16, 7, 64) and the last iteration's attention (16, 4096, 7).

    traceinspect profile slot_attention_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn

ITERS, EPS, CONVS = 3, 1e-8, 4


def position_grid(size: int, device: torch.device) -> Tensor:
    """(size, size, 4): y, x, 1 - y, 1 - x in [0, 1]."""
    r = torch.linspace(0.0, 1.0, size, device=device)
    y, x = torch.meshgrid(r, r, indexing="ij")
    return torch.stack([y, x, 1 - y, 1 - x], dim=-1)


class Encoder(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        for i in range(CONVS):
            layers += [nn.Conv2d(3 if i == 0 else width, width, 5, padding=2), nn.ReLU()]
        self.convs = nn.Sequential(*layers)
        self.pos = nn.Linear(4, width)
        self.norm = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, width))

    def forward(self, img: Tensor, grid: Tensor) -> Tensor:
        x = self.convs(img).permute(0, 2, 3, 1) + self.pos(grid)  # (b, h, w, c)
        return self.mlp(self.norm(x.flatten(1, 2)))  # (b, h w, c)


class SlotAttention(nn.Module):
    def __init__(self, dim: int, hidden: int) -> None:
        super().__init__()
        self.scale = dim**-0.5
        self.norm_inputs = nn.LayerNorm(dim)
        self.norm_slots = nn.LayerNorm(dim)
        self.norm_mlp = nn.LayerNorm(dim)
        self.to_q = nn.Linear(dim, dim, bias=False)
        self.to_k = nn.Linear(dim, dim, bias=False)
        self.to_v = nn.Linear(dim, dim, bias=False)
        self.gru = nn.GRUCell(dim, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.ReLU(), nn.Linear(hidden, dim))
        self.mu = nn.Parameter(torch.randn(1, 1, dim) * 0.5)
        self.log_sigma = nn.Parameter(torch.randn(1, 1, dim) * 0.1 - 1.0)

    def forward(self, inputs: Tensor, noise: Tensor) -> tuple[Tensor, Tensor]:
        b, k, d = noise.shape
        inputs = self.norm_inputs(inputs)
        keys, values = self.to_k(inputs), self.to_v(inputs)
        slots = self.mu + self.log_sigma.exp() * noise
        attn = inputs.new_empty(0)
        for _ in range(ITERS):
            prev = slots
            q = self.to_q(self.norm_slots(slots))
            logits = torch.einsum("bnd,bkd->bnk", keys, q) * self.scale
            attn = logits.softmax(dim=-1) + EPS  # over the slots
            weights = attn / attn.sum(dim=1, keepdim=True)  # over the positions
            updates = torch.einsum("bnk,bnd->bkd", weights, values)
            slots = self.gru(updates.reshape(b * k, d), prev.reshape(b * k, d)).view(b, k, d)
            slots = slots + self.mlp(self.norm_mlp(slots))
        return slots, attn


def build(device: torch.device, smoke: bool) -> Built:
    batch, size, width, slots_n, hidden = (2, 16, 16, 3, 32) if smoke else (16, 64, 64, 7, 128)
    dtype = low_precision(device)
    encoder = Encoder(width)
    slot_attn = SlotAttention(width, hidden)
    model = nn.ModuleList([encoder, slot_attn]).to(device, dtype).eval()
    grid = position_grid(size, device).to(dtype)
    noise = torch.randn(batch, slots_n, width, device=device, dtype=dtype)

    @torch.no_grad()
    def step(img: Tensor) -> tuple[Tensor, Tensor]:
        return slot_attn(encoder(img, grid), noise)

    inputs = [(torch.randn(batch, 3, size, size, device=device, dtype=dtype),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"Slot Attention, {CONVS} conv5x5 x {width} encoder + {slots_n} slots x {ITERS} "
        f"iterations (GRUCell + MLP {hidden}), b{batch} at {size}x{size}",
        [model, grid, noise],
    )


if __name__ == "__main__":
    main(build, __doc__)
