"""Two cuDNN LSTMs on two side streams, their last states joined (twenty-seventh hold-out):
32 sequences of 48 steps, fp32; one LSTM of 2 layers, 256 -> 512, reads the word features,
the other of 1 layer, 64 -> 256, reads the character features — each forked onto its own
stream with ``wait_stream`` and joined back — then the two last hidden states concatenated
and a Linear 768 -> 20 on the current stream. ``nn.LSTM`` runs as cuDNN's persistent or
per-step kernels; on a CPU all runs on one stream.

    traceinspect profile lstm_pair_2streams_b32.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor, nn


def build(device: torch.device, smoke: bool) -> Built:
    batch, steps, words, chars, hw, hc = (
        (2, 4, 8, 4, 8, 4) if smoke else (32, 48, 256, 64, 512, 256)
    )
    word_lstm = nn.LSTM(words, hw, num_layers=2, batch_first=True)
    char_lstm = nn.LSTM(chars, hc, num_layers=1, batch_first=True)
    head = nn.Linear(hw + hc, 20)
    model = nn.ModuleList([word_lstm, char_lstm, head]).to(device).eval()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(w: Tensor, c: Tensor) -> Tensor:
        a, b = fork_join(
            device, streams, [lambda: word_lstm(w)[1][0][-1], lambda: char_lstm(c)[1][0][-1]]
        )
        return head(torch.cat([a, b], dim=1))

    inputs = [
        (
            torch.randn(batch, steps, words, device=device),
            torch.randn(batch, steps, chars, device=device),
        )
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"LSTM {words}->{hw}x2 beside LSTM {chars}->{hc} on 2 streams, b{batch}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
