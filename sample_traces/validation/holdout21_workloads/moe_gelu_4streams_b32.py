"""Top-1 mixture of four GELU experts, each on its own side stream, 32 x 128 tokens of d 768,
bf16 (twenty-first hold-out), inference: a router (Linear 768->4, softmax, argmax) picks one
expert per token; fixed capacity (1.25 x the even share, rounded up to 64 slots: no host
sync) gathers each expert's tokens (``index_select``); each expert (Linear 768->3072, GELU,
Linear 3072->768) runs on its stream on its 1280 slots and scales by the gate; the current
stream joins them and scatters the outputs back (``index_add_``) onto the input. About 40
kernels: four experts' two GEMMs of 1280 x 768 x 3072 side by side, their GELUs over 3.9M
values (several waves each) and the routing's small kernels. Input: 32 x 128 x 768.
Returns 32 x 128 x 768.

    traceinspect profile moe_gelu_4streams_b32.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

EXPERTS = 4


def build(device: torch.device, smoke: bool) -> Built:
    batch, seq, d, hidden = (2, 8, 32, 64) if smoke else (32, 128, 768, 3072)
    tokens = batch * seq
    capacity = -(-int(1.25 * tokens / EXPERTS) // 64) * 64
    dtype = low_precision(device)
    router = nn.Linear(d, EXPERTS, bias=False)
    experts = nn.ModuleList(
        nn.Sequential(nn.Linear(d, hidden), nn.GELU(), nn.Linear(hidden, d)) for _ in range(EXPERTS)
    )
    model = nn.ModuleList([router, experts]).to(device=device, dtype=dtype).eval()
    streams = side_streams(device, EXPERTS)
    expert_ids = torch.arange(EXPERTS, device=device)
    slots = torch.arange(capacity, device=device)

    @torch.no_grad()
    def step(hidden_states: Tensor) -> Tensor:
        x = hidden_states.view(tokens, d)
        gate, choice = F.softmax(router(x).float(), dim=-1).max(dim=-1)
        order = torch.argsort(choice, stable=True)
        counts = (choice.unsqueeze(1) == expert_ids).sum(0)
        starts = counts.cumsum(0) - counts
        index = order[(starts.unsqueeze(1) + slots).clamp(max=tokens - 1)]  # (experts, cap)
        weight = (gate[index] * (slots < counts.unsqueeze(1))).to(dtype)
        outs = fork_join(
            device,
            streams,
            [
                lambda j=j, e=e: e(x.index_select(0, index[j])) * weight[j].unsqueeze(1)
                for j, e in enumerate(experts)
            ],
        )
        y = x.clone()
        for j, out in enumerate(outs):
            y.index_add_(0, index[j], out)
        return y.view_as(hidden_states)

    inputs = [(torch.randn(batch, seq, d, device=device, dtype=dtype),) for _ in range(2)]
    description = f"top-1 MoE, {EXPERTS} GELU experts on {EXPERTS} streams, {tokens} tokens"
    return Built(step, inputs, description, [model, expert_ids, slots])


if __name__ == "__main__":
    main(build, __doc__)
