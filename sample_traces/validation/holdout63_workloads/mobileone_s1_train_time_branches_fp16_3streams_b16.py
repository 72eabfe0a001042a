"""MobileOne-S1 (Vasu, Gabriel, Zhu, Tuzel and Ranjan, CVPR 2023: an inference-time plain network of
depthwise and pointwise convolutions, trained over-parameterized with parallel conv-BN branches, a 1
x 1 "scale" branch and a BatchNorm skip that are re-parameterized into one convolution for
deployment) classifying 16 ImageNet images at 224 x 224 in its training-time form, as the validation
pass between training epochs runs it (before ``reparameterize_model``), each block's branches on up
to three side streams (sixty-third hold-out: fp16, 43 program fork / joins a step, one per MobileOne
block: on side stream 1 the k x k convolution and its BatchNorm, on side stream 2 the 1 x 1 scale
convolution and its BatchNorm (blocks of kernel 3 only), on side stream 3 the skip BatchNorm (blocks
whose input and output match); after the join the branches' sum and the ReLU on the current stream
(an absent branch adds a 0, which copies, as the repository's forward does); 21 depthwise 3 x 3
blocks and 21 pointwise 1 x 1 blocks after the 3 x 3 / 2 stem block, so each side stream runs 1 to 3
kernels a fork, a few microseconds each (the largest tensor the stem's (16, 64, 112, 112), 26 MB),
some 280 kernels in all, some 0.4 to 1.2 ms of GPU time). Laid out as apple/ml-mobileone's
``MobileOne`` with ``variant="s1"`` (width multipliers (1.5, 1.5, 2.0, 2.5), ``num_conv_branches``
1, no SE; ``stage0 = MobileOneBlock(3, 64, 3, stride 2)``; stages of 2, 8, 10 and 1 blocks of 96,
192, 512 and 1280 channels, each block a depthwise ``MobileOneBlock(c, c, 3, stride, groups c)``
then a pointwise ``MobileOneBlock(c, c', 1)``, the first of each stage at stride 2; ``rbr_conv`` a
conv-BN, ``rbr_scale`` a 1 x 1 conv-BN with the block's stride and groups where the kernel exceeds
1, ``rbr_skip`` a BatchNorm where the input and output channels match at stride 1; the forward as
the repository's, ``out = scale_out + identity_out`` then ``out += conv_out``, then ReLU; the global
average pool and ``Linear(1280, 1000)``). Fork and join are the project's ``fork_join``
(``wait_stream``, and ``record_stream`` on the branch outputs outside capture); a block of two
branches uses the first two side streams. fp16 weights and activations on a GPU (fp32 on a CPU),
eval (BatchNorm on random running statistics), no gradients, random weights (torch's defaults).
Input (two input sets): the images (16, 3, 224, 224) fp16, Gaussian. Returns the logits (16, 1000).

    traceinspect profile mobileone_s1_train_time_branches_fp16_3streams_b16.py
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from _models import random_batch_norm_stats
from _streams import fork_join, side_streams
from torch import Tensor, nn

BLOCKS, WIDTHS, MULTIPLIERS = (2, 8, 10, 1), (64, 128, 256, 512), (1.5, 1.5, 2.0, 2.5)


def conv_bn(cin: int, cout: int, k: int, stride: int, groups: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)
    )


class MobileOneBlock(nn.Module):
    def __init__(self, cin: int, cout: int, k: int, stride: int = 1, groups: int = 1) -> None:
        super().__init__()
        self.rbr_skip = nn.BatchNorm2d(cin) if cout == cin and stride == 1 else None
        self.rbr_scale = conv_bn(cin, cout, 1, stride, groups) if k > 1 else None
        self.rbr_conv = conv_bn(cin, cout, k, stride, groups)

    def forward(self, x: Tensor, device: torch.device, streams: Sequence[torch.cuda.Stream]):
        rbr_scale, rbr_skip = self.rbr_scale, self.rbr_skip
        branches: list[Callable[[], Tensor]] = [lambda: self.rbr_conv(x)]
        if rbr_scale is not None:
            branches.append(lambda: rbr_scale(x))
        if rbr_skip is not None:
            branches.append(lambda: rbr_skip(x))
        outs = fork_join(device, streams[: len(branches)], branches)
        conv_out = outs.pop(0)
        scale_out = outs.pop(0) if rbr_scale is not None else 0
        identity_out = outs.pop(0) if rbr_skip is not None else 0
        out = scale_out + identity_out  # as the repository's forward: a tensor plus 0 copies
        out += conv_out
        return torch.relu(out)


class MobileOne(nn.Module):
    def __init__(
        self,
        blocks: tuple[int, ...],
        widths: tuple[int, ...],
        multipliers: tuple[float, ...],
        classes: int,
    ) -> None:
        super().__init__()
        cin = min(64, int(64 * multipliers[0]))
        layers = [MobileOneBlock(3, cin, 3, 2)]
        for n, width, mult in zip(blocks, widths, multipliers, strict=True):
            cout = int(width * mult)
            for i in range(n):
                stride = 2 if i == 0 else 1
                layers.append(MobileOneBlock(cin, cin, 3, stride, groups=cin))
                layers.append(MobileOneBlock(cin, cout, 1))
                cin = cout
        self.blocks = nn.ModuleList(layers)
        self.linear = nn.Linear(cin, classes)

    def forward(self, x: Tensor, device: torch.device, streams: Sequence[torch.cuda.Stream]):
        for block in self.blocks:
            x = block(x, device, streams)
        return self.linear(x.mean((2, 3)))


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, image, blocks, widths, classes = 2, 32, (1, 2, 1, 1), (8, 8, 16, 16), 10
    else:
        batch, image, blocks, widths, classes = 16, 224, BLOCKS, WIDTHS, 1000
    dtype = torch.float16 if device.type == "cuda" else torch.float32
    model = MobileOne(blocks, widths, MULTIPLIERS, classes)
    random_batch_norm_stats(model)
    model = model.to(device, dtype).eval()
    streams = side_streams(device, 3)

    @torch.no_grad()
    def step(images: Tensor) -> Tensor:
        return model(images, device, streams)

    inputs = [(torch.randn(batch, 3, image, image, device=device, dtype=dtype),) for _ in range(2)]
    precision = str(dtype).removeprefix("torch.")
    description = (
        f"MobileOne-S1 (training-time branches): {len(model.blocks)} blocks, conv / scale / skip "
        f"branches on up to 3 side streams per block, {image} px, {precision}, b{batch}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
