"""The optimizer half of a training step for two separate models updated side by side, each
model's gradient fill and ``torch.optim.AdamW`` step on its own side stream (fifty-second
hold-out: two concurrent chains of multi-tensor ``_foreach`` kernels, purely memory-bound,
over 113 MB and 60 MB of fp32 parameters and twice that of moments, as when a model and its
auxiliary model, a critic or a student and a teacher, are trained in one step). It trains: the
parameters and the moments move, but no autograd runs in the step, the gradients come from
the inputs. Model A: an MLP of 12 ``Linear(1536, 1536)`` with GELU between them (24 tensors,
28.3 M values), one parameter group, weight decay 0.1. Model B: the parameter shapes of a
ViT-S/16 (Dosovitskiy et al., 2021; timm's ``VisionTransformer``) 8 blocks deep, a
``Conv2d(3, 384, 16, stride 16)`` patch embedding, a class token and 197 position embeddings,
8 ``nn.TransformerEncoderLayer(384, 6, dim_feedforward=1536, norm_first=True)``, a final
``LayerNorm(384)`` and a ``Linear(384, 1000)`` head (104 tensors, 15.0 M values), in two
parameter groups as timm's ``param_groups_weight_decay``: weight decay 0.05 on the matrices,
none on the biases, the norms, the class token and the position embeddings. Both optimizers
are ``torch.optim.AdamW`` (lr 1e-4, ``foreach=True``, ``capturable=True`` on a GPU so the step
counts live there and the step can be graphed; torch allows capturable only for GPU
parameters, so a CPU smoke run uses capturable=False; a float lr, which capture allows). Each
model's ``.grad`` tensors are views of one flat fp32 buffer (as DDP's gradient buckets), set
at build and never replaced. The optimizer state is allocated at build by one warm step on
zero gradients, then the parameters and the AdamW state (exp_avg, exp_avg_sq, step) are
snapshotted, as ``ppo_distributions_loss_b2048`` does. Side stream 1, model A; side stream 2,
model B; each: the parameters and the state restored from the snapshot (one
``_foreach_copy_``), so a step depends only on its inputs, the flat gradient buffer filled
from the input (``copy_``), ``optimizer.step()`` (weight decay, the two moments, the bias
corrections on the device, the update; some 18 foreach kernels a parameter group), and the
norms of the model's last two tensors (its head) after the update. Fork and join are the
project's ``fork_join`` (``wait_stream``, and ``record_stream`` on the branch outputs outside
capture). Inputs: the flat gradients of model A (28.3 M) and of model B (15.0 M), fp32, two
input sets. Returns the four head norms (4,).

    traceinspect profile adamw_two_models_2streams.py
"""

from __future__ import annotations

from collections.abc import Callable

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

LR = 1e-4


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


def mlp(width: int, layers: int) -> nn.Sequential:
    modules: list[nn.Module] = []
    for i in range(layers):
        modules.append(nn.Linear(width, width))
        if i < layers - 1:
            modules.append(nn.GELU())
    return nn.Sequential(*modules)


def updater(
    model: nn.Module, groups: list[dict[str, object]], capturable: bool
) -> tuple[Callable[[Tensor], Tensor], int, list[object]]:
    """AdamW over ``groups`` with the gradients as views of one flat buffer; returns the
    update (restore, fill the gradients, step, head norms), the value count and what to
    keep alive."""
    params = list(model.parameters())
    total = sum(p.numel() for p in params)
    flat = torch.zeros(total, device=params[0].device)
    offset = 0
    for p in params:
        p.grad = flat[offset : offset + p.numel()].view_as(p)
        offset += p.numel()
    optimizer = torch.optim.AdamW(groups, lr=LR, foreach=True, capturable=capturable)
    optimizer.step()  # allocates exp_avg, exp_avg_sq and the step counts
    state = [optimizer.state[p][key] for key in ("exp_avg", "exp_avg_sq", "step") for p in params]
    live = params + state
    snapshot = [t.detach().clone() for t in live]
    head = [p.detach() for p in params[-2:]]

    def update(grad: Tensor) -> Tensor:
        with torch.no_grad():
            torch._foreach_copy_(live, snapshot)
            flat.copy_(grad)
        optimizer.step()
        return torch.stack(torch._foreach_norm(head))

    return update, total, [model, optimizer, flat, snapshot]


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        width, layers, d, heads, depth, image, classes = 32, 3, 32, 2, 2, 32, 10
    else:
        width, layers, d, heads, depth, image, classes = 1536, 12, 384, 6, 8, 224, 1000
    capturable = device.type == "cuda"
    model_a = mlp(width, layers).to(device).train()
    model_b = ViT(d, heads, depth, image, 16, classes).to(device).train()
    decay, no_decay = [], []
    for name, p in model_b.named_parameters():
        flat_like = p.ndim <= 1 or name in ("cls_token", "pos_embed")
        (no_decay if flat_like else decay).append(p)
    update_a, total_a, keep_a = updater(
        model_a, [{"params": list(model_a.parameters()), "weight_decay": 0.1}], capturable
    )
    update_b, total_b, keep_b = updater(
        model_b,
        [{"params": decay, "weight_decay": 0.05}, {"params": no_decay, "weight_decay": 0.0}],
        capturable,
    )
    streams = side_streams(device, 2)

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
        f"AdamW (foreach{', capturable' if capturable else ''}) of two models on 2 side "
        f"streams: MLP {layers}x{width} ({tensors_a} tensors, {total_a} values) and ViT-S-like "
        f"{depth} x TransformerEncoderLayer({d}, {heads}) ({tensors_b} tensors, {total_b} "
        f"values), gradients from flat buffers, state restored each step"
    )
    return Built(step, inputs, description, [*keep_a, *keep_b])


if __name__ == "__main__":
    main(build, __doc__)
