"""SV2TTS (Jia et al., 2018), the conditioning half of one synthesis request for 8 sentences:
Tacotron 2's text encoder over 64 characters on one side stream, the GE2E speaker encoder (Wan et
al., 2018) embedding each request's reference utterance as 3 overlapping partials of 160 mel frames
on the other, then, after the join, the speaker embedding concatenated to every encoder output and
the attention's memory projection, as the decoder's first step begins (fifty-ninth hold-out: two
concurrent chains of cuDNN work: on side stream 1, in fp16, the embedding, three 5-tap 512 -> 512
convolutions of 1.3 GFLOP each with BatchNorm and ReLU, then a bidirectional cuDNN LSTM of 256 units
a direction over the 64 characters (cuDNN runs the two directions on streams of its own, some 260
small GEMM and cell kernels); on side stream 2, in fp32, a 3-layer cuDNN LSTM of 256 units over 160
frames for 24 partials (cuDNN runs the layers' recurrences on streams of its own, some 960 small
GEMM and cell kernels), the last layer's final hidden state through ``Linear(256, 256)``, ReLU and
an L2 normalization, the partials' mean per request and its normalization; some 1 to 3 ms of GPU
time in all, most of it the speaker encoder's recurrence). Laid out as NVIDIA/tacotron2's
``model.py`` (``Encoder.inference``: ``Embedding(148, 512)``, three ``ConvNorm(512, 512, 5, padding
2)`` + ``BatchNorm1d(512)`` + ReLU (dropout off in eval), ``nn.LSTM(512, 256, batch_first,
bidirectional)`` over all 64 positions, its weights flattened) and CorentinJ/Real-Time-Voice-
Cloning's ``encoder/model.py`` and ``encoder/inference.py`` (``SpeakerEncoder``: ``nn.LSTM(40, 256,
3 layers, batch_first)``, the final hidden state of the last layer, ``Linear(256, 256)``, ``ReLU``,
divided by its L2 norm; ``embed_utterance``: the partials' embeddings averaged and renormalized).
SV2TTS conditions the synthesizer by concatenating the 256-wide speaker embedding to each of the
encoder's outputs; after the join, on the current stream, that concatenation (8, 64, 768) and the
location-sensitive attention's ``memory_layer`` ``Linear(768, 128, bias False)`` (the processed
memory), in fp16. Fork and join are the project's ``fork_join`` (``wait_stream``, and
``record_stream`` on the branch outputs outside capture). Tacotron 2 in fp16 weights and activations
on a GPU, as its fp16 inference runs, the speaker encoder in fp32 as the reference runs it (cuDNN's
TF32 allowed, torch's default) (fp32 throughout on a CPU), eval, no gradients, random weights
(torch's defaults; each BatchNorm's running mean Gaussian x 0.1 and variance uniform in [0.5, 1.5],
set at build). Inputs (two input sets), batch first: the character ids (8, 64) int64, uniform below
148, and the reference partials (24, 160, 40), the 3 partials of each of the 8 requests in order,
log-mel magnitudes (Gaussian) in fp32. Returns the conditioned memory (8, 64, 768) and the processed
memory (8, 64, 128), fp16.

    traceinspect profile sv2tts_tacotron2_encoder_beside_ge2e_lstm_2streams_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

N_SYMBOLS, EMBED, CONV_K, LSTM_UNITS, TEXT_LEN = 148, 512, 5, 256, 64
MEL_CHANNELS, SPK_HIDDEN, SPK_LAYERS, SPK_EMBED, PARTIAL_FRAMES, PARTIALS = 40, 256, 3, 256, 160, 3
ATTENTION_DIM = 128


class TacotronEncoder(nn.Module):
    def __init__(self, n_symbols: int, dim: int) -> None:
        super().__init__()
        self.embedding = nn.Embedding(n_symbols, dim)
        self.convolutions = nn.ModuleList(
            nn.Sequential(nn.Conv1d(dim, dim, CONV_K, padding=CONV_K // 2), nn.BatchNorm1d(dim))
            for _ in range(3)
        )
        self.lstm = nn.LSTM(dim, dim // 2, 1, batch_first=True, bidirectional=True)

    def forward(self, text: Tensor) -> Tensor:
        x = self.embedding(text).transpose(1, 2)
        for conv in self.convolutions:
            x = F.relu(conv(x))  # dropout 0.5, off in eval
        x = x.transpose(1, 2)
        outputs, _ = self.lstm(x)
        return outputs


class SpeakerEncoder(nn.Module):
    def __init__(self, mel_channels: int, hidden: int, layers: int, embed: int) -> None:
        super().__init__()
        self.lstm = nn.LSTM(mel_channels, hidden, layers, batch_first=True)
        self.linear = nn.Linear(hidden, embed)
        self.relu = nn.ReLU()

    def forward(self, utterances: Tensor) -> Tensor:
        _, (hidden, _) = self.lstm(utterances)
        embeds_raw = self.relu(self.linear(hidden[-1]))
        return embeds_raw / (torch.norm(embeds_raw, dim=1, keepdim=True) + 1e-5)


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, text_len, dim, frames, hidden, embed = 2, 12, 32, 20, 16, 16
    else:
        batch, text_len, dim, frames, hidden, embed = 8, TEXT_LEN, EMBED, PARTIAL_FRAMES, 256, 256
    dtype = torch.float16 if device.type == "cuda" else torch.float32
    tacotron = TacotronEncoder(N_SYMBOLS, dim)
    for m in tacotron.modules():
        if isinstance(m, nn.BatchNorm1d):
            m.running_mean.normal_(0, 0.1)
            m.running_var.uniform_(0.5, 1.5)
    tacotron = tacotron.to(device=device, dtype=dtype).eval()
    speaker = SpeakerEncoder(MEL_CHANNELS, hidden, SPK_LAYERS, embed).to(device).eval()
    memory_layer = nn.Linear(dim + embed, ATTENTION_DIM, bias=False).to(device, dtype).eval()
    streams = side_streams(device, 2)

    def embed_utterances(partials: Tensor) -> Tensor:
        partial_embeds = speaker(partials).view(batch, PARTIALS, -1)
        raw = partial_embeds.mean(dim=1)
        return raw / torch.norm(raw, dim=1, keepdim=True)

    @torch.no_grad()
    def step(text: Tensor, partials: Tensor) -> tuple[Tensor, Tensor]:
        encoded, speaker_embed = fork_join(
            device, streams, [lambda: tacotron(text), lambda: embed_utterances(partials)]
        )
        expanded = speaker_embed.to(encoded.dtype).unsqueeze(1).expand(-1, encoded.shape[1], -1)
        memory = torch.cat((encoded, expanded), dim=2)
        return memory, memory_layer(memory)

    def make() -> tuple[Tensor, Tensor]:
        return (
            torch.randint(0, N_SYMBOLS, (batch, text_len), device=device),
            torch.randn(batch * PARTIALS, frames, MEL_CHANNELS, device=device),
        )

    inputs = [make() for _ in range(2)]
    precision = str(dtype).removeprefix("torch.")
    description = (
        f"SV2TTS: Tacotron 2 encoder (3 convs + BiLSTM {dim // 2}, {text_len} chars, {precision}) "
        f"beside the GE2E speaker encoder (3-layer LSTM {hidden}, {batch} x {PARTIALS} partials of "
        f"{frames} frames, fp32) on 2 side streams, concat + memory layer, b{batch}"
    )
    return Built(step, inputs, description, [tacotron, speaker, memory_layer])


if __name__ == "__main__":
    main(build, __doc__)
