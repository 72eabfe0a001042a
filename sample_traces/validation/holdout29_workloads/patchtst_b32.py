"""PatchTST (Nie et al., 2023) forecasting multivariate series channel by channel
(twenty-ninth hold-out): 32 series of 7 channels and 512 steps, fp32. Each channel is
instance-normalized (mean and std over time, RevIN), cut into 63 patches of 16 steps with
stride 8 (``unfold``), embedded (Linear 16 -> 128) with a learned position table, and the
224 channel sequences go through 3 Transformer encoder layers (``nn.TransformerEncoderLayer``,
16 heads, BatchNorm-free, GELU, feed-forward 256); a flatten head (Linear 63 x 128 -> 96)
predicts 96 steps, and the normalization is undone. One stream; small GEMMs over 224 x 63
tokens, the fused encoder-layer kernels of PyTorch's fast path where it applies.

    traceinspect profile patchtst_b32.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn


def build(device: torch.device, smoke: bool) -> Built:
    batch, channels, length, patch, stride, d, horizon = (
        (2, 3, 32, 8, 4, 16, 8) if smoke else (32, 7, 512, 16, 8, 128, 96)
    )
    heads = 2 if smoke else 16
    patches = (length - patch) // stride + 1
    embed = nn.Linear(patch, d)
    position = nn.Parameter(torch.randn(patches, d) * 0.02)
    layer = nn.TransformerEncoderLayer(
        d, heads, dim_feedforward=2 * d, dropout=0.0, activation="gelu", batch_first=True
    )
    encoder = nn.TransformerEncoder(layer, 3, enable_nested_tensor=False)
    head = nn.Linear(patches * d, horizon)
    model = nn.ModuleList([embed, encoder, head]).to(device).eval()
    position.data = position.data.to(device)

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:  # batch x length x channels
        mean = x.mean(dim=1, keepdim=True)
        std = (x.var(dim=1, keepdim=True, unbiased=False) + 1e-5).sqrt()
        z = ((x - mean) / std).transpose(1, 2)  # batch x channels x length
        tokens = z.unfold(-1, patch, stride).reshape(batch * channels, patches, patch)
        h = encoder(embed(tokens) + position)
        y = head(h.reshape(batch, channels, patches * d)).transpose(1, 2)
        return y * std + mean

    inputs = [(torch.randn(batch, length, channels, device=device),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"PatchTST {channels} channels x {length} steps, {patches} patches, b{batch}",
        [model, position],
    )


if __name__ == "__main__":
    main(build, __doc__)
