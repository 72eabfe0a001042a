"""Deep Speech 2 (Amodei et al., 2016) transcribing 8 utterances of 1.28 s: the two 2-D
convolutions over the spectrogram, then three bidirectional GRU layers as one cuDNN call, then the
per-frame character distribution (sixtieth hold-out: one stream, fp16: two cuDNN convolutions of
41 x 11 and 21 x 11 taps (32 channels, some 1.5 and 4 GFLOP) with BatchNorm and clipped ReLU, then
``nn.GRU(1312, 512, num_layers 3, bidirectional)`` over 64 frames, which cuDNN runs as one call
whose two directions go to streams of its own, layer after layer (a bidirectional layer needs the
whole of the layer below), some 400 small GEMM and cell kernels in a serial chain of 3 x 64 steps;
then a BatchNorm, the 1024 -> 29 projection and the log-softmax in fp32; some 1 to 2 ms of GPU time
in all, most of it the recurrence). Laid out as SeanNaren/deepspeech.pytorch's ``DeepSpeech``
(``MaskConv``'s ``Conv2d(1, 32, (41, 11), stride (2, 2), padding (20, 5))``, ``BatchNorm2d(32)``,
``Hardtanh(0, 20)``, ``Conv2d(32, 32, (21, 11), stride (2, 1), padding (10, 5))``,
``BatchNorm2d(32)``, ``Hardtanh(0, 20)``; 161 frequency bins -> 81 -> 41, so 32 x 41 = 1312
features a frame; time first into the recurrence; ``SequenceWise(BatchNorm1d(1024), Linear(1024,
29, bias False))``; the inference softmax, here a log-softmax) with the paper's bidirectional GRUs
(3 recurrent layers, as the paper's English models of two convolutions and three to seven
recurrent layers) stacked in one ``nn.GRU`` rather than deepspeech.pytorch's per-layer
``BatchRNN`` (so no sequence-wise BatchNorm between the layers and the directions concatenated, not
summed), every utterance at full length (``MaskConv``'s masking and the packing left out). fp16
weights and activations on a GPU (fp32 on a CPU), the log-softmax in fp32, eval, no gradients,
random weights (torch's defaults; each BatchNorm's running mean Gaussian x 0.1 and variance uniform
in [0.5, 1.5], set at build). Input (two input sets), batch first: the log spectrograms (8, 1, 161,
128) (20 ms windows, 10 ms hop, 16 kHz), Gaussian. Returns the per-frame log-probabilities over the
29 characters (8, 64, 29), fp32.

    traceinspect profile deepspeech2_conv_bigru_one_stream_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn

FREQ_BINS, N_CHARS, RNN_LAYERS = 161, 29, 3


class DeepSpeech2(nn.Module):
    def __init__(self, freq_bins: int, channels: int, hidden: int, layers: int) -> None:
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(1, channels, (41, 11), stride=(2, 2), padding=(20, 5)),
            nn.BatchNorm2d(channels),
            nn.Hardtanh(0, 20, inplace=True),
            nn.Conv2d(channels, channels, (21, 11), stride=(2, 1), padding=(10, 5)),
            nn.BatchNorm2d(channels),
            nn.Hardtanh(0, 20, inplace=True),
        )
        bins = (freq_bins + 2 * 20 - 41) // 2 + 1
        bins = (bins + 2 * 10 - 21) // 2 + 1
        self.rnn = nn.GRU(channels * bins, hidden, layers, bidirectional=True)
        self.fc_norm = nn.BatchNorm1d(2 * hidden)
        self.fc = nn.Linear(2 * hidden, N_CHARS, bias=False)

    def forward(self, spect: Tensor) -> Tensor:
        x = self.conv(spect)  # (b, c, bins, t)
        b, c, f, t = x.shape
        x = x.view(b, c * f, t).permute(2, 0, 1).contiguous()  # time first, (t, b, c * f)
        x, _ = self.rnn(x)
        t, b, h = x.shape
        x = self.fc(self.fc_norm(x.view(t * b, h))).view(t, b, -1)  # SequenceWise
        return x.transpose(0, 1).float().log_softmax(dim=-1)


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, freq_bins, frames, channels, hidden = 2, 41, 16, 4, 16
    else:
        batch, freq_bins, frames, channels, hidden = 8, FREQ_BINS, 128, 32, 512
    dtype = torch.float16 if device.type == "cuda" else torch.float32
    model = DeepSpeech2(freq_bins, channels, hidden, RNN_LAYERS)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm1d | nn.BatchNorm2d):
            m.running_mean.normal_(0, 0.1)
            m.running_var.uniform_(0.5, 1.5)
    model = model.to(device=device, dtype=dtype).eval()

    @torch.no_grad()
    def step(spect: Tensor) -> Tensor:
        return model(spect)

    inputs = [
        (torch.randn(batch, 1, freq_bins, frames, device=device, dtype=dtype),) for _ in range(2)
    ]
    precision = str(dtype).removeprefix("torch.")
    description = (
        f"Deep Speech 2: 2 convs + 3-layer BiGRU {hidden} over {frames // 2} frames + FC "
        f"{N_CHARS}, {precision}, one stream, b{batch}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
