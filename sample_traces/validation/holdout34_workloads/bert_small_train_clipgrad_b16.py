"""A mixed-precision training step of a small BERT-style sequence classifier with gradient
clipping (thirty-fourth hold-out): 16 sequences of 128 token ids over a 30,522-word
vocabulary, a token ``nn.Embedding(30522, 512)`` plus a learned position embedding
(128 x 512) and a LayerNorm, 4 post-norm ``nn.TransformerEncoderLayer`` (d_model 512,
8 heads, feed-forward 2048, GELU, dropout 0, batch_first) and a ``Linear(512, 2)``
classifier on the first token's state, all with fp32 weights. The forward and loss run under
``torch.autocast(device_type, dtype=torch.bfloat16)`` (the Linears and attention in bf16 on
casts of the fp32 weights, the loss in fp32): cross-entropy against integer labels,
``loss.backward()`` (a dense gradient for the whole embedding table),
``torch.nn.utils.clip_grad_norm_(params, 1.0, foreach=True)`` (the total norm stays on the
device and the gradients are scaled by min(1, 1 / (norm + 1e-6)) with no host sync; no
error_if_nonfinite), then ``torch.optim.AdamW`` (lr 1e-4, ``foreach=True``,
``capturable=True`` on a GPU so the step counts live there and the step can be graphed;
torch allows capturable only for GPU parameters, so a CPU smoke run uses capturable=False).
The optimizer state is allocated at build by one warm step on zero gradients, then the
parameters and Adam state (exp_avg, exp_avg_sq, step) are snapshotted.

Every step first restores the parameters and Adam state from those snapshots (foreach
copies) and zeroes the gradients in place (``zero_grad(set_to_none=False)``), so a step
depends only on its inputs and replayed losses compare with eager ones. Inputs: tokens
(16, 128) long, labels (16,) long. Returns the loss (a 0-d fp32 tensor, detached).

    traceinspect profile bert_small_train_clipgrad_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn

LAYERS, CLASSES, LR, MAX_NORM = 4, 2, 1e-4, 1.0


class BertClassifier(nn.Module):
    def __init__(self, vocab: int, seq: int, d: int, heads: int, ff: int) -> None:
        super().__init__()
        self.tokens = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(1, seq, d) * 0.02)
        self.norm = nn.LayerNorm(d)
        layer = nn.TransformerEncoderLayer(
            d, heads, ff, dropout=0.0, activation="gelu", batch_first=True
        )
        self.encoder = nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False)
        self.classifier = nn.Linear(d, CLASSES)

    def forward(self, tokens: Tensor) -> Tensor:
        x = self.norm(self.tokens(tokens) + self.pos)
        return self.classifier(self.encoder(x)[:, 0])


def build(device: torch.device, smoke: bool) -> Built:
    batch, seq, vocab, d, heads, ff = (
        (4, 16, 100, 32, 2, 64) if smoke else (16, 128, 30522, 512, 8, 2048)
    )
    model = BertClassifier(vocab, seq, d, heads, ff).to(device)
    model.train()
    params = list(model.parameters())
    capturable = device.type == "cuda"
    optimizer = torch.optim.AdamW(params, lr=LR, foreach=True, capturable=capturable)
    for p in params:
        p.grad = torch.zeros_like(p)
    optimizer.step()  # allocates exp_avg, exp_avg_sq and the step counts
    state = [optimizer.state[p][key] for key in ("exp_avg", "exp_avg_sq", "step") for p in params]
    live = params + state
    snapshot = [t.detach().clone() for t in live]

    def step(tokens: Tensor, labels: Tensor) -> Tensor:
        with torch.no_grad():
            torch._foreach_copy_(live, snapshot)
        optimizer.zero_grad(set_to_none=False)
        with torch.autocast(device.type, dtype=torch.bfloat16):
            loss = F.cross_entropy(model(tokens), labels)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, MAX_NORM, foreach=True)
        optimizer.step()
        return loss.detach()

    inputs = [
        (
            torch.randint(0, vocab, (batch, seq), device=device),
            torch.randint(0, CLASSES, (batch,), device=device),
        )
        for _ in range(2)
    ]
    description = (
        f"autocast bf16 BERT-style training step, {LAYERS} x d{d}, vocab {vocab}, "
        f"clip_grad_norm_ (foreach) + AdamW (foreach{', capturable' if capturable else ''}), "
        f"b{batch} x {seq}"
    )
    return Built(step, inputs, description, [model, optimizer, snapshot])


if __name__ == "__main__":
    main(build, __doc__)
