"""Two side streams of 8 x (64x1024 @ 1024x1024) GEMM + ReLU: latency-bound GEMMs, summed on
the current stream (concurrency fit set).

traceinspect profile gemm_small_2s.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from _gemm_chains import gemm_chains


def build(device: torch.device, smoke: bool) -> Built:
    return gemm_chains(2, 64, 1024, 8, device, smoke)


if __name__ == "__main__":
    main(build, __doc__)
