"""Bird-call species tagging with recording metadata, in TF32 (the BirdCLEF layout: a CNN over the
clip's log-mel spectrogram beside an MLP over where and when it was recorded, late fusion), the
CNN on one side stream and the metadata MLP on the other, the multi-label head after the join
(forty-third hold-out): 128 clips of 64 mel bands x 256 frames (about 3 s), 32 metadata
features each, 397 species (BirdCLEF 2021's count), fp32 tensors and weights with TF32 on: this
workload is about TF32 matrix work beside TF32 convolutions, so build() sets
``torch.backends.cuda.matmul.allow_tf32 = True`` (torch's default is off) and
``torch.backends.cudnn.allow_tf32 = True`` (already torch's default for convolutions); eval
mode, no gradients, every BatchNorm in eval mode with running statistics set at build.
Spectrogram branch, on side stream 1: 4 stages of the shared ``_blocks.conv_bn_relu``, each a
stride-2 3 x 3 ``Conv2d`` then a stride-1 one (no bias, + BatchNorm + ReLU), 1 -> 32 (32 x 128),
32 -> 64 (16 x 64), 64 -> 128 (8 x 32), 128 -> 256 (4 x 16), cuDNN's convolutions (some 55
GFLOP); global average pooling to (128, 256). Metadata branch, on side stream 2: the shared
``_blocks.mlp_tower``, ``Linear(32, 2048)`` + ReLU, three ``Linear(2048, 2048)`` + ReLU,
``Linear(2048, 256)`` + ReLU, cuBLAS TF32 GEMMs over the 128 rows (some 3.4 GFLOP). Fork and
join are the project's ``fork_join`` (``wait_stream``, and ``record_stream`` on the branch
outputs outside capture). After the join, on the current stream: the two concatenated, (128,
512), ``Linear(512, 397)`` and the sigmoid, each species' presence probability. On a CPU the
branches run in order. Inputs: the log-mel spectrograms (128, 1, 64, 256) and the metadata
(128, 32), fp32. Returns the species probabilities (128, 397), fp32.

    traceinspect profile birdcall_tf32_spec_cnn_meta_mlp_2streams_b128.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _blocks import conv_bn_relu, mlp_tower
from _common import Built, main
from _models import random_batch_norm_stats
from _streams import fork_join, side_streams
from torch import Tensor, nn

SPECIES, META, META_LAYERS = 397, 32, 3


class SpectrogramCNN(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        widths = (width, 2 * width, 4 * width, 8 * width)
        self.body = nn.Sequential(
            *(
                nn.Sequential(conv_bn_relu(cin, cout, 2), conv_bn_relu(cout, cout))
                for cin, cout in zip((1, *widths[:-1]), widths, strict=True)
            ),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
        )

    def forward(self, spec: Tensor) -> Tensor:
        return self.body(spec)  # (b, 8 width)


def build(device: torch.device, smoke: bool) -> Built:
    batch, mels, frames, width, hidden = (2, 16, 32, 4, 32) if smoke else (128, 64, 256, 32, 2048)
    torch.backends.cuda.matmul.allow_tf32 = True  # the workload: TF32 GEMMs beside TF32 convs
    torch.backends.cudnn.allow_tf32 = True
    cnn = SpectrogramCNN(width)
    meta = mlp_tower([META, hidden, *([hidden] * META_LAYERS), 8 * width], last_act=True)
    head = nn.Linear(16 * width, SPECIES)
    model = nn.ModuleList([cnn, meta, head])
    random_batch_norm_stats(model)
    model = model.to(device).eval()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(spec: Tensor, metadata: Tensor) -> Tensor:
        audio, where = fork_join(device, streams, [lambda: cnn(spec), lambda: meta(metadata)])
        return torch.sigmoid(head(torch.cat([audio, where], dim=1)))

    inputs = [
        (
            torch.randn(batch, 1, mels, frames, device=device),
            torch.randn(batch, META, device=device),
        )
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"bird calls, TF32: 8-conv CNN ({width}-{8 * width} ch) over {mels} x {frames} log-mels "
        f"and {META_LAYERS + 2}-layer metadata MLP {hidden} on 2 side streams + "
        f"{SPECIES}-species sigmoid head, fp32/TF32, b{batch}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
