"""A training step of a word-level LSTM language model with truncated backpropagation through
time (thirty-fifth hold-out), as PyTorch's word_language_model example trains it: 32
sequences of 35 token ids over a 10,000-word vocabulary, fp32 (weights, activations and
gradients; on a GPU cuDNN may use TF32 per torch's default ``cudnn.allow_tf32``).
``nn.Embedding(10000, 512)``, a 2-layer ``nn.LSTM(512, 1024, batch_first=True, dropout=0)``
(cuDNN's fused RNN on a GPU) and an untied decoder ``Linear(1024, 10000)``; the embedding and
decoder weights uniform in [-0.1, 0.1], the decoder bias zero. The step: the LSTM starts
from the hidden state (h, c) the previous chunk left, given as inputs (detached, so the
gradient stops at the chunk boundary: truncated BPTT), the decoder's logits for all
32 x 35 positions, cross-entropy against the next-token targets, ``loss.backward()`` (a
dense gradient for the whole embedding table), ``torch.nn.utils.clip_grad_norm_(params,
0.25, foreach=True)`` (the total norm stays on the device and the gradients are scaled by
min(1, 0.25 / (norm + 1e-6)) with no host sync; no error_if_nonfinite), then
``torch.optim.SGD`` (lr 20, ``foreach=True``, no momentum: no optimizer state, and no
capture check; its update is one ``_foreach_add_`` of the gradients). The gradients are
allocated at build (zeros) and the parameters snapshotted.

Every step first restores the parameters from that snapshot (foreach copies) and zeroes the
gradients in place (``zero_grad(set_to_none=False)``), so a step depends only on its inputs
and replayed losses compare with eager ones. Inputs: tokens (32, 35) long, targets (32, 35)
long, h (2, 32, 1024) and c (2, 32, 1024) fp32. Returns the loss (a 0-d fp32 tensor) and the
new hidden state h, c (2, 32, 1024 each), all detached.

    traceinspect profile lstm_lm_train_tbptt_b32.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn

LAYERS, LR, MAX_NORM, INIT_RANGE = 2, 20.0, 0.25, 0.1


class LSTMLanguageModel(nn.Module):
    def __init__(self, vocab: int, emb: int, hidden: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        self.lstm = nn.LSTM(emb, hidden, LAYERS, batch_first=True, dropout=0.0)
        self.decoder = nn.Linear(hidden, vocab)
        nn.init.uniform_(self.embed.weight, -INIT_RANGE, INIT_RANGE)
        nn.init.uniform_(self.decoder.weight, -INIT_RANGE, INIT_RANGE)
        nn.init.zeros_(self.decoder.bias)

    def forward(self, tokens: Tensor, h: Tensor, c: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        out, (h, c) = self.lstm(self.embed(tokens), (h, c))
        return self.decoder(out), h, c


def build(device: torch.device, smoke: bool) -> Built:
    batch, seq, vocab, emb, hidden = (4, 5, 100, 16, 32) if smoke else (32, 35, 10000, 512, 1024)
    model = LSTMLanguageModel(vocab, emb, hidden).to(device)
    model.train()
    params = list(model.parameters())
    optimizer = torch.optim.SGD(params, lr=LR, foreach=True)
    for p in params:
        p.grad = torch.zeros_like(p)
    snapshot = [p.detach().clone() for p in params]

    def step(tokens: Tensor, targets: Tensor, h: Tensor, c: Tensor) -> tuple[Tensor, ...]:
        with torch.no_grad():
            torch._foreach_copy_(params, snapshot)
        optimizer.zero_grad(set_to_none=False)
        logits, h, c = model(tokens, h, c)
        loss = F.cross_entropy(logits.reshape(-1, vocab), targets.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, MAX_NORM, foreach=True)
        optimizer.step()
        return loss.detach(), h.detach(), c.detach()

    def chunk() -> tuple[Tensor, ...]:
        state = (LAYERS, batch, hidden)
        return (
            torch.randint(0, vocab, (batch, seq), device=device),
            torch.randint(0, vocab, (batch, seq), device=device),
            torch.tanh(torch.randn(state, device=device)) * 0.5,
            torch.tanh(torch.randn(state, device=device)) * 0.5,
        )

    inputs = [chunk() for _ in range(2)]
    description = (
        f"LSTM LM training step (TBPTT), vocab {vocab}, emb {emb}, {LAYERS} x LSTM {hidden}, "
        f"clip_grad_norm_ (foreach) + SGD lr {LR:g} (foreach), b{batch} x {seq}"
    )
    return Built(step, inputs, description, [model, optimizer, snapshot])


if __name__ == "__main__":
    main(build, __doc__)
