"""AWD-LSTM (Merity et al., 2018) in its character-level Penn Treebank configuration evaluating 32
streams of text over a 96-character window, the hidden state carried in from the previous window
and out to the next, as its ``evaluate`` loop runs (sixtieth hold-out: one stream, fp32 with TF32
on for cuBLAS and cuDNN: the embedding, a 2-layer ``nn.LSTM(200, 1000)`` whose layers cuDNN
pipelines over streams of its own, then the 1-layer ``nn.LSTM(1000, 200)`` that follows it as a
separate cuDNN call, some 400 small GEMM and cell kernels over 96 + 96 steps of the recurrence;
the tied decoder's GEMM and the cross-entropy; some 1 to 2 ms of GPU time in all, nearly all of it
the recurrence). Laid out as salesforce/awd-lstm-lm's ``model.py`` (``RNNModel('LSTM', ntoken,
ninp 200, nhid 1000, nlayers 3, tie_weights True)``: ``Embedding(ntoken, 200)``, LSTMs of 200 ->
1000, 1000 -> 1000 and 1000 -> 200 units (the last as wide as the embedding, so the decoder can be
tied), time first, ``Linear(200, ntoken)`` with its weight the embedding's) and ``main.py``'s
character-level PTB command (``--emsize 200 --nhid 1000 --nlayers 3``, 50 characters; its bptt of
150 shortened here to a window of 96), with one change that keeps cuDNN's multi-layer path: the
first two layers, of equal width, are one 2-layer ``nn.LSTM`` rather than two 1-layer ones (AWD's
three LSTMs are separate modules because their widths differ and each is wrapped in
``WeightDrop``; in eval the weight drop, the locked dropouts and the embedding dropout are all
off, so the two layers compute the same). The loss is the mean cross-entropy of the next
characters (the ``SplitCrossEntropyLoss`` with no splits, as the character model uses). fp32
weights and activations with ``torch.backends.cuda.matmul.allow_tf32`` and
``torch.backends.cudnn.allow_tf32`` both on (set at build; the former is off by torch's default),
eval, no gradients, random weights (AWD's initialisation: the embedding uniform in [-0.1, 0.1], the
decoder bias zero; the LSTMs torch's defaults). Inputs (two input sets), batch first: the character
ids (32, 96) int64 and their next characters (32, 96) int64, uniform below 50, and the carried
hidden state of the first two layers (h, c) (2, 32, 1000) and of the third (h, c) (1, 32, 200),
Gaussian x 0.1, fp32. Returns the loss (), fp32, and the new hidden state (four tensors).

    traceinspect profile awd_lstm_char_ptb_tied_tf32_one_stream_b32.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn

N_CHARS, EMSIZE, NHID, BPTT = 50, 200, 1000, 96


class AWDLSTM(nn.Module):
    def __init__(self, ntoken: int, ninp: int, nhid: int) -> None:
        super().__init__()
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn01 = nn.LSTM(ninp, nhid, 2)  # AWD's rnns[0] and rnns[1]
        self.rnn2 = nn.LSTM(nhid, ninp, 1)  # rnns[2], as wide as the embedding (tied)
        self.decoder = nn.Linear(ninp, ntoken)
        self.decoder.weight = self.encoder.weight
        self.encoder.weight.data.uniform_(-0.1, 0.1)
        self.decoder.bias.data.zero_()

    def forward(
        self, ids: Tensor, h01: Tensor, c01: Tensor, h2: Tensor, c2: Tensor
    ) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
        emb = self.encoder(ids.t())  # time first
        x, (h01, c01) = self.rnn01(emb, (h01, c01))
        x, (h2, c2) = self.rnn2(x, (h2, c2))
        return self.decoder(x), h01, c01, h2, c2


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, bptt, ntoken, ninp, nhid = 2, 6, 11, 8, 16
    else:
        batch, bptt, ntoken, ninp, nhid = 32, BPTT, N_CHARS, EMSIZE, NHID
    torch.backends.cuda.matmul.allow_tf32 = True  # the workload: TF32 GEMMs
    torch.backends.cudnn.allow_tf32 = True  # and TF32 cuDNN RNN math (torch's default)
    model = AWDLSTM(ntoken, ninp, nhid).to(device).eval()

    @torch.no_grad()
    def step(
        ids: Tensor, targets: Tensor, h01: Tensor, c01: Tensor, h2: Tensor, c2: Tensor
    ) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
        logits, h01, c01, h2, c2 = model(ids, h01, c01, h2, c2)
        loss = F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.t().reshape(-1))
        return loss, h01, c01, h2, c2

    def make() -> tuple[Tensor, ...]:
        return (
            torch.randint(0, ntoken, (batch, bptt), device=device),
            torch.randint(0, ntoken, (batch, bptt), device=device),
            0.1 * torch.randn(2, batch, nhid, device=device),
            0.1 * torch.randn(2, batch, nhid, device=device),
            0.1 * torch.randn(1, batch, ninp, device=device),
            0.1 * torch.randn(1, batch, ninp, device=device),
        )

    inputs = [make() for _ in range(2)]
    description = (
        f"AWD-LSTM char-PTB: 2-layer LSTM {nhid} + LSTM {ninp}, tied decoder {ntoken}, "
        f"{bptt} chars, fp32 TF32 on, one stream, b{batch}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
