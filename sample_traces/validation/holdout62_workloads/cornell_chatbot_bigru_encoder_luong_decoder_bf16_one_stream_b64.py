"""The PyTorch chatbot tutorial's sequence-to-sequence model (Inkawhich, after Luong, Pham and
Manning, 2015), trained on the Cornell Movie-Dialogs corpus, computing its masked negative
log-likelihood on 64 query / response pairs, teacher-forced, as its ``train`` function evaluates a
batch with teacher forcing on (sixty-second hold-out: one stream, bf16: the shared embedding, the
encoder's bidirectional ``nn.GRU(500, 500, num_layers 2)`` over the 32 query tokens, which cuDNN
runs as one call, each layer's two directions on streams of its own and the layers in turn, some
250 to 400 small GEMM and GRU cell kernels; the sum of its two directions; then the decoder's
``nn.GRU(500, 500, num_layers 2)`` over the 32 response tokens, started from the encoder's final
hidden state, whose two layers cuDNN pipelines over streams of its own, some 130 to 200 kernels;
the dot-product attention over the 32 encoder outputs (two batched GEMMs around an fp32 softmax),
the concat layer, the output GEMM over the 7,826-word vocabulary, an fp32 softmax and the masked
NLL; some 1.5 to 3.5 ms of GPU time in all, most of it the two recurrences). Laid out as the
tutorial's ``EncoderRNN`` (``nn.GRU(hidden, hidden, n_layers 2, bidirectional True)``, time first,
the outputs' two directions summed) and ``LuongAttnDecoderRNN`` (``attn_model 'dot'``, ``hidden
500``, ``decoder_n_layers 2``; dropout off in eval; the GRU on the embedded previous word, then
``Attn`` on its output, ``concat = Linear(1000, 500)`` + tanh, ``out = Linear(500, 7826)`` +
softmax; the decoder's initial hidden state ``encoder_hidden[:decoder.n_layers]``, as the tutorial
takes it), with three changes for a static graph: the teacher-forced response is run through the
decoder's GRU in one call rather than a word at a time (identical: Luong's attention follows the
recurrence and nothing is fed back); the query is not packed (full-length queries; the tutorial
packs by length, which needs the lengths on the host); and ``maskNLLLoss``'s ``masked_select(mask)
.mean()`` is written as a masked sum over the mask's count (same value, static shapes). Its
``MAX_LENGTH`` of 10 is raised to 32. bf16 weights and activations on a GPU, the GRUs included
(fp32 on a CPU), eval, no gradients, random weights (torch's defaults). Inputs (two input sets),
time first as the tutorial's batches: the query ids (32, 64) int64, uniform in [3, 7826), the
response ids (32, 64) int64, uniform in [3, 7826) up to each response's length and PAD (0) after
it, and the mask (32, 64) bool (lengths uniform in [8, 32]). Returns the loss (), fp32.

    traceinspect profile cornell_chatbot_bigru_encoder_luong_decoder_bf16_one_stream_b64.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn

VOCAB, HIDDEN, LAYERS, MAX_LENGTH = 7826, 500, 2, 32
PAD, SOS = 0, 1


class EncoderRNN(nn.Module):
    def __init__(self, hidden: int, embedding: nn.Embedding) -> None:
        super().__init__()
        self.hidden = hidden
        self.embedding = embedding
        self.gru = nn.GRU(hidden, hidden, LAYERS, bidirectional=True)

    def forward(self, query: Tensor) -> tuple[Tensor, Tensor]:
        outputs, hidden = self.gru(self.embedding(query))
        outputs = outputs[:, :, : self.hidden] + outputs[:, :, self.hidden :]
        return outputs, hidden


class LuongAttnDecoderRNN(nn.Module):
    def __init__(self, hidden: int, vocab: int, embedding: nn.Embedding) -> None:
        super().__init__()
        self.n_layers = LAYERS
        self.embedding = embedding
        self.gru = nn.GRU(hidden, hidden, LAYERS)
        self.concat = nn.Linear(2 * hidden, hidden)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, inputs: Tensor, hidden: Tensor, encoder_outputs: Tensor) -> Tensor:
        rnn_output, _ = self.gru(self.embedding(inputs), hidden)  # (l, b, h)
        # Attn('dot'): score(h_t, h_s) = h_t . h_s, softmax over the source positions
        scores = torch.bmm(rnn_output.transpose(0, 1), encoder_outputs.permute(1, 2, 0))
        attn_weights = torch.softmax(scores.float(), dim=-1).to(rnn_output.dtype)  # (b, l, s)
        context = torch.bmm(attn_weights, encoder_outputs.transpose(0, 1))  # (b, l, h)
        concat_input = torch.cat((rnn_output.transpose(0, 1), context), dim=2)
        concat_output = torch.tanh(self.concat(concat_input))
        return torch.softmax(self.out(concat_output).float(), dim=-1)  # (b, l, vocab)


def build(device: torch.device, smoke: bool) -> Built:
    batch, length, vocab, hidden = (2, 6, 20, 16) if smoke else (64, MAX_LENGTH, VOCAB, HIDDEN)
    dtype = low_precision(device)
    embedding = nn.Embedding(vocab, hidden)
    encoder = EncoderRNN(hidden, embedding)
    decoder = LuongAttnDecoderRNN(hidden, vocab, embedding)
    model = nn.ModuleList([encoder, decoder]).to(device, dtype).eval()

    @torch.no_grad()
    def step(query: Tensor, target: Tensor, mask: Tensor) -> Tensor:
        encoder_outputs, encoder_hidden = encoder(query)
        decoder_hidden = encoder_hidden[: decoder.n_layers]
        sos = torch.full_like(target[:1], SOS)
        decoder_inputs = torch.cat((sos, target[:-1]), dim=0)  # teacher forcing
        probs = decoder(decoder_inputs, decoder_hidden, encoder_outputs)
        cross_entropy = -torch.log(probs.gather(2, target.t().unsqueeze(2)).squeeze(2))
        m = mask.t().float()
        return (cross_entropy * m).sum() / m.sum()

    def make() -> tuple[Tensor, Tensor, Tensor]:
        lengths = torch.randint(min(8, length), length + 1, (batch,), device=device)
        mask = torch.arange(length, device=device).unsqueeze(1) < lengths.unsqueeze(0)
        target = torch.randint(3, vocab, (length, batch), device=device).masked_fill(~mask, PAD)
        return torch.randint(3, vocab, (length, batch), device=device), target, mask

    inputs = [make() for _ in range(2)]
    precision = str(dtype).removeprefix("torch.")
    description = (
        f"Cornell chatbot: BiGRU {hidden} x{LAYERS} encoder + {LAYERS}-layer GRU Luong-dot "
        f"decoder over {length} + {length} tokens, vocab {vocab}, masked NLL, {precision}, "
        f"one stream, b{batch}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
