"""Mixture of experts with one CUDA stream per expert: 8 x 128 tokens of d 512 (1024 tokens),
a top-1 router (Linear 512->3, softmax in fp32, max) and 3 experts, each a Linear 512->2048,
GELU, Linear 2048->512, bf16 (sixth hold-out).

Routing has fixed shapes and stays on the GPU: the tokens are ordered by expert with a
stable ``argsort`` of the expert ids; expert j takes a fixed-capacity slice of 432 slots
(1.25 x an even share, rounded up to 16) of that order, from its start (a cumulative count
of the tokens routed to the experts before it); slots past its token count read other tokens
(the place clamped to the last one) with weight 0, and tokens past the capacity are dropped.
Each expert gathers its slice with ``index_select``, runs its MLP and scales the rows by the
router probability (0 for empty slots) on its own stream, forked from the current stream
with ``wait_stream`` and joined back by one event per expert; the current stream then
scatters the three results onto a copy of the input with ``index_add_`` (the residual). Each
token gets at most one non-zero row, so the adds give the same result in any order. On a CPU
the experts run one after the other on the default stream.

    traceinspect profile moe_streams_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn


def build(device: torch.device, smoke: bool) -> Built:
    batch, seq, d, hidden, experts = (2, 16, 32, 64, 3) if smoke else (8, 128, 512, 2048, 3)
    tokens = batch * seq
    capacity = -(-int(1.25 * tokens / experts) // 16) * 16
    dtype = low_precision(device)
    cuda = device.type == "cuda"
    router = nn.Linear(d, experts, bias=False)
    mlps = [
        nn.Sequential(nn.Linear(d, hidden), nn.GELU(), nn.Linear(hidden, d)) for _ in range(experts)
    ]
    model = nn.ModuleList([router, *mlps]).to(device=device, dtype=dtype).eval()
    streams = [torch.cuda.Stream(device) for _ in range(experts)] if cuda else []
    expert_ids = torch.arange(experts, device=device)
    slots = torch.arange(capacity, device=device)

    def route(x: Tensor) -> tuple[Tensor, Tensor]:
        """(experts, capacity) token indices and their weights (0 for empty slots)."""
        prob, expert = torch.softmax(router(x).float(), dim=-1).max(dim=-1)
        order = torch.argsort(expert, stable=True)
        counts = (expert.unsqueeze(1) == expert_ids).sum(0)  # (experts,)
        starts = counts.cumsum(0) - counts
        place = starts.unsqueeze(1) + slots  # (experts, capacity) places in `order`
        index = order[place.clamp(max=tokens - 1)]
        weight = prob[index] * (slots < counts.unsqueeze(1))
        return index, weight.to(dtype)

    def expert(mlp: nn.Module, x: Tensor, index: Tensor, weight: Tensor) -> Tensor:
        return mlp(x.index_select(0, index)) * weight.unsqueeze(1)

    @torch.no_grad()
    def step(hidden_states: Tensor) -> Tensor:
        x = hidden_states.view(tokens, d)
        index, weight = route(x)
        if not cuda:
            outs = [expert(m, x, index[j], weight[j]) for j, m in enumerate(mlps)]
        else:
            current = torch.cuda.current_stream(device)
            outs, done = [], []
            for j, (s, mlp) in enumerate(zip(streams, mlps, strict=True)):
                s.wait_stream(current)
                with torch.cuda.stream(s):
                    outs.append(expert(mlp, x, index[j], weight[j]))
                    event = torch.cuda.Event()
                    event.record(s)
                done.append(event)
            for event, out in zip(done, outs, strict=True):
                current.wait_event(event)
                if not torch.cuda.is_current_stream_capturing():
                    out.record_stream(current)
        y = x.clone()
        for j, out in enumerate(outs):
            y.index_add_(0, index[j], out)
        return y.view_as(hidden_states)

    inputs = [(torch.randn(batch, seq, d, device=device, dtype=dtype),) for _ in range(2)]
    description = f"top-1 MoE on {experts} streams, {tokens} tokens, capacity {capacity}"
    return Built(step, inputs, description, [model, expert_ids, slots])


if __name__ == "__main__":
    main(build, __doc__)
