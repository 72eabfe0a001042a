"""Greedy CTC decoding on the GPU (twenty-second hold-out): 16 utterances of 400 frames over
96 symbols, fp32 — log-softmax, best path (argmax), repeats collapsed (a frame equal to the
one before), blanks dropped, each kept symbol's output position (cumulative sum of the
mask), the symbols scattered to their positions, the lengths, and the best path's score
(gathered log-probabilities summed). About 20 small kernels.

    traceinspect profile ctc_greedy_decode_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor

BLANK = 0


def build(device: torch.device, smoke: bool) -> Built:
    batch, frames, symbols = (2, 12, 6) if smoke else (16, 400, 96)

    @torch.no_grad()
    def step(logits: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        logp = torch.log_softmax(logits, dim=-1)
        score, best = logp.max(dim=-1)
        previous = torch.nn.functional.pad(best[:, :-1], (1, 0), value=-1)
        keep = (best != previous) & (best != BLANK)
        position = torch.cumsum(keep.long(), dim=1) - 1
        # dropped frames all write -1 to a spare last column: no two writes differ
        out = torch.full((best.shape[0], frames + 1), -1, dtype=best.dtype, device=best.device)
        target = torch.where(keep, position, torch.full_like(position, frames))
        out.scatter_(1, target, torch.where(keep, best, torch.full_like(best, -1)))
        out = out[:, :frames]
        lengths = keep.sum(dim=1)
        return out, lengths, score.sum(dim=1)

    inputs = [(torch.randn(batch, frames, symbols, device=device) * 3,) for _ in range(2)]
    return Built(step, inputs, f"greedy CTC decode b{batch} x {frames} frames x {symbols}")


if __name__ == "__main__":
    main(build, __doc__)
