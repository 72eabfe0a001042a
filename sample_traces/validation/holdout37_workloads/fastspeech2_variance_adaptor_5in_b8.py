"""The FastSpeech 2 variance adaptor and length regulator (Ren et al., 2021, as ming024's
implementation runs it with ground-truth targets) on 8 utterances of 80 phonemes fed five
separate inputs (thirty-seventh hold-out): bf16 on a GPU for the hidden states and the
predictors, fp32 for the pitch and energy values, eval mode (dropout off), no gradients. Three
variance predictors of the same layout, each: ``Conv1d(256, 256, 3, padding 1)`` + ReLU +
LayerNorm(256), again ``Conv1d(256, 256, 3, padding 1)`` + ReLU + LayerNorm(256), then
``Linear(256, 1)``, the output zeroed on padded phonemes (``masked_fill``) and cast to fp32.
In order: the duration predictor on the encoder output x (log-duration predictions); the pitch
predictor on x, then x plus the pitch embedding, ``nn.Embedding(256, 256)`` (scaled by 0.1 at
build) at ``torch.bucketize`` of the pitch targets over 255 fp32 bin edges (``linspace(-3,
3)``, made at build); the energy predictor on that x, then x plus the energy embedding the
same way. Length regulation with fixed shapes, to 512 mel frames: the cumulative durations
(``cumsum``), ``torch.searchsorted(cum, frame, right=True)`` giving each of the 512 frames its
phoneme (clamped to 79; the (8, 512) frame indices made at build), x gathered at those
phonemes (8, 512, 256) and zeroed on frames past the utterance's total duration, the mel
padding mask.
Inputs: the encoder output (8, 80, 256), the phoneme padding mask (8, 80) bool (True on
padding; utterance lengths 80, 76, ..., 52), the durations (8, 80) int64 (1 to 6 frames, 0 on
padding), the pitch and energy targets (8, 80) fp32 (normalized). Returns the regulated hidden
states (8, 512, 256), the mel padding mask (8, 512) bool and the log-duration, pitch and energy
predictions (8, 80) fp32 each.

    traceinspect profile fastspeech2_variance_adaptor_5in_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

BINS, KERNEL, LOW, HIGH, MAX_DURATION = 256, 3, -3.0, 3.0, 6


class VariancePredictor(nn.Module):
    def __init__(self, d: int, filters: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv1d(d, filters, KERNEL, padding=KERNEL // 2)
        self.norm1 = nn.LayerNorm(filters)
        self.conv2 = nn.Conv1d(filters, filters, KERNEL, padding=KERNEL // 2)
        self.norm2 = nn.LayerNorm(filters)
        self.out = nn.Linear(filters, 1)

    def forward(self, x: Tensor, mask: Tensor) -> Tensor:  # x (b, t, d), mask (b, t)
        y = self.norm1(F.relu(self.conv1(x.transpose(1, 2))).transpose(1, 2))
        y = self.norm2(F.relu(self.conv2(y.transpose(1, 2))).transpose(1, 2))
        return self.out(y).squeeze(-1).masked_fill(mask, 0.0).float()


class VarianceAdaptor(nn.Module):
    def __init__(self, d: int, filters: int) -> None:
        super().__init__()
        self.duration = VariancePredictor(d, filters)
        self.pitch = VariancePredictor(d, filters)
        self.energy = VariancePredictor(d, filters)
        self.pitch_embedding = nn.Embedding(BINS, d)
        self.energy_embedding = nn.Embedding(BINS, d)


def build(device: torch.device, smoke: bool) -> Built:
    batch, phonemes, d, frames = (2, 12, 32, 80) if smoke else (8, 80, 256, 512)
    dtype = low_precision(device)
    model = VarianceAdaptor(d, d)
    with torch.no_grad():
        model.pitch_embedding.weight.mul_(0.1)
        model.energy_embedding.weight.mul_(0.1)
    model = model.to(device, dtype).eval()
    bins = torch.linspace(LOW, HIGH, BINS - 1, device=device)  # fp32 bin edges
    frame_idx = torch.arange(frames, device=device).repeat(batch, 1)  # (b, frames)

    @torch.no_grad()
    def step(
        x: Tensor, src_mask: Tensor, durations: Tensor, pitch: Tensor, energy: Tensor
    ) -> tuple[Tensor, ...]:
        log_duration = model.duration(x, src_mask)
        pitch_pred = model.pitch(x, src_mask)
        x = x + model.pitch_embedding(torch.bucketize(pitch, bins))
        energy_pred = model.energy(x, src_mask)
        x = x + model.energy_embedding(torch.bucketize(energy, bins))
        cum = torch.cumsum(durations, dim=1)  # (b, t)
        idx = torch.searchsorted(cum, frame_idx, right=True).clamp(max=phonemes - 1)
        mel_mask = frame_idx >= cum[:, -1:]
        out = x.gather(1, idx[..., None].expand(-1, -1, x.shape[-1]))
        out = out.masked_fill(mel_mask[..., None], 0.0)
        return out, mel_mask, log_duration, pitch_pred, energy_pred

    positions = torch.arange(phonemes, device=device)
    lengths = phonemes - 4 * torch.arange(batch, device=device)
    src_mask = positions[None, :] >= lengths[:, None]

    def make() -> tuple[Tensor, ...]:
        durations = torch.randint(1, MAX_DURATION + 1, (batch, phonemes), device=device)
        return (
            torch.randn(batch, phonemes, d, device=device, dtype=dtype),
            src_mask.clone(),
            durations.masked_fill(src_mask, 0),
            torch.randn(batch, phonemes, device=device),
            torch.randn(batch, phonemes, device=device),
        )

    inputs = [make() for _ in range(2)]
    return Built(
        step,
        inputs,
        f"FastSpeech 2 variance adaptor (3 conv predictors {d}, pitch / energy bucketize + "
        f"embeddings) + length regulator to {frames} frames, {phonemes} phonemes, 5 inputs, "
        f"b{batch}",
        [model, bins, frame_idx],
    )


if __name__ == "__main__":
    main(build, __doc__)
