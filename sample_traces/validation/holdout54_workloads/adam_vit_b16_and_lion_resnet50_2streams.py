"""The optimizer half of a training step for two separate models updated side by side, a
ViT-B/16's foreach Adam step on one side stream and a ResNet-50's foreach Lion step on the other
(fifty-fourth hold-out: two long concurrent chains of multi-tensor ``_foreach`` kernels, purely
memory-bound, over 346 MB and 102 MB of fp32 parameters and their states, the launches over the
large lists tens of microseconds to 0.1 ms each, both streams drawing the whole DRAM bandwidth at
once, as when a model and its auxiliary model, a teacher or a critic, are trained in one step). It
trains: the parameters and the states move, but no autograd runs in the step, the gradients come
from the inputs. Model A: the parameters of a ViT-B/16 (Dosovitskiy et al., 2021; timm's
``VisionTransformer``), a ``Conv2d(3, 768, 16, stride 16)`` patch embedding, a class token and
197 position embeddings, 12 ``nn.TransformerEncoderLayer(768, 12, dim_feedforward=3072,
norm_first=True)``, a final ``LayerNorm(768)`` and a ``Linear(768, 1000)`` head (152 tensors,
86.6 M values). Its update is ``torch.optim.Adam``'s multi-tensor path (``_multi_tensor_adam``
with ``foreach=True``, ``capturable=True``, amsgrad off, no weight decay: Adam, not AdamW; lr
1e-4, betas (0.9, 0.999), eps 1e-8) written out with the same ``torch._foreach_*`` calls in
the same order: the step counts + 1 (``_foreach_add_``), m = lerp(m, g, 0.1)
(``_foreach_lerp_``), v = 0.999 v (``_foreach_mul_``) + 0.001 g g (``_foreach_addcmul_``), the
per-tensor bias corrections on the device from the step counts (``_foreach_pow``, ``_sub_``,
``_neg_``, ``_div_``, ``_reciprocal_``, ``_sqrt_``, over 152 scalars), the denominator sqrt(v)
(``_foreach_sqrt``) divided by sqrt(1 - 0.999^t), plus eps, divided by the step size, and p = p
+ m / denominator (``_foreach_addcdiv_``): 20 passes over the 346 MB. Model B: the parameters
of a ResNet-50 (He et al., 2016) laid out as torchvision's ``resnet50`` (a 7x7 stem convolution
and its BatchNorm, 3 + 4 + 6 + 3 bottleneck blocks of 1x1, 3x3 and 1x1 convolutions without
bias, each with a ``BatchNorm2d``, a 1x1 projection and its BatchNorm on each stage's first
block, and a ``Linear(2048, 1000)``: 161 tensors, 25.6 M values). Its update is timm's Lion
(Chen et al., 2023; ``timm/optim/lion.py``, ``_multi_tensor_lion``; lr 1e-4, betas (0.9,
0.99), weight decay 0.1): p = p (1 - lr wd) (``_foreach_mul_``), c = 0.9 m
(``_foreach_mul``) + 0.1 g (``_foreach_add_``), the sign of each tensor of c one by one (``[u.sign()
for u in updates]``, as timm writes it: 161 launches, most of them small), p = p - lr c
(``_foreach_add_``), m = 0.99 m (``_foreach_mul_``) + 0.01 g (``_foreach_add_``). Both states
start as after some training, made at build: the moments small Gaussians (Adam's second moment
their squares), Adam's step counts 10 (0-d fp32 tensors on the device, as ``capturable``
keeps them); then the parameters and the states are snapshotted. Side stream 1, model A; side
stream 2, model B; each: its parameters and state restored from the snapshot (one
``_foreach_copy_``), so a step depends only on its inputs, the gradients taken as views of the
flat gradient input (one view per parameter, no copy), the update, and the norms of the model's
last two tensors (its head) after it. Fork and join are the project's ``fork_join``
(``wait_stream``, and ``record_stream`` on the branch outputs outside capture). Inputs: the flat
gradients of model A (86.6 M) and of model B (25.6 M), fp32, 1e-3 x Gaussian, two input sets.
Returns the four head norms (4,).

    traceinspect profile adam_vit_b16_and_lion_resnet50_2streams.py
"""

from __future__ import annotations

from collections.abc import Callable

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

ADAM_LR, ADAM_BETAS, ADAM_EPS, WARM_STEPS = 1e-4, (0.9, 0.999), 1e-8, 10.0
LION_LR, LION_BETAS, LION_WD = 1e-4, (0.9, 0.99), 0.1


class ViT(nn.Module):
    """timm's VisionTransformer's parameters, the blocks as torch's pre-norm encoder layers."""

    def __init__(
        self, d: int, heads: int, depth: int, image: int, patch: int, classes: int
    ) -> None:
        super().__init__()
        self.patch_embed = nn.Conv2d(3, d, patch, stride=patch)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, d))
        self.pos_embed = nn.Parameter(0.02 * torch.randn(1, (image // patch) ** 2 + 1, d))
        self.blocks = nn.ModuleList(
            nn.TransformerEncoderLayer(d, heads, 4 * d, batch_first=True, norm_first=True)
            for _ in range(depth)
        )
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, classes)


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


def grad_views(flat: Tensor, params: list[Tensor]) -> list[Tensor]:
    """One view of ``flat`` per parameter, shaped like it (no copy)."""
    chunks = flat.split([p.numel() for p in params])
    return [c.view_as(p) for c, p in zip(chunks, params, strict=True)]


def adam_foreach(
    params: list[Tensor],
    grads: list[Tensor],
    exp_avgs: list[Tensor],
    exp_avg_sqs: list[Tensor],
    steps: list[Tensor],
) -> None:
    """torch.optim.Adam's _multi_tensor_adam, capturable, amsgrad off, no weight decay."""
    beta1, beta2 = ADAM_BETAS
    torch._foreach_add_(steps, 1)
    torch._foreach_lerp_(exp_avgs, grads, 1 - beta1)
    torch._foreach_mul_(exp_avg_sqs, beta2)
    torch._foreach_addcmul_(exp_avg_sqs, grads, grads, 1 - beta2)
    bias_correction1 = torch._foreach_pow(beta1, steps)
    bias_correction2 = torch._foreach_pow(beta2, steps)
    torch._foreach_sub_(bias_correction1, 1)
    torch._foreach_sub_(bias_correction2, 1)
    torch._foreach_neg_(bias_correction2)
    torch._foreach_div_(bias_correction1, ADAM_LR)
    torch._foreach_reciprocal_(bias_correction1)
    torch._foreach_sqrt_(bias_correction2)
    step_size, bias_correction2_sqrt = bias_correction1, bias_correction2
    exp_avg_sq_sqrt = torch._foreach_sqrt(exp_avg_sqs)
    torch._foreach_div_(exp_avg_sq_sqrt, bias_correction2_sqrt)
    torch._foreach_add_(exp_avg_sq_sqrt, ADAM_EPS)
    torch._foreach_div_(exp_avg_sq_sqrt, step_size)
    torch._foreach_addcdiv_(params, exp_avgs, exp_avg_sq_sqrt)


def lion_foreach(params: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor]) -> None:
    """timm's _multi_tensor_lion (not maximizing, real parameters)."""
    beta1, beta2 = LION_BETAS
    torch._foreach_mul_(params, 1 - LION_LR * LION_WD)
    updates = torch._foreach_mul(exp_avgs, beta1)
    torch._foreach_add_(updates, grads, alpha=1 - beta1)
    updates = [u.sign() for u in updates]
    torch._foreach_add_(params, updates, alpha=-LION_LR)
    torch._foreach_mul_(exp_avgs, beta2)
    torch._foreach_add_(exp_avgs, grads, alpha=1 - beta2)


def adam_updater(model: nn.Module) -> tuple[Callable[[Tensor], Tensor], int, list[object]]:
    params = [p.detach() for p in model.parameters()]
    device = params[0].device
    exp_avgs = [1e-3 * torch.randn_like(p) for p in params]
    exp_avg_sqs = [torch.square(1e-3 * torch.randn_like(p)) for p in params]
    steps = [torch.tensor(WARM_STEPS, device=device) for _ in params]
    live = params + exp_avgs + exp_avg_sqs + steps
    snapshot = [t.clone() for t in live]
    head = params[-2:]

    def update(flat: Tensor) -> Tensor:
        torch._foreach_copy_(live, snapshot)
        adam_foreach(params, grad_views(flat, params), exp_avgs, exp_avg_sqs, steps)
        return torch.stack(torch._foreach_norm(head))

    total = sum(p.numel() for p in params)
    return update, total, [model, live, snapshot]


def lion_updater(model: nn.Module) -> tuple[Callable[[Tensor], Tensor], int, list[object]]:
    params = [p.detach() for p in model.parameters()]
    exp_avgs = [1e-3 * torch.randn_like(p) for p in params]
    live = params + exp_avgs
    snapshot = [t.clone() for t in live]
    head = params[-2:]

    def update(flat: Tensor) -> Tensor:
        torch._foreach_copy_(live, snapshot)
        lion_foreach(params, grad_views(flat, params), exp_avgs)
        return torch.stack(torch._foreach_norm(head))

    total = sum(p.numel() for p in params)
    return update, total, [model, live, snapshot]


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        d, heads, depth, image, classes, blocks, base = 32, 2, 2, 32, 10, (1, 1, 1, 1), 8
    else:
        d, heads, depth, image, classes, blocks, base = 768, 12, 12, 224, 1000, (3, 4, 6, 3), 64
    model_a = ViT(d, heads, depth, image, 16, classes).to(device).train()
    model_b = ResNet(blocks, base, classes).to(device).train()
    update_a, total_a, keep_a = adam_updater(model_a)
    update_b, total_b, keep_b = lion_updater(model_b)
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(grad_a: Tensor, grad_b: Tensor) -> Tensor:
        norms_a, norms_b = fork_join(
            device, streams, [lambda: update_a(grad_a), lambda: update_b(grad_b)]
        )
        return torch.cat((norms_a, norms_b))

    inputs = [
        (
            1e-3 * torch.randn(total_a, device=device),
            1e-3 * torch.randn(total_b, device=device),
        )
        for _ in range(2)
    ]
    tensors_a, tensors_b = len(list(model_a.parameters())), len(list(model_b.parameters()))
    description = (
        f"foreach Adam (capturable, written out) of a ViT-B/16-like {depth} x "
        f"TransformerEncoderLayer({d}, {heads}) ({tensors_a} tensors, {total_a} values) and "
        f"timm's foreach Lion of ResNet-{3 * sum(blocks) + 2} ({tensors_b} tensors, {total_b} "
        f"values) on 2 side streams, gradients as views of the inputs, state restored each step"
    )
    return Built(step, inputs, description, [*keep_a, *keep_b])


if __name__ == "__main__":
    main(build, __doc__)
