"""Six Conformer layers (Gulati et al., 2020) without their self-attention, each the convolution
module between the two macaron half-step feed-forward modules, at d 256 over 4 sequences of
1,024 frames (fifty-third hold-out: one stream of some 150 kernels, mid-sized bf16 GEMMs, a
depthwise convolution of kernel 31 and the LayerNorms, GLU, BatchNorm, SiLU, transposes and
residual adds between them, each over 2 to 8 MB), laid out as torchaudio's
``torchaudio.models.Conformer`` builds them (``_FeedForwardModule``, ``_ConvolutionModule``,
``ConformerLayer`` with the attention branch left out). Each layer on x (4, 1024, 256): x = x +
0.5 FFN(x), the feed-forward module LayerNorm, ``Linear(256, 1024)``, SiLU, ``Linear(1024,
256)``; then x = x + Conv(x), the convolution module LayerNorm, transposed to (b, d, t), the
pointwise ``Conv1d(256, 512, 1)``, GLU over the channels, the depthwise ``Conv1d(256, 256, 31,
padding 15, groups 256)``, ``BatchNorm1d(256)`` in eval mode (running statistics and affine
parameters set at build, as after training), SiLU, the pointwise ``Conv1d(256, 256, 1)``,
transposed back (the convolutions without bias, torchaudio's default); then x = x + 0.5 FFN'(x),
the second feed-forward module; and the layer's final LayerNorm. No dropout. bf16 on a GPU (fp32
on a CPU), eval mode, no gradients, one stream. Input: the encoder features (4, 1024, 256),
random. Returns the sixth layer's output (4, 1024, 256).

    traceinspect profile conformer_conv_module_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

LAYERS, KERNEL = 6, 31


def feed_forward(d: int, hidden: int) -> nn.Module:
    """torchaudio's _FeedForwardModule, dropout-free."""
    return nn.Sequential(nn.LayerNorm(d), nn.Linear(d, hidden), nn.SiLU(), nn.Linear(hidden, d))


class ConvolutionModule(nn.Module):
    """torchaudio's _ConvolutionModule with BatchNorm, dropout-free: (b, t, d) -> (b, t, d)."""

    def __init__(self, d: int, kernel: int) -> None:
        super().__init__()
        self.layer_norm = nn.LayerNorm(d)
        self.pointwise1 = nn.Conv1d(d, 2 * d, 1, bias=False)
        self.depthwise = nn.Conv1d(d, d, kernel, padding=(kernel - 1) // 2, groups=d, bias=False)
        self.batch_norm = nn.BatchNorm1d(d)
        self.pointwise2 = nn.Conv1d(d, d, 1, bias=False)
        with torch.no_grad():  # as after training: statistics and affine away from 0 and 1
            self.batch_norm.running_mean.normal_(0, 0.1)
            self.batch_norm.running_var.uniform_(0.5, 1.5)
            self.batch_norm.weight.uniform_(0.8, 1.2)
            self.batch_norm.bias.normal_(0, 0.05)

    def forward(self, x: Tensor) -> Tensor:
        y = F.glu(self.pointwise1(self.layer_norm(x).transpose(1, 2)), dim=1)
        y = self.pointwise2(F.silu(self.batch_norm(self.depthwise(y))))
        return y.transpose(1, 2)


class ConvOnlyConformerLayer(nn.Module):
    def __init__(self, d: int, hidden: int, kernel: int) -> None:
        super().__init__()
        self.ffn1, self.ffn2 = feed_forward(d, hidden), feed_forward(d, hidden)
        self.conv_module = ConvolutionModule(d, kernel)
        self.final_layer_norm = nn.LayerNorm(d)

    def forward(self, x: Tensor) -> Tensor:  # x: (b, t, d)
        x = x + 0.5 * self.ffn1(x)
        x = x + self.conv_module(x)
        x = x + 0.5 * self.ffn2(x)
        return self.final_layer_norm(x)


def build(device: torch.device, smoke: bool) -> Built:
    batch, frames, d, kernel = (2, 32, 16, 7) if smoke else (4, 1024, 256, KERNEL)
    dtype = low_precision(device)
    model = nn.Sequential(*(ConvOnlyConformerLayer(d, 4 * d, kernel) for _ in range(LAYERS)))
    model = model.to(device=device, dtype=dtype).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    inputs = [(torch.randn(batch, frames, d, device=device, dtype=dtype),) for _ in range(2)]
    description = (
        f"Conformer conv modules: {LAYERS} x (half FFN {d}->{4 * d}, LN + pointwise + GLU + "
        f"depthwise k{kernel} + BN + SiLU + pointwise, half FFN), d{d}, b{batch} x {frames}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
