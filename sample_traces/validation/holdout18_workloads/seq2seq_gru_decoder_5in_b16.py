"""One decoding step of a GRU-cell sequence-to-sequence decoder with additive attention and a
coverage vector (Bahdanau et al., 2015; See et al., 2017, "Get To The Point") for 16
sequences fed five inputs, fp32 (eighteenth hold-out), inference, one step (no loop over
time). Attention over the 40 encoder outputs from the previous hidden state: the encoder
outputs projected (Linear 512->256, no bias: one GEMM over 16 x 40 rows), the hidden state
projected (Linear 512->256), the coverage times a learned 256-vector, the three summed,
tanh, scored by a Linear 256->1, the padded positions masked out (``masked_fill`` with -inf
where the float mask is below 0.5), softmax over the 40 positions, the context a batched
matmul of the weights with the encoder outputs (16 x 512); the coverage loss
sum(min(attention, coverage)) per sequence and the updated coverage (coverage + attention).
Then ``nn.GRUCell(256 + 512, 512)`` on the token embedding concatenated with the context
(two GEMMs and the fused gate kernel) and the output layer, Linear 1024->8000 on the new
hidden state concatenated with the context, and ``log_softmax``. About 22 kernels (six
GEMMs, the batched matmul, the elementwise ops of the scores, the mask, the softmax, two
concatenations, the gate kernel, the log-softmax), the largest the 8000-wide output GEMM
(131 MFLOP, 33 MB of weights): launch-bound. Inputs: the previous token's embedding (16 x
256), the hidden state (16 x 512), the encoder outputs (16 x 40 x 512), the encoder mask
(16 x 40, 1.0 at the valid positions and 0.0 at the padding, each sequence 12 to 40 long)
and the coverage (16 x 40). Returns the log-probabilities (16 x 8000), the new hidden state
(16 x 512), the new coverage (16 x 40) and the coverage loss (16,), all fp32.

    traceinspect profile seq2seq_gru_decoder_5in_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn


class AttnDecoder(nn.Module):
    def __init__(self, embed: int, hidden: int, enc: int, attn: int, vocab: int) -> None:
        super().__init__()
        self.enc_proj = nn.Linear(enc, attn, bias=False)
        self.dec_proj = nn.Linear(hidden, attn)
        self.cov_weight = nn.Parameter(0.1 * torch.randn(attn))
        self.score = nn.Linear(attn, 1, bias=False)
        self.cell = nn.GRUCell(embed + enc, hidden)
        self.out = nn.Linear(hidden + enc, vocab)

    def forward(
        self, emb: Tensor, hidden: Tensor, enc: Tensor, mask: Tensor, coverage: Tensor
    ) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        features = (
            self.enc_proj(enc)
            + self.dec_proj(hidden).unsqueeze(1)
            + coverage.unsqueeze(-1) * self.cov_weight
        )  # (B, L, attn)
        scores = self.score(torch.tanh(features)).squeeze(-1)  # (B, L)
        scores = scores.masked_fill(mask < 0.5, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        context = torch.bmm(weights.unsqueeze(1), enc).squeeze(1)  # (B, enc)
        coverage_loss = torch.minimum(weights, coverage).sum(-1)
        new_hidden = self.cell(torch.cat((emb, context), dim=1), hidden)
        logits = self.out(torch.cat((new_hidden, context), dim=1))
        return torch.log_softmax(logits, dim=-1), new_hidden, coverage + weights, coverage_loss


def build(device: torch.device, smoke: bool) -> Built:
    sizes = (2, 8, 16, 16, 16, 6, 50) if smoke else (16, 256, 512, 512, 256, 40, 8000)
    batch, embed, hidden, enc, attn, length, vocab = sizes
    model = AttnDecoder(embed, hidden, enc, attn, vocab).to(device).eval()

    @torch.no_grad()
    def step(
        emb: Tensor, hidden: Tensor, enc_out: Tensor, mask: Tensor, coverage: Tensor
    ) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        return model(emb, hidden, enc_out, mask, coverage)

    def make() -> tuple[Tensor, ...]:
        lengths = torch.randint(max(1, length * 3 // 10), length + 1, (batch, 1), device=device)
        mask = (torch.arange(length, device=device) < lengths).float()
        # The attention already spent on each position over a few earlier steps.
        coverage = 3 * torch.rand(batch, length, device=device) / length * mask
        return (
            torch.randn(batch, embed, device=device),
            torch.tanh(torch.randn(batch, hidden, device=device)),
            torch.randn(batch, length, enc, device=device),
            mask,
            coverage,
        )

    inputs = [make() for _ in range(2)]
    description = (
        f"seq2seq decoder step, additive attention with coverage over {length} encoder "
        f"outputs ({enc}), GRUCell({embed}+{enc}, {hidden}), output {hidden + enc}-{vocab} + "
        f"log_softmax, 5 inputs, batch {batch}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
