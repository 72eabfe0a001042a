"""VITS (Kim et al., 2021) in part of one forward pass of its training step at batch 4: the
posterior encoder and the normalizing flow over 200 frames of linear spectrogram on one side stream,
the scale sub-discriminator of its multi-period discriminator judging 4 real and 4 generated
segments of 8192 samples on the other, then, after the join, the KL term against the text prior
(fifty-ninth hold-out: in fp16, two concurrent chains of unequal make: on side stream 1 some 40
convolutions, the 16-layer WaveNet of the posterior encoder and four coupling layers of 4 WaveNet
layers each, every layer a 5-tap 192 -> 384 convolution of 1.2 GFLOP and a 1 x 1 one, with its gated
tanh-sigmoid, residual, skip and mask kernels over 0.3 to 0.6 MB fp16 maps, some 600 kernels; on
side stream 2 the ``DiscriminatorS`` twice, each seven convolutions, four of them cuDNN grouped 1-D
convolutions of 41 taps, stride 4, groups 4, 16, 64 and 256, which cuDNN splits over eight streams
of its own, forked and joined inside ``aten::cudnn_convolution``, and a dense 5-tap 1024 -> 1024 one
of 1.3 GFLOP, then the discriminator, adversarial and feature-matching losses, some 350 kernels;
some 0.5 to 2 ms of GPU time in all). Laid out as jaywalnut310/vits's ``models.py`` and
``modules.py`` with the LJ Speech configuration (``ljs_base.json``: 513 spectrogram channels,
``inter_channels`` and ``hidden_channels`` 192, segment 8192 samples): ``PosteriorEncoder(513, 192,
192, kernel 5, dilation_rate 1, n_layers 16)``: the mask from the lengths (``sequence_mask``),
``pre`` a 1 x 1 ``Conv1d(513, 192)``, the ``WN`` (per layer a weight-normed ``in_layer``
``Conv1d(192, 384, 5, padding 2)``, ``fused_add_tanh_sigmoid_multiply`` with the zero conditioning
of a single-speaker model (``torch.zeros_like``), a weight-normed ``res_skip_layer`` ``Conv1d(192,
384, 1)`` (192 channels in the last layer), x = (x + res) x mask, the skip sum, output x mask),
``proj`` a 1 x 1 ``Conv1d(192, 384)``, m and logs, z = (m + N(0, 1) exp(logs)) x mask;
``ResidualCouplingBlock(192, 192, 5, 1, 4 layers, n_flows 4)``: four ``ResidualCouplingLayer``s
(mean only: x0 and x1 the halves, ``pre`` ``Conv1d(96, 192, 1)``, a 4-layer ``WN``, ``post``
``Conv1d(192, 96, 1)``, x1 = m + x1 x mask) each followed by ``Flip`` (``torch.flip`` over
channels), forward as training runs it, z_p = flow(z); ``DiscriminatorS``: weight-normed ``Conv1d``
1 -> 16 (15 taps), 16 -> 64, 64 -> 256, 256 -> 1024, 1024 -> 1024 (41 taps, stride 4, padding 20,
groups 4, 16, 64, 256), 1024 -> 1024 (5 taps), each followed by ``leaky_relu(0.1)`` and kept as a
feature map, and ``conv_post`` ``Conv1d(1024, 1, 3)``. Every weight-normed weight
(``torch.nn.utils.parametrizations.weight_norm``) is recomputed at each call. Side stream 1: the
posterior encoder and the flow; side stream 2: the scale discriminator on the real segments and on
the generated ones, then ``discriminator_loss`` (mean (1 - D(y))^2 + mean D(y_hat)^2),
``generator_loss`` (mean (1 - D(y_hat))^2) and ``feature_loss`` (2 x the sum of mean |real -
generated| over the feature maps). Fork and join are the project's ``fork_join`` (``wait_stream``,
and ``record_stream`` on the branch outputs outside capture); after the join, on the current stream,
``kl_loss(z_p, logs_q, m_p, logs_p, z_mask)`` (logs_p - logs_q - 0.5 + 0.5 (z_p - m_p)^2 exp(-2
logs_p), summed under the mask and divided by the mask's sum), and the four losses stacked with
their total. fp16 weights and activations on a GPU (VITS trains with ``fp16_run``), the weight norms
computed in fp16 too, the losses and the KL term in fp32 (fp32 throughout on a CPU), eval (no
dropout), no gradients, random weights (torch's defaults; the zero initialization of the coupling
layers' ``post`` not kept, as a trained model's are not zero). Inputs (two input sets), batch first:
the linear spectrograms (4, 513, 200), magnitudes |N(0, 1)| in fp16, their lengths (4,) int64 (200,
184, 171, 157), the real segments y (4, 1, 8192), Gaussian x 0.3, and the generated ones y_hat, y
plus Gaussian noise x 0.05, in fp16, and the prior's mean and log standard deviation m_p and logs_p
(4, 192, 200) in fp32, Gaussian and Gaussian x 0.1, as the text encoder and the alignment would give
them. Returns the discriminator, adversarial, feature-matching and KL losses and their total (5,),
fp32.

    traceinspect profile vits_posterior_flow_beside_scale_discriminator_2streams_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor, nn
from torch.nn.utils.parametrizations import weight_norm

SPEC, CHANNELS, SEGMENT, FRAMES, LENGTHS = 513, 192, 8192, 200, (200, 184, 171, 157)
LRELU_SLOPE = 0.1
# DiscriminatorS: (c_out, kernel, stride, groups, padding) after its 1-channel input
DISC_LAYERS = (
    (16, 15, 1, 1, 7),
    (64, 41, 4, 4, 20),
    (256, 41, 4, 16, 20),
    (1024, 41, 4, 64, 20),
    (1024, 41, 4, 256, 20),
    (1024, 5, 1, 1, 2),
)
Maps = list[Tensor]


def sequence_mask(length: Tensor, max_length: int) -> Tensor:
    x = torch.arange(max_length, dtype=length.dtype, device=length.device)
    return x.unsqueeze(0) < length.unsqueeze(1)


def fused_add_tanh_sigmoid_multiply(a: Tensor, b: Tensor, n_channels: int) -> Tensor:
    in_act = a + b
    t_act = torch.tanh(in_act[:, :n_channels, :])
    s_act = torch.sigmoid(in_act[:, n_channels:, :])
    return t_act * s_act


class WN(nn.Module):
    def __init__(self, hidden: int, kernel: int, dilation_rate: int, n_layers: int) -> None:
        super().__init__()
        self.hidden, self.n_layers = hidden, n_layers
        self.in_layers, self.res_skip_layers = nn.ModuleList(), nn.ModuleList()
        for i in range(n_layers):
            dilation = dilation_rate**i
            padding = (kernel * dilation - dilation) // 2
            conv = nn.Conv1d(hidden, 2 * hidden, kernel, dilation=dilation, padding=padding)
            self.in_layers.append(weight_norm(conv))
            out = 2 * hidden if i < n_layers - 1 else hidden
            self.res_skip_layers.append(weight_norm(nn.Conv1d(hidden, out, 1)))

    def forward(self, x: Tensor, x_mask: Tensor) -> Tensor:
        output = torch.zeros_like(x)
        for i in range(self.n_layers):
            x_in = self.in_layers[i](x)
            g_l = torch.zeros_like(x_in)
            acts = fused_add_tanh_sigmoid_multiply(x_in, g_l, self.hidden)
            res_skip = self.res_skip_layers[i](acts)
            if i < self.n_layers - 1:
                x = (x + res_skip[:, : self.hidden, :]) * x_mask
                output = output + res_skip[:, self.hidden :, :]
            else:
                output = output + res_skip
        return output * x_mask


class PosteriorEncoder(nn.Module):
    def __init__(self, in_ch: int, out_ch: int, hidden: int, n_layers: int) -> None:
        super().__init__()
        self.out_ch = out_ch
        self.pre = nn.Conv1d(in_ch, hidden, 1)
        self.enc = WN(hidden, 5, 1, n_layers)
        self.proj = nn.Conv1d(hidden, out_ch * 2, 1)

    def forward(self, x: Tensor, x_lengths: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        x_mask = sequence_mask(x_lengths, x.size(2)).unsqueeze(1).to(x.dtype)
        x = self.pre(x) * x_mask
        x = self.enc(x, x_mask)
        stats = self.proj(x) * x_mask
        m, logs = torch.split(stats, self.out_ch, dim=1)
        z = (m + torch.randn_like(m) * torch.exp(logs)) * x_mask
        return z, m, logs, x_mask


class ResidualCouplingLayer(nn.Module):
    def __init__(self, channels: int, hidden: int, n_layers: int) -> None:
        super().__init__()
        self.half = channels // 2
        self.pre = nn.Conv1d(self.half, hidden, 1)
        self.enc = WN(hidden, 5, 1, n_layers)
        self.post = nn.Conv1d(hidden, self.half, 1)  # mean only

    def forward(self, x: Tensor, x_mask: Tensor) -> Tensor:
        x0, x1 = torch.split(x, [self.half] * 2, 1)
        h = self.pre(x0) * x_mask
        h = self.enc(h, x_mask)
        m = self.post(h) * x_mask
        logs = torch.zeros_like(m)
        x1 = m + x1 * torch.exp(logs) * x_mask
        return torch.cat([x0, x1], 1)


class ResidualCouplingBlock(nn.Module):
    def __init__(self, channels: int, hidden: int, n_layers: int, n_flows: int) -> None:
        super().__init__()
        self.flows = nn.ModuleList(
            ResidualCouplingLayer(channels, hidden, n_layers) for _ in range(n_flows)
        )

    def forward(self, x: Tensor, x_mask: Tensor) -> Tensor:
        for flow in self.flows:
            x = flow(x, x_mask)
            x = torch.flip(x, [1])  # modules.Flip
        return x


class DiscriminatorS(nn.Module):
    def __init__(self, layers: tuple[tuple[int, ...], ...]) -> None:
        super().__init__()
        c_in, convs = 1, []
        for c_out, kernel, stride, groups, padding in layers:
            convs.append(
                weight_norm(nn.Conv1d(c_in, c_out, kernel, stride, padding, groups=groups))
            )
            c_in = c_out
        self.convs = nn.ModuleList(convs)
        self.conv_post = weight_norm(nn.Conv1d(c_in, 1, 3, 1, padding=1))

    def forward(self, x: Tensor) -> tuple[Tensor, Maps]:
        fmap = []
        for conv in self.convs:
            x = F.leaky_relu(conv(x), LRELU_SLOPE)
            fmap.append(x)
        x = self.conv_post(x)
        fmap.append(x)
        return torch.flatten(x, 1, -1), fmap


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, spec, channels, frames, segment, wn_layers = 2, 33, 16, 24, 2048, 3
        lengths = (24, 19)
        layers = tuple((min(c, 64), k, s, min(g, 16), p) for c, k, s, g, p in DISC_LAYERS)
    else:
        batch, spec, channels, frames, segment, wn_layers = 4, SPEC, CHANNELS, FRAMES, SEGMENT, 16
        lengths, layers = LENGTHS, DISC_LAYERS
    dtype = torch.float16 if device.type == "cuda" else torch.float32
    enc_q = PosteriorEncoder(spec, channels, channels, wn_layers).to(device=device, dtype=dtype)
    flow = ResidualCouplingBlock(channels, channels, 4, 4).to(device=device, dtype=dtype)
    disc = DiscriminatorS(layers).to(device=device, dtype=dtype)
    for module in (enc_q, flow, disc):
        module.eval()
    streams = side_streams(device, 2)

    def posterior(spec_x: Tensor, spec_lengths: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        z, _, logs_q, y_mask = enc_q(spec_x, spec_lengths)
        z_p = flow(z, y_mask)
        return z_p.float(), logs_q.float(), y_mask.float()

    def judge(y: Tensor, y_hat: Tensor) -> Tensor:
        y_d_r, fmap_r = disc(y)
        y_d_g, fmap_g = disc(y_hat)
        loss_disc = torch.mean((1 - y_d_r.float()) ** 2) + torch.mean(y_d_g.float() ** 2)
        loss_gen = torch.mean((1 - y_d_g.float()) ** 2)
        loss_fm = 2 * sum(
            torch.mean(torch.abs(r.float() - g.float()))
            for r, g in zip(fmap_r, fmap_g, strict=True)
        )
        return torch.stack((loss_disc, loss_gen, loss_fm))

    @torch.no_grad()
    def step(
        spec_x: Tensor, spec_lengths: Tensor, y: Tensor, y_hat: Tensor, m_p: Tensor, logs_p: Tensor
    ) -> Tensor:
        (z_p, logs_q, z_mask), losses = fork_join(
            device,
            streams,
            [lambda: posterior(spec_x, spec_lengths), lambda: judge(y, y_hat)],
        )
        kl = logs_p - logs_q - 0.5 + 0.5 * ((z_p - m_p) ** 2) * torch.exp(-2.0 * logs_p)
        loss_kl = torch.sum(kl * z_mask) / torch.sum(z_mask)
        parts = torch.cat((losses, loss_kl.view(1)))
        return torch.cat((parts, parts.sum().view(1)))

    def make() -> tuple[Tensor, ...]:
        y = 0.3 * torch.randn(batch, 1, segment, device=device)
        return (
            torch.randn(batch, spec, frames, device=device).abs().to(dtype),
            torch.tensor(lengths, device=device),
            y.to(dtype),
            (y + 0.05 * torch.randn_like(y)).to(dtype),
            torch.randn(batch, channels, frames, device=device),
            0.1 * torch.randn(batch, channels, frames, device=device),
        )

    inputs = [make() for _ in range(2)]
    precision = str(dtype).removeprefix("torch.")
    description = (
        f"VITS posterior encoder ({wn_layers}-layer WN, {channels}ch) + 4-coupling flow on "
        f"{frames} spectrogram frames beside DiscriminatorS (grouped Conv1d k41) on real + "
        f"generated audio on 2 side streams, then KL, {precision}, b{batch} x {segment}"
    )
    return Built(step, inputs, description, [enc_q, flow, disc])


if __name__ == "__main__":
    main(build, __doc__)
