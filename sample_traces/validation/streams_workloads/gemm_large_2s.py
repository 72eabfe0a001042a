"""Two side streams of 3 x (2048x4096 @ 4096x4096) GEMM + ReLU: throughput-bound GEMMs, summed
on the current stream (concurrency fit set).

traceinspect profile gemm_large_2s.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from _gemm_chains import gemm_chains


def build(device: torch.device, smoke: bool) -> Built:
    return gemm_chains(2, 2048, 4096, 3, device, smoke)


if __name__ == "__main__":
    main(build, __doc__)
