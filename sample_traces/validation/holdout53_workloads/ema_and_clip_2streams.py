"""Two memory-bound pieces of a timm training step's epilogue side by side on two side streams
(fifty-third hold-out: two concurrent chains of multi-tensor ``_foreach`` kernels over one
ResNet-152's 60.2 M fp32 values, one of them long runs of tiny launches), after timm's
``train.py`` with ``--clip-grad 1.0 --model-ema --model-ema-decay 0.9998``. The model: the
parameters and buffers of a ResNet-152 (He et al., 2016) laid out as timm's / torchvision's
``resnet152`` (a 7x7 stem convolution and its BatchNorm, 3 + 8 + 36 + 3 bottleneck blocks of
1x1, 3x3 and 1x1 convolutions without bias, each with a ``BatchNorm2d``, a 1x1 projection and
its BatchNorm on each stage's first block, and a ``Linear(2048, 1000)``: 467 parameter tensors,
60.2 M values, and 155 BatchNorms' running mean, variance and batch count). Its ``.grad``
tensors are views of one flat fp32 buffer (as DDP's gradient buckets), set at build. The EMA
copy is timm's ``ModelEmaV3`` (a deep copy of the model; ``apply_update_`` with foreach on,
exclude_buffers off): every floating-point entry of the state dict, the 467 parameters and the
310 running statistics, goes through one ``torch._foreach_lerp_(ema, model, 1 - decay)``, and
each of the 155 integer ``num_batches_tracked`` is copied from the model one by one
(``copy_``), as ``apply_update_`` does; the EMA starts a little off the model's weights (the
model's plus 1e-3 x Gaussian noise, drawn at build), as a lagging average is. Side stream 1,
gradient clipping as ``torch.nn.utils.clip_grad_norm_(params, 1.0, foreach=True)`` computes it,
written out: the flat gradient buffer filled from the input (``copy_``), the per-tensor norms
(``torch._foreach_norm``), the total norm (``torch.linalg.vector_norm`` of their
``torch.stack``), the coefficient 1.0 / (norm + 1e-6) clamped to at most 1 (``torch.clamp``, no
host sync), and ``torch._foreach_mul_`` of the 467 gradients by it. Side stream 2, the EMA
update: the EMA's floating entries restored from a snapshot (one ``_foreach_copy_``), so a step
depends only on its inputs, then ``apply_update_``. The EMA update reads the weights as the last
optimizer step left them and the clipping only the new gradients, so the two are independent
(timm runs the EMA update after ``optimizer.step()``; here it is the previous step's, deferred
to overlap the next clipping). Fork and join are the project's ``fork_join`` (``wait_stream``,
and ``record_stream`` on the branch outputs outside capture). fp32, no autograd. Input: the
flat gradients (60.2 M), 1e-3 x Gaussian (total norm about 7.8, so the clipping scales them),
two input sets. Returns the total gradient norm (0-d), the norms of the clipped classifier
gradients (2,) and of the EMA classifier weight and bias (2,).

    traceinspect profile ema_and_clip_2streams.py
"""

from __future__ import annotations

import copy

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

MAX_NORM, EMA_DECAY, EMA_OFFSET = 1.0, 0.9998, 1e-3


class Bottleneck(nn.Module):
    """torchvision's Bottleneck's parameters: 1x1, 3x3 (the stride), 1x1 x 4, each with BN."""

    def __init__(self, c_in: int, width: int, stride: int) -> None:
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(c_in, width, 1, bias=False), nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, 4 * width, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(4 * width)
        self.downsample = (
            nn.Sequential(
                nn.Conv2d(c_in, 4 * width, 1, stride, bias=False), nn.BatchNorm2d(4 * width)
            )
            if stride != 1 or c_in != 4 * width
            else None
        )


class ResNet(nn.Module):
    """torchvision's ResNet's parameters and buffers, in its registration order."""

    def __init__(self, blocks: tuple[int, ...], base: int, classes: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, base, 7, 2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(base)
        stages, c_in = [], base
        for i, count in enumerate(blocks):
            width = base * 2**i
            stage = []
            for j in range(count):
                stage.append(Bottleneck(c_in, width, 2 if i > 0 and j == 0 else 1))
                c_in = 4 * width
            stages.append(nn.Sequential(*stage))
        self.layer1, self.layer2, self.layer3, self.layer4 = stages
        self.fc = nn.Linear(c_in, classes)


def build(device: torch.device, smoke: bool) -> Built:
    blocks, base, classes = ((1, 2, 2, 1), 8, 10) if smoke else ((3, 8, 36, 3), 64, 1000)
    model = ResNet(blocks, base, classes).to(device).train()
    ema = copy.deepcopy(model).eval()  # ModelEmaV3: a deep copy of the model, in eval mode
    params = list(model.parameters())
    total = sum(p.numel() for p in params)
    flat = torch.zeros(total, device=device)
    offset = 0
    for p in params:
        p.grad = flat[offset : offset + p.numel()].view_as(p)
        offset += p.numel()
    grads = [p.grad for p in params]

    ema_float, model_float, ema_int, model_int = [], [], [], []
    with torch.no_grad():
        for e, m in zip(ema.state_dict().values(), model.state_dict().values(), strict=True):
            if e.is_floating_point():
                e.add_(EMA_OFFSET * torch.randn_like(e))
                ema_float.append(e)
                model_float.append(m)
            else:
                ema_int.append(e)
                model_int.append(m)
    ema_start = [e.clone() for e in ema_float]
    grad_head = grads[-2:]
    ema_head = [e.detach() for e in ema.fc.parameters()]
    streams = side_streams(device, 2)

    def clip(grad: Tensor) -> tuple[Tensor, Tensor]:
        """clip_grad_norm_(params, MAX_NORM, foreach=True), written out."""
        flat.copy_(grad)
        norms = torch._foreach_norm(grads, 2.0)
        total_norm = torch.linalg.vector_norm(torch.stack(norms), 2.0)
        coef = torch.clamp(MAX_NORM / (total_norm + 1e-6), max=1.0)
        torch._foreach_mul_(grads, coef)
        return total_norm, torch.stack(torch._foreach_norm(grad_head))

    def ema_update() -> Tensor:
        """ModelEmaV3.apply_update_ (foreach), after restoring the EMA's start."""
        torch._foreach_copy_(ema_float, ema_start)
        for e, m in zip(ema_int, model_int, strict=True):
            e.copy_(m)
        torch._foreach_lerp_(ema_float, model_float, 1.0 - EMA_DECAY)
        return torch.stack(torch._foreach_norm(ema_head))

    @torch.no_grad()
    def step(grad: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        (total_norm, grad_norms), ema_norms = fork_join(
            device, streams, [lambda: clip(grad), ema_update]
        )
        return total_norm, grad_norms, ema_norms

    inputs = [(1e-3 * torch.randn(total, device=device),) for _ in range(2)]
    description = (
        f"clip_grad_norm_ ({MAX_NORM:g}, foreach, written out) and ModelEmaV3 update "
        f"(foreach lerp, decay {EMA_DECAY}) of ResNet-{3 * sum(blocks) + 2} ({len(params)} "
        f"tensors, {total} values; {len(ema_float)} EMA lerps, {len(ema_int)} int copies) "
        f"on 2 side streams, gradients from a flat buffer, EMA restored each step"
    )
    return Built(step, inputs, description, [model, ema, flat, ema_start])


if __name__ == "__main__":
    main(build, __doc__)
