"""A training step of a plain tabular MLP classifying 1024 Covertype rows (Blackard and Dean's
forest cover types, UCI: 10 numeric cartographic features and 44 one-hot wilderness-area and
soil-type flags, 7 classes), the everyday baseline of the tabular deep-learning comparisons
(Gorishniy, Rubachev, Khrulkov and Babenko, NeurIPS 2021), with LayerNorm and GELU in its blocks and
the fused AdamW (sixty-fifth hold-out: one stream, bf16 autocast over fp32 weights: the restore of
the parameters and the AdamW state from a snapshot (foreach copies) and the in-place zeroing of the
gradients; the forward under autocast, ``Linear(54, 1024)`` and 6 blocks of ``Linear(1024, 1024)``,
``LayerNorm`` (run in fp32 by autocast) and GELU, then ``Linear(1024, 7)``, each weight cast to bf16
first; the cross-entropy with label smoothing 0.1 in fp32; the backward (the GEMMs for the data and
weight gradients, the LayerNorm and GELU backwards and the casts); ``torch.optim.AdamW`` (lr 1e-3,
betas (0.9, 0.999), weight decay 1e-5, ``fused=True``, ``capturable=True`` on a GPU) over the 28
tensors, 6.4 M values, in a few multi-tensor kernels; some 180 kernels, GEMMs of 1024 x 1024 x 1024
(2.1 GFLOP each) and elementwise kernels of a few microseconds, 40 GFLOP in all, some 0.2 to 0.5 ms
of GPU time). Laid out as the papers' MLP (``Linear``, activation, dropout blocks) with a LayerNorm
before each GELU and dropout off (it would make replayed losses differ from eager ones), the one-hot
flags fed raw beside the standardized numeric features, with the changes a replayable step needs:
the parameters, AdamW's moments and its step counts (the state allocated at build by one step on
zero gradients) restored from a snapshot at the start of every step and the gradients zeroed in
place (``zero_grad(set_to_none=False)``), so a step depends only on its inputs and replayed losses
compare with eager ones. Under ``torch.autocast(dtype=torch.bfloat16)`` on a GPU; fp32 without
autocast on a CPU, where AdamW is neither fused nor capturable. Inputs (two input sets): the
features (1024, 54) fp32, 10 Gaussian columns, one of 4 wilderness flags and one of 40 soil flags
set; the cover types (1024,) int64 below 7. Returns the loss (a 0-d fp32 tensor, detached).

    traceinspect profile covertype_mlp_layernorm_gelu_fused_adamw_train_bf16_one_stream_b1024.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn

NUMERIC, WILDERNESS, SOIL, CLASSES, WIDTH, BLOCKS = 10, 4, 40, 7, 1024, 6
LR, WEIGHT_DECAY, SMOOTHING = 1e-3, 1e-5, 0.1


class TabularMLP(nn.Module):
    def __init__(self, features: int, width: int, blocks: int, classes: int) -> None:
        super().__init__()
        self.first = nn.Linear(features, width)
        self.blocks = nn.Sequential(
            *(
                nn.Sequential(nn.Linear(width, width), nn.LayerNorm(width), nn.GELU())
                for _ in range(blocks)
            )
        )
        self.head = nn.Linear(width, classes)

    def forward(self, x: Tensor) -> Tensor:
        return self.head(self.blocks(self.first(x)))


def build(device: torch.device, smoke: bool) -> Built:
    batch, width, blocks = (16, 32, 2) if smoke else (1024, WIDTH, BLOCKS)
    cuda = device.type == "cuda"
    features = NUMERIC + WILDERNESS + SOIL
    model = TabularMLP(features, width, blocks, CLASSES).to(device).train()
    params = list(model.parameters())
    optimizer = torch.optim.AdamW(
        params, lr=LR, weight_decay=WEIGHT_DECAY, fused=cuda, capturable=cuda
    )
    for p in params:
        p.grad = torch.zeros_like(p)
    optimizer.step()  # allocates exp_avg, exp_avg_sq and the step counts
    state = [optimizer.state[p][key] for key in ("exp_avg", "exp_avg_sq", "step") for p in params]
    live = params + state
    snapshot = [t.detach().clone() for t in live]

    def step(x: Tensor, cover: Tensor) -> Tensor:
        with torch.no_grad():
            torch._foreach_copy_(live, snapshot)
        optimizer.zero_grad(set_to_none=False)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=cuda):
            logits = model(x)
        loss = F.cross_entropy(logits.float(), cover, label_smoothing=SMOOTHING)
        loss.backward()
        optimizer.step()
        return loss.detach()

    def rows() -> tuple[Tensor, Tensor]:
        numeric = torch.randn(batch, NUMERIC, device=device)
        wilderness = F.one_hot(torch.randint(0, WILDERNESS, (batch,), device=device), WILDERNESS)
        soil = F.one_hot(torch.randint(0, SOIL, (batch,), device=device), SOIL)
        x = torch.cat((numeric, wilderness.float(), soil.float()), dim=1)
        return x, torch.randint(0, CLASSES, (batch,), device=device)

    inputs = [rows() for _ in range(2)]
    total = sum(p.numel() for p in params)
    description = (
        f"Covertype MLP training step: {features} -> {blocks} x (Linear {width}, LayerNorm, GELU) "
        f"-> {CLASSES}, {'autocast bf16' if cuda else 'fp32'} + AdamW "
        f"({'fused, capturable' if cuda else 'for-loop'}) over {len(params)} tensors ({total} "
        f"values), one stream, b{batch}"
    )
    return Built(step, inputs, description, [model, optimizer, snapshot])


if __name__ == "__main__":
    main(build, __doc__)
