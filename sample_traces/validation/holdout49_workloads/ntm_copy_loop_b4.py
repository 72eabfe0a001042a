"""A Neural Turing Machine (Graves, Wayne and Danihelka, 2014) run over 8 time steps of a copy
task for 4 sequences, written as a Python loop of small kernels (forty-ninth hold-out: a
memory-augmented network, content and location addressing of an external memory, some 60
launches per time step, 500 in all, and almost no GPU time), fp32 on purpose (the addressing's
powers and normalizations, at sizes where precision costs nothing), as the common PyTorch NTM
implementation lays it out: a 128 x 20 memory (initialized to 1e-6 everywhere, one copy per
sequence), an ``nn.LSTMCell(9 + 20, 100)`` controller fed the 9-bit input (8 bits and a
delimiter) and the previous read vector, one read head and one write head. One ``Linear(100,
92)`` gives both heads' parameters: per head a key (20, tanh), a strength beta (softplus), an
interpolation gate g (sigmoid), a shift distribution over -1, 0, +1 (softmax) and a sharpening
gamma (1 + softplus); the write head also an erase vector (20, sigmoid) and an add vector (20).
Per head and time step: content weights, the softmax over the 128 slots of beta times the cosine
similarity of the key with each slot (``F.cosine_similarity``, eps 1e-8); the gate's
interpolation with the head's previous weights (``torch.lerp``); the circular shift, a 3-tap
circular convolution (the weights padded by one slot from each end with ``torch.cat``,
``unfold`` and a weighted sum); the sharpening, w^gamma renormalized (+ 1e-16). The read head
then reads the memory (``bmm``); the write head erases and adds, M (1 - w e^T) + w a^T. The
output, ``Linear(100 + 20, 8)`` + sigmoid of the controller state and the new read vector. No
gradients, one stream. Inputs: the input sequences (4, 8, 9) of random bits, fp32. Returns the
outputs (4, 8, 8) and the final memory (4, 128, 20).

    traceinspect profile ntm_copy_loop_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn

BITS, CONTROLLER, MEMORY_INIT = 8, 100, 1e-6


class Head:
    """Splits one head's parameters and applies NTM's addressing."""

    def __init__(self, width: int, write: bool) -> None:
        self.sizes = [width, 1, 1, 3, 1] + ([width, width] if write else [])

    def address(self, memory: Tensor, params: list[Tensor], w_prev: Tensor) -> Tensor:
        key, beta, gate, shift, gamma = params[:5]
        key, beta, gate = torch.tanh(key), F.softplus(beta), torch.sigmoid(gate)
        shift, gamma = torch.softmax(shift, dim=1), 1 + F.softplus(gamma)
        sim = F.cosine_similarity(memory, key[:, None, :], dim=-1, eps=1e-8)
        w = torch.softmax(beta * sim, dim=1)
        w = torch.lerp(w_prev, w, gate)
        padded = torch.cat([w[:, -1:], w, w[:, :1]], dim=1).unfold(1, 3, 1)  # (b, slots, 3)
        w = (padded * shift.flip(1)[:, None, :]).sum(dim=-1)
        w = w.pow(gamma)
        return w / (w.sum(dim=1, keepdim=True) + 1e-16)


def build(device: torch.device, smoke: bool) -> Built:
    batch, steps, slots, width = (2, 3, 16, 6) if smoke else (4, 8, 128, 20)
    read_head, write_head = Head(width, False), Head(width, True)
    n_params = sum(read_head.sizes) + sum(write_head.sizes)
    controller = nn.LSTMCell(BITS + 1 + width, CONTROLLER)
    heads = nn.Linear(CONTROLLER, n_params)
    out = nn.Linear(CONTROLLER + width, BITS)
    model = nn.ModuleList([controller, heads, out]).to(device).eval()
    memory0 = torch.full((batch, slots, width), MEMORY_INIT, device=device)
    zeros_w = torch.zeros(batch, slots, device=device)
    zeros_r = torch.zeros(batch, width, device=device)
    zeros_h = torch.zeros(batch, CONTROLLER, device=device)

    @torch.no_grad()
    def step(seq: Tensor) -> tuple[Tensor, Tensor]:
        memory = memory0.clone()
        h, c, read = zeros_h, zeros_h, zeros_r
        w_read, w_write = zeros_w, zeros_w
        outputs = []
        for t in range(steps):
            h, c = controller(torch.cat([seq[:, t], read], dim=1), (h, c))
            params = heads(h).split(read_head.sizes + write_head.sizes, dim=1)
            r_params, w_params = params[: len(read_head.sizes)], params[len(read_head.sizes) :]
            w_read = read_head.address(memory, list(r_params), w_read)
            read = torch.bmm(w_read[:, None, :], memory).squeeze(1)
            w_write = write_head.address(memory, list(w_params), w_write)
            erase, add = torch.sigmoid(w_params[5]), w_params[6]
            memory = memory * (1 - w_write[:, :, None] * erase[:, None, :])
            memory = memory + w_write[:, :, None] * add[:, None, :]
            outputs.append(torch.sigmoid(out(torch.cat([h, read], dim=1))))
        return torch.stack(outputs, dim=1), memory

    inputs = [
        (torch.randint(0, 2, (batch, steps, BITS + 1), device=device).float(),) for _ in range(2)
    ]
    description = (
        f"Neural Turing Machine, {steps} steps, memory {slots}x{width}, LSTM controller "
        f"{CONTROLLER}, 1 read + 1 write head, fp32, b{batch}"
    )
    return Built(step, inputs, description, [model, memory0])


if __name__ == "__main__":
    main(build, __doc__)
