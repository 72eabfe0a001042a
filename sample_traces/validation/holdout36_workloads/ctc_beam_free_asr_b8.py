"""A small convolutional CTC acoustic model and its greedy (beam-free) CTC decoding at batch
8 (thirty-sixth hold-out): 8 utterances of 80 mel features x 800 frames, bf16 on a GPU for
the model and fp32 for the log-softmax and the decoding, eval mode, no gradients, no
recurrence. Subsampling: ``Conv1d(80, 256, 3, stride 2, padding 1)`` + GELU and
``Conv1d(256, 256, 3, stride 2, padding 1)`` + GELU, 800 -> 200 frames. Then 6 residual
depthwise-separable blocks, each x + SiLU(BatchNorm(pointwise(depthwise(x)))): a depthwise
``Conv1d(256, 256, 15, padding 7, groups=256)``, a pointwise ``Conv1d(256, 256, 1)`` and a
BatchNorm1d (running statistics set at build). Then ``Linear(256, 128)`` per frame (128
output classes, the CTC blank is 0), cast to fp32, ``log_softmax`` over the classes, and
the greedy decoding with fixed shapes: the best class per frame, kept where it is not the
blank, not a repeat of the previous frame's and within the utterance's length (input
lengths 200, 196, ..., 172, an int64 tensor made at build), -1 elsewhere; and the mean best
log-probability over the frames within each length. ``F.ctc_loss`` is left out: on CUDA it
copies its lengths to the host, which no CUDA graph can capture. Input: the mel
spectrograms (8, 80, 800). Returns the decoded ids (8, 200, int64, -1 where dropped) and the
per-utterance mean best log-probability (8, fp32).

    traceinspect profile ctc_beam_free_asr_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

BLOCKS, KERNEL, BATCH = 6, 15, 8


class SeparableBlock(nn.Module):
    def __init__(self, channels: int, kernel: int) -> None:
        super().__init__()
        self.depthwise = nn.Conv1d(channels, channels, kernel, padding=kernel // 2, groups=channels)
        self.pointwise = nn.Conv1d(channels, channels, 1)
        self.norm = nn.BatchNorm1d(channels)

    def forward(self, x: Tensor) -> Tensor:
        return x + F.silu(self.norm(self.pointwise(self.depthwise(x))))


class AcousticModel(nn.Module):
    def __init__(self, features: int, channels: int, vocab: int) -> None:
        super().__init__()
        self.subsample = nn.Sequential(
            nn.Conv1d(features, channels, 3, stride=2, padding=1),
            nn.GELU(),
            nn.Conv1d(channels, channels, 3, stride=2, padding=1),
            nn.GELU(),
        )
        self.blocks = nn.Sequential(*(SeparableBlock(channels, KERNEL) for _ in range(BLOCKS)))
        self.out = nn.Linear(channels, vocab)

    def forward(self, mel: Tensor) -> Tensor:
        x = self.blocks(self.subsample(mel))  # (b, c, frames / 4)
        return self.out(x.transpose(1, 2))  # (b, frames / 4, vocab)


def build(device: torch.device, smoke: bool) -> Built:
    batch, features, frames, channels, vocab, _ = (
        (2, 16, 64, 32, 16, 4) if smoke else (BATCH, 80, 800, 256, 128, 40)
    )
    dtype = low_precision(device)
    model = AcousticModel(features, channels, vocab)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm1d):
            m.running_mean.normal_(0, 0.1)
            m.running_var.uniform_(0.5, 1.5)
    model = model.to(device, dtype).eval()
    out_frames = frames // 4
    idx = torch.arange(batch, device=device)
    input_lengths = out_frames - 4 * idx
    frame = torch.arange(out_frames, device=device)

    @torch.no_grad()
    def step(mel: Tensor) -> tuple[Tensor, Tensor]:
        logp = torch.log_softmax(model(mel).float(), dim=-1)  # (b, t, vocab)
        best_logp, best = logp.max(dim=-1)  # (b, t)
        valid = frame[None, :] < input_lengths[:, None]
        previous = torch.cat([torch.full_like(best[:, :1], -1), best[:, :-1]], dim=1)
        keep = valid & (best != 0) & (best != previous)
        ids = torch.where(keep, best, torch.full_like(best, -1))
        score = (best_logp * valid).sum(dim=1) / input_lengths
        return ids, score

    inputs = [(torch.randn(batch, features, frames, device=device, dtype=dtype),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"conv CTC acoustic model, 2 stride-2 convs + {BLOCKS} separable k{KERNEL} blocks "
        f"{channels} ch, vocab {vocab}, greedy CTC decoding, "
        f"b{batch} x {features} mels x {frames} frames",
        [model, input_lengths],
    )


if __name__ == "__main__":
    main(build, __doc__)
