"""The first three stages of a two-stream action-recognition network (Simonyan and Zisserman,
2014), the appearance (RGB) stem on one side stream and the motion (stacked optical flow) stem
on the other, BatchNorm in training mode, and the convolutional fusion of Feichtenhofer et al.
(2016) after the join, for 16 clips (fifty-fourth hold-out: two concurrent chains of some 40
kernels each, cuDNN 3x3 convolutions between PyTorch's native training-mode BatchNorm kernels,
``batch_norm_collect_statistics`` (the per-channel mean and variance over 16 x H x W), the
running-statistics update and ``batch_norm_transform_input``, each followed by an in-place ReLU
and over tensors of up to 51 MB, memory-bound and side by side). Each stem is VGG-16-BN's
(torchvision's ``vgg16_bn``: 3x3 convolutions with bias, padding 1, each followed by
``BatchNorm2d`` and ``ReLU(inplace=True)``, a 2x2 max pool closing each stage) first three
stages at half width: 2 convolutions of 32 channels at 224 x 224, 2 of 64 at 112 x 112, 3 of
128 at 56 x 56, pooled to (16, 128, 28, 28). Side stream 1, the RGB stem on one frame (16, 3,
224, 224); side stream 2, the flow stem on 10 stacked optical-flow fields, x and y each (16, 20,
224, 224), as the paper's temporal net reads them. Fork and join are the project's
``fork_join`` (``wait_stream``, and ``record_stream`` on the branch outputs outside capture).
After the join, on the current stream: the two maps concatenated over the channels (16, 256,
28, 28), the fusion ``Conv2d(256, 128, 1)`` + ``BatchNorm2d(128)`` + ReLU, the global average
pool and a ``Linear(128, 101)`` (UCF-101's classes). Every BatchNorm is in training mode (batch
statistics; the running mean and variance updated with the default momentum 0.1 and the batch
count incremented, all in place on the device), run without gradients, as a BatchNorm
statistics re-estimation pass does (fvcore's PreciseBN, ``torch.optim.swa_utils.update_bn``;
here with momentum 0.1, since ``update_bn``'s cumulative average, momentum None, reads the
batch count on the host); the outputs depend on the batch only. NCHW, fp16 on a GPU, weights
and BatchNorm parameters included (a half input with half weights takes PyTorch's native
BatchNorm kernels, not cuDNN's); fp32 on a CPU. Inputs (two input sets): the frames (16, 3,
224, 224) and the flow stacks (16, 20, 224, 224), random. Returns the logits (16, 101), fp32.

    traceinspect profile two_stream_vgg_bn_train_mode_2streams_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

CLASSES, FLOW_FRAMES = 101, 10


def vgg_stem(c_in: int, stages: tuple[tuple[int, int], ...]) -> nn.Sequential:
    """vgg16_bn's features for ``stages`` of (width, convolutions): conv, BN, ReLU, pool."""
    layers: list[nn.Module] = []
    for width, convs in stages:
        for _ in range(convs):
            layers += [
                nn.Conv2d(c_in, width, 3, padding=1),
                nn.BatchNorm2d(width),
                nn.ReLU(inplace=True),
            ]
            c_in = width
        layers.append(nn.MaxPool2d(2, 2))
    return nn.Sequential(*layers)


class TwoStreamStems(nn.Module):
    def __init__(self, stages: tuple[tuple[int, int], ...]) -> None:
        super().__init__()
        width = stages[-1][0]
        self.rgb = vgg_stem(3, stages)
        self.flow = vgg_stem(2 * FLOW_FRAMES, stages)
        self.fusion = nn.Sequential(
            nn.Conv2d(2 * width, width, 1), nn.BatchNorm2d(width), nn.ReLU(inplace=True)
        )
        self.fc = nn.Linear(width, CLASSES)

    def fuse(self, a: Tensor, b: Tensor) -> Tensor:
        x = self.fusion(torch.cat((a, b), dim=1))
        return self.fc(x.mean(dim=(2, 3))).float()


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, size, stages = 2, 32, ((8, 2), (16, 2), (16, 3))
    else:
        batch, size, stages = 16, 224, ((32, 2), (64, 2), (128, 3))
    dtype = torch.float16 if device.type == "cuda" else torch.float32
    model = TwoStreamStems(stages).to(device=device, dtype=dtype).train()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(rgb: Tensor, flow: Tensor) -> Tensor:
        a, b = fork_join(device, streams, [lambda: model.rgb(rgb), lambda: model.flow(flow)])
        return model.fuse(a, b)

    inputs = [
        (
            torch.randn(batch, 3, size, size, device=device, dtype=dtype),
            torch.randn(batch, 2 * FLOW_FRAMES, size, size, device=device, dtype=dtype),
        )
        for _ in range(2)
    ]
    convs = sum(n for _, n in stages)
    widths = "/".join(str(w) for w, _ in stages)
    precision = str(dtype).removeprefix("torch.")
    description = (
        f"two-stream RGB + flow VGG-BN stems ({convs} conv + train-mode BN + ReLU each, widths "
        f"{widths}) on 2 side streams, conv fusion + head {CLASSES}, {precision}, b{batch} at "
        f"{size}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
