"""A mixed-precision training step of a small vision transformer on CIFAR-sized images
(forty-eighth hold-out: a ViT trained end to end, patch embedding, CLS token, label-smoothed
cross-entropy and a capturable AdamW in one step): 64 RGB images of 32 x 32 cut into 4 x 4
patches (64 tokens + a CLS token), a ``Conv2d(3, 192, 4, stride 4)`` patch embedding, a learned
CLS token and learned positions (65 x 192), 2 blocks of ViT-Tiny width, each the project's
``_blocks.PreNormAttention`` (LayerNorm, a fused ``Linear(192, 576)`` to q, k, v, 3 heads of 64
through ``F.scaled_dot_product_attention``, ``Linear(192, 192)``, residual) and
``_blocks.ResidualMLP`` (LayerNorm, ``Linear(192, 768)``, GELU, ``Linear(768, 192)``,
residual), a final LayerNorm and ``Linear(192, 10)`` on the CLS token; fp32 weights, dropout
none. The forward and loss run under ``torch.autocast(device_type, dtype=torch.bfloat16)`` on a
GPU (the convolution, Linears and attention in bf16 on casts of the fp32 weights; the
LayerNorms, the residual stream and the loss in fp32): cross-entropy with label smoothing 0.1
against integer labels, ``loss.backward()``, then ``torch.optim.AdamW`` (lr 1e-3, weight decay
0.05 on every parameter, ``foreach=True``, ``capturable=True`` on a GPU so the step counts live
there and the step can be graphed; torch allows capturable only for GPU parameters, so a CPU
smoke run uses capturable=False and no autocast). The optimizer state is allocated at build by
one warm step on zero gradients, then the parameters and the Adam state (exp_avg, exp_avg_sq,
step) are snapshotted; every step first restores them (foreach copies) and zeroes the gradients
in place (``zero_grad(set_to_none=False)``), so a step depends only on its inputs and replayed
losses compare with eager ones. One stream. Inputs: images (64, 3, 32, 32) fp32 and labels
(64,) int64. Returns the loss (a 0-d fp32 tensor, detached).

    traceinspect profile vit_tiny_cifar_train_adamw_b64.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _blocks import PreNormAttention, ResidualMLP
from _common import Built, main
from torch import Tensor, nn

CLASSES, DEPTH, LR, WEIGHT_DECAY, SMOOTHING = 10, 2, 1e-3, 0.05, 0.1


class ViT(nn.Module):
    def __init__(self, image: int, patch: int, d: int, heads: int) -> None:
        super().__init__()
        self.embed = nn.Conv2d(3, d, patch, patch)
        self.cls = nn.Parameter(torch.randn(1, 1, d) * 0.02)
        self.pos = nn.Parameter(torch.randn(1, (image // patch) ** 2 + 1, d) * 0.02)
        layers: list[nn.Module] = []
        for _ in range(DEPTH):
            layers += [PreNormAttention(d, heads), ResidualMLP(d, 4 * d)]
        self.blocks = nn.Sequential(*layers)
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, CLASSES)

    def forward(self, images: Tensor) -> Tensor:
        tokens = self.embed(images).flatten(2).transpose(1, 2)
        cls = self.cls.expand(images.shape[0], -1, -1)
        x = torch.cat([cls, tokens], dim=1) + self.pos
        return self.head(self.norm(self.blocks(x))[:, 0])


def build(device: torch.device, smoke: bool) -> Built:
    batch, image, patch, d, heads = (4, 16, 4, 32, 2) if smoke else (64, 32, 4, 192, 3)
    autocast = device.type == "cuda"
    model = ViT(image, patch, d, heads).to(device).train()
    params = list(model.parameters())
    capturable = device.type == "cuda"
    optimizer = torch.optim.AdamW(
        params, lr=LR, weight_decay=WEIGHT_DECAY, foreach=True, capturable=capturable
    )
    for p in params:
        p.grad = torch.zeros_like(p)
    optimizer.step()  # allocates exp_avg, exp_avg_sq and the step counts
    state = [optimizer.state[p][key] for key in ("exp_avg", "exp_avg_sq", "step") for p in params]
    live = params + state
    snapshot = [t.detach().clone() for t in live]

    def step(images: Tensor, labels: Tensor) -> Tensor:
        with torch.no_grad():
            torch._foreach_copy_(live, snapshot)
        optimizer.zero_grad(set_to_none=False)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=autocast):
            loss = F.cross_entropy(model(images), labels, label_smoothing=SMOOTHING)
        loss.backward()
        optimizer.step()
        return loss.detach()

    inputs = [
        (
            torch.randn(batch, 3, image, image, device=device),
            torch.randint(0, CLASSES, (batch,), device=device),
        )
        for _ in range(2)
    ]
    description = (
        f"ViT training step: {image}x{image} images, patch {patch}, {DEPTH} blocks d{d} "
        f"{heads} heads, label smoothing {SMOOTHING}, "
        f"{'autocast bf16' if autocast else 'fp32'} + AdamW "
        f"(foreach{', capturable' if capturable else ''}), b{batch}"
    )
    return Built(step, inputs, description, [model, optimizer, snapshot])


if __name__ == "__main__":
    main(build, __doc__)
