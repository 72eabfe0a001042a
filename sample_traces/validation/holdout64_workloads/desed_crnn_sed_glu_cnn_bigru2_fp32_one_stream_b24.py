"""The DCASE 2021 Task 4 baseline's CRNN (Turpault, Serizel et al.: sound event detection in
domestic environments, DESED; a GLU-gated CNN over log-mels, then a 2-layer bidirectional GRU,
frame-level and attention-pooled clip-level predictions of 10 event classes) scoring 24 ten-second
clips as its validation pass does (sixty-fourth hold-out: one stream, fp32 with TF32 off for cuDNN
and cuBLAS: the per-clip min-max scaling of the (24, 128, 626) log-mels (two ``amin`` and two
``amax``, the subtract and the divide); 7 cuDNN ``Conv2d(3 x 3)`` of 16, 32, 64, 128, 128, 128 and
128 channels, each followed by an eval BatchNorm, the baseline's GLU (a ``Linear`` over the channels
of the channels-last permute, times the sigmoid of the input) and a 2 x 2, 2 x 2, then five 1 x 2
average pools, from 626 x 128 down to 156 x 1; the squeeze and permute to (24, 156, 128); the cuDNN
``nn.GRU(128, 128, num_layers=2, bidirectional=True)`` over the 156 frames, its two directions and
two layers run by cuDNN on streams of its own, some hundreds of small recurrent GEMM and cell
kernels; the strong head (``Linear(256, 10)``, sigmoid), the attention head (``Linear(256, 10)``,
the softmax over the classes, clamped to [1e-7, 1]) and the weak predictions as the
attention-weighted mean of the strong ones over the frames; the strong and weak binary
cross-entropies against the labels; some 80 kernels beside the recurrence, the largest tensors the
first layer's (24, 16, 626, 128) maps, 123 MB; some 1 to 4 ms of GPU time). Laid out as the
baseline's ``desed_task/nnet/CRNN.py`` and ``CNN.py`` (``CRNN(n_in_channel=1, nclass=10,
attention=True, activation="glu", rnn_type="BGRU", n_RNN_cell=128, n_layers_RNN=2, kernel_size=[3] *
7, padding=[1] * 7, stride=[1] * 7, nb_filters=[16, 32, 64, 128, 128, 128, 128], pooling=[[2, 2],
[2, 2], [1, 2], [1, 2], [1, 2], [1, 2], [1, 2]])``: ``BatchNorm2d(eps=0.001, momentum=0.99)`` after
each convolution, ``nn.AvgPool2d`` pools, the GRU ``batch_first``; dropout off in eval) over the
recipe's features (16 kHz audio, 2048-sample window, hop 256, 128 mels: 626 frames a clip; the
``TorchScaler("instance", "minmax", dims=(1, 2))``), the mel spectrogram and its dB conversion left
to the loader, the median filtering and thresholds of the event decoding left to the host, as the
recipe's post-processing does; the mean-teacher's teacher, which the recipe also scores, left out.
fp32 weights and activations with ``torch.backends.cudnn.allow_tf32`` and
``torch.backends.cuda.matmul.allow_tf32`` both off (set at build; cuDNN's is on by torch's default),
eval, no gradients, random weights (torch's defaults; the BatchNorms on random running statistics).
Inputs (two input sets): the log-mels (24, 128, 626) fp32, Gaussian x 20 - 30, the strong labels
(24, 10, 156) and the weak labels (24, 10) fp32 of 0s and 1s. Returns the strong predictions (24,
10, 156), the weak predictions (24, 10) and the two losses (0-d fp32 tensors).

    traceinspect profile desed_crnn_sed_glu_cnn_bigru2_fp32_one_stream_b24.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from _models import random_batch_norm_stats
from torch import Tensor, nn

MELS, FRAMES, CLASSES, HIDDEN, EPS = 128, 626, 10, 128, 1e-8
FILTERS = (16, 32, 64, 128, 128, 128, 128)
POOLING = ((2, 2), (2, 2), (1, 2), (1, 2), (1, 2), (1, 2), (1, 2))


class GLU(nn.Module):
    """The baseline's GLU: a Linear over the channels, gated by the sigmoid of the input."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.linear = nn.Linear(channels, channels)

    def forward(self, x: Tensor) -> Tensor:
        lin = self.linear(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
        return lin * torch.sigmoid(x)


class CRNN(nn.Module):
    def __init__(self, filters: tuple[int, ...], hidden: int, classes: int) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        cin = 1
        for cout, pool in zip(filters, POOLING, strict=True):
            layers += [
                nn.Conv2d(cin, cout, 3, 1, 1),
                nn.BatchNorm2d(cout, eps=0.001, momentum=0.99),
                GLU(cout),
                nn.AvgPool2d(pool),
            ]
            cin = cout
        self.cnn = nn.Sequential(*layers)
        self.rnn = nn.GRU(cin, hidden, num_layers=2, bidirectional=True, batch_first=True)
        self.dense = nn.Linear(2 * hidden, classes)
        self.dense_softmax = nn.Linear(2 * hidden, classes)

    def forward(self, mels: Tensor) -> tuple[Tensor, Tensor]:
        x = self.cnn(mels.transpose(1, 2).unsqueeze(1))  # (b, c, frames, 1)
        x = x.squeeze(-1).permute(0, 2, 1)  # (b, frames, c)
        x, _ = self.rnn(x)
        strong = torch.sigmoid(self.dense(x))
        sof = torch.softmax(self.dense_softmax(x), dim=-1).clamp(1e-7, 1)
        weak = (strong * sof).sum(1) / sof.sum(1)
        return strong.transpose(1, 2), weak


def minmax_scale(x: Tensor) -> Tensor:
    """TorchScaler("instance", "minmax", dims=(1, 2))."""
    low = torch.amin(torch.amin(x, dim=1, keepdim=True), dim=2, keepdim=True)
    high = torch.amax(torch.amax(x, dim=1, keepdim=True), dim=2, keepdim=True)
    return (x - low) / (high - low + EPS)


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, frames, filters, hidden = 2, 32, (4, 4, 8, 8, 8, 8, 8), 8
    else:
        batch, frames, filters, hidden = 24, FRAMES, FILTERS, HIDDEN
    torch.backends.cudnn.allow_tf32 = False  # full fp32 convolutions and RNN GEMMs
    torch.backends.cuda.matmul.allow_tf32 = False  # and GEMMs (torch's default)
    model = CRNN(filters, hidden, CLASSES)
    random_batch_norm_stats(model)
    model = model.to(device).eval()
    out_frames = frames // 4

    @torch.no_grad()
    def step(mels: Tensor, strong_labels: Tensor, weak_labels: Tensor) -> tuple[Tensor, ...]:
        strong, weak = model(minmax_scale(mels))
        strong_loss = F.binary_cross_entropy(strong, strong_labels)
        weak_loss = F.binary_cross_entropy(weak, weak_labels)
        return strong, weak, strong_loss, weak_loss

    inputs = [
        (
            torch.randn(batch, MELS, frames, device=device) * 20 - 30,
            torch.randint(0, 2, (batch, CLASSES, out_frames), device=device).float(),
            torch.randint(0, 2, (batch, CLASSES), device=device).float(),
        )
        for _ in range(2)
    ]
    description = (
        f"DESED CRNN: 7 conv + GLU {filters}, 2-layer BiGRU {hidden} over {out_frames} frames, "
        f"strong + attention-pooled weak heads, fp32 TF32 off, one stream, b{batch}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
