"""Ten autoregressive steps of a Tacotron-2-style decoder with location-sensitive attention
at batch 4 (thirty-fourth hold-out), as NVIDIA's Tacotron 2 decoder runs at inference, in
one step as a Python loop: encoder memory of 120 positions x 512 given, its projection
``Linear(512, 128, bias=False)`` (the processed memory) made once per call. Each decoder
step: the prenet (2 x Linear 256 + ReLU, no dropout in eval) on the previous mel frame (a
zero "go" frame first); the attention ``LSTMCell(256 + 512, 1024)`` on it and the previous
attention context; location-sensitive attention: the query projection ``Linear(1024, 128,
bias=False)``, the location features ``Conv1d(2, 32, 31, padding=15, bias=False)`` over
[previous attention weights, cumulative attention weights] then ``Linear(32, 128,
bias=False)``, the energies ``v(tanh(query + processed memory + location))`` (v a
``Linear(128, 1, bias=False)``), softmax over the 120 positions, the context a ``bmm`` of
the weights with the memory, the weights added to the cumulative ones; the decoder
``LSTMCell(1024 + 512, 1024)`` on [attention hidden, context]; ``Linear(1024 + 512, 80)``
to the mel frame and ``Linear(1024 + 512, 1)`` to the stop gate on [decoder hidden,
context]; the mel frame is fed back. The LSTM states, attention weights and context start
at zero inside the step. fp32, eval mode, no gradients: a few hundred small kernels, the
two LSTM cells' weights read every decoder step. Input: encoder memory (4, 120, 512).
Returns the stacked mel frames (4, 10, 80) and gate logits (4, 10).

    traceinspect profile tacotron_attention_decode_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn

DECODE_STEPS = 10


class LocationAttention(nn.Module):
    def __init__(self, query: int, memory: int, attn: int, filters: int, kernel: int) -> None:
        super().__init__()
        self.query_layer = nn.Linear(query, attn, bias=False)
        self.memory_layer = nn.Linear(memory, attn, bias=False)
        self.v = nn.Linear(attn, 1, bias=False)
        self.location_conv = nn.Conv1d(2, filters, kernel, padding=kernel // 2, bias=False)
        self.location_dense = nn.Linear(filters, attn, bias=False)

    def forward(
        self, query: Tensor, memory: Tensor, processed_memory: Tensor, weights_cat: Tensor
    ) -> tuple[Tensor, Tensor]:
        location = self.location_dense(self.location_conv(weights_cat).transpose(1, 2))
        processed_query = self.query_layer(query).unsqueeze(1)
        energies = self.v(torch.tanh(processed_query + location + processed_memory)).squeeze(2)
        weights = torch.softmax(energies, dim=1)
        context = torch.bmm(weights.unsqueeze(1), memory).squeeze(1)
        return context, weights


class Decoder(nn.Module):
    def __init__(self, mels: int, memory: int, prenet: int, rnn: int, attn: int) -> None:
        super().__init__()
        self.mels, self.rnn = mels, rnn
        self.prenet = nn.Sequential(
            nn.Linear(mels, prenet), nn.ReLU(), nn.Linear(prenet, prenet), nn.ReLU()
        )
        self.attention_rnn = nn.LSTMCell(prenet + memory, rnn)
        self.attention = LocationAttention(rnn, memory, attn, 32, 31)
        self.decoder_rnn = nn.LSTMCell(rnn + memory, rnn)
        self.linear_projection = nn.Linear(rnn + memory, mels)
        self.gate_layer = nn.Linear(rnn + memory, 1)

    def forward(self, memory: Tensor, steps: int) -> tuple[Tensor, Tensor]:
        b, t, d = memory.shape
        processed_memory = self.attention.memory_layer(memory)
        zeros = memory.new_zeros(b, self.rnn)
        att_h, att_c, dec_h, dec_c = zeros, zeros, zeros, zeros
        weights, cumulative = memory.new_zeros(b, t), memory.new_zeros(b, t)
        context = memory.new_zeros(b, d)
        frame = memory.new_zeros(b, self.mels)  # the go frame
        frames, gates = [], []
        for _ in range(steps):
            x = torch.cat([self.prenet(frame), context], dim=1)
            att_h, att_c = self.attention_rnn(x, (att_h, att_c))
            weights_cat = torch.stack([weights, cumulative], dim=1)
            context, weights = self.attention(att_h, memory, processed_memory, weights_cat)
            cumulative = cumulative + weights
            dec_h, dec_c = self.decoder_rnn(torch.cat([att_h, context], dim=1), (dec_h, dec_c))
            out = torch.cat([dec_h, context], dim=1)
            frame = self.linear_projection(out)
            frames.append(frame)
            gates.append(self.gate_layer(out).squeeze(1))
        return torch.stack(frames, dim=1), torch.stack(gates, dim=1)


def build(device: torch.device, smoke: bool) -> Built:
    batch = 4
    positions, mels, memory, prenet, rnn, attn = (
        (12, 8, 16, 16, 32, 8) if smoke else (120, 80, 512, 256, 1024, 128)
    )
    steps = 3 if smoke else DECODE_STEPS
    model = Decoder(mels, memory, prenet, rnn, attn).to(device, torch.float32).eval()

    @torch.no_grad()
    def step(enc: Tensor) -> tuple[Tensor, Tensor]:
        return model(enc, steps)

    inputs = [(torch.randn(batch, positions, memory, device=device),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"Tacotron 2 decoder, location-sensitive attention over {positions} positions, "
        f"LSTMCell {rnn} x 2, {steps} steps, b{batch}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
