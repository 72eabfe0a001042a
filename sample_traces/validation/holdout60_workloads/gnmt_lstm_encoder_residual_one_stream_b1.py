"""The GNMT encoder (Wu et al., 2016) encoding one 48-token source sentence for translation at
batch 1, as a latency-bound serving request runs it, and the attention's keys computed once from
its output (sixtieth hold-out: one stream, bf16: the embedding, a bidirectional cuDNN LSTM of 512
units a direction (cuDNN runs the two directions on streams of its own), then the three upper
layers as one ``nn.LSTM(1024, 1024, num_layers 3)`` whose layers cuDNN pipelines over streams of
its own (layer l at step t beside layer l - 1 at step t + 1), some 300 small GEMV-sized GEMM and
cell kernels at batch 1; the residual add and the key projection; some 0.5 to 1.5 ms of GPU time,
launch- and latency-bound throughout). Laid out as NVIDIA/DeepLearningExamples' GNMT v2
``seq2seq/models/encoder.py`` (``ResidualRecurrentEncoder``: ``Embedding(32320, 1024,
padding_idx 0)``; a first ``nn.LSTM`` bidirectional, batch first; then unidirectional layers; 4
layers in all; dropout off in eval) and ``attention.py`` (``BahdanauAttention``'s ``linear_k``,
``Linear(1024, 1024, bias False)``, applied to the encoder's output once per sentence), with two
changes that keep cuDNN's multi-layer path: the first layer is 512 units a direction (its
concatenated output 1024 wide, as in the paper, not the v2 port's 2 x 1024), and the three upper
layers are one 3-layer ``nn.LSTM`` instead of three 1-layer ones, so GNMT's residual connections
(from the third layer up) become one residual add of the stack's input to its output. No packing:
one sentence, no padding. bf16 weights and activations on a GPU (cuDNN takes bf16 RNNs on sm80 and
later; fp32 on a CPU), eval, no gradients, random weights (torch's defaults). Input (two input
sets), batch first: the source token ids (1, 48) int64, uniform in [4, 32320). Returns the encoder
context (1, 48, 1024) and the attention keys (1, 48, 1024), bf16.

    traceinspect profile gnmt_lstm_encoder_residual_one_stream_b1.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn

VOCAB, HIDDEN, SRC_LEN = 32320, 1024, 48


class ResidualRecurrentEncoder(nn.Module):
    def __init__(self, vocab: int, hidden: int) -> None:
        super().__init__()
        self.embedder = nn.Embedding(vocab, hidden, padding_idx=0)
        self.bottom = nn.LSTM(hidden, hidden // 2, 1, batch_first=True, bidirectional=True)
        self.upper = nn.LSTM(hidden, hidden, 3, batch_first=True)

    def forward(self, src: Tensor) -> Tensor:
        x = self.embedder(src)
        x, _ = self.bottom(x)  # (b, t, 2 x hidden / 2)
        y, _ = self.upper(x)
        return y + x


def build(device: torch.device, smoke: bool) -> Built:
    batch, src_len, vocab, hidden = (1, 6, 50, 16) if smoke else (1, SRC_LEN, VOCAB, HIDDEN)
    dtype = low_precision(device)
    encoder = ResidualRecurrentEncoder(vocab, hidden)
    linear_k = nn.Linear(hidden, hidden, bias=False)
    model = nn.ModuleList([encoder, linear_k]).to(device, dtype).eval()

    @torch.no_grad()
    def step(src: Tensor) -> tuple[Tensor, Tensor]:
        context = encoder(src)
        return context, linear_k(context)

    inputs = [(torch.randint(4, vocab, (batch, src_len), device=device),) for _ in range(2)]
    precision = str(dtype).removeprefix("torch.")
    description = (
        f"GNMT encoder: BiLSTM {hidden // 2}x2 + 3-layer LSTM {hidden} (residual) over "
        f"{src_len} tokens + attention keys, {precision}, one stream, b{batch}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
