"""Branch-order probe: ``holdout32``'s two branches, the convolution branch captured first,
each branch opening with a one-block elementwise kernel (``_convgemm.py``): both branches'
first kernels fit on the device at once, so a GEMM branch that still starts late is held by
the executor, not by room.

    traceinspect profile conv_first_tiny_leads_2streams_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from _convgemm import build_pair


def build(device: torch.device, smoke: bool) -> Built:
    return build_pair(device, smoke, gemm_first=False, lead=True, label="tiny leads, convs first")


if __name__ == "__main__":
    main(build, __doc__)
