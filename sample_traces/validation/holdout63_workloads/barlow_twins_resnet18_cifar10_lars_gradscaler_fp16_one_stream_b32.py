"""A Barlow Twins (Zbontar, Jing, Misra, LeCun and Deny, ICML 2021: self-supervised learning by
driving the cross-correlation of two views' embeddings to the identity) training step on 32 CIFAR-10
images in two augmented views, with a ResNet-18 and a 3-layer projector, LARS and dynamic fp16 loss
scaling as the paper's code trains it (sixty-third hold-out: one stream, fp16 autocast over fp32
weights with ``GradScaler``: the backbone and projector run on each view in turn, 20 cuDNN
convolutions over 32 x 32 to 4 x 4 grids of 64 to 512 channels beside train-mode BatchNorms, ReLUs
and residual adds, the pool, ``Linear(512, 2048)``, BatchNorm, ReLU, ``Linear(2048, 2048)``,
BatchNorm, ReLU, ``Linear(2048, 2048)``; the affine-free BatchNorm of each view's embeddings, the
(2048 x 32) x (32 x 2048) cross-correlation, the on-diagonal and off-diagonal sums (lambda 0.0051);
the scaled loss's backward; then ``GradScaler.unscale_`` (the fused inf check and unscale over the
67 gradients), LARS over them written with foreach ops (the weight decay added, ``_foreach_norm`` of
the 23 weights and of their updates, the trust ratios eta ||w|| / ||dw|| (eta 0.001) with the
repository's ``torch.where`` guards, the updates scaled by them, one small kernel a tensor) and its
momentum step as a fused SGD, which skips on an overflow inside its kernel, then
``GradScaler.update``; some 600 to 700 kernels, most a few to some tens of microseconds, some 1 to
2.5 ms of GPU time). Laid out as facebookresearch/barlowtwins' ``main.py`` (``BarlowTwins``: the
backbone with ``fc = nn.Identity()`` and ``zero_init_residual=True``, the projector ``Linear``
without bias, ``BatchNorm1d``, ReLU in place for each hidden layer, ``self.bn =
BatchNorm1d(affine=False)``, ``c = bn(z1).T @ bn(z2)``, ``c.div_(batch_size)``, ``on_diag =
torch.diagonal(c).add_(-1).pow_(2).sum()``, ``off_diag = off_diagonal(c).pow_(2).sum()``; its
``LARS`` with ``weight_decay_filter`` and ``lars_adaptation_filter`` on, so biases and BatchNorm
parameters (the 1-D ones, a second group) take neither the weight decay nor the adaptation;
``weight_decay 1.5e-6``, momentum 0.9, learning rates 0.2 and 0.0048 x batch / 256 for the weights
and the biases; ``GradScaler`` with ``torch.autocast`` in fp16) at CIFAR sizes as solo-learn's CIFAR
recipe sets them (ResNet-18 with a 3 x 3 stride-1 stem and no max pool, a 2048-2048-2048 projector),
with the changes a replayable step needs: the ``all_reduce`` of ``c`` left out (one GPU); no
learning-rate schedule (held at the base rates); ``scaler.step``'s host-side check of the overflow
(``.item()``) replaced by the path ``GradScaler`` takes for an optimizer that handles the overflow
itself: ``scaler.unscale_``, the LARS adaptation of the gradients, then ``scaler.step`` of a
``torch.optim.SGD(fused=True)`` that is LARS's momentum update (``mu = 0.9 mu + dw``, ``w -= lr
mu``) given ``found_inf``; the parameters, the BatchNorms' running statistics, the momentum buffers
and the scaler's scale (65536) and growth tracker (the buffers allocated at build by one step on
zero gradients) restored from a snapshot at the start of every step (foreach copies) and the
gradients zeroed there in place (``zero_grad(set_to_none=False)``), so a step depends only on its
inputs and replayed losses compare with eager ones. Under ``torch.autocast(dtype=torch.float16)`` on
a GPU; fp32 without autocast on a CPU, the scaler still on. Inputs (two input sets): the two views
(32, 3, 32, 32) each, fp32, Gaussian. Returns the loss (a 0-d tensor, detached).

    traceinspect profile barlow_twins_resnet18_cifar10_lars_gradscaler_fp16_one_stream_b32.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn

BLOCKS, WIDTHS, PROJECTOR, LAMBD = (2, 2, 2, 2), (64, 128, 256, 512), (2048, 2048, 2048), 0.0051
LR_WEIGHTS, LR_BIASES, WEIGHT_DECAY, MOMENTUM, ETA = 0.2, 0.0048, 1.5e-6, 0.9, 0.001


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        nn.init.zeros_(self.bn2.weight)  # zero_init_residual
        self.downsample = (
            nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
            if stride != 1 or cin != cout
            else None
        )

    def forward(self, x: Tensor) -> Tensor:
        out = torch.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        identity = x if self.downsample is None else self.downsample(x)
        return torch.relu(out + identity)


class ResNet18Cifar(nn.Module):
    def __init__(self, blocks: tuple[int, ...], widths: tuple[int, ...]) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, widths[0], 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(widths[0])
        layers = []
        cin = widths[0]
        for stage, (n, width) in enumerate(zip(blocks, widths, strict=True)):
            for i in range(n):
                layers.append(BasicBlock(cin, width, 2 if stage > 0 and i == 0 else 1))
                cin = width
        self.layers = nn.Sequential(*layers)
        self.out_channels = cin

    def forward(self, x: Tensor) -> Tensor:
        x = torch.relu(self.bn1(self.conv1(x)))
        return self.layers(x).mean((2, 3))


def off_diagonal(x: Tensor) -> Tensor:
    n, m = x.shape
    return x.flatten()[:-1].view(n - 1, n + 1)[:, 1:].flatten()


class BarlowTwins(nn.Module):
    def __init__(
        self, blocks: tuple[int, ...], widths: tuple[int, ...], projector: tuple[int, ...]
    ):
        super().__init__()
        self.backbone = ResNet18Cifar(blocks, widths)
        sizes = [self.backbone.out_channels, *projector]
        layers: list[nn.Module] = []
        for i in range(len(sizes) - 2):
            layers += [
                nn.Linear(sizes[i], sizes[i + 1], bias=False),
                nn.BatchNorm1d(sizes[i + 1]),
                nn.ReLU(inplace=True),
            ]
        layers.append(nn.Linear(sizes[-2], sizes[-1], bias=False))
        self.projector = nn.Sequential(*layers)
        self.bn = nn.BatchNorm1d(sizes[-1], affine=False)

    def forward(self, y1: Tensor, y2: Tensor) -> Tensor:
        z1 = self.projector(self.backbone(y1))
        z2 = self.projector(self.backbone(y2))
        c = self.bn(z1).T @ self.bn(z2)
        c.div_(y1.shape[0])
        on_diag = torch.diagonal(c).add_(-1).pow_(2).sum()
        off_diag = off_diagonal(c).pow_(2).sum()
        return on_diag + LAMBD * off_diag


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, image, blocks, widths, projector = 4, 8, (1, 1, 1, 1), (8, 8, 16, 16), (32, 32, 32)
    else:
        batch, image, blocks, widths, projector = 32, 32, BLOCKS, WIDTHS, PROJECTOR
    autocast = device.type == "cuda"
    model = BarlowTwins(blocks, widths, projector).to(device).train()
    weights = [p for p in model.parameters() if p.ndim != 1]
    biases = [p for p in model.parameters() if p.ndim == 1]
    optimizer = torch.optim.SGD(
        [
            {"params": weights, "lr": LR_WEIGHTS * batch / 256},
            {"params": biases, "lr": LR_BIASES * batch / 256},
        ],
        lr=0.0,
        momentum=MOMENTUM,
        fused=True,
    )
    scaler = torch.amp.GradScaler(device.type)
    params = weights + biases
    for p in params:
        p.grad = torch.zeros_like(p)
    optimizer.step()  # allocates the momentum buffers
    scaler.scale(torch.zeros((), device=device))  # allocates the scale and growth tracker
    buffers = [b for b in model.buffers() if b.is_floating_point()]
    live = (
        params
        + buffers
        + [optimizer.state[p]["momentum_buffer"] for p in params]
        + [scaler._scale, scaler._growth_tracker]
    )
    snapshot = [t.detach().clone() for t in live]

    def lars_adaptation() -> None:  # LARS on the weights, in place on their unscaled gradients
        grads = [p.grad for p in weights]
        torch._foreach_add_(grads, weights, alpha=WEIGHT_DECAY)
        param_norm = torch.stack(torch._foreach_norm(weights))
        update_norm = torch.stack(torch._foreach_norm(grads))
        one = torch.ones_like(param_norm)
        q = torch.where(
            param_norm > 0.0,
            torch.where(update_norm > 0, (ETA * param_norm / update_norm), one),
            one,
        )
        torch._foreach_mul_(grads, list(q.unbind(0)))

    def step(y1: Tensor, y2: Tensor) -> Tensor:
        with torch.no_grad():
            torch._foreach_copy_(live, snapshot)
        optimizer.zero_grad(set_to_none=False)
        with torch.autocast(device.type, dtype=torch.float16, enabled=autocast):
            loss = model(y1, y2)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        with torch.no_grad():
            lars_adaptation()
        scaler.step(optimizer)
        scaler.update()
        return loss.detach()

    inputs = [
        tuple(torch.randn(batch, 3, image, image, device=device) for _ in range(2))
        for _ in range(2)
    ]
    description = (
        f"Barlow Twins step: ResNet-18 (CIFAR) + projector {projector}, two views of {image} px, "
        f"{'autocast fp16' if autocast else 'fp32'} + GradScaler, LARS (foreach) over "
        f"{len(params)} params, one stream, b{batch}"
    )
    return Built(step, inputs, description, [model, optimizer, scaler, snapshot])


if __name__ == "__main__":
    main(build, __doc__)
