"""The optimizer half of a training step for two separate models updated side by side, each model's
gradient fill and ``torch.optim.SGD`` step (momentum 0.9, Nesterov, weight decay 1e-4,
``foreach=True``) on its own side stream (fifty-third hold-out: two concurrent chains of
multi-tensor ``_foreach`` kernels, purely memory-bound, over 102 MB and 170 MB of fp32 parameters
and as much of momentum, one model of many small tensors beside one of a few large ones). It trains:
the parameters and the momentum buffers move, but no autograd runs in the step, the gradients come
from the inputs. Model A: the parameters of a ResNet-50 (He et al., 2016) laid out as torchvision's
``resnet50`` (a 7x7 stem convolution and its BatchNorm, 3 + 4 + 6 + 3 bottleneck blocks of 1x1, 3x3
and 1x1 convolutions without bias, each with a ``BatchNorm2d``, a 1x1 projection and its BatchNorm
on each stage's first block, and a ``Linear(2048, 1000)``: 161 tensors, 25.6 M values), one
parameter group with weight decay on every tensor and lr 0.1, as torchvision's classification
reference ``train.py`` with ``--opt sgd_nesterov`` (momentum 0.9, weight decay 1e-4, no
``--norm-weight-decay``). Model B: a BERT-base encoder (Devlin et al., 2019) 6 layers deep, as
DistilBERT's, 6 ``nn.TransformerEncoderLayer(768, 12, dim_feedforward=3072)`` (72 tensors, 42.5 M
values), in two parameter groups as Hugging Face's ``no_decay`` convention: weight decay 1e-4 on the
matrices, none on the biases and the LayerNorms (whose group then skips the weight-decay kernel and
applies Nesterov to the gradients in place), lr 0.01. Both optimizers are
``torch.optim.SGD(foreach=True)`` with a float lr (SGD keeps no step count, so capture needs no
``capturable``). Each model's ``.grad`` tensors are views of one flat fp32 buffer (as DDP's gradient
buckets), set at build and never replaced. The momentum buffers are allocated at build by one warm
step on zero gradients (the first step clones the weight-decayed gradients into them), then the
parameters and the buffers are snapshotted, as ``adamw_two_models_2streams`` does. Side stream 1,
model A; side stream 2, model B; each: the parameters and the momentum buffers restored from the
snapshot (one ``_foreach_copy_``), so a step depends only on its inputs, the flat gradient buffer
filled from the input (``copy_``), ``optimizer.step()`` (per parameter group: d = g + wd p
(``_foreach_add``), buf = 0.9 buf + d (``_foreach_mul_``, ``_foreach_add_``), d = d + 0.9 buf
(``_foreach_add_``), p = p - lr d (``_foreach_add_``)), and the norms of the model's last two
tensors after the update. Fork and join are the project's ``fork_join`` (``wait_stream``, and
``record_stream`` on the branch outputs outside capture). Inputs: the flat gradients of model A
(25.6 M) and of model B (42.5 M), fp32, two input sets. Returns the four norms (4,).

    traceinspect profile sgd_nesterov_two_models_2streams.py
"""

from __future__ import annotations

from collections.abc import Callable

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

MOMENTUM, WEIGHT_DECAY, LR_A, LR_B = 0.9, 1e-4, 0.1, 0.01


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
    """torchvision's ResNet's parameters, in its registration order."""

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


class Encoder(nn.Module):
    def __init__(self, d: int, heads: int, ff: int, depth: int) -> None:
        super().__init__()
        self.layers = nn.ModuleList(
            nn.TransformerEncoderLayer(d, heads, ff, activation="gelu", batch_first=True)
            for _ in range(depth)
        )


def updater(
    model: nn.Module, groups: list[dict[str, object]], lr: float
) -> tuple[Callable[[Tensor], Tensor], int, list[object]]:
    """SGD (momentum, Nesterov) over ``groups`` with the gradients as views of one flat buffer;
    returns the update (restore, fill the gradients, step, last norms), the value count and
    what to keep alive."""
    params = list(model.parameters())
    total = sum(p.numel() for p in params)
    flat = torch.zeros(total, device=params[0].device)
    offset = 0
    for p in params:
        p.grad = flat[offset : offset + p.numel()].view_as(p)
        offset += p.numel()
    optimizer = torch.optim.SGD(groups, lr=lr, momentum=MOMENTUM, nesterov=True, foreach=True)
    optimizer.step()  # allocates the momentum buffers
    live = params + [optimizer.state[p]["momentum_buffer"] for p in params]
    snapshot = [t.detach().clone() for t in live]
    last = [p.detach() for p in params[-2:]]

    def update(grad: Tensor) -> Tensor:
        with torch.no_grad():
            torch._foreach_copy_(live, snapshot)
            flat.copy_(grad)
        optimizer.step()
        return torch.stack(torch._foreach_norm(last))

    return update, total, [model, optimizer, flat, snapshot]


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        blocks, base, classes, d, heads, ff, depth = (1, 1, 1, 1), 8, 10, 32, 2, 64, 2
    else:
        blocks, base, classes, d, heads, ff, depth = (3, 4, 6, 3), 64, 1000, 768, 12, 3072, 6
    model_a = ResNet(blocks, base, classes).to(device).train()
    model_b = Encoder(d, heads, ff, depth).to(device).train()
    decay, no_decay = [], []
    for p in model_b.parameters():
        (no_decay if p.ndim <= 1 else decay).append(p)
    update_a, total_a, keep_a = updater(
        model_a, [{"params": list(model_a.parameters()), "weight_decay": WEIGHT_DECAY}], LR_A
    )
    update_b, total_b, keep_b = updater(
        model_b,
        [
            {"params": decay, "weight_decay": WEIGHT_DECAY},
            {"params": no_decay, "weight_decay": 0.0},
        ],
        LR_B,
    )
    streams = side_streams(device, 2)

    def step(grad_a: Tensor, grad_b: Tensor) -> Tensor:
        norms_a, norms_b = fork_join(
            device, streams, [lambda: update_a(grad_a), lambda: update_b(grad_b)]
        )
        return torch.cat((norms_a, norms_b))

    inputs = [
        (
            1e-2 * torch.randn(total_a, device=device),
            1e-3 * torch.randn(total_b, device=device),
        )
        for _ in range(2)
    ]
    tensors_a, tensors_b = len(list(model_a.parameters())), len(list(model_b.parameters()))
    description = (
        f"SGD (foreach, momentum {MOMENTUM}, Nesterov, wd {WEIGHT_DECAY:g}) of two models on 2 "
        f"side streams: ResNet-{3 * sum(blocks) + 2} ({tensors_a} tensors, {total_a} values) "
        f"and {depth} x TransformerEncoderLayer({d}, {heads}, {ff}) ({tensors_b} tensors, "
        f"{total_b} values), gradients from flat buffers, state restored each step"
    )
    return Built(step, inputs, description, [*keep_a, *keep_b])


if __name__ == "__main__":
    main(build, __doc__)
