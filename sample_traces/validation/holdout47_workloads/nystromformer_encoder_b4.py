"""Two Nystromformer encoder layers over 4 sequences of 1024 tokens (forty-seventh hold-out:
Nystrom-approximated self-attention, three softmax kernels through 64 landmarks and an
iterative pseudo-inverse of many small batched matrices): d_model 512, 8 heads of 64. Per
layer: pre-LayerNorm, a fused ``Linear(512, 1536)`` to q, k, v, each of q and k scaled by
64^-1/4; 64 landmarks per head as the means of 16 consecutive queries and keys; the kernels
softmax(q k_l^T) (1024 x 64), softmax(q_l k_l^T) (64 x 64) and softmax(q_l k^T) (64 x 1024);
the Moore-Penrose pseudo-inverse of the middle one in fp32 by 6 Newton-Schulz iterations (z
<- z (13 I - K z (15 I - K z (7 I - K z))) / 4 from z_0 = K^T / (max column sum x max row
sum)), each four 64 x 64 batched matmuls over the 32 heads; the output kernel1 (pinv
(kernel3 v)) plus a depthwise convolution of v along the sequence (kernel 33, one filter per
head); ``Linear(512, 512)``, residual; then a pre-norm 2048-wide GELU MLP, residual. bf16 on a
GPU, eval mode, no gradients, one stream. Input: (4, 1024, 512). Returns (4, 1024, 512).

    traceinspect profile nystromformer_encoder_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _blocks import ResidualMLP
from _common import Built, low_precision, main
from torch import Tensor, nn

PINV_ITERS = 6


def pinv(k: Tensor, eye: Tensor) -> Tensor:
    """Newton-Schulz pseudo-inverse of the batched square matrices ``k`` (fp32)."""
    z = k.transpose(-1, -2) / (k.sum(dim=-2).amax() * k.sum(dim=-1).amax())
    for _ in range(PINV_ITERS):
        kz = k @ z
        z = 0.25 * z @ (13 * eye - kz @ (15 * eye - kz @ (7 * eye - kz)))
    return z


class NystromAttention(nn.Module):
    def __init__(self, d: int, heads: int, landmarks: int, conv_kernel: int) -> None:
        super().__init__()
        self.heads, self.landmarks = heads, landmarks
        self.norm = nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.conv = nn.Conv2d(
            heads, heads, (conv_kernel, 1), padding=(conv_kernel // 2, 0), groups=heads,
            bias=False,
        )  # fmt: skip
        self.register_buffer("eye", torch.eye(landmarks), persistent=False)

    def forward(self, x: Tensor) -> Tensor:
        b, n, d = x.shape
        q, k, v = self.qkv(self.norm(x)).view(b, n, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
        scale = q.shape[-1] ** -0.25
        q, k = q * scale, k * scale
        m = self.landmarks
        q_l = q.reshape(b, self.heads, m, n // m, -1).mean(dim=-2)
        k_l = k.reshape(b, self.heads, m, n // m, -1).mean(dim=-2)
        kernel1 = torch.softmax(q @ k_l.transpose(-1, -2), dim=-1)
        kernel2 = torch.softmax(q_l.float() @ k_l.float().transpose(-1, -2), dim=-1)
        kernel3 = torch.softmax(q_l @ k.transpose(-1, -2), dim=-1)
        middle = pinv(kernel2, self.eye).to(x.dtype)
        out = kernel1 @ (middle @ (kernel3 @ v)) + self.conv(v)
        return x + self.proj(out.transpose(1, 2).reshape(b, n, d))


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, tokens, d, heads, landmarks, kernel, layers = 2, 16, 16, 2, 4, 3, 2
    else:
        batch, tokens, d, heads, landmarks, kernel, layers = 4, 1024, 512, 8, 64, 33, 2
    dtype = low_precision(device)
    blocks: list[nn.Module] = []
    for _ in range(layers):
        blocks += [NystromAttention(d, heads, landmarks, kernel), ResidualMLP(d, 4 * d)]
    net = nn.Sequential(*blocks).to(device, dtype).eval()
    for m in net.modules():  # the pseudo-inverse runs in fp32
        if isinstance(m, NystromAttention):
            m.eye = m.eye.float()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return net(x)

    inputs = [(torch.randn(batch, tokens, d, device=device, dtype=dtype),) for _ in range(2)]
    description = (
        f"Nystromformer, {layers} layers d{d} h{heads}, {landmarks} landmarks, {tokens} "
        f"tokens, b{batch}"
    )
    return Built(step, inputs, description, [net])


if __name__ == "__main__":
    main(build, __doc__)
