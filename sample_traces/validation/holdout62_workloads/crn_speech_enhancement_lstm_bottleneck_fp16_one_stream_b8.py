"""The convolutional recurrent network (CRN) for real-time speech enhancement (Tan and Wang,
2018) mapping 8 noisy utterances of 1 s to enhanced magnitude spectra (sixty-second hold-out: one
stream, fp16: the causal convolutional encoder, five ``Conv2d`` layers of kernel 2 x 3 (time x
frequency), stride 1 x 2, 16 to 256 channels, each with BatchNorm and ELU, some 20 small kernels;
the bottleneck ``nn.LSTM(1024, 1024, num_layers 2)`` over the 100 frames, whose two layers cuDNN
pipelines over streams of its own (layer 2 at frame t beside layer 1 at frame t + 1), some 350 to
500 GEMM and cell kernels; then the decoder, five ``ConvTranspose2d`` layers mirroring the encoder,
each fed the previous output concatenated with the encoder's skip connection, BatchNorm and ELU,
the last to one channel and a softplus, some 25 kernels; some 2 to 4 ms of GPU time, most of it
the recurrence). Laid out as the paper's model (161 frequency bins of a 20 ms / 10 ms STFT at 16
kHz; the encoder's frequency axis 161 -> 80 -> 39 -> 19 -> 9 -> 4, so 256 channels x 4 bins = 1024
features a frame into the LSTM; the decoder back to 161 with an output padding of 1 at 39 -> 80)
and haoxiangsnr's reimplementation's causal blocks (``CausalConvBlock``: the convolution padded by
one frame in time and its last frame chomped, so no output sees a later frame;
``CausalTransConvBlock`` likewise chomped). The step is the enhancement pass alone (no loss). fp16
weights and activations on a GPU (fp32 on a CPU), eval (BatchNorm on random running statistics), no
gradients, random weights (torch's defaults). Input (two input sets): the noisy magnitude spectra
(8, 1, 100, 161), |Gaussian|, fp16. Returns the enhanced magnitude spectra (8, 1, 100, 161).

    traceinspect profile crn_speech_enhancement_lstm_bottleneck_fp16_one_stream_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from _models import random_batch_norm_stats
from torch import Tensor, nn

FREQS, FRAMES, CHANNELS, HIDDEN = 161, 100, (16, 32, 64, 128, 256), 1024


class CausalConvBlock(nn.Module):
    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, (2, 3), stride=(1, 2), padding=(1, 0))
        self.norm = nn.BatchNorm2d(cout)

    def forward(self, x: Tensor) -> Tensor:
        return F.elu(self.norm(self.conv(x)[:, :, :-1]))  # chomp the look-ahead frame


class CausalTransConvBlock(nn.Module):
    def __init__(self, cin: int, cout: int, output_padding: int, last: bool = False) -> None:
        super().__init__()
        self.conv = nn.ConvTranspose2d(
            cin, cout, (2, 3), stride=(1, 2), output_padding=(0, output_padding)
        )
        self.norm = nn.Identity() if last else nn.BatchNorm2d(cout)
        self.last = last

    def forward(self, x: Tensor) -> Tensor:
        x = self.norm(self.conv(x)[:, :, :-1])
        return F.softplus(x) if self.last else F.elu(x)


class CRN(nn.Module):
    def __init__(self, channels: tuple[int, ...], freqs: int, hidden: int) -> None:
        super().__init__()
        cins = (1, *channels[:-1])
        self.encoder = nn.ModuleList(
            CausalConvBlock(i, o) for i, o in zip(cins, channels, strict=True)
        )
        bins = freqs
        sizes = []
        for _ in channels:
            sizes.append(bins)
            bins = (bins - 3) // 2 + 1
        self.lstm = nn.LSTM(channels[-1] * bins, hidden, 2, batch_first=True)
        decoder = []
        for k in reversed(range(len(channels))):
            cout = cins[k]
            pad = sizes[k] - ((sizes[k] - 3) // 2 * 2 + 3)  # back to the encoder's width
            decoder.append(CausalTransConvBlock(2 * channels[k], cout, pad, last=k == 0))
        self.decoder = nn.ModuleList(decoder)

    def forward(self, x: Tensor) -> Tensor:
        skips = []
        for block in self.encoder:
            x = block(x)
            skips.append(x)
        b, c, t, f = x.shape
        y, _ = self.lstm(x.permute(0, 2, 1, 3).reshape(b, t, c * f))
        x = y.reshape(b, t, c, f).permute(0, 2, 1, 3)
        for block, skip in zip(self.decoder, reversed(skips), strict=True):
            x = block(torch.cat((x, skip), dim=1))
        return x


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, frames, channels, hidden = 2, 6, (2, 2, 2, 2, 4), 16
    else:
        batch, frames, channels, hidden = 8, FRAMES, CHANNELS, HIDDEN
    dtype = torch.float16 if device.type == "cuda" else torch.float32
    model = CRN(channels, FREQS, hidden)
    random_batch_norm_stats(model)
    model = model.to(device, dtype).eval()

    @torch.no_grad()
    def step(noisy: Tensor) -> Tensor:
        return model(noisy)

    inputs = [
        (torch.randn(batch, 1, frames, FREQS, device=device, dtype=dtype).abs(),) for _ in range(2)
    ]
    precision = str(dtype).removeprefix("torch.")
    description = (
        f"CRN speech enhancement: 5 causal convs {channels} + 2-layer LSTM {hidden} over "
        f"{frames} frames + 5 transposed convs, {precision}, one stream, b{batch}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
