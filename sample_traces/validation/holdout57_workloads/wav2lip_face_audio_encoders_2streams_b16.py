"""Wav2Lip's lip-sync generator (Prajwal et al., 2020) for 16 video frames, its two encoders side
by side, the audio encoder on one side stream and the face encoder on the other, then the face
decoder (fifty-seventh hold-out: two concurrent chains of unequal weight, 13 convolutions with
inference BatchNorm and ReLU on 16 mel windows of 80 x 16 beside 18 on 16 six-channel 96 x 96
faces, small fp32 cuDNN convolutions of at most 1.4 GFLOP, launch-bound on both sides; then on the
current stream the decoder's 14 convolutions and 6 transposed convolutions, the largest some 27
GFLOP (some 190 GFLOP in all), with BatchNorms, ReLUs, residual adds and skip concatenations over
maps of up to 47 MB:
compute-bound with memory-bound stretches). Laid out as Rudrabha/Wav2Lip's ``models/wav2lip.py``
``Wav2Lip`` as its ``inference.py`` calls it (``model(mel_batch, img_batch)``, a batch of
``wav2lip_batch_size`` frames; 16 here): its ``Conv2d`` unit is ``nn.Conv2d`` + ``BatchNorm2d`` +
ReLU, with the input added before the ReLU where residual, its ``Conv2dTranspose`` unit
``nn.ConvTranspose2d`` + ``BatchNorm2d`` + ReLU. Side stream 1, ``audio_encoder`` on the mel windows
(1 -> 32 -> 32 -> 32, 64 at stride (3, 1) + 2 residual, 128 at stride 3 + 2 residual, 256 at stride
(3, 2) + 1 residual, 512 (3 x 3, no padding), 512 (1 x 1)) to (16, 512, 1, 1); side stream 2,
``face_encoder_blocks`` on the faces (16 at 7 x 7; 32 at stride 2 + 2 residual; 64 at stride 2 + 3
residual; 128, 256 at stride 2 + 2 residual each; 512 at stride 2 + 1 residual; 512 (3 x 3, no
padding) + 512 (1 x 1)), keeping each block's output. Fork and join are the project's ``fork_join``
(``wait_stream``, and ``record_stream`` on the branch outputs outside capture; the branch returns
the seven feature maps). After the join, on the current stream, ``face_decoder_blocks`` from the
audio embedding (512 1 x 1; transposed 1024 -> 512 to 3 x 3 + 1 residual; then transposed 3 x 3
stride 2 convolutions 1024 -> 512, 768 -> 384, 512 -> 256, 320 -> 128, 160 -> 64 up to 96 x 96,
each + 2 residual), each block's output concatenated with the face feature of its size, and
``output_block`` (``Conv2d`` unit 80 -> 32, ``nn.Conv2d(32, 3, 1)``, sigmoid). Then the frames as
inference.py takes them, times 255, channels last (16, 96, 96, 3). fp32 (cuDNN convolutions may
use TF32, ``torch.backends.cudnn.allow_tf32``, torch's default, set in build), eval (BatchNorm on
its running statistics), no gradients, random weights (torch's defaults). Inputs (two input sets):
the mel windows (16, 1, 80, 16), Gaussian, and the faces (16, 6, 96, 96), the masked frame (its
lower half zeroed) and the reference frame stacked on the channels, uniform in [0, 1]. Returns the
generated frames (16, 96, 96, 3).

    traceinspect profile wav2lip_face_audio_encoders_2streams_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

Size = int | tuple[int, int]


class Conv2d(nn.Module):
    def __init__(
        self, cin: int, cout: int, k: Size, s: Size, p: Size, residual: bool = False
    ) -> None:
        super().__init__()
        self.conv_block = nn.Sequential(nn.Conv2d(cin, cout, k, s, p), nn.BatchNorm2d(cout))
        self.act = nn.ReLU()
        self.residual = residual

    def forward(self, x: Tensor) -> Tensor:
        out = self.conv_block(x)
        if self.residual:
            out = out + x
        return self.act(out)


class Conv2dTranspose(nn.Module):
    def __init__(self, cin: int, cout: int, k: int, s: int, p: int, op: int = 0) -> None:
        super().__init__()
        self.conv_block = nn.Sequential(
            nn.ConvTranspose2d(cin, cout, k, s, p, op), nn.BatchNorm2d(cout)
        )
        self.act = nn.ReLU()

    def forward(self, x: Tensor) -> Tensor:
        return self.act(self.conv_block(x))


def res(c: int, n: int) -> list[nn.Module]:
    return [Conv2d(c, c, 3, 1, 1, residual=True) for _ in range(n)]


class Wav2Lip(nn.Module):
    def __init__(self, w: int) -> None:
        """w: the width unit (16 in Wav2Lip); every width a multiple of it."""
        super().__init__()
        seq = nn.Sequential
        self.face_encoder_blocks = nn.ModuleList([
            seq(Conv2d(6, w, 7, 1, 3)),
            seq(Conv2d(w, 2 * w, 3, 2, 1), *res(2 * w, 2)),
            seq(Conv2d(2 * w, 4 * w, 3, 2, 1), *res(4 * w, 3)),
            seq(Conv2d(4 * w, 8 * w, 3, 2, 1), *res(8 * w, 2)),
            seq(Conv2d(8 * w, 16 * w, 3, 2, 1), *res(16 * w, 2)),
            seq(Conv2d(16 * w, 32 * w, 3, 2, 1), *res(32 * w, 1)),
            seq(Conv2d(32 * w, 32 * w, 3, 1, 0), Conv2d(32 * w, 32 * w, 1, 1, 0)),
        ])  # fmt: skip
        self.audio_encoder = seq(
            Conv2d(1, 2 * w, 3, 1, 1), *res(2 * w, 2),
            Conv2d(2 * w, 4 * w, 3, (3, 1), 1), *res(4 * w, 2),
            Conv2d(4 * w, 8 * w, 3, 3, 1), *res(8 * w, 2),
            Conv2d(8 * w, 16 * w, 3, (3, 2), 1), *res(16 * w, 1),
            Conv2d(16 * w, 32 * w, 3, 1, 0), Conv2d(32 * w, 32 * w, 1, 1, 0),
        )  # fmt: skip
        self.face_decoder_blocks = nn.ModuleList([
            seq(Conv2d(32 * w, 32 * w, 1, 1, 0)),
            seq(Conv2dTranspose(64 * w, 32 * w, 3, 1, 0), *res(32 * w, 1)),
            seq(Conv2dTranspose(64 * w, 32 * w, 3, 2, 1, 1), *res(32 * w, 2)),
            seq(Conv2dTranspose(48 * w, 24 * w, 3, 2, 1, 1), *res(24 * w, 2)),
            seq(Conv2dTranspose(32 * w, 16 * w, 3, 2, 1, 1), *res(16 * w, 2)),
            seq(Conv2dTranspose(20 * w, 8 * w, 3, 2, 1, 1), *res(8 * w, 2)),
            seq(Conv2dTranspose(10 * w, 4 * w, 3, 2, 1, 1), *res(4 * w, 2)),
        ])  # fmt: skip
        self.output_block = seq(Conv2d(5 * w, 2 * w, 3, 1, 1), nn.Conv2d(2 * w, 3, 1), nn.Sigmoid())

    def encode_faces(self, x: Tensor) -> tuple[Tensor, ...]:
        feats = []
        for block in self.face_encoder_blocks:
            x = block(x)
            feats.append(x)
        return tuple(feats)

    def decode(self, audio_embedding: Tensor, feats: tuple[Tensor, ...]) -> Tensor:
        x = audio_embedding
        for block, feat in zip(self.face_decoder_blocks, reversed(feats), strict=True):
            x = torch.cat((block(x), feat), dim=1)
        return self.output_block(x)


def build(device: torch.device, smoke: bool) -> Built:
    batch, width = (2, 2) if smoke else (16, 16)
    torch.backends.cudnn.allow_tf32 = True  # the workload: torch's default for convolutions
    model = Wav2Lip(width).to(device).eval()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(mel: Tensor, faces: Tensor) -> Tensor:
        audio, feats = fork_join(
            device,
            streams,
            [lambda: model.audio_encoder(mel), lambda: model.encode_faces(faces)],
        )
        pred = model.decode(audio, feats)
        return pred.permute(0, 2, 3, 1) * 255.0

    def make() -> tuple[Tensor, Tensor]:
        frames = torch.rand(batch, 3, 96, 96, device=device)
        masked = frames.clone()
        masked[:, :, 48:] = 0.0
        reference = torch.rand(batch, 3, 96, 96, device=device)
        return torch.randn(batch, 1, 80, 16, device=device), torch.cat((masked, reference), 1)

    inputs = [make() for _ in range(2)]
    description = (
        f"Wav2Lip generator: audio encoder (mel 80x16) beside face encoder (96x96x6) on 2 side "
        f"streams, then the face decoder with skips, width unit {width}, b{batch}, fp32"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
