"""A ranking model fed ten separate small inputs for 128 candidates (forty-fifth hold-out: a
short step in which the copies into a graph's ten static inputs are a large share): the
inputs are a dense feature block (128 x 96), six embeddings already looked up (128 x 32 each),
a position bias (128 x 1), a freshness feature (128 x 4) and a query vector (128 x 64), bf16.
Each goes through its own ``Linear`` to 48 features and a ReLU; the ten outputs are
concatenated (128 x 480) and scored by a ``Linear(480, 128)`` + ReLU + ``Linear(128, 1)``
head, then a softmax over the 128 candidates. Eval mode, no gradients. Returns the (128,)
scores.

    traceinspect profile ranker_10in_b128.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn

# name: width of each input
FEATURES = {
    "dense": 96,
    "user": 32,
    "item": 32,
    "author": 32,
    "topic": 32,
    "language": 32,
    "region": 32,
    "position": 1,
    "freshness": 4,
    "query": 64,
}


def build(device: torch.device, smoke: bool) -> Built:
    batch, width, hidden = (4, 8, 16) if smoke else (128, 48, 128)
    dtype = low_precision(device)
    towers = nn.ModuleList(
        nn.Sequential(nn.Linear(cin, width), nn.ReLU()) for cin in FEATURES.values()
    )
    head = nn.Sequential(nn.Linear(len(FEATURES) * width, hidden), nn.ReLU(), nn.Linear(hidden, 1))
    model = nn.ModuleList([towers, head]).to(device=device, dtype=dtype).eval()

    @torch.no_grad()
    def step(*parts: Tensor) -> Tensor:
        fused = torch.cat([t(x) for t, x in zip(towers, parts, strict=True)], dim=1)
        return torch.softmax(head(fused).squeeze(1).float(), dim=0)

    inputs = [
        tuple(torch.randn(batch, cin, device=device, dtype=dtype) for cin in FEATURES.values())
        for _ in range(2)
    ]
    widths = "+".join(str(c) for c in FEATURES.values())
    return Built(
        step,
        inputs,
        f"ranker, {len(FEATURES)} inputs ({widths}) each Linear->{width} + ReLU, cat, head "
        f"{len(FEATURES) * width}-{hidden}-1, softmax over {batch}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
