"""NAFNet (Chen, Chu, Zhang and Sun, ECCV 2022, "Simple Baselines for Image Restoration": a U-Net of
nonlinear-activation-free blocks, each a LayerNorm, a 1 x 1 and a depthwise 3 x 3 convolution,
SimpleGate (the product of the two channel halves) in place of an activation, simplified channel
attention and a gated FFN) denoising 4 SIDD sRGB crops of 256 x 256, as its SIDD validation runs
them (sixty-sixth hold-out: one stream, fp16, channels-last, width 32 with one block per encoder and
decoder level and 2 middle blocks, 10 NAFBlocks in all: the pad to a multiple of 16 (none here, a
copy); ``Conv2d(3, 32, 3)``; 4 encoder levels of a NAFBlock and a 2 x 2 stride-2 convolution
doubling the channels (32 to 512, 256 x 256 to 16 x 16); 2 middle NAFBlocks at 512 channels; 4
decoder levels of a 1 x 1 convolution doubling the channels, ``PixelShuffle(2)``, the add of the
encoder's skip and a NAFBlock; ``Conv2d(32, 3, 3)`` and the global residual add of the input. Each
NAFBlock: LayerNorm2d written out over the channels (mean, subtract, square, mean, add eps, sqrt,
divide, scale and shift: some 10 elementwise and reduction kernels), the 1 x 1 convolution to 2 c,
the depthwise 3 x 3, SimpleGate (``chunk`` and product), the simplified channel attention (the
global pool, a 1 x 1 convolution with bias, the product), the 1 x 1 convolution back to c, the
residual add scaled by the learned beta; then the second LayerNorm2d, the FFN's 1 x 1 convolution to
2 c, SimpleGate, the 1 x 1 convolution back, the residual add scaled by gamma; some 400 kernels,
most of them memory-bound elementwise passes over the (4, 32..64, 256, 256) maps of 17 to 34 MB at
the first level, 43 GFLOP in all, some 1 to 3 ms of GPU time). Laid out as megvii-research/NAFNet's
``basicsr/models/archs/NAFNet_arch.py`` (``NAFNet``: ``intro``, ``encoders`` and ``downs``
``Conv2d(chan, 2 chan, 2, 2)``, ``middle_blks``, ``ups`` ``Conv2d(chan, 2 chan, 1, bias=False)`` +
``PixelShuffle(2)``, ``decoders``, ``ending``, ``check_image_size``'s ``F.pad`` and the crop back;
``NAFBlock`` with ``DW_Expand 2, FFN_Expand 2``, ``SimpleGate``, ``sca`` as ``AdaptiveAvgPool2d(1)``
and ``Conv2d(c, c, 1)``, ``beta`` and ``gamma`` of shape (1, c, 1, 1), dropout off;
``LayerNorm2d``'s ``LayerNormFunction`` forward with eps 1e-6) with ``img_channel 3, width 32`` as
its SIDD configuration (``options/test/SIDD/NAFNet-width32.yml``), but with ``enc_blk_nums [1, 1, 1,
1], middle_blk_num 2, dec_blk_nums [1, 1, 1, 1]`` instead of that file's ``[2, 2, 4, 8]``, 12 and
``[2, 2, 2, 2]`` (36 blocks) to keep the step a few milliseconds. beta and gamma, zero-initialised
in the reference (each block then the identity until trained), are drawn normal with std 0.1 here so
every branch reaches the output. fp16 weights and activations, channels-last, on a GPU (fp32 on a
CPU), eval, no gradients, random weights (torch's defaults otherwise). Inputs (two input sets): the
noisy crops (4, 3, 256, 256) fp16, uniform in [0, 1], channels-last. Returns the restored crops (4,
3, 256, 256).

    traceinspect profile nafnet_width32_sidd_denoise_simplegate_sca_fp16_channels_last_one_stream_b4.py
"""  # noqa: E501 - the profile line: the file name is long

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn

WIDTH, ENC_BLKS, MIDDLE_BLKS, DEC_BLKS, EPS = 32, (1, 1, 1, 1), 2, (1, 1, 1, 1), 1e-6


class LayerNorm2d(nn.Module):
    """NAFNet's ``LayerNorm2d``: ``LayerNormFunction.forward`` over the channel dimension."""

    def __init__(self, channels: int, eps: float = EPS) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(channels))
        self.bias = nn.Parameter(torch.zeros(channels))
        self.eps = eps

    def forward(self, x: Tensor) -> Tensor:
        c = x.shape[1]
        mu = x.mean(1, keepdim=True)
        var = (x - mu).pow(2).mean(1, keepdim=True)
        y = (x - mu) / (var + self.eps).sqrt()
        return self.weight.view(1, c, 1, 1) * y + self.bias.view(1, c, 1, 1)


class SimpleGate(nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        x1, x2 = x.chunk(2, dim=1)
        return x1 * x2


class NAFBlock(nn.Module):
    def __init__(self, c: int, dw_expand: int = 2, ffn_expand: int = 2) -> None:
        super().__init__()
        dw_channel = c * dw_expand
        self.conv1 = nn.Conv2d(c, dw_channel, 1, padding=0, stride=1, groups=1, bias=True)
        self.conv2 = nn.Conv2d(
            dw_channel, dw_channel, 3, padding=1, stride=1, groups=dw_channel, bias=True
        )
        self.conv3 = nn.Conv2d(dw_channel // 2, c, 1, padding=0, stride=1, groups=1, bias=True)
        self.sca = nn.Sequential(
            nn.AdaptiveAvgPool2d(1),
            nn.Conv2d(dw_channel // 2, dw_channel // 2, 1, padding=0, stride=1, bias=True),
        )
        self.sg = SimpleGate()
        ffn_channel = ffn_expand * c
        self.conv4 = nn.Conv2d(c, ffn_channel, 1, padding=0, stride=1, groups=1, bias=True)
        self.conv5 = nn.Conv2d(ffn_channel // 2, c, 1, padding=0, stride=1, groups=1, bias=True)
        self.norm1 = LayerNorm2d(c)
        self.norm2 = LayerNorm2d(c)
        self.beta = nn.Parameter(torch.zeros((1, c, 1, 1)))
        self.gamma = nn.Parameter(torch.zeros((1, c, 1, 1)))

    def forward(self, inp: Tensor) -> Tensor:
        x = self.norm1(inp)
        x = self.conv2(self.conv1(x))
        x = self.sg(x)
        x = x * self.sca(x)
        x = self.conv3(x)
        y = inp + x * self.beta
        x = self.conv5(self.sg(self.conv4(self.norm2(y))))
        return y + x * self.gamma


class NAFNet(nn.Module):
    def __init__(
        self,
        img_channel: int,
        width: int,
        middle_blk_num: int,
        enc_blk_nums: tuple[int, ...],
        dec_blk_nums: tuple[int, ...],
    ) -> None:
        super().__init__()
        self.intro = nn.Conv2d(img_channel, width, 3, padding=1, stride=1, groups=1, bias=True)
        self.ending = nn.Conv2d(width, img_channel, 3, padding=1, stride=1, groups=1, bias=True)
        self.encoders, self.decoders = nn.ModuleList(), nn.ModuleList()
        self.ups, self.downs = nn.ModuleList(), nn.ModuleList()
        chan = width
        for num in enc_blk_nums:
            self.encoders.append(nn.Sequential(*[NAFBlock(chan) for _ in range(num)]))
            self.downs.append(nn.Conv2d(chan, 2 * chan, 2, 2))
            chan = chan * 2
        self.middle_blks = nn.Sequential(*[NAFBlock(chan) for _ in range(middle_blk_num)])
        for num in dec_blk_nums:
            self.ups.append(
                nn.Sequential(nn.Conv2d(chan, chan * 2, 1, bias=False), nn.PixelShuffle(2))
            )
            chan = chan // 2
            self.decoders.append(nn.Sequential(*[NAFBlock(chan) for _ in range(num)]))
        self.padder_size = 2 ** len(self.encoders)

    def check_image_size(self, x: Tensor) -> Tensor:
        _, _, h, w = x.shape
        mod_pad_h = (self.padder_size - h % self.padder_size) % self.padder_size
        mod_pad_w = (self.padder_size - w % self.padder_size) % self.padder_size
        return F.pad(x, (0, mod_pad_w, 0, mod_pad_h))

    def forward(self, inp: Tensor) -> Tensor:
        _, _, h, w = inp.shape
        inp = self.check_image_size(inp)
        x = self.intro(inp)
        encs = []
        for encoder, down in zip(self.encoders, self.downs, strict=True):
            x = encoder(x)
            encs.append(x)
            x = down(x)
        x = self.middle_blks(x)
        for decoder, up, enc_skip in zip(self.decoders, self.ups, encs[::-1], strict=True):
            x = up(x)
            x = x + enc_skip
            x = decoder(x)
        x = self.ending(x)
        x = x + inp
        return x[:, :, :h, :w]


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, image, width, enc, middle, dec = 2, 32, 8, (1, 1), 1, (1, 1)
    else:
        batch, image, width, enc, middle, dec = 4, 256, WIDTH, ENC_BLKS, MIDDLE_BLKS, DEC_BLKS
    dtype = torch.float16 if device.type == "cuda" else torch.float32
    model = NAFNet(3, width, middle, enc, dec)
    for m in model.modules():
        if isinstance(m, NAFBlock):
            nn.init.normal_(m.beta, std=0.1)
            nn.init.normal_(m.gamma, std=0.1)
    model = model.to(device, dtype, memory_format=torch.channels_last).eval()

    @torch.no_grad()
    def step(noisy: Tensor) -> Tensor:
        return model(noisy)

    inputs = [
        (
            torch.rand(batch, 3, image, image, device=device, dtype=dtype).contiguous(
                memory_format=torch.channels_last
            ),
        )
        for _ in range(2)
    ]
    blocks = sum(enc) + middle + sum(dec)
    precision = str(dtype).removeprefix("torch.")
    description = (
        f"NAFNet width {width} SIDD denoise: enc {list(enc)}, middle {middle}, dec {list(dec)} "
        f"({blocks} NAFBlocks), {image} px, {precision} channels-last, one stream, b{batch}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
