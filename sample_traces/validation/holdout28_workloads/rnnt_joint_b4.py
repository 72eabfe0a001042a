"""An RNN-Transducer's joint network over a whole utterance lattice (twenty-eighth hold-out):
4 utterances of 120 encoder frames (640 channels) and 24 predictor steps (320 channels),
fp16 on a GPU. Each side is projected to 512 (Linear), the two broadcast-added into a
4 x 120 x 24 x 512 lattice, ``tanh``, then a Linear 512 -> 1,025 (1,024 word pieces and the
blank) and ``log_softmax`` over the vocabulary; the step returns the blank's and the
labels' log-probabilities gathered along the lattice (the terms the transducer loss reads).
A few large kernels (the 11,520 x 512 @ 512 x 1,025 GEMM, the 47 MB softmax), one stream.

    traceinspect profile rnnt_joint_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn


def build(device: torch.device, smoke: bool) -> Built:
    batch, frames, labels, enc, pred, joint, vocab = (
        (2, 6, 3, 16, 8, 16, 11) if smoke else (4, 120, 24, 640, 320, 512, 1025)
    )
    dtype = torch.float16 if device.type == "cuda" else torch.float32
    enc_proj, pred_proj = nn.Linear(enc, joint), nn.Linear(pred, joint)
    out = nn.Linear(joint, vocab)
    model = nn.ModuleList([enc_proj, pred_proj, out]).to(device, dtype).eval()

    @torch.no_grad()
    def step(f: Tensor, g: Tensor, targets: Tensor) -> tuple[Tensor, Tensor]:
        lattice = torch.tanh(enc_proj(f)[:, :, None] + pred_proj(g)[:, None])
        logp = out(lattice).float().log_softmax(dim=-1)  # b x T x U x V
        blank = logp[..., vocab - 1]
        label = (
            logp[:, :, :-1]
            .gather(-1, targets[:, None, :, None].expand(-1, frames, -1, -1))
            .squeeze(-1)
        )
        return blank, label

    inputs = [
        (
            torch.randn(batch, frames, enc, device=device, dtype=dtype),
            torch.randn(batch, labels, pred, device=device, dtype=dtype),
            torch.randint(0, vocab - 1, (batch, labels - 1), device=device),
        )
        for _ in range(2)
    ]
    return Built(
        step, inputs, f"RNN-T joint {frames}x{labels}x{joint} -> {vocab}, b{batch}", [model]
    )


if __name__ == "__main__":
    main(build, __doc__)
