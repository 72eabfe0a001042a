"""A deep ensemble of four MLP classifiers, each on its own side stream, 16 examples, bf16
(twentieth hold-out), inference: each member (Linear 784->2048, GELU, LayerNorm, Linear
2048->2048, GELU, LayerNorm, Linear 2048->10) runs on its stream; the current stream joins
them, averages the four softmaxes and takes the predictive entropy. About 45 kernels; the
members' 16 x 2048 x 2048 GEMMs read 8 MB of weights each (memory-bound, a few µs apiece on
an H200), so four of them side by side share the memory bandwidth. Input: 16 x 784. Returns
the mean probabilities (16 x 10) and the entropy (16).

    traceinspect profile ensemble_mlp_4streams_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

MEMBERS, CLASSES = 4, 10


def member(d: int, hidden: int) -> nn.Module:
    return nn.Sequential(
        nn.Linear(d, hidden), nn.GELU(), nn.LayerNorm(hidden),
        nn.Linear(hidden, hidden), nn.GELU(), nn.LayerNorm(hidden),
        nn.Linear(hidden, CLASSES),
    )  # fmt: skip


def build(device: torch.device, smoke: bool) -> Built:
    batch, d, hidden = (2, 16, 32) if smoke else (16, 784, 2048)
    dtype = low_precision(device)
    members = nn.ModuleList(member(d, hidden) for _ in range(MEMBERS))
    members = members.to(device=device, dtype=dtype).eval()
    streams = side_streams(device, MEMBERS)

    @torch.no_grad()
    def step(x: Tensor) -> tuple[Tensor, Tensor]:
        probs = fork_join(
            device, streams, [lambda m=m: F.softmax(m(x).float(), dim=-1) for m in members]
        )
        mean = torch.stack(probs).mean(0)
        entropy = -(mean * mean.clamp_min(1e-12).log()).sum(-1)
        return mean, entropy

    inputs = [(torch.randn(batch, d, device=device, dtype=dtype),) for _ in range(2)]
    description = f"ensemble of {MEMBERS} MLPs {d}->{hidden}x2->{CLASSES} on {MEMBERS} streams"
    return Built(step, inputs, description, [members])


if __name__ == "__main__":
    main(build, __doc__)
