"""A BERT masked-language-model head and its loss (twenty-eighth hold-out): 16 sequences of
128 tokens, 768 channels, bf16 on a GPU; a fixed 15 % of positions (19 per sequence, chosen
at build time, as a static-shape training pipeline pads them) are gathered from the encoder
output (``index_select``), then Linear 768 -> 768, GELU, LayerNorm, the decoder tied to the
30,522-word embedding (``F.linear`` with the embedding's weight) plus a bias, and the
cross-entropy against the masked tokens' labels in fp32, ignoring padded labels (-100).
Also the next-sentence head (pooler Linear + tanh on the first token, Linear 768 -> 2, its
cross-entropy). One stream; the vocabulary GEMM and the 304 x 30,522 softmax dominate.

    traceinspect profile bert_mlm_head_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn


def build(device: torch.device, smoke: bool) -> Built:
    batch, t, d, vocab, masked = (2, 8, 16, 50, 2) if smoke else (16, 128, 768, 30522, 19)
    dtype = low_precision(device)
    embedding = nn.Embedding(vocab, d)
    transform, norm = nn.Linear(d, d), nn.LayerNorm(d)
    pooler, nsp = nn.Linear(d, d), nn.Linear(d, 2)
    bias = nn.Parameter(torch.zeros(vocab))
    model = nn.ModuleList([embedding, transform, norm, pooler, nsp]).to(device, dtype).eval()
    bias.data = bias.data.to(device, dtype)
    g = torch.Generator().manual_seed(1)
    positions = torch.stack([torch.randperm(t, generator=g)[:masked] for _ in range(batch)])
    flat = (positions + torch.arange(batch)[:, None] * t).flatten().to(device)

    @torch.no_grad()
    def step(hidden: Tensor, labels: Tensor, next_label: Tensor) -> Tensor:
        picked = hidden.reshape(-1, d).index_select(0, flat)
        y = norm(F.gelu(transform(picked)))
        logits = F.linear(y, embedding.weight, bias)
        mlm = F.cross_entropy(logits.float(), labels, ignore_index=-100)
        pooled = torch.tanh(pooler(hidden[:, 0]))
        return mlm + F.cross_entropy(nsp(pooled).float(), next_label)

    def labels() -> Tensor:
        out = torch.randint(0, vocab, (batch * masked,), device=device)
        out[:: masked * 2] = -100  # a few padded slots
        return out

    inputs = [
        (
            torch.randn(batch, t, d, device=device, dtype=dtype),
            labels(),
            torch.randint(0, 2, (batch,), device=device),
        )
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"BERT MLM + NSP heads, {masked} of {t} masked, V{vocab}, b{batch}",
        [model, bias],
    )


if __name__ == "__main__":
    main(build, __doc__)
