"""An attention layer whose Q, K and V projections run on three side streams (twenty-fourth
hold-out): 8 sequences of 256 tokens, d 1024, bf16 — each projection (1024 -> 1024) forked
onto its own stream with ``wait_stream`` and joined back, then
``scaled_dot_product_attention`` with 16 heads of 64 and the output projection 1024 -> 1024
on the current stream. Three GEMMs of 2,048 rows side by side, the attention kernel, a
transpose copy and one more GEMM. On a CPU all runs on one stream (in fp32).

    traceinspect profile qkv_proj_3streams_bf16_b8.py
"""

from __future__ import annotations

from collections.abc import Callable

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn


def build(device: torch.device, smoke: bool) -> Built:
    batch, n, d, heads = (2, 4, 16, 2) if smoke else (8, 256, 1024, 16)
    dtype = low_precision(device)
    q_proj, k_proj, v_proj, out_proj = (nn.Linear(d, d) for _ in range(4))
    modules = nn.ModuleList([q_proj, k_proj, v_proj, out_proj])
    modules = modules.to(device=device, dtype=dtype).eval()
    streams = side_streams(device, 3)

    def project(proj: nn.Module, x: Tensor) -> Callable[[], Tensor]:
        return lambda: proj(x).view(batch, n, heads, d // heads).transpose(1, 2)

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        q, k, v = fork_join(device, streams, [project(p, x) for p in (q_proj, k_proj, v_proj)])
        y = F.scaled_dot_product_attention(q, k, v)
        return out_proj(y.transpose(1, 2).reshape(batch, n, d))

    inputs = [(torch.randn(batch, n, d, device=device, dtype=dtype),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"Q/K/V projections {d} on 3 streams + SDPA {heads} heads, b{batch}x{n}",
        [modules],
    )


if __name__ == "__main__":
    main(build, __doc__)
