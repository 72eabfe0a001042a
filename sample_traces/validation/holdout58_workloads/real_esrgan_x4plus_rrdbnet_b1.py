"""Real-ESRGAN (Wang et al., 2021) upscaling one 96 x 96 image four times with its RRDBNet
generator, ``RealESRGAN_x4plus`` (fifty-eighth hold-out: one stream of some 1450 kernels in fp16,
the body's 23 residual-in-residual dense blocks, 345 cuDNN 3 x 3 convolutions at 96 x 96 of 64 to
192 input channels and 32 or 64 output channels, 0.3 to 2 GFLOP each, each with its bias add, each
dense layer's input a concatenation, LeakyReLUs and the scaled residual adds over 1 to 3.5 MB maps,
then the upsampling convolutions at 192 x 192 and 384 x 384, 2.7 to 11 GFLOP each, over maps of up
to 19 MB, some 330 GFLOP in all: convolution-bound, with a long chain of small kernels). Laid out as
xinntao/Real-ESRGAN's ``inference_realesrgan.py`` runs ``RealESRGAN_x4plus``: basicsr's
``RRDBNet(num_in_ch=3, num_out_ch=3, num_feat=64, num_block=23, num_grow_ch=32, scale=4)``:
``conv_first`` 3 -> 64; the body, 23 ``RRDB``s of 3 ``ResidualDenseBlock``s (``conv1`` to ``conv5``,
3 x 3, each on the block input concatenated with the earlier outputs, 64 + 32 i -> 32 with
LeakyReLU(0.2) for the first four, 192 -> 64 for the fifth, x5 times 0.2 plus the input), each
RRDB's output times 0.2 plus its input; ``conv_body`` and the long residual; two nearest x2
upsamplings each followed by a 3 x 3 convolution of 64 and LeakyReLU; ``conv_hr``, LeakyReLU,
``conv_last`` 64 -> 3. Around it, ``RealESRGANer.enhance``'s pre- and post-processing, done here on
the GPU, with no tiling and no pre-padding (``tile`` 0, ``pre_pad`` 0, the defaults of the inference
script): the image (uint8 RGB, as the BGR-to-RGB conversion leaves it) to [0, 1] and channels first,
the model, the output clamped to [0, 1], scaled to 255, rounded and to uint8 channels last. fp16 on
a GPU, weights included (``RealESRGANer(half=True)``, the script's default; fp32 on a CPU), eval, no
gradients, random weights (basicsr's ``default_init_weights``: Kaiming-normal scaled by 0.1, zero
biases). Input (two input sets): the image (1, 96, 96, 3) uint8, uniform. Returns the upscaled image
(1, 384, 384, 3) uint8.

    traceinspect profile real_esrgan_x4plus_rrdbnet_b1.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn


def default_init_weights(module: nn.Module, scale: float = 0.1) -> None:
    for m in module.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight)
            m.weight.data *= scale
            if m.bias is not None:
                m.bias.data.fill_(0)


class ResidualDenseBlock(nn.Module):
    def __init__(self, num_feat: int, num_grow_ch: int) -> None:
        super().__init__()
        self.convs = nn.ModuleList(
            nn.Conv2d(num_feat + i * num_grow_ch, num_grow_ch, 3, 1, 1) for i in range(4)
        )
        self.conv5 = nn.Conv2d(num_feat + 4 * num_grow_ch, num_feat, 3, 1, 1)
        self.lrelu = nn.LeakyReLU(negative_slope=0.2, inplace=True)
        default_init_weights(self, 0.1)

    def forward(self, x: Tensor) -> Tensor:
        feats = [x]
        for conv in self.convs:
            feats.append(self.lrelu(conv(torch.cat(feats, 1) if len(feats) > 1 else x)))
        x5 = self.conv5(torch.cat(feats, 1))
        return x5 * 0.2 + x


class RRDB(nn.Module):
    def __init__(self, num_feat: int, num_grow_ch: int) -> None:
        super().__init__()
        self.rdb1 = ResidualDenseBlock(num_feat, num_grow_ch)
        self.rdb2 = ResidualDenseBlock(num_feat, num_grow_ch)
        self.rdb3 = ResidualDenseBlock(num_feat, num_grow_ch)

    def forward(self, x: Tensor) -> Tensor:
        return self.rdb3(self.rdb2(self.rdb1(x))) * 0.2 + x


class RRDBNet(nn.Module):
    def __init__(self, num_feat: int, num_block: int, num_grow_ch: int) -> None:
        super().__init__()
        self.conv_first = nn.Conv2d(3, num_feat, 3, 1, 1)
        self.body = nn.Sequential(*(RRDB(num_feat, num_grow_ch) for _ in range(num_block)))
        self.conv_body = nn.Conv2d(num_feat, num_feat, 3, 1, 1)
        self.conv_up1 = nn.Conv2d(num_feat, num_feat, 3, 1, 1)
        self.conv_up2 = nn.Conv2d(num_feat, num_feat, 3, 1, 1)
        self.conv_hr = nn.Conv2d(num_feat, num_feat, 3, 1, 1)
        self.conv_last = nn.Conv2d(num_feat, 3, 3, 1, 1)
        self.lrelu = nn.LeakyReLU(negative_slope=0.2, inplace=True)

    def forward(self, x: Tensor) -> Tensor:
        feat = self.conv_first(x)
        feat = feat + self.conv_body(self.body(feat))
        feat = self.lrelu(self.conv_up1(F.interpolate(feat, scale_factor=2, mode="nearest")))
        feat = self.lrelu(self.conv_up2(F.interpolate(feat, scale_factor=2, mode="nearest")))
        return self.conv_last(self.lrelu(self.conv_hr(feat)))


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, size, num_feat, num_block, num_grow_ch = 1, 16, 8, 2, 4
    else:
        batch, size, num_feat, num_block, num_grow_ch = 1, 96, 64, 23, 32
    dtype = torch.float16 if device.type == "cuda" else torch.float32
    model = RRDBNet(num_feat, num_block, num_grow_ch).to(device=device, dtype=dtype).eval()

    @torch.no_grad()
    def step(image: Tensor) -> Tensor:
        img = (image.permute(0, 3, 1, 2).to(dtype) / 255.0).contiguous()
        output = model(img).clamp_(0, 1)
        return (output * 255.0).round().to(torch.uint8).permute(0, 2, 3, 1).contiguous()

    inputs = [
        (torch.randint(0, 256, (batch, size, size, 3), device=device, dtype=torch.uint8),)
        for _ in range(2)
    ]
    precision = str(dtype).removeprefix("torch.")
    description = (
        f"Real-ESRGAN x4plus RRDBNet ({num_block} RRDBs, {num_feat} features, grow "
        f"{num_grow_ch}) on a {size}x{size} image to {4 * size}x{4 * size}, b{batch}, {precision}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
