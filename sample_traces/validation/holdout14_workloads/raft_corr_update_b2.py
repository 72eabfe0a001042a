"""A RAFT optical-flow step (Teed and Deng, 2020) at batch 2 on 1/8-resolution features of 128
channels x 46 x 62 (a 368 x 496 frame pair), the convolutions and the correlation GEMM in
bf16, the correlation pyramid, its lookups and the flow in fp32 (fourteenth hold-out),
inference. The all-pairs correlation volume is one ``bmm`` of the two feature maps flattened
to 2852 pixels (2 x 2852 x 128 by 2 x 128 x 2852), divided by sqrt(128), cast to fp32 and
viewed as 5704 one-channel maps of 46 x 62; a second pyramid level by ``avg_pool2d`` (2 x 2)
gives 23 x 31. Then 4 refinement iterations from zero flow: the lookup, as RAFT's
``CorrBlock``, samples each level around the current target coordinates (the pixel grid plus
the flow, halved at level 1) at 7 x 7 offsets (radius 3) with ``F.grid_sample`` (bilinear,
``align_corners=True``, grids of 5704 x 7 x 7 points normalized to [-1, 1]), 98 correlation
values per pixel; the motion encoder (conv1x1 98->96 on the correlation, conv3x3 2->32 on
the flow, conv3x3 128->94 on both, ReLU, the flow appended: 96 channels); the ConvGRU with
96 hidden channels (3x3 convs for z, r and q on the hidden state, the 64 context channels
and the motion features, sigmoid, sigmoid, tanh); and the flow head (conv3x3 96->128, ReLU,
conv3x3 128->2) whose output is added to the flow. The hidden state starts as tanh and the
context as ReLU of the two halves of the context features. About 60 kernels per iteration
(8 convolutions with their bias adds, the lookup's grid arithmetic, casts), 240 in all; the
2 x 2852 x 2852 correlation volume (65 MB in fp32) and its lookups dominate. Inputs: the
two feature maps (2 x 128 x 46 x 62 each) and the context features (2 x 160 x 46 x 62).
Returns the flow after the 4 iterations (2 x 2 x 46 x 62, fp32, in feature-map pixels).

    traceinspect profile raft_corr_update_b2.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

ITERS, LEVELS, RADIUS = 4, 2, 3
CONTEXT = 64  # context channels fed to the GRU at every iteration


class UpdateBlock(nn.Module):
    """RAFT's motion encoder, ConvGRU (3x3) and flow head."""

    def __init__(self, corr_channels: int, hidden: int) -> None:
        super().__init__()
        self.convc = nn.Conv2d(corr_channels, 96, 1)
        self.convf = nn.Conv2d(2, 32, 3, padding=1)
        self.conv = nn.Conv2d(96 + 32, hidden - 2, 3, padding=1)
        gru_in = hidden + CONTEXT + hidden
        self.convz = nn.Conv2d(gru_in, hidden, 3, padding=1)
        self.convr = nn.Conv2d(gru_in, hidden, 3, padding=1)
        self.convq = nn.Conv2d(gru_in, hidden, 3, padding=1)
        self.head1 = nn.Conv2d(hidden, 128, 3, padding=1)
        self.head2 = nn.Conv2d(128, 2, 3, padding=1)

    def forward(self, h: Tensor, inp: Tensor, corr: Tensor, flow: Tensor) -> tuple[Tensor, Tensor]:
        cor = F.relu(self.convc(corr))
        flo = F.relu(self.convf(flow))
        motion = torch.cat((F.relu(self.conv(torch.cat((cor, flo), dim=1))), flow), dim=1)
        x = torch.cat((inp, motion), dim=1)
        hx = torch.cat((h, x), dim=1)
        z = torch.sigmoid(self.convz(hx))
        r = torch.sigmoid(self.convr(hx))
        q = torch.tanh(self.convq(torch.cat((r * h, x), dim=1)))
        h = (1 - z) * h + z * q
        return h, self.head2(F.relu(self.head1(h)))


def build(device: torch.device, smoke: bool) -> Built:
    batch, dim, height, width, hidden = (1, 8, 8, 10, 16) if smoke else (2, 128, 46, 62, 96)
    dtype = low_precision(device)
    taps = (2 * RADIUS + 1) ** 2
    update = UpdateBlock(LEVELS * taps, hidden).to(device=device, dtype=dtype).eval()
    ys, xs = torch.meshgrid(
        torch.arange(height, device=device, dtype=torch.float32),
        torch.arange(width, device=device, dtype=torch.float32),
        indexing="ij",
    )
    coords0 = torch.stack((xs, ys))[None]  # (1, 2, H, W): x, y in pixels
    r = torch.arange(-RADIUS, RADIUS + 1, device=device, dtype=torch.float32)
    dy, dx = torch.meshgrid(r, r, indexing="ij")
    delta = torch.stack((dx, dy), dim=-1)[None]  # (1, 7, 7, 2): x, y offsets

    def lookup(pyramid: list[Tensor], coords: Tensor) -> Tensor:
        b, _, h, w = coords.shape
        centre = coords.permute(0, 2, 3, 1).reshape(b * h * w, 1, 1, 2)
        out = []
        for i, corr in enumerate(pyramid):
            hi, wi = corr.shape[-2:]
            grid = centre / 2**i + delta  # (BHW, 7, 7, 2) in level-i pixels
            gx, gy = grid.unbind(-1)
            grid = torch.stack((2 * gx / (wi - 1) - 1, 2 * gy / (hi - 1) - 1), dim=-1)
            sampled = F.grid_sample(corr, grid, mode="bilinear", align_corners=True)
            out.append(sampled.view(b, h, w, taps))
        return torch.cat(out, dim=-1).permute(0, 3, 1, 2)  # (B, LEVELS * 49, H, W)

    @torch.no_grad()
    def step(fmap1: Tensor, fmap2: Tensor, context: Tensor) -> Tensor:
        b, c, h, w = fmap1.shape
        corr = torch.bmm(fmap1.view(b, c, h * w).transpose(1, 2), fmap2.view(b, c, h * w))
        corr = (corr / c**0.5).float().view(b * h * w, 1, h, w)
        pyramid = [corr]
        for _ in range(LEVELS - 1):
            pyramid.append(F.avg_pool2d(pyramid[-1], 2, stride=2))
        net, inp = context.split((hidden, CONTEXT), dim=1)
        net, inp = torch.tanh(net), torch.relu(inp)
        flow = torch.zeros(b, 2, h, w, device=fmap1.device)
        for _ in range(ITERS):
            corr_feat = lookup(pyramid, coords0 + flow).to(dtype)
            net, delta_flow = update(net, inp, corr_feat, flow.to(dtype))
            flow = flow + delta_flow.float()
        return flow

    inputs = [
        (
            torch.randn(batch, dim, height, width, device=device, dtype=dtype),
            torch.randn(batch, dim, height, width, device=device, dtype=dtype),
            torch.randn(batch, hidden + CONTEXT, height, width, device=device, dtype=dtype),
        )
        for _ in range(2)
    ]
    description = (
        f"RAFT step: all-pairs correlation {height}x{width} ({dim} ch), {LEVELS}-level pyramid, "
        f"{ITERS} GRU iterations (radius {RADIUS}, hidden {hidden}), batch {batch}"
    )
    return Built(step, inputs, description, [update, coords0, delta])


if __name__ == "__main__":
    main(build, __doc__)
