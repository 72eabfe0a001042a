"""An fp32 GRU encoder on one stream with TF32 off (forty-fifth hold-out: short FP32-pipe
GEMMs in a recurrent loop, under the FP32 rule's 20 µs): 16 sequences of 48 steps of 256
features through a 2-layer ``nn.GRU(256, 768)`` (cuDNN), then a ``Linear(768, 40)`` on every
step's output and a log-softmax. Eval mode, no gradients. Input: the (16, 48, 256) sequences.
Returns the (16, 48, 40) log-probabilities.

    traceinspect profile gru_fp32_one_stream_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn


def build(device: torch.device, smoke: bool) -> Built:
    batch, steps, features, hidden = (2, 4, 8, 8) if smoke else (16, 48, 256, 768)
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    gru = nn.GRU(features, hidden, num_layers=2, batch_first=True)
    head = nn.Linear(hidden, 40)
    model = nn.ModuleList([gru, head]).to(device).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return torch.log_softmax(head(gru(x)[0]), dim=-1)

    inputs = [(torch.randn(batch, steps, features, device=device),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"fp32 GRU {features}->{hidden}x2 over {steps} steps + Linear {hidden}->40, TF32 off, "
        f"b{batch}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
