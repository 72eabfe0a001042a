"""1 bidirectional cuDNN LSTM(s) (256 -> 512, 1 layer, 48 steps, b16, bf16) on 1 side
stream(s), joined on the current stream (the chains probe: see _chains.py).

    traceinspect profile cudnn_bilstm_chains_1stream_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _chains import cudnn_lstm_chains
from _common import Built, main


def build(device: torch.device, smoke: bool) -> Built:
    return cudnn_lstm_chains(device, smoke, 1, bidirectional=True)


if __name__ == "__main__":
    main(build, __doc__)
