"""A DeepSeek-style MoE layer with a shared expert on a side stream, 16 x 64 tokens of d 512,
bf16 (nineteenth hold-out), inference: the step forks a side stream (``wait_stream``) and
runs the shared expert there (SwiGLU, 512 -> 1408 -> 512, every token); meanwhile the
current stream routes each token to the top 2 of 8 small routed experts (SwiGLU, 512 -> 352
-> 512) with fixed capacity (1.25 x the even share, rounded up to 16 slots: no host sync),
gathers each expert's tokens (``index_select``), runs it, scales by the gate weights and
scatters back (``index_add_``); the current stream then waits on the side stream's event
and adds the shared expert's output. Some 110 kernels, most of them tiny (routing, eight
experts' 3 small GEMMs and gathers each) beside the shared expert's three 1024 x 512 x 1408
GEMMs. Input: 16 x 64 x 512. Returns 16 x 64 x 512.

    traceinspect profile shared_expert_streams_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

EXPERTS, TOP_K = 8, 2


class SwiGLU(nn.Module):
    def __init__(self, d: int, hidden: int) -> None:
        super().__init__()
        self.gate = nn.Linear(d, hidden, bias=False)
        self.up = nn.Linear(d, hidden, bias=False)
        self.down = nn.Linear(hidden, d, bias=False)

    def forward(self, x: Tensor) -> Tensor:
        return self.down(F.silu(self.gate(x)) * self.up(x))


def build(device: torch.device, smoke: bool) -> Built:
    batch, seq, d, shared_h, expert_h = (2, 8, 32, 64, 16) if smoke else (16, 64, 512, 1408, 352)
    tokens = batch * seq
    capacity = -(-int(1.25 * tokens * TOP_K / EXPERTS) // 16) * 16
    dtype = low_precision(device)
    cuda = device.type == "cuda"
    router = nn.Linear(d, EXPERTS, bias=False)
    shared = SwiGLU(d, shared_h)
    experts = nn.ModuleList(SwiGLU(d, expert_h) for _ in range(EXPERTS))
    model = nn.ModuleList([router, shared, experts]).to(device=device, dtype=dtype).eval()
    side = torch.cuda.Stream(device) if cuda else None
    expert_ids = torch.arange(EXPERTS, device=device)
    slots = torch.arange(capacity, device=device)

    def routed(x: Tensor) -> Tensor:
        weight, chosen = torch.softmax(router(x).float(), dim=-1).topk(TOP_K, dim=-1)
        weight = (weight / weight.sum(-1, keepdim=True)).to(dtype).flatten()
        expert = chosen.flatten()  # (tokens * TOP_K,)
        token = torch.arange(tokens, device=x.device).repeat_interleave(TOP_K)
        order = torch.argsort(expert, stable=True)
        counts = (expert.unsqueeze(1) == expert_ids).sum(0)
        starts = counts.cumsum(0) - counts
        place = (starts.unsqueeze(1) + slots).clamp(max=tokens * TOP_K - 1)
        pick = order[place]  # (experts, capacity) entries of the flattened choices
        keep = (slots < counts.unsqueeze(1)).to(dtype)
        y = torch.zeros_like(x)
        for j, mlp in enumerate(experts):
            rows = token[pick[j]]
            out = mlp(x.index_select(0, rows)) * (weight[pick[j]] * keep[j]).unsqueeze(1)
            y.index_add_(0, rows, out)
        return y

    @torch.no_grad()
    def step(hidden: Tensor) -> Tensor:
        x = hidden.view(tokens, d)
        if side is None:
            return (routed(x) + shared(x)).view_as(hidden)
        current = torch.cuda.current_stream(device)
        side.wait_stream(current)
        with torch.cuda.stream(side):
            common = shared(x)
            done = torch.cuda.Event()
            done.record(side)
        y = routed(x)
        current.wait_event(done)
        if not torch.cuda.is_current_stream_capturing():
            common.record_stream(current)
        return (y + common).view_as(hidden)

    inputs = [(torch.randn(batch, seq, d, device=device, dtype=dtype),) for _ in range(2)]
    description = (
        f"MoE top-{TOP_K} of {EXPERTS} (capacity {capacity}) + shared expert on a side stream, "
        f"{tokens} tokens d{d}"
    )
    return Built(step, inputs, description, [model, expert_ids, slots])


if __name__ == "__main__":
    main(build, __doc__)
