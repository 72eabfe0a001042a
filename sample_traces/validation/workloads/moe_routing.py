"""Fixed-capacity mixture-of-experts layer: top-1 gating, static capacity, no
data-dependent shapes.

2048 tokens of d_model 1024, 8 experts (FFN 1024-4096-1024, GELU), capacity 320 per expert
(1.25 x even share). GShard-style: the gate's argmax, a cumulative sum giving each token's
slot in its expert, a one-hot dispatch tensor (tokens x experts x capacity) built with
masks (tokens over capacity are dropped), einsum dispatch, batched expert GEMMs, einsum
combine weighted by the gate probability. bf16; 2 such layers with residuals.

    traceinspect profile moe_routing.py
"""

from __future__ import annotations

import torch
from _common import Built, low_precision, main
from torch import nn


class MoE(nn.Module):
    def __init__(self, d: int, hidden: int, experts: int, capacity: int, dtype: torch.dtype):
        super().__init__()
        self.gate = nn.Linear(d, experts, bias=False, dtype=dtype)
        self.w1 = nn.Parameter(torch.randn(experts, d, hidden, dtype=dtype) / d**0.5)
        self.w2 = nn.Parameter(torch.randn(experts, hidden, d, dtype=dtype) / hidden**0.5)
        self.experts, self.capacity = experts, capacity

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        probs = torch.softmax(self.gate(x).float(), dim=-1)  # (T, E)
        top_p, top_e = probs.max(dim=-1)
        onehot = nn.functional.one_hot(top_e, self.experts)  # (T, E) int64
        slot = (torch.cumsum(onehot, dim=0) - 1) * onehot  # position inside the expert
        keep = (slot < self.capacity) & (onehot > 0)
        slot_onehot = nn.functional.one_hot(slot.clamp(max=self.capacity - 1), self.capacity)
        dispatch = (slot_onehot * keep.unsqueeze(-1)).to(x.dtype)  # (T, E, C)
        expert_in = torch.einsum("tec,td->ecd", dispatch, x)
        h = nn.functional.gelu(torch.bmm(expert_in, self.w1))
        expert_out = torch.bmm(h, self.w2)  # (E, C, d)
        combine = dispatch * top_p.to(x.dtype).view(-1, 1, 1)
        return torch.einsum("tec,ecd->td", combine, expert_out)


def build(device: torch.device, smoke: bool) -> Built:
    tokens, d, hidden, experts = (32, 16, 32, 4) if smoke else (2048, 1024, 4096, 8)
    capacity = int(1.25 * tokens / experts)
    dtype = low_precision(device)
    layers = nn.ModuleList(MoE(d, hidden, experts, capacity, dtype) for _ in range(2))
    layers.to(device).eval()

    @torch.no_grad()
    def step(x: torch.Tensor) -> torch.Tensor:
        for layer in layers:
            x = x + layer(x)
        return x

    inputs = [(torch.randn(tokens, d, device=device, dtype=dtype),) for _ in range(2)]
    return Built(step, inputs, f"top-1 MoE, {tokens} tokens, {experts} experts", [layers])


if __name__ == "__main__":
    main(build, __doc__)
