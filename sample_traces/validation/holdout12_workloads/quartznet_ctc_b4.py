"""A QuartzNet 5x5 CTC speech encoder on 4 utterances of 16 s (64 mel features x 1600 frames
of 10 ms), bf16, eval mode (twelfth hold-out): 1-D time-channel separable convolutions with
BatchNorm, as NVIDIA NeMo's QuartzNet, greedy (beam-free) CTC decoding at the end. A
separable conv: a depthwise ``Conv1d`` (groups = channels, kernel k, "same" padding), then
a pointwise Conv1d 1x1, then BatchNorm1d. C1: separable k33 stride 2, 64->256, BatchNorm,
ReLU (800 frames from here on). Then 5 blocks B1-B5 of 5 sub-blocks each (kernels 33, 39,
51, 63, 75; channels 256, 256, 256, 512, 512): every sub-block a separable conv + BatchNorm
and ReLU, except that the last one's ReLU comes after the block's residual (a pointwise
conv + BatchNorm of the block input) is added. C2: separable k87 dilation 2, 512->512,
BatchNorm, ReLU; C3: conv1x1 512->1024, BatchNorm, ReLU; C4: conv1x1 1024->29 (28
characters and the CTC blank). Every BatchNorm is its own kernel (eval mode, running
statistics set to random values at build). Then ``log_softmax`` over the 29 classes in fp32
and the greedy CTC path (``argmax`` per frame). Returns the log-probabilities (4 x 800 x 29,
fp32) and the per-frame labels (4 x 800, int64).

    traceinspect profile quartznet_ctc_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn

# (kernel, channels) of blocks B1-B5; each block repeats its sub-block 5 times
BLOCKS = ((33, 256), (39, 256), (51, 256), (63, 512), (75, 512))


def separable(cin: int, cout: int, k: int, stride: int = 1, dilation: int = 1) -> nn.Sequential:
    pad = dilation * (k - 1) // 2
    return nn.Sequential(
        nn.Conv1d(cin, cin, k, stride, pad, dilation, groups=cin, bias=False),
        nn.Conv1d(cin, cout, 1, bias=False),
        nn.BatchNorm1d(cout),
    )


class JasperBlock(nn.Module):
    def __init__(self, cin: int, cout: int, k: int, repeats: int) -> None:
        super().__init__()
        self.subs = nn.ModuleList(
            separable(cin if i == 0 else cout, cout, k) for i in range(repeats)
        )
        self.residual = nn.Sequential(nn.Conv1d(cin, cout, 1, bias=False), nn.BatchNorm1d(cout))

    def forward(self, x: Tensor) -> Tensor:
        y = x
        for sub in self.subs[:-1]:
            y = torch.relu(sub(y))
        return torch.relu(self.subs[-1](y) + self.residual(x))


def quartznet(
    features: int, blocks: list[tuple[int, int]], repeats: int, width: int, classes: int
) -> nn.Sequential:
    cin = blocks[0][1]
    layers: list[nn.Module] = [separable(features, cin, 33, stride=2), nn.ReLU()]
    for k, c in blocks:
        layers.append(JasperBlock(cin, c, k, repeats))
        cin = c
    layers += [
        separable(cin, cin, 87, dilation=2),
        nn.ReLU(),
        nn.Conv1d(cin, width, 1, bias=False),
        nn.BatchNorm1d(width),
        nn.ReLU(),
        nn.Conv1d(width, classes, 1),
    ]
    return nn.Sequential(*layers)


def random_batch_norm_stats_1d(model: nn.Module) -> None:
    """_models.random_batch_norm_stats for BatchNorm1d: trained-looking running statistics."""
    for m in model.modules():
        if isinstance(m, nn.BatchNorm1d):
            m.running_mean.normal_(0, 0.1)
            m.running_var.uniform_(0.5, 1.5)


def build(device: torch.device, smoke: bool) -> Built:
    features, frames, narrow, repeats, width, batch = (
        (16, 64, 16, 2, 64, 2) if smoke else (64, 1600, 1, 5, 1024, 4)
    )
    blocks = [(k, c // narrow) for k, c in BLOCKS]
    classes = 29
    dtype = low_precision(device)
    model = quartznet(features, blocks, repeats, width, classes)
    random_batch_norm_stats_1d(model)
    model = model.to(device=device, dtype=dtype).eval()

    @torch.no_grad()
    def step(mel: Tensor) -> tuple[Tensor, Tensor]:
        logits = model(mel).transpose(1, 2)  # (B, frames / 2, classes)
        logp = torch.log_softmax(logits.float(), dim=-1)
        return logp, logp.argmax(-1)

    inputs = [(torch.randn(batch, features, frames, device=device, dtype=dtype),) for _ in range(2)]
    description = (
        f"QuartzNet {len(blocks)}x{repeats} separable conv1d + BatchNorm CTC encoder, "
        f"batch {batch} x {features} mels x {frames} frames"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
