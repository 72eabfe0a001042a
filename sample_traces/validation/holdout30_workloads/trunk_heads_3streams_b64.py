"""A shared trunk with three task heads forked onto side streams and nothing after the join
(thirtieth hold-out): 64 samples of 1,024 features, bf16 on a GPU. The trunk (4 Linear
1,024 -> 1,024 with GELU and a LayerNorm) runs on the current stream; then a classification
head (Linear -> 2,048, GELU, Linear -> 1,000, log-softmax), a regression head (two Linear
1,024 -> 512 -> 8 with SiLU) and an embedding head (Linear -> 256, L2 normalize) each run on
their own side stream, forked with ``wait_stream`` after the trunk; the current stream joins
them and the step returns the three outputs as they are, with no kernel after the join.

    traceinspect profile trunk_heads_3streams_b64.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn


def build(device: torch.device, smoke: bool) -> Built:
    batch, d = (4, 32) if smoke else (64, 1024)
    dtype = low_precision(device)
    trunk = nn.Sequential(
        *[m for _ in range(4) for m in (nn.Linear(d, d), nn.GELU())], nn.LayerNorm(d)
    )
    classify = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, 1000))
    regress = nn.Sequential(nn.Linear(d, d // 2), nn.SiLU(), nn.Linear(d // 2, 8))
    embed = nn.Linear(d, 256)
    model = nn.ModuleList([trunk, classify, regress, embed]).to(device, dtype).eval()
    streams = side_streams(device, 3)

    @torch.no_grad()
    def step(x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        h = trunk(x)
        logits, values, vectors = fork_join(
            device,
            streams,
            [
                lambda: classify(h).float().log_softmax(dim=-1),
                lambda: regress(h),
                lambda: F.normalize(embed(h), dim=-1),
            ],
        )
        return logits, values, vectors

    inputs = [(torch.randn(batch, d, device=device, dtype=dtype),) for _ in range(2)]
    return Built(step, inputs, f"trunk d{d} + 3 heads on 3 side streams, b{batch}", [model])


if __name__ == "__main__":
    main(build, __doc__)
