"""A classifier's forward pass with its batch metrics computed on a side stream beside a
second head, 512 examples, bf16 (twentieth hold-out), inference, fed two inputs: the
features (512 x 1024) and the int64 labels (512). A 4-layer MLP (Linear 1024->1024, GELU) to
a first head of 100 classes on the current stream; then two side streams: one computes from
the first head's logits the cross-entropy, top-1 and top-5 accuracy and a 100 x 100
confusion count (``scatter_add_`` into a fixed-size buffer: ``bincount`` would sync the
host), the other runs a deeper head (two more Linear 1024->1024 layers and a Linear to 100)
from the trunk; the current stream joins both and returns both heads' logits with the
metrics. About 45 kernels: small reductions, ``topk`` and the scatter beside 512 x 1024 x
1024 GEMMs. Inputs: the features and the labels. Returns (512 x 100, 512 x 100, 3 metrics,
100 x 100 counts).

    traceinspect profile metrics_side_stream_b512.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

CLASSES = 100


def mlp(d: int, layers: int) -> nn.Module:
    return nn.Sequential(*[m for _ in range(layers) for m in (nn.Linear(d, d), nn.GELU())])


def build(device: torch.device, smoke: bool) -> Built:
    batch, d, classes = (8, 16, 10) if smoke else (512, 1024, CLASSES)
    dtype = low_precision(device)
    trunk, deep = mlp(d, 4), mlp(d, 2)
    head, deep_head = nn.Linear(d, classes), nn.Linear(d, classes)
    model = nn.ModuleList([trunk, deep, head, deep_head]).to(device=device, dtype=dtype).eval()
    streams = side_streams(device, 2)

    def metrics(logits: Tensor, labels: Tensor) -> tuple[Tensor, Tensor]:
        loss = F.cross_entropy(logits.float(), labels)
        top5 = logits.topk(5, dim=-1).indices
        top1_acc = (top5[:, 0] == labels).float().mean()
        top5_acc = (top5 == labels.unsqueeze(1)).any(-1).float().mean()
        index = labels * classes + top5[:, 0]
        confusion = torch.zeros(classes * classes, dtype=torch.long, device=labels.device)
        confusion.scatter_add_(0, index, torch.ones_like(index))
        return torch.stack([loss, top1_acc, top5_acc]), confusion.view(classes, classes)

    @torch.no_grad()
    def step(x: Tensor, labels: Tensor) -> tuple[Tensor, ...]:
        h = trunk(x)
        logits = head(h)
        (scores, confusion), deep_logits = fork_join(
            device, streams, [lambda: metrics(logits, labels), lambda: deep_head(deep(h))]
        )
        return logits, deep_logits, scores, confusion

    inputs = [
        (
            torch.randn(batch, d, device=device, dtype=dtype),
            torch.randint(0, classes, (batch,), device=device),
        )
        for _ in range(2)
    ]
    description = f"MLP classifier b{batch} with metrics on a side stream beside a deeper head"
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
