"""Four side streams of 6 x (128x512 @ 512x512) GEMM + ReLU, summed on the current stream
(concurrency fit set).

traceinspect profile gemm_small_4s.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from _gemm_chains import gemm_chains


def build(device: torch.device, smoke: bool) -> Built:
    return gemm_chains(4, 128, 512, 6, device, smoke)


if __name__ == "__main__":
    main(build, __doc__)
