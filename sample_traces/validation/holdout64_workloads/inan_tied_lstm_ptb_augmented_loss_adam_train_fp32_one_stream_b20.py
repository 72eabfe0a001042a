"""A training step of the tied-embedding LSTM language model of Inan, Khosravi and Socher (ICLR
2017, "Tying Word Vectors and Word Classifiers: A Loss Framework for Language Modeling": the output
classifier reuses the input embedding matrix, and an augmented loss pulls the prediction toward a
temperature-softened distribution of each target word's embedding similarity to the vocabulary) on
20 Penn Treebank streams of 35 words, truncated backpropagation through time with the hidden state
carried in and out, then Adam (sixty-fourth hold-out: one stream, fp32 with TF32 off for cuDNN and
cuBLAS: the restore of the parameters and the Adam state (foreach copies) and the in-place zeroing
of the gradients; the embedding lookup, the cuDNN 2-layer ``nn.LSTM(650, 650)`` over the 35 steps,
whose layers cuDNN pipelines over streams of its own; the tied decoder's (700 x 650) x (650 x
10,000) GEMM, the cross-entropy; the augmented loss: the targets' embeddings times the embedding
matrix over the temperature (a second such GEMM, held as a target, detached), its softmax, the
log-softmax of the logits over the temperature and the KL divergence, times alpha tau; the backward
(the cuDNN LSTM's backward data and weights, the decoder's two GEMMs, the embedding's backward, a
sort of the word ids and a segmented sum, added into the tied weight's gradient),
``clip_grad_norm_(0.25, foreach=True)`` (the norm kept on the device) and ``torch.optim.Adam`` (lr
1e-3, betas (0.9, 0.999), eps 1e-8, no weight decay, ``foreach=True``, ``capturable=True`` on a GPU
so the step counts live there) over the 10 tensors, 13.3 M values; some 150 kernels beside the
recurrence, some 1.5 to 4 ms of GPU time). Laid out as the paper's "medium" network (2 LSTM layers
of 650 units, a 650-wide embedding tied to the 10,000-word classifier, which keeps its own bias;
bptt 35, batch 20; the augmented loss with temperature tau and weight alpha, its target y~ =
softmax(L e_target / tau) over the tied matrix L) with this set's tau 20 and alpha 0.5, the changes
a replayable step needs and one of substance: Adam in place of the paper's SGD with its step-size
decay; the variational dropouts off (they would make replayed losses differ from eager ones); the
parameters, Adam's moments and its step counts (the state allocated at build by one step on zero
gradients) restored from a snapshot at the start of every step and the gradients zeroed in place
(``zero_grad(set_to_none=False)``), so a step depends only on its inputs and replayed losses compare
with eager ones. fp32 weights, activations and gradients with ``torch.backends.cudnn.allow_tf32``
and ``torch.backends.cuda.matmul.allow_tf32`` both off (set at build; cuDNN's is on by torch's
default), train mode, random weights (the embedding and the LSTM uniform in [-0.05, 0.05] as the
medium network's initialisation, the decoder bias zero). Inputs (two input sets), batch first: the
words (20, 35) int64 and their next words (20, 35) int64, uniform below 10,000, and the carried
hidden state (h, c) (2, 20, 650) each, fp32, tanh of a Gaussian x 0.5. Returns the loss (a 0-d fp32
tensor) and the new hidden state h, c, all detached.

    traceinspect profile inan_tied_lstm_ptb_augmented_loss_adam_train_fp32_one_stream_b20.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn

VOCAB, WIDTH, LAYERS, BPTT, INIT_RANGE = 10_000, 650, 2, 35, 0.05
TAU, ALPHA, LR, MAX_NORM = 20.0, 0.5, 1e-3, 0.25


class TiedLSTMLanguageModel(nn.Module):
    def __init__(self, vocab: int, width: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.lstm = nn.LSTM(width, width, LAYERS, batch_first=True, dropout=0.0)
        self.decoder = nn.Linear(width, vocab)
        for p in (*self.embed.parameters(), *self.lstm.parameters()):
            nn.init.uniform_(p, -INIT_RANGE, INIT_RANGE)
        self.decoder.weight = self.embed.weight  # tied
        nn.init.zeros_(self.decoder.bias)

    def forward(self, words: Tensor, h: Tensor, c: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        out, (h, c) = self.lstm(self.embed(words), (h, c))
        return self.decoder(out), h, c


def augmented_loss(model: TiedLSTMLanguageModel, logits: Tensor, targets: Tensor) -> Tensor:
    """alpha tau KL(y~ || softmax(logits / tau)), y~ = softmax(L L[target] / tau), a target."""
    weight = model.embed.weight
    with torch.no_grad():
        target_dist = torch.softmax(F.embedding(targets, weight) @ weight.t() / TAU, dim=-1)
    log_pred = torch.log_softmax(logits / TAU, dim=-1)
    return ALPHA * TAU * F.kl_div(log_pred, target_dist, reduction="batchmean")


def build(device: torch.device, smoke: bool) -> Built:
    batch, seq, vocab, width = (4, 5, 100, 16) if smoke else (20, BPTT, VOCAB, WIDTH)
    torch.backends.cudnn.allow_tf32 = False  # full fp32 LSTM GEMMs
    torch.backends.cuda.matmul.allow_tf32 = False  # and decoder GEMMs (torch's default)
    model = TiedLSTMLanguageModel(vocab, width).to(device).train()
    params = list(model.parameters())  # the tied weight once
    capturable = device.type == "cuda"
    optimizer = torch.optim.Adam(params, lr=LR, foreach=True, capturable=capturable)
    for p in params:
        p.grad = torch.zeros_like(p)
    optimizer.step()  # allocates exp_avg, exp_avg_sq and the step counts
    state = [optimizer.state[p][key] for key in ("exp_avg", "exp_avg_sq", "step") for p in params]
    live = params + state
    snapshot = [t.detach().clone() for t in live]

    def step(words: Tensor, targets: Tensor, h: Tensor, c: Tensor) -> tuple[Tensor, ...]:
        with torch.no_grad():
            torch._foreach_copy_(live, snapshot)
        optimizer.zero_grad(set_to_none=False)
        logits, h, c = model(words, h, c)
        flat_logits, flat_targets = logits.reshape(-1, vocab), targets.reshape(-1)
        loss = F.cross_entropy(flat_logits, flat_targets)
        loss = loss + augmented_loss(model, flat_logits, flat_targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, MAX_NORM, foreach=True)
        optimizer.step()
        return loss.detach(), h.detach(), c.detach()

    def chunk() -> tuple[Tensor, ...]:
        state_shape = (LAYERS, batch, width)
        return (
            torch.randint(0, vocab, (batch, seq), device=device),
            torch.randint(0, vocab, (batch, seq), device=device),
            torch.tanh(torch.randn(state_shape, device=device)) * 0.5,
            torch.tanh(torch.randn(state_shape, device=device)) * 0.5,
        )

    inputs = [chunk() for _ in range(2)]
    total = sum(p.numel() for p in params)
    description = (
        f"Tied LSTM LM training step (Inan et al.): vocab {vocab}, {LAYERS} x LSTM {width}, "
        f"augmented loss tau {TAU:g}, clip + Adam (foreach{', capturable' if capturable else ''}) "
        f"over {len(params)} tensors ({total} values), fp32 TF32 off, one stream, b{batch} x {seq}"
    )
    return Built(step, inputs, description, [model, optimizer, snapshot])


if __name__ == "__main__":
    main(build, __doc__)
