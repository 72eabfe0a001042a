"""DANet's dual attention head (Fu et al., 2019) segmenting 2 ADE20K crops of 512 x 512 from the
stride-8 features of a dilated ResNet-101: the position attention branch on one side stream beside
the channel attention branch on the other, then, after the join, their sum, the classifier, the
upsampling to the crop and the per-pixel argmax (sixty-first hold-out: two concurrent chains of like
make, bf16: on side stream 1 ``conv5a`` (3 x 3, 2048 -> 512 over 2 x 64 x 64 positions, 155 GFLOP),
BatchNorm, ReLU, the position attention module (three 1 x 1 convolutions to q, k (64 channels) and v
(512), the (2, 4096, 4096) energy by bmm, a softmax over 64 MB, the value bmm, gamma * out + x) and
``conv51`` (3 x 3, 512 -> 512), BN, ReLU; on side stream 2 ``conv5c``, BN, ReLU, the channel
attention module (the (2, 512, 512) Gram matrix by bmm, its row max minus itself, a softmax, the bmm
back, gamma * out + x) and ``conv52``, BN, ReLU; some 15 kernels a branch, the two 3 x 3 2048 -> 512
convolutions the heaviest; then the add, ``conv8`` (1 x 1, 512 -> 150), the bilinear upsampling to
(2, 150, 512, 512) (157 MB) and the argmax; some 30 kernels in all, some 0.8 to 1.5 ms of GPU time).
Laid out as junfu1115/DANet's ``DANetHead`` with its ``PAM_Module`` and ``CAM_Module`` (inter
channels 2048 / 4 = 512, the query and key convolutions to 512 / 8 = 64; PAM: energy = bmm(q^T, k),
attention = softmax(energy), out = bmm(v, attention^T); CAM: energy = bmm(x, x^T), energy_new =
max(energy, -1) - energy, attention = softmax(energy_new), out = bmm(attention, x)),
``Dropout2d(0.1)`` a no-op in eval, the auxiliary classifiers ``conv6`` and ``conv7`` (used only by
the training loss) left out, the output upsampled as ``DANet.forward`` does (``F.interpolate``,
bilinear, ``align_corners=True``); the two gammas set to 0.5 (the reference starts them at 0, a
trained model has moved them). Fork and join are the project's ``fork_join`` (``wait_stream``, and
``record_stream`` on the branch outputs outside capture). bf16 weights and activations on a GPU
(fp32 on a CPU), eval (BatchNorm on random running statistics), no gradients, random weights
(torch's defaults). Input (two input sets): the backbone features (2, 2048, 64, 64) bf16, the ReLU
of Gaussians. Returns the class map (2, 512, 512) int64.

    traceinspect profile danet_pam_beside_cam_ade20k_2streams_b2.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from _models import random_batch_norm_stats
from _streams import fork_join, side_streams
from torch import Tensor, nn

IN_CHANNELS, CLASSES, CROP, STRIDE, GAMMA = 2048, 150, 512, 8, 0.5


def conv_bn_relu(cin: int, cout: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU()
    )


class PAM(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.query_conv = nn.Conv2d(channels, channels // 8, 1)
        self.key_conv = nn.Conv2d(channels, channels // 8, 1)
        self.value_conv = nn.Conv2d(channels, channels, 1)
        self.gamma = nn.Parameter(torch.full((1,), GAMMA))

    def forward(self, x: Tensor) -> Tensor:
        b, c, h, w = x.shape
        query = self.query_conv(x).view(b, -1, h * w).permute(0, 2, 1)
        key = self.key_conv(x).view(b, -1, h * w)
        attention = torch.softmax(torch.bmm(query, key), dim=-1)
        value = self.value_conv(x).view(b, -1, h * w)
        out = torch.bmm(value, attention.permute(0, 2, 1)).view(b, c, h, w)
        return self.gamma * out + x


class CAM(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.gamma = nn.Parameter(torch.full((1,), GAMMA))

    def forward(self, x: Tensor) -> Tensor:
        b, c, h, w = x.shape
        query = x.view(b, c, -1)
        energy = torch.bmm(query, query.permute(0, 2, 1))
        energy_new = torch.max(energy, -1, keepdim=True)[0].expand_as(energy) - energy
        attention = torch.softmax(energy_new, dim=-1)
        out = torch.bmm(attention, query).view(b, c, h, w)
        return self.gamma * out + x


class DANetHead(nn.Module):
    def __init__(self, in_channels: int, classes: int) -> None:
        super().__init__()
        inter = in_channels // 4
        self.conv5a = conv_bn_relu(in_channels, inter)
        self.conv5c = conv_bn_relu(in_channels, inter)
        self.sa = PAM(inter)
        self.sc = CAM()
        self.conv51 = conv_bn_relu(inter, inter)
        self.conv52 = conv_bn_relu(inter, inter)
        self.conv8 = nn.Sequential(nn.Dropout2d(0.1), nn.Conv2d(inter, classes, 1))

    def position(self, x: Tensor) -> Tensor:
        return self.conv51(self.sa(self.conv5a(x)))

    def channel(self, x: Tensor) -> Tensor:
        return self.conv52(self.sc(self.conv5c(x)))


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, in_channels, classes, crop = 1, 64, 5, 64
    else:
        batch, in_channels, classes, crop = 2, IN_CHANNELS, CLASSES, CROP
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    head = DANetHead(in_channels, classes)
    random_batch_norm_stats(head)
    head = head.to(device, dtype).eval()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(features: Tensor) -> Tensor:
        sa_conv, sc_conv = fork_join(
            device, streams, [lambda: head.position(features), lambda: head.channel(features)]
        )
        logits = head.conv8(sa_conv + sc_conv)
        logits = F.interpolate(logits, (crop, crop), mode="bilinear", align_corners=True)
        return logits.argmax(dim=1)

    size = crop // STRIDE
    inputs = [
        (torch.relu(torch.randn(batch, in_channels, size, size, device=device, dtype=dtype)),)
        for _ in range(2)
    ]
    precision = str(dtype).removeprefix("torch.")
    description = (
        f"DANet head: position attention ({size * size} positions) beside channel attention on "
        f"2 side streams, {classes} classes at {crop}x{crop}, {precision}, b{batch}"
    )
    return Built(step, inputs, description, [head])


if __name__ == "__main__":
    main(build, __doc__)
