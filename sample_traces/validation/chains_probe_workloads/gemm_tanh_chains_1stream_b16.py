"""1 GEMM + tanh recurrence(s) of 48 steps (16 x 512, bf16) on 1 side stream(s), joined
on the current stream (the chains probe: see _chains.py).

    traceinspect profile gemm_tanh_chains_1stream_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _chains import gemm_tanh_chains
from _common import Built, main


def build(device: torch.device, smoke: bool) -> Built:
    return gemm_tanh_chains(device, smoke, 1)


if __name__ == "__main__":
    main(build, __doc__)
