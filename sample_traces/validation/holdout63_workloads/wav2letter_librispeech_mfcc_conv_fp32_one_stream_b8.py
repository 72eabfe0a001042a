"""Wav2Letter (Collobert, Puhrsch and Synnaeve, 2016: an all-convolutional end-to-end speech
recogniser, 11 1-D convolutions from MFCCs to letter scores) transcribing 8 LibriSpeech utterances
of 4 s, greedy best-path decoding of the letter log-probabilities as a validation pass reads them
(sixty-third hold-out: one stream, fp32 with TF32 off for cuDNN and cuBLAS: the strided ``Conv1d(13,
250, 48, stride 2)`` over the 400 MFCC frames, 7 ``Conv1d(250, 250, 7)``, the wide ``Conv1d(250,
2000, 32)``, the 1 x 1 ``Conv1d(2000, 2000)`` and ``Conv1d(2000, 29)``, each followed by a ReLU in
place, over 200 frames; the log-softmax over the letters and the argmax; some 25 to 40 kernels,
nearly all of the time in the eleven fp32 cuDNN convolutions, some 75 GFLOP, the wide kernel-32 one
6.4 GFLOP an utterance; some 1 to 3 ms of GPU time, compute-bound). Laid out as torchaudio's
``Wav2Letter(num_classes=29, input_type="mfcc", num_features=13)`` (the paper's architecture for
MFCC input at 10 ms a frame: ``Conv1d(13, 250, 48, stride 2, padding 23)``, 7 x ``Conv1d(250, 250,
7, padding 3)``, ``Conv1d(250, 2000, 32, padding 16)``, ``Conv1d(2000, 2000, 1)``, ``Conv1d(2000,
29, 1)``, a ReLU after every one, the last included, then ``log_softmax(dim=1)``) as torchaudio's
LibriSpeech recipe (``examples/pipeline_wav2letter``) uses it: 13 MFCCs, 29 classes (the 26 letters,
the space, the apostrophe and the CTC blank); the greedy decoder's argmax over the classes, its
collapse of repeats and blanks (a data-dependent length) left to the host as the recipe's decoder
does. fp32 weights and activations with ``torch.backends.cudnn.allow_tf32`` and
``torch.backends.cuda.matmul.allow_tf32`` both off (set at build; cuDNN's is on by torch's default),
eval, no gradients, random weights (torch's defaults). Input (two input sets): the MFCCs (8, 13,
400) fp32, Gaussian. Returns the log-probabilities (8, 29, 201) fp32 and the best-path labels (8,
201) int64.

    traceinspect profile wav2letter_librispeech_mfcc_conv_fp32_one_stream_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn

FEATURES, CLASSES, FRAMES, WIDTH, WIDE = 13, 29, 400, 250, 2000


def wav2letter(features: int, classes: int, width: int, wide: int) -> nn.Sequential:
    layers: list[nn.Module] = [nn.Conv1d(features, width, 48, 2, 23), nn.ReLU(inplace=True)]
    for _ in range(7):
        layers += [nn.Conv1d(width, width, 7, 1, 3), nn.ReLU(inplace=True)]
    layers += [
        nn.Conv1d(width, wide, 32, 1, 16),
        nn.ReLU(inplace=True),
        nn.Conv1d(wide, wide, 1),
        nn.ReLU(inplace=True),
        nn.Conv1d(wide, classes, 1),
        nn.ReLU(inplace=True),
    ]
    return nn.Sequential(*layers)


def build(device: torch.device, smoke: bool) -> Built:
    batch, frames, width, wide = (2, 64, 16, 32) if smoke else (8, FRAMES, WIDTH, WIDE)
    torch.backends.cudnn.allow_tf32 = False  # full fp32 convolutions
    torch.backends.cuda.matmul.allow_tf32 = False  # and GEMMs (torch's default)
    model = wav2letter(FEATURES, CLASSES, width, wide).to(device).eval()

    @torch.no_grad()
    def step(mfcc: Tensor) -> tuple[Tensor, Tensor]:
        log_probs = torch.log_softmax(model(mfcc), dim=1)
        return log_probs, log_probs.argmax(dim=1)

    inputs = [(torch.randn(batch, FEATURES, frames, device=device),) for _ in range(2)]
    description = (
        f"Wav2Letter: 11 Conv1d ({width} / {wide} channels) over {frames} MFCC frames, "
        f"log-softmax + greedy argmax, fp32 TF32 off, one stream, b{batch}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
