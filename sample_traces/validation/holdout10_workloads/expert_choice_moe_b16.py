"""Expert-choice mixture of experts with a shared expert on a side stream: 16 x 64 tokens of
d 512 (1024 tokens), bf16 (tenth hold-out). The router (Linear 512->8 without bias, softmax
over the 8 experts in fp32) scores every token; each expert then chooses its own 256 tokens
(capacity factor 2: 2 x 1024 / 8) with ``topk`` over the token dimension of the transposed
scores, so every expert gets a full, fixed-size batch and a token can be taken by several
experts or by none. The chosen tokens are gathered with one ``index_select`` into an
(8, 256, 512) batch, the 8 expert MLPs (512->1024, GELU, 1024->512, weights stacked into
(8, 512, 1024) and (8, 1024, 512) tensors made at build) run as two ``baddbmm``, the rows
are scaled by their gate scores and summed back onto the tokens with ``index_add_`` into a
zero fp32 tensor (a token taken by several experts gets several rows, added by atomics in
any order; in fp32 the order moves the result far less than bf16's rounding). Beside them
a shared expert that every token goes through (a SwiGLU MLP: fused gate/up Linear
512->4096, SiLU, Linear 2048->512) runs on a side stream, forked from the current stream
with ``wait_stream`` and joined back with ``wait_stream``; outside graph capture its output
is marked with ``record_stream`` for the current stream. Output: x + routed + shared,
summed in fp32 and cast to bf16. On a CPU everything runs in order on the default stream.
Returns 16 x 64 x 512.

    traceinspect profile expert_choice_moe_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn


class ExpertChoiceMoE(nn.Module):
    def __init__(self, d: int, experts: int, hidden: int, shared_hidden: int) -> None:
        super().__init__()
        self.experts = experts
        self.router = nn.Linear(d, experts, bias=False)
        self.w1 = nn.Parameter(torch.randn(experts, d, hidden) * d**-0.5)
        self.b1 = nn.Parameter(torch.zeros(experts, 1, hidden))
        self.w2 = nn.Parameter(torch.randn(experts, hidden, d) * hidden**-0.5)
        self.b2 = nn.Parameter(torch.zeros(experts, 1, d))
        self.gate_up = nn.Linear(d, 2 * shared_hidden, bias=False)
        self.down = nn.Linear(shared_hidden, d, bias=False)

    def shared(self, x: Tensor) -> Tensor:
        gate, up = self.gate_up(x).chunk(2, dim=-1)
        return self.down(F.silu(gate) * up)

    def routed(self, x: Tensor, capacity: int) -> Tensor:  # x: (tokens, d)
        scores = torch.softmax(self.router(x).float(), dim=-1)  # (tokens, experts)
        gate, index = torch.topk(scores.t(), capacity, dim=-1)  # (experts, capacity)
        flat = index.reshape(-1)
        xe = x.index_select(0, flat).view(self.experts, capacity, -1)
        h = F.gelu(torch.baddbmm(self.b1, xe, self.w1))
        ye = torch.baddbmm(self.b2, h, self.w2) * gate.unsqueeze(-1).to(x.dtype)
        out = torch.zeros(x.shape, device=x.device, dtype=torch.float32)
        return out.index_add_(0, flat, ye.view(flat.numel(), -1).float())  # fp32 sums


def build(device: torch.device, smoke: bool) -> Built:
    batch, seq, d, experts, hidden, shared_hidden = (
        (2, 8, 16, 4, 32, 32) if smoke else (16, 64, 512, 8, 1024, 2048)
    )
    tokens = batch * seq
    capacity = 2 * tokens // experts
    dtype = low_precision(device)
    cuda = device.type == "cuda"
    model = ExpertChoiceMoE(d, experts, hidden, shared_hidden).to(device=device, dtype=dtype)
    model = model.eval()
    side = torch.cuda.Stream(device) if cuda else None

    @torch.no_grad()
    def step(hidden_states: Tensor) -> Tensor:
        x = hidden_states.view(tokens, d)
        if side is None:
            shared = model.shared(x)
            routed = model.routed(x, capacity)
        else:
            current = torch.cuda.current_stream(device)
            side.wait_stream(current)
            with torch.cuda.stream(side):
                shared = model.shared(x)
            routed = model.routed(x, capacity)
            current.wait_stream(side)
            if not torch.cuda.is_current_stream_capturing():
                shared.record_stream(current)
        return (routed + x.float() + shared.float()).to(x.dtype).view_as(hidden_states)

    inputs = [(torch.randn(batch, seq, d, device=device, dtype=dtype),) for _ in range(2)]
    description = (
        f"expert-choice MoE, {experts} experts x {capacity} tokens + shared expert on a side "
        f"stream, {tokens} tokens"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
