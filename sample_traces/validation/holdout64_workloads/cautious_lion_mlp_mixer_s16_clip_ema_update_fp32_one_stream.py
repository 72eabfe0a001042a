"""The optimizer half of a training step, a cautious Lion (C-Lion: Liang, Chen, Liu and Liu, 2024,
"Cautious Optimizers: Improving Training with One Line of Code", on Lion of Chen et al., 2023)
updating the 102 parameter tensors of an MLP-Mixer-S/16 from gradients copied in from a static
buffer, after global-norm gradient clipping and with decoupled weight decay on the weights only,
then an exponential moving average of the weights (sixty-fourth hold-out: one stream, fp32, no
autograd, no model forward: the restore of the parameters, Lion's momenta and the EMA weights (one
``_foreach_copy_`` of 306 tensors); the gradients copied into the parameters' ``.grad`` from views
of the flat gradient input (``_foreach_copy_``); ``clip_grad_norm_(1.0, foreach=True)`` (the
per-tensor norms, their norm, the clip coefficient clamped to 1, all on the device, and the foreach
scale); the weight decay p = p (1 - lr wd) over the 33 matrices and the stem's kernel
(``_foreach_mul_``), none on the 68 biases and LayerNorm parameters; Lion's interpolation c = 0.9 m
+ 0.1 g (``_foreach_lerp``) and its sign (``_foreach_sign_``); the caution: the products c g
(``_foreach_mul``), then per tensor the mask (c g > 0), its cast to fp32 and its mean (some 300
small kernels), the means clamped below at 1e-3 (``_foreach_clamp_min_``), the masks divided by them
(``_foreach_div_`` of a tensor by a 0-d tensor: one kernel a tensor, 102 more) and the update
multiplied by the masks (``_foreach_mul_``); p = p - lr c (``_foreach_add_``); m = 0.99 m + 0.01 g
(``_foreach_lerp_``); the EMA e = e + (1 - 0.9999) (p - e) (``_foreach_lerp_``); and the norms of
the EMA head's two tensors; some 450 kernels, the multi-tensor ones over 18.5 M values (74 MB a
list, memory-bound), the per-tensor caution ones a few microseconds each, some 0.4 to 1 ms of GPU
time). The parameters are laid out as MLP-Mixer-S/16 (Tolstikhin et al., 2021; timm's
``mixer_s16_224``: a ``Conv2d(3, 512, 16, stride 16)`` stem, 8 mixer blocks of a ``LayerNorm(512)``,
the token MLP ``Linear(196, 256)``, GELU, ``Linear(256, 196)``, a ``LayerNorm(512)`` and the channel
MLP ``Linear(512, 2048)``, GELU, ``Linear(2048, 512)``, then a ``LayerNorm(512)`` and a
``Linear(512, 1000)`` head: 102 tensors of 196 to 1.05 M values). The update is Lion's (lr 1e-4,
betas (0.9, 0.99), weight decay 1.0 decoupled as lr wd, the two parameter groups the usual split)
with the caution mask as timm's cautious optimizers write it (``mask = (update * grad > 0)``,
divided by its mean clamped at 1e-3), here over the tensor lists; the EMA as a model-EMA of decay
0.9999 past its warm-up, one foreach lerp. The state starts as after some training, made at build:
the momenta 1e-3 x Gaussian, the EMA the parameters plus 1e-3 x Gaussian; then the parameters and
the state are snapshotted; each step restores them first, so a step depends only on its inputs and
replayed results compare with eager ones. Input (two input sets): the flat gradients (18.5 M
values), fp32, Gaussian, scaled to a norm of some 1.1 (10 % above the clip norm of 1, so the clip
scales them). Returns the EMA head's two norms and the gradients' total norm (3,).

    traceinspect profile cautious_lion_mlp_mixer_s16_clip_ema_update_fp32_one_stream.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn

LR, BETA1, BETA2, WEIGHT_DECAY, MAX_NORM = 1e-4, 0.9, 0.99, 1.0, 1.0
EMA_DECAY, MASK_FLOOR = 0.9999, 1e-3


class MixerBlock(nn.Module):
    def __init__(self, tokens: int, dim: int, token_hidden: int, channel_hidden: int) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.token_mlp = nn.Sequential(
            nn.Linear(tokens, token_hidden), nn.GELU(), nn.Linear(token_hidden, tokens)
        )
        self.norm2 = nn.LayerNorm(dim)
        self.channel_mlp = nn.Sequential(
            nn.Linear(dim, channel_hidden), nn.GELU(), nn.Linear(channel_hidden, dim)
        )


class MlpMixer(nn.Module):
    """timm's MlpMixer's parameters (the forward is not run: the step is the update)."""

    def __init__(self, image: int, patch: int, dim: int, depth: int, classes: int) -> None:
        super().__init__()
        tokens = (image // patch) ** 2
        self.stem = nn.Conv2d(3, dim, patch, stride=patch)
        self.blocks = nn.ModuleList(
            MixerBlock(tokens, dim, dim // 2, 4 * dim) for _ in range(depth)
        )
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)


def cautious_lion(
    params: list[Tensor],
    decay: list[Tensor],
    grads: list[Tensor],
    exp_avgs: list[Tensor],
) -> None:
    torch._foreach_mul_(decay, 1 - LR * WEIGHT_DECAY)
    updates = torch._foreach_lerp(exp_avgs, grads, 1 - BETA1)
    torch._foreach_sign_(updates)
    masks = torch._foreach_mul(updates, grads)
    masks = [(m > 0).to(g.dtype) for m, g in zip(masks, grads, strict=True)]
    scales = [m.mean() for m in masks]
    torch._foreach_clamp_min_(scales, MASK_FLOOR)
    torch._foreach_div_(masks, scales)
    torch._foreach_mul_(updates, masks)
    torch._foreach_add_(params, updates, alpha=-LR)
    torch._foreach_lerp_(exp_avgs, grads, 1 - BETA2)


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        image, patch, dim, depth, classes = 32, 8, 16, 2, 10
    else:
        image, patch, dim, depth, classes = 224, 16, 512, 8, 1000
    model = MlpMixer(image, patch, dim, depth, classes).to(device)
    params = [p.detach() for p in model.parameters()]
    decay = [p for p in params if p.ndim >= 2]
    grads = [torch.zeros_like(p) for p in params]
    for p, g in zip(model.parameters(), grads, strict=True):
        p.grad = g
    exp_avgs = [1e-3 * torch.randn_like(p) for p in params]
    ema = [p + 1e-3 * torch.randn_like(p) for p in params]
    live = params + exp_avgs + ema
    snapshot = [t.clone() for t in live]
    numels = [p.numel() for p in params]
    total = sum(numels)
    head = ema[-2:]

    @torch.no_grad()
    def step(flat: Tensor) -> Tensor:
        torch._foreach_copy_(live, snapshot)
        views = [c.view_as(p) for c, p in zip(flat.split(numels), params, strict=True)]
        torch._foreach_copy_(grads, views)
        total_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), MAX_NORM, foreach=True)
        cautious_lion(params, decay, grads, exp_avgs)
        torch._foreach_lerp_(ema, params, 1 - EMA_DECAY)
        return torch.stack([*torch._foreach_norm(head), total_norm])

    # a norm of some 1.1 x the clip norm
    inputs = [
        (torch.randn(total, device=device) * (1.1 * MAX_NORM / total**0.5),) for _ in range(2)
    ]
    description = (
        f"cautious Lion (foreach) + clip_grad_norm_ + weight EMA over MLP-Mixer ({depth} blocks, "
        f"d{dim}) {len(params)} tensors ({total} values, fp32), gradients copied in, one stream"
    )
    return Built(step, inputs, description, [model, live, snapshot, grads])


if __name__ == "__main__":
    main(build, __doc__)
