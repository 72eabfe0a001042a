"""Late fusion of six separate feature inputs for 32 samples, bf16 (sixteenth hold-out),
inference: a step with six small input tensors, so the graph's input copies (six of them, a
few KB each) are a visible part of a small step. The inputs: dense features (32 x 64), three
embeddings already looked up (user, item and category, 32 x 16 each), a mask of 8 binary
flags (32 x 8, as 0.0 / 1.0 in bf16) and a context vector (32 x 128). Each goes through its
own Linear to 64 features and a ReLU (six GEMMs with their bias and six ReLUs); the six
outputs are concatenated (32 x 384, one ``torch.cat``) and fed to a two-layer head, Linear
384->256, ReLU, Linear 256->1. 17 kernels, none over more than 32 x 384 values:
launch-bound. Inputs: the six tensors above. Returns the scores (32 x 1, bf16).

    traceinspect profile feature_fusion_6in_b32.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn

# name: width of each input
FEATURES = {"dense": 64, "user": 16, "item": 16, "category": 16, "mask": 8, "context": 128}


def build(device: torch.device, smoke: bool) -> Built:
    batch, width, hidden = (4, 8, 16) if smoke else (32, 64, 256)
    dtype = low_precision(device)
    branches = nn.ModuleList(
        nn.Sequential(nn.Linear(cin, width), nn.ReLU()) for cin in FEATURES.values()
    )
    branches = branches.to(device=device, dtype=dtype).eval()
    head = nn.Sequential(
        nn.Linear(len(FEATURES) * width, hidden), nn.ReLU(), nn.Linear(hidden, 1)
    ).to(device=device, dtype=dtype).eval()  # fmt: skip

    @torch.no_grad()
    def step(
        dense: Tensor, user: Tensor, item: Tensor, category: Tensor, mask: Tensor, context: Tensor
    ) -> Tensor:
        parts = (dense, user, item, category, mask, context)
        fused = torch.cat([b(x) for b, x in zip(branches, parts, strict=True)], dim=1)
        return head(fused)

    def make() -> tuple[Tensor, ...]:
        tensors = []
        for name, cin in FEATURES.items():
            if name == "mask":
                x = (torch.rand(batch, cin, device=device) < 0.5).to(dtype)
            else:
                x = torch.randn(batch, cin, device=device, dtype=dtype)
            tensors.append(x)
        return tuple(tensors)

    inputs = [make() for _ in range(2)]
    widths = "+".join(str(c) for c in FEATURES.values())
    description = (
        f"feature fusion, {len(FEATURES)} inputs ({widths}) each Linear->{width} + ReLU, "
        f"cat, head {len(FEATURES) * width}-{hidden}-1, batch {batch}"
    )
    return Built(step, inputs, description, [branches, head])


if __name__ == "__main__":
    main(build, __doc__)
