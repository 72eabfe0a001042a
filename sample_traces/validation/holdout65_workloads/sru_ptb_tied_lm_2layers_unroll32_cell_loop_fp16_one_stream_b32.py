"""The SRU language model (Lei, Zhang, Wang, Dai and Artzi, EMNLP 2018, "Simple Recurrent Units for
Highly Parallelizable Recurrence": every matrix product of a layer done for all time steps at once,
leaving only an elementwise recurrence of the gates and the cell state step by step) scoring a Penn
Treebank chunk of 32 words on each of 32 streams, the cell state carried in and out as truncated
evaluation does, the recurrence written in plain PyTorch ops (sixty-fifth hold-out: one stream,
fp16: the embedding lookup; in each of the 2 SRU layers of 910 the one GEMM of the 1,024 (step,
stream) rows to the candidate, forget and reset pre-activations (910 x 2,730), the gate biases
added, then 32 time steps of 4 small kernels each on (32, 910) tensors: ``addcmul`` of both gates'
pre-activations with the previous cell state times their peephole weights, one sigmoid, ``lerp`` to
the new cell state (x~ + f (c - x~)) and ``lerp`` to the highway output (x + r (c - x)); the stack
of the 32 outputs; the tied 10,000-word output layer (1,024 x 910 x 10,000), the summed
cross-entropy over the words and the loss a word in fp32; some 280 kernels, the 256 of the
recurrence each a few microseconds long, 30 GFLOP in all, some 0.7 to 1.5 ms of GPU time,
launch-bound). Laid out as asappresearch/sru's ``language_model/train_lm.py`` (``Model``: the
embedding, ``SRU(d, d, depth, use_tanh=0)``, the output ``Linear`` tied to the embedding, the
matrices uniform in +-sqrt(3 / d), the highway (reset) gate biases at -3 by ``set_bias``;
``eval_model``'s summed ``CrossEntropyLoss``) with its ``d 910`` but 2 of its 6 layers and an unroll
of 32 for its 35, batch 32 (its training batch), and the layer's recurrence as ``sru/ops.py``'s
``elementwise_recurrence_naive`` computes it (k = 3 with the input as the highway term, scale_x 1,
no activation, no dropout or padding masks in eval) with the two gates' multiply-adds and sigmoids
done together over a (32, 910, 2) view; the peephole weights (``weight_c``) drawn uniform in +-0.5
rather than zero, so the gates read the cell state. fp16 weights, activations and cell states on a
GPU (fp32 on a CPU), the loss in fp32, eval, no gradients, random weights. Inputs (two input sets),
time first: the words (32, 32) int64 and their next words (32, 32) int64, uniform below 10,000, and
the carried cell states (2, 32, 910) fp16, tanh of a Gaussian. Returns the loss a word (a 0-d fp32
tensor) and the new cell states (2, 32, 910).

    traceinspect profile sru_ptb_tied_lm_2layers_unroll32_cell_loop_fp16_one_stream_b32.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn

VOCAB, D, DEPTH, UNROLL, BATCH, HIGHWAY_BIAS = 10_000, 910, 2, 32, 32, -3.0


class SRULayer(nn.Module):
    """One SRU layer, input width = hidden width (k = 3: candidate, forget, reset)."""

    def __init__(self, d: int) -> None:
        super().__init__()
        self.d = d
        self.weight = nn.Parameter(torch.empty(d, d * 3))
        self.weight_c = nn.Parameter(torch.empty(2 * d))  # forget, reset peepholes
        self.bias = nn.Parameter(torch.zeros(2 * d))  # forget, reset biases

    def forward(self, x: Tensor, c: Tensor) -> tuple[Tensor, Tensor]:
        length, batch, d = x.shape
        u = (x.reshape(-1, d) @ self.weight).view(length, batch, d, 3)
        x_tilde = u[..., 0]
        gates_in = u[..., 1:] + self.bias.view(2, d).t()  # (length, batch, d, 2)
        weight_c = self.weight_c.view(2, d).t()  # (d, 2)
        hs = []
        for t in range(length):
            gates = torch.sigmoid(torch.addcmul(gates_in[t], c.unsqueeze(-1), weight_c))
            c = torch.lerp(x_tilde[t], c, gates[..., 0])  # x~ + f (c_prev - x~)
            hs.append(torch.lerp(x[t], c, gates[..., 1]))  # x + r (c - x)
        return torch.stack(hs), c


class SRULanguageModel(nn.Module):
    def __init__(self, vocab: int, d: int, depth: int) -> None:
        super().__init__()
        self.embedding = nn.Embedding(vocab, d)
        self.rnn = nn.ModuleList(SRULayer(d) for _ in range(depth))
        self.output_layer = nn.Linear(d, vocab)
        self.output_layer.weight = self.embedding.weight  # tied
        val_range = (3.0 / d) ** 0.5
        for p in self.parameters():
            if p.dim() > 1:
                nn.init.uniform_(p, -val_range, val_range)
            else:
                nn.init.zeros_(p)
        for layer in self.rnn:
            nn.init.uniform_(layer.weight_c, -0.5, 0.5)
            layer.bias.data[d:] = HIGHWAY_BIAS  # set_bias: the highway (reset) gate

    def forward(self, words: Tensor, c: Tensor) -> tuple[Tensor, Tensor]:
        x = self.embedding(words)
        states = []
        for layer, c0 in zip(self.rnn, c, strict=True):
            x, c_last = layer(x, c0)
            states.append(c_last)
        return self.output_layer(x.reshape(-1, x.shape[-1])), torch.stack(states)


def build(device: torch.device, smoke: bool) -> Built:
    vocab, d, depth, unroll, batch = (
        (50, 16, 2, 4, 3) if smoke else (VOCAB, D, DEPTH, UNROLL, BATCH)
    )
    dtype = torch.float16 if device.type == "cuda" else torch.float32
    model = SRULanguageModel(vocab, d, depth).to(device, dtype).eval()

    @torch.no_grad()
    def step(words: Tensor, targets: Tensor, c: Tensor) -> tuple[Tensor, Tensor]:
        logits, c = model(words, c)
        loss = F.cross_entropy(logits.float(), targets.reshape(-1), reduction="sum")
        return loss / targets.numel(), c

    def chunk() -> tuple[Tensor, ...]:
        return (
            torch.randint(0, vocab, (unroll, batch), device=device),
            torch.randint(0, vocab, (unroll, batch), device=device),
            torch.tanh(torch.randn(depth, batch, d, device=device)).to(dtype),
        )

    inputs = [chunk() for _ in range(2)]
    precision = str(dtype).removeprefix("torch.")
    description = (
        f"SRU LM: {depth} layers of {d}, {unroll} steps x 4 elementwise ops, tied {vocab}-word "
        f"output, {precision}, one stream, b{batch}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
