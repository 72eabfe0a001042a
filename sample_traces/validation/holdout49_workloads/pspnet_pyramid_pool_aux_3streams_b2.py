"""PSPNet's head (Zhao et al., 2017) on the features of a dilated ResNet-50 for 2 images of 512
x 512, its pyramid pooling split over two side streams and the auxiliary FCN head on a third
(forty-ninth hold-out: pyramid scene parsing, branches of tiny grids beside a large
convolution): the backbone is not run; its stage-4 features, (2, 2048, 64, 64), and stage-3
features, (2, 1024, 64, 64), are the inputs (output stride 8). The pyramid pooling module, as
the authors' PyTorch PSPNet writes it, has four bins, 1, 2, 3 and 6: per bin an
``AdaptiveAvgPool2d(bin)`` of the stage-4 features, ``Conv2d(2048, 512, 1, bias=False)`` +
BatchNorm + ReLU on the bin x bin map (GEMMs of 2 to 72 rows) and a bilinear ``F.interpolate``
back to 64 x 64 (``align_corners=True``). Side stream 1 runs bins 1 and 2, side stream 2 bins 3
and 6: short chains, per bin a read of the 34 MB map, a GEMM of a handful of thread blocks and
an 8 MB bilinear write. Side stream 3 runs the auxiliary head on the stage-3 features:
``Conv2d(1024, 256, 3, padding 1, bias=False)`` + BatchNorm + ReLU (19 GMAC) and ``Conv2d(256,
150, 1)`` to ADE20K's 150 classes. After the join, on the current stream: the stage-4 features
and the four pooled maps concatenated (4,096 channels), the bottleneck ``Conv2d(4096, 512, 3,
padding 1, bias=False)`` + BatchNorm + ReLU (155 GMAC), ``Conv2d(512, 150, 1)`` and a bilinear
upsampling by 8 to 512 x 512 (``align_corners=True``). Dropout is a no-op in eval mode and left
out. bf16 on a GPU, channels-last, eval mode with running batch-norm statistics set at build, no
gradients. Fork and join are the project's ``fork_join`` (``wait_stream``, and ``record_stream``
on the branch outputs outside capture). Inputs: the stage-4 and stage-3 features, (2, 2048, 64,
64) and (2, 1024, 64, 64), channels-last. Returns the main logits (2, 150, 512, 512) and the
auxiliary logits (2, 150, 64, 64).

    traceinspect profile pspnet_pyramid_pool_aux_3streams_b2.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _blocks import conv_bn_relu
from _common import Built, low_precision, main
from _models import random_batch_norm_stats
from _streams import fork_join, side_streams
from torch import Tensor, nn

BINS, UPSAMPLE = (1, 2, 3, 6), 8
STREAM_BINS = ((0, 1), (2, 3))  # the bins (by index) each pooling side stream runs


def pool_stage(cin: int, cout: int, bins: int) -> nn.Sequential:
    return nn.Sequential(nn.AdaptiveAvgPool2d(bins), conv_bn_relu(cin, cout, kernel=1))


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, side, c4, c3, mid, aux_mid, classes = 1, 12, 32, 16, 8, 8, 5
    else:
        batch, side, c4, c3, mid, aux_mid, classes = 2, 64, 2048, 1024, 512, 256, 150
    dtype = low_precision(device)
    fmt = torch.channels_last
    stages = nn.ModuleList(pool_stage(c4, mid, b) for b in BINS)
    bottleneck = nn.Sequential(conv_bn_relu(c4 + len(BINS) * mid, mid), nn.Conv2d(mid, classes, 1))
    aux = nn.Sequential(conv_bn_relu(c3, aux_mid), nn.Conv2d(aux_mid, classes, 1))
    head = nn.ModuleList([stages, bottleneck, aux])
    random_batch_norm_stats(head)
    head = head.to(device=device, dtype=dtype, memory_format=fmt).eval()
    streams = side_streams(device, 3)

    def pyramid(which: tuple[int, ...], x: Tensor) -> tuple[Tensor, ...]:
        return tuple(
            F.interpolate(stages[i](x), size=(side, side), mode="bilinear", align_corners=True)
            for i in which
        )

    @torch.no_grad()
    def step(c4_feats: Tensor, c3_feats: Tensor) -> tuple[Tensor, Tensor]:
        low, high, aux_logits = fork_join(
            device,
            streams,
            [
                lambda: pyramid(STREAM_BINS[0], c4_feats),
                lambda: pyramid(STREAM_BINS[1], c4_feats),
                lambda: aux(c3_feats),
            ],
        )
        feats = torch.cat([c4_feats, *low, *high], dim=1)
        logits = F.interpolate(
            bottleneck(feats), scale_factor=UPSAMPLE, mode="bilinear", align_corners=True
        )
        return logits, aux_logits

    inputs = [
        tuple(
            torch.randn(batch, c, side, side, device=device, dtype=dtype).to(memory_format=fmt)
            for c in (c4, c3)
        )
        for _ in range(2)
    ]
    description = (
        f"PSPNet head, pyramid pooling bins {BINS} from {c4}x{side}x{side}, aux head from "
        f"{c3} channels, {classes} classes, b{batch}, 3 side streams"
    )
    return Built(step, inputs, description, [head])


if __name__ == "__main__":
    main(build, __doc__)
