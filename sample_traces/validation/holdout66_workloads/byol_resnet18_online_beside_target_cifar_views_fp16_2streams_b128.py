"""BYOL (Grill, Strub, Altche, Tallec, Richemond et al., NeurIPS 2020, "Bootstrap Your Own Latent: A
New Approach to Self-Supervised Learning": an online network with a predictor regressing a slowly
moving target network's projection of another view of the same image) evaluating its loss on 128
CIFAR-size image pairs in two augmented views, the online and the target network on two side streams
(sixty-sixth hold-out: fp16, channels-last, one program fork / join a step: the two views
concatenated into one batch of 256 on the current stream; on side stream 1 the online network, a
ResNet-18 in its CIFAR form (``Conv2d(3, 64, 3)`` at stride 1, no max pool; 8 basic blocks in 4
stages of 64 to 512 channels over 32 x 32 to 4 x 4 grids, each two 3 x 3 convolutions with
BatchNorm, ReLU and the residual add, the 3 stage-opening blocks with a strided 1 x 1 convolution
and BatchNorm on the shortcut; the global average pool to 512), its projector ``Linear(512, 4096)``,
``BatchNorm1d``, ReLU, ``Linear(4096, 256)`` and the predictor ``Linear(256, 4096)``,
``BatchNorm1d``, ReLU, ``Linear(4096, 256)``; on side stream 2 the target network, a ResNet-18 and
projector of the same shape with their own weights; joined by ``wait_stream``; on the current stream
the normalized-MSE loss symmetrised over the views, 2 - 2 cos(online prediction of view 1, target
projection of view 2) plus the same with the views swapped, and its mean over the pairs; some 170
kernels, each side stream some 70 to 75 (the 20 convolutions of 256 images, 0.28 TFLOP a network,
beside BatchNorms, ReLUs and adds), some 2.5 to 5 ms of GPU time). Laid out as
lucidrains/byol-pytorch's ``BYOL`` (``NetWrapper`` taking the backbone's flattened average-pool
output (``hidden_layer=-2``) into the projector ``MLP(dim, projection_size 256, hidden_size 4096)``
= ``Linear``, ``BatchNorm1d``, ``ReLU(inplace=True)``, ``Linear``; ``online_predictor = MLP(256,
256, 4096)``; ``forward``'s ``torch.cat((image_one, image_two), dim=0)``, the online projections and
predictions chunked in two, the target encoder's projections under ``no_grad``, ``loss_fn`` as
``F.normalize`` of both, ``2 - 2 (x y).sum(dim=-1)``, ``loss_one + loss_two`` and ``.mean()``) over
a torchvision-style ResNet-18 with the CIFAR stem (3 x 3, stride 1, no max pool, as solo-learn and
most CIFAR BYOL recipes set it), with the changes this evaluation needs: the augmentations are not
run (the two views are the inputs); the target network has its own random weights standing in for
the exponential moving average of the online one (the reference starts it as a deep copy); the
online and target forwards run on the two side streams rather than one after the other; the loss in
fp32 on the fp16 outputs. fp16 weights and activations, channels-last, on a GPU (fp32 on a CPU),
eval (BatchNorm on random running statistics), no gradients, random weights (torch's defaults).
Inputs (two input sets): the two views (128, 3, 32, 32) each, fp16, Gaussian, channels-last. Returns
the loss (a 0-d fp32 tensor) and the per-pair losses (128,) fp32.

    traceinspect profile byol_resnet18_online_beside_target_cifar_views_fp16_2streams_b128.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from _models import random_batch_norm_stats
from _streams import fork_join, side_streams
from torch import Tensor, nn

BLOCKS, WIDTHS, PROJECTION, HIDDEN = (2, 2, 2, 2), (64, 128, 256, 512), 256, 4096


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = (
            nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
            if stride != 1 or cin != cout
            else None
        )

    def forward(self, x: Tensor) -> Tensor:
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        identity = x if self.downsample is None else self.downsample(x)
        return self.relu(out + identity)


class ResNet18Cifar(nn.Module):
    """torchvision's ResNet-18 with the CIFAR stem (3 x 3, stride 1, no max pool), up to the
    flattened average pool (what ``NetWrapper`` takes with ``hidden_layer=-2``)."""

    def __init__(self, blocks: tuple[int, ...], widths: tuple[int, ...]) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, widths[0], 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(widths[0])
        self.relu = nn.ReLU(inplace=True)
        layers = []
        cin = widths[0]
        for stage, (n, width) in enumerate(zip(blocks, widths, strict=True)):
            layers.append(
                nn.Sequential(
                    *[
                        BasicBlock(cin if i == 0 else width, width, 2 if stage and not i else 1)
                        for i in range(n)
                    ]
                )
            )
            cin = width
        self.layer1, self.layer2, self.layer3, self.layer4 = layers
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.out_channels = cin

    def forward(self, x: Tensor) -> Tensor:
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return torch.flatten(self.avgpool(x), 1)


def mlp(dim: int, projection_size: int, hidden_size: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Linear(dim, hidden_size),
        nn.BatchNorm1d(hidden_size),
        nn.ReLU(inplace=True),
        nn.Linear(hidden_size, projection_size),
    )


class NetWrapper(nn.Module):
    def __init__(self, blocks: tuple[int, ...], widths: tuple[int, ...], proj: int, hidden: int):
        super().__init__()
        self.net = ResNet18Cifar(blocks, widths)
        self.projector = mlp(self.net.out_channels, proj, hidden)

    def forward(self, x: Tensor) -> Tensor:
        return self.projector(self.net(x))


def loss_fn(x: Tensor, y: Tensor) -> Tensor:
    x = F.normalize(x, dim=-1, p=2)
    y = F.normalize(y, dim=-1, p=2)
    return 2 - 2 * (x * y).sum(dim=-1)


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, image, blocks, widths, proj, hidden = 4, 8, (1, 1, 1, 1), (8, 8, 16, 16), 16, 32
    else:
        batch, image, blocks, widths, proj, hidden = 128, 32, BLOCKS, WIDTHS, PROJECTION, HIDDEN
    dtype = torch.float16 if device.type == "cuda" else torch.float32
    online_encoder = NetWrapper(blocks, widths, proj, hidden)
    online_predictor = mlp(proj, proj, hidden)
    target_encoder = NetWrapper(blocks, widths, proj, hidden)
    nets = nn.ModuleList([online_encoder, online_predictor, target_encoder])
    random_batch_norm_stats(nets)
    for m in nets.modules():
        if isinstance(m, nn.BatchNorm1d):
            m.running_mean.normal_(0, 0.1)
            m.running_var.uniform_(0.5, 1.5)
    nets = nets.to(device, dtype, memory_format=torch.channels_last).eval()
    streams = side_streams(device, 2)

    def online(images: Tensor) -> Tensor:
        return online_predictor(online_encoder(images))

    @torch.no_grad()
    def step(image_one: Tensor, image_two: Tensor) -> tuple[Tensor, Tensor]:
        images = torch.cat((image_one, image_two), dim=0)
        online_predictions, target_projections = fork_join(
            device, streams, [lambda: online(images), lambda: target_encoder(images)]
        )
        online_pred_one, online_pred_two = online_predictions.float().chunk(2, dim=0)
        target_proj_one, target_proj_two = target_projections.float().chunk(2, dim=0)
        loss_one = loss_fn(online_pred_one, target_proj_two)
        loss_two = loss_fn(online_pred_two, target_proj_one)
        loss = loss_one + loss_two
        return loss.mean(), loss

    inputs = [
        tuple(
            torch.randn(batch, 3, image, image, device=device, dtype=dtype).contiguous(
                memory_format=torch.channels_last
            )
            for _ in range(2)
        )
        for _ in range(2)
    ]
    precision = str(dtype).removeprefix("torch.")
    description = (
        f"BYOL loss: online ResNet-18 (CIFAR) + projector + predictor ({hidden}-{proj}) beside "
        f"target ResNet-18 + projector on 2 side streams, 2 views of {image} px, {precision} "
        f"channels-last, b{batch}"
    )
    return Built(step, inputs, description, [nets])


if __name__ == "__main__":
    main(build, __doc__)
