"""Branch-order probe: ``holdout32``'s convolution branch beside its GEMM branch, the
convolution branch forked (captured) first, as there (``_convgemm.py``).

    traceinspect profile conv_first_2streams_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from _convgemm import build_pair


def build(device: torch.device, smoke: bool) -> Built:
    return build_pair(device, smoke, gemm_first=False, lead=False, label="convolutions first")


if __name__ == "__main__":
    main(build, __doc__)
