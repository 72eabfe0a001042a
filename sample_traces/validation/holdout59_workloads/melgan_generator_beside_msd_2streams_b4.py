"""MelGAN (Kumar et al., 2019) in one forward pass of its training step on 4 segments of 8192
samples: the generator turning their 80-band mel spectrograms into audio on one side stream, the
multi-scale discriminator judging the real segments on the other, then, after the join, the
discriminator on the generated audio and the hinge and feature-matching losses (fifty-ninth
hold-out: in fp16, two concurrent chains of unequal make: on side stream 1 the generator's some 50
weight-normed convolutions (a 7-tap 80 -> 512 input convolution, four transposed-convolution
upsamplings by 8, 8, 2 and 2 to 256, 128, 64 and 32 channels, each followed by three dilated
residual stacks of 3-tap and 1 x 1 convolutions, 1 to 4 GFLOP a stage, over fp16 maps of up to 2 MB)
and some 100 leaky ReLU, reflection-pad and add kernels; on side stream 2 three sub-discriminators
of seven convolutions each, four of them cuDNN grouped 1-D convolutions of 41 taps with groups 4,
16, 64 and 256 (4 input channels a group), which cuDNN splits over eight streams of its own, forked
and joined inside ``aten::cudnn_convolution``, and a dense 5-tap 1024 -> 1024 convolution of 0.3 to
1.4 GFLOP; some 1300 kernels and 0.5 to 2 ms of GPU time in all). Laid out as
descriptinc/melgan-neurips's ``mel2wav/modules.py``: ``Generator(80, ngf 32, n_residual_layers 3)``:
``ReflectionPad1d(3)``, ``WNConv1d(80, 512, 7)``, then per ratio r of (8, 8, 2, 2)
``LeakyReLU(0.2)``, ``WNConvTranspose1d(c, c / 2, 2r, stride r, padding r // 2 + r % 2,
output_padding r % 2)`` and three ``ResnetBlock``s of dilations 1, 3 and 9 (``LeakyReLU(0.2)``,
``ReflectionPad1d(d)``, ``WNConv1d(c, c, 3, dilation d)``, ``LeakyReLU(0.2)``, ``WNConv1d(c, c,
1)``, plus the shortcut ``WNConv1d(c, c, 1)``), then ``LeakyReLU(0.2)``, ``ReflectionPad1d(3)``,
``WNConv1d(32, 1, 7)``, ``Tanh``; ``Discriminator(num_D 3, ndf 16, n_layers 4, downsampling_factor
4)``: three ``NLayerDiscriminator``s, the input average-pooled (``AvgPool1d(4, stride 2, padding 1,
count_include_pad False)``) after each, as the reference does (the last pooling's output unused),
each ``ReflectionPad1d(7)``, ``WNConv1d(1, 16, 15)``, then ``WNConv1d`` 16 -> 64 -> 256 -> 1024 ->
1024 of 41 taps, stride 4, padding 20, groups c_in / 4, then ``WNConv1d(1024, 1024, 5, padding 2)``,
each followed by ``LeakyReLU(0.2)``, and ``WNConv1d(1024, 1, 3, padding 1)``; every layer's output
kept as a feature map. Every convolution weight-normed
(``torch.nn.utils.parametrizations.weight_norm``: the weight recomputed from g and v at each call).
The step, as the reference's ``train.py`` computes its losses: side stream 1, ``x_pred_t =
netG(s_t)``; side stream 2, ``D_real = netD(x_t)``; fork and join are the project's ``fork_join``
(``wait_stream``, and ``record_stream`` on the branch outputs, the real feature maps flattened into
one tuple, outside capture); after the join, on the current stream, ``D_fake = netD(x_pred_t)``, the
discriminator's hinge loss (the sum over the scales of mean relu(1 - D_real) + mean relu(1 +
D_fake)), the generator's (the sum of -mean D_fake) and the feature-matching loss (the sum over
scales and the five inner layers of 4 / 5 x 1 / 3 x the L1 distance of the fake and real maps, each
in fp32). fp16 weights and activations on a GPU, the weight norms computed in fp16 too (fp32 on a
CPU), eval, no gradients (the backward is not part of the step), random weights (torch's defaults).
Inputs (two input sets), batch first: the real segments x_t (4, 1, 8192), Gaussian x 0.3, and their
log-mel spectrograms s_t (4, 80, 32), Gaussian, fp16. Returns the discriminator's, the generator's
and the feature-matching losses and their total (4,), fp32.

    traceinspect profile melgan_generator_beside_msd_2streams_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor, nn
from torch.nn.utils.parametrizations import weight_norm

N_MELS, HOP, SEGMENT, RATIOS = 80, 256, 8192, (8, 8, 2, 2)
Maps = list[Tensor]


def wn_conv1d(*args: int, **kwargs: int) -> nn.Module:
    return weight_norm(nn.Conv1d(*args, **kwargs))


def wn_conv_transpose1d(*args: int, **kwargs: int) -> nn.Module:
    return weight_norm(nn.ConvTranspose1d(*args, **kwargs))


class ResnetBlock(nn.Module):
    def __init__(self, dim: int, dilation: int) -> None:
        super().__init__()
        self.block = nn.Sequential(
            nn.LeakyReLU(0.2),
            nn.ReflectionPad1d(dilation),
            wn_conv1d(dim, dim, kernel_size=3, dilation=dilation),
            nn.LeakyReLU(0.2),
            wn_conv1d(dim, dim, kernel_size=1),
        )
        self.shortcut = wn_conv1d(dim, dim, kernel_size=1)

    def forward(self, x: Tensor) -> Tensor:
        return self.shortcut(x) + self.block(x)


class Generator(nn.Module):
    def __init__(self, input_size: int, ngf: int, n_residual_layers: int) -> None:
        super().__init__()
        mult = 2 ** len(RATIOS)
        model: list[nn.Module] = [
            nn.ReflectionPad1d(3),
            wn_conv1d(input_size, mult * ngf, kernel_size=7, padding=0),
        ]
        for r in RATIOS:
            model += [
                nn.LeakyReLU(0.2),
                wn_conv_transpose1d(
                    mult * ngf,
                    mult * ngf // 2,
                    kernel_size=r * 2,
                    stride=r,
                    padding=r // 2 + r % 2,
                    output_padding=r % 2,
                ),
            ]
            model += [ResnetBlock(mult * ngf // 2, 3**j) for j in range(n_residual_layers)]
            mult //= 2
        model += [
            nn.LeakyReLU(0.2),
            nn.ReflectionPad1d(3),
            wn_conv1d(ngf, 1, kernel_size=7, padding=0),
            nn.Tanh(),
        ]
        self.model = nn.Sequential(*model)

    def forward(self, x: Tensor) -> Tensor:
        return self.model(x)


class NLayerDiscriminator(nn.Module):
    def __init__(self, ndf: int, n_layers: int, downsampling_factor: int, max_nf: int) -> None:
        super().__init__()
        model = nn.ModuleDict()
        model["layer_0"] = nn.Sequential(
            nn.ReflectionPad1d(7), wn_conv1d(1, ndf, kernel_size=15), nn.LeakyReLU(0.2, True)
        )
        nf, nf_prev, stride = ndf, ndf, downsampling_factor
        for n in range(1, n_layers + 1):
            nf_prev = nf
            nf = min(nf * stride, max_nf)
            model[f"layer_{n}"] = nn.Sequential(
                wn_conv1d(
                    nf_prev,
                    nf,
                    kernel_size=stride * 10 + 1,
                    stride=stride,
                    padding=stride * 5,
                    groups=nf_prev // 4,
                ),
                nn.LeakyReLU(0.2, True),
            )
        nf = min(nf * 2, max_nf)
        model[f"layer_{n_layers + 1}"] = nn.Sequential(
            wn_conv1d(nf_prev, nf, kernel_size=5, stride=1, padding=2), nn.LeakyReLU(0.2, True)
        )
        model[f"layer_{n_layers + 2}"] = wn_conv1d(nf, 1, kernel_size=3, stride=1, padding=1)
        self.model = model

    def forward(self, x: Tensor) -> Maps:
        results = []
        for layer in self.model.values():
            x = layer(x)
            results.append(x)
        return results


class Discriminator(nn.Module):
    def __init__(self, num_d: int, ndf: int, n_layers: int, factor: int, max_nf: int) -> None:
        super().__init__()
        self.model = nn.ModuleDict(
            {f"disc_{i}": NLayerDiscriminator(ndf, n_layers, factor, max_nf) for i in range(num_d)}
        )
        self.downsample = nn.AvgPool1d(4, stride=2, padding=1, count_include_pad=False)

    def forward(self, x: Tensor) -> list[Maps]:
        results = []
        for disc in self.model.values():
            results.append(disc(x))
            x = self.downsample(x)
        return results


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, ngf, ndf, max_nf = 2, 4, 4, 64
    else:
        batch, ngf, ndf, max_nf = 4, 32, 16, 1024
    segment, num_d, n_layers = SEGMENT if not smoke else 2048, 3, 4
    frames = segment // HOP
    dtype = torch.float16 if device.type == "cuda" else torch.float32
    net_g = Generator(N_MELS, ngf, 3).to(device=device, dtype=dtype).eval()
    net_d = Discriminator(num_d, ndf, n_layers, 4, max_nf).to(device=device, dtype=dtype).eval()
    streams = side_streams(device, 2)
    feat_weight, d_weight = 4.0 / (n_layers + 1), 1.0 / num_d

    @torch.no_grad()
    def step(x_t: Tensor, s_t: Tensor) -> Tensor:
        x_pred_t, real_maps = fork_join(
            device, streams, [lambda: net_g(s_t), lambda: tuple(sum(net_d(x_t), []))]
        )
        per = len(real_maps) // num_d  # the feature maps of each scale, flat across the join
        d_real = [real_maps[i * per : (i + 1) * per] for i in range(num_d)]
        d_fake = net_d(x_pred_t)
        loss_d = sum(
            F.relu(1 - real[-1]).float().mean() + F.relu(1 + fake[-1]).float().mean()
            for real, fake in zip(d_real, d_fake, strict=True)
        )
        loss_g = sum(-fake[-1].float().mean() for fake in d_fake)
        loss_feat = sum(
            d_weight * feat_weight * F.l1_loss(fake[j].float(), real[j].float())
            for real, fake in zip(d_real, d_fake, strict=True)
            for j in range(len(fake) - 1)
        )
        parts = torch.stack((loss_d, loss_g, loss_feat))
        return torch.cat((parts, parts.sum().view(1)))

    def make() -> tuple[Tensor, Tensor]:
        x_t = 0.3 * torch.randn(batch, 1, segment, device=device, dtype=dtype)
        return x_t, torch.randn(batch, N_MELS, frames, device=device, dtype=dtype)

    inputs = [make() for _ in range(2)]
    precision = str(dtype).removeprefix("torch.")
    description = (
        f"MelGAN generator (ngf {ngf}, x8x8x2x2) on the mel beside its 3-scale discriminator "
        f"(grouped Conv1d k41, groups to {max_nf // 4}) on the real audio on 2 side streams, "
        f"then D on the fake + hinge/feature losses, {precision}, b{batch} x {segment}"
    )
    return Built(step, inputs, description, [net_g, net_d])


if __name__ == "__main__":
    main(build, __doc__)
