"""The optimizer half of a training step, the Adan optimizer (Xie et al., 2022, "Adan: Adaptive
Nesterov Momentum Algorithm") updating the parameters of a ViT-S/16 with its multi-tensor path
(fifty-sixth hold-out: one stream of 18 multi-tensor ``_foreach`` passes, plus one restoring copy
and the norms, over 152 fp32 tensors of 22 M values, each pass reading and writing some 88 MB a
tensor list, two to four lists, purely memory-bound, each pass a few launches of tens of
microseconds to 0.1 ms, no GEMM). The parameters are laid out as timm's ``vit_small_patch16_224``
(Dosovitskiy et al., 2021; as the project's other ViTs: a ``Conv2d(3, 384, 16, stride 16)`` patch
embedding, a class token and 197 position embeddings, 12 ``nn.TransformerEncoderLayer(384, 6,
dim_feedforward=1536, norm_first=True)``, a final ``LayerNorm(384)`` and a ``Linear(384, 1000)``
head: 152 tensors). The update is sail-sg/Adan's ``_multi_tensor_adan`` (``Adan(foreach=True)``, lr
1e-2, betas (0.98, 0.92, 0.99), eps 1e-8, weight decay 0.02, ``no_prox=False``, ``max_grad_norm=0``,
so the clip factor is 1.0) with the same ``torch._foreach_*`` calls in the same order: grads x clip
(``_foreach_mul_``, in place on the gradients, times 1.0); the negated previous gradients plus the
gradients (``_foreach_add_``); m = 0.98 m + 0.02 g (``_foreach_mul_``, ``_foreach_add_``); the
gradient-difference moment d = 0.92 d + 0.08 (g - g_prev) (``_foreach_mul_``, ``_foreach_add_``); (g
- g_prev) x 0.92 + g, in place (``_foreach_mul_``, ``_foreach_add_``); n = 0.99 n + 0.01 that
squared (``_foreach_mul_``, ``_foreach_addcmul_``); the denominator sqrt(n) / sqrt(1 - 0.99^k) + eps
(``_foreach_sqrt``, ``_foreach_div_``, ``_foreach_add_``); p = p - lr / (1 - 0.98^k) m / denominator
and p = p - lr 0.92 / (1 - 0.92^k) d / denominator (two ``_foreach_addcdiv_``); p = p / (1 + lr wd)
(``_foreach_div_``); the previous gradients' store set to -g (``_foreach_zero_``,
``_foreach_add_``). The step count k is a Python int in Adan (its bias corrections Python floats
baked into the launches), here 11 at every step, as the state is restored to the same point. The
state starts as after 10 steps, made at build: the moments small Gaussians (n their squares) and the
negated previous gradients 1e-3 x Gaussian; then the parameters and the state are snapshotted. Each
step: the parameters and the four state lists restored from the snapshot (one ``_foreach_copy_``),
so a step depends only on its inputs, the gradients taken as views of the flat gradient input (one
view per parameter, no copy), the update, and the norms of the head's two tensors after it
(``_foreach_norm``). fp32, no autograd. Input (two input sets): the flat gradients (22 M values),
fp32, 1e-3 x Gaussian. Returns the head's two norms (2,).

    traceinspect profile adan_foreach_vit_s16_update.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn

LR, BETAS, EPS, WEIGHT_DECAY, STEP, CLIP = 1e-2, (0.98, 0.92, 0.99), 1e-8, 0.02, 11, 1.0


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


def multi_tensor_adan(
    params: list[Tensor],
    grads: list[Tensor],
    exp_avgs: list[Tensor],
    exp_avg_sqs: list[Tensor],
    exp_avg_diffs: list[Tensor],
    neg_pre_grads: list[Tensor],
    step: int,
) -> None:
    """sail-sg/Adan's _multi_tensor_adan (no_prox False)."""
    beta1, beta2, beta3 = BETAS
    bias_correction1 = 1.0 - beta1**step
    bias_correction2 = 1.0 - beta2**step
    bias_correction3_sqrt = math.sqrt(1.0 - beta3**step)
    torch._foreach_mul_(grads, CLIP)
    torch._foreach_add_(neg_pre_grads, grads)
    torch._foreach_mul_(exp_avgs, beta1)
    torch._foreach_add_(exp_avgs, grads, alpha=1 - beta1)  # m_t
    torch._foreach_mul_(exp_avg_diffs, beta2)
    torch._foreach_add_(exp_avg_diffs, neg_pre_grads, alpha=1 - beta2)  # diff_t
    torch._foreach_mul_(neg_pre_grads, beta2)
    torch._foreach_add_(neg_pre_grads, grads)
    torch._foreach_mul_(exp_avg_sqs, beta3)
    torch._foreach_addcmul_(exp_avg_sqs, neg_pre_grads, neg_pre_grads, value=1 - beta3)  # n_t
    denom = torch._foreach_sqrt(exp_avg_sqs)
    torch._foreach_div_(denom, bias_correction3_sqrt)
    torch._foreach_add_(denom, EPS)
    step_size_diff = LR * beta2 / bias_correction2
    step_size = LR / bias_correction1
    torch._foreach_addcdiv_(params, exp_avgs, denom, value=-step_size)
    torch._foreach_addcdiv_(params, exp_avg_diffs, denom, value=-step_size_diff)
    torch._foreach_div_(params, 1 + LR * WEIGHT_DECAY)
    torch._foreach_zero_(neg_pre_grads)
    torch._foreach_add_(neg_pre_grads, grads, alpha=-1.0)


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        d, heads, depth, image, classes = 32, 2, 2, 32, 10
    else:
        d, heads, depth, image, classes = 384, 6, 12, 224, 1000
    model = ViT(d, heads, depth, image, 16, classes).to(device).train()
    params = [p.detach() for p in model.parameters()]
    exp_avgs = [1e-3 * torch.randn_like(p) for p in params]
    exp_avg_sqs = [torch.square(1e-3 * torch.randn_like(p)) for p in params]
    exp_avg_diffs = [1e-4 * torch.randn_like(p) for p in params]
    neg_pre_grads = [-1e-3 * torch.randn_like(p) for p in params]
    live = params + exp_avgs + exp_avg_sqs + exp_avg_diffs + neg_pre_grads
    snapshot = [t.clone() for t in live]
    head = params[-2:]
    total = sum(p.numel() for p in params)

    @torch.no_grad()
    def step(flat: Tensor) -> Tensor:
        torch._foreach_copy_(live, snapshot)
        chunks = flat.split([p.numel() for p in params])
        grads = [c.view_as(p) for c, p in zip(chunks, params, strict=True)]
        multi_tensor_adan(params, grads, exp_avgs, exp_avg_sqs, exp_avg_diffs, neg_pre_grads, STEP)
        return torch.stack(torch._foreach_norm(head))

    inputs = [(1e-3 * torch.randn(total, device=device),) for _ in range(2)]
    description = (
        f"Adan (sail-sg _multi_tensor_adan, foreach) of a ViT-S/16-like {depth} x "
        f"TransformerEncoderLayer({d}, {heads}) ({len(params)} tensors, {total} values, fp32), "
        f"state restored each step, gradients as views of the input"
    )
    return Built(step, inputs, description, [model, live, snapshot])


if __name__ == "__main__":
    main(build, __doc__)
