"""A SlowFast video classifier (Feichtenhofer et al., 2019, laid out as PySlowFast's ResNet
pathways, cut down to two residual stages) with its slow and fast pathways on two side
streams over three fork / join rounds and the lateral connections and the head after the
joins (thirty-eighth hold-out): 2 clips of 16 frames of 3 x 112 x 112, bf16 on a GPU, eval
mode, no gradients. alpha 4, beta 1/8: the slow pathway reads 4 frames picked by
``index_select`` at ``linspace(0, 15, 4)`` (0, 5, 10, 15, the index made at build), the fast
pathway all 16 at an eighth of the channels. Every convolution below is ``Conv3d(bias=False)``,
padded by half its kernel on each dimension, + BatchNorm3d (eval, running statistics set at
build). Round 1, the stems: slow ``Conv3d(3,
64, (1, 7, 7), stride (1, 2, 2))`` + ReLU, fast ``Conv3d(3, 8, (5, 7, 7), stride (1, 2, 2))``
+ ReLU, each followed by ``MaxPool3d((1, 3, 3), stride (1, 2, 2), padding (0, 1, 1))``, to (2,
64, 4, 28, 28) and (2, 8, 16, 28, 28). Join; on the current stream the first fast-to-slow
lateral: ``Conv3d(8, 16, (5, 1, 1), stride (4, 1, 1), padding (2, 0, 0))`` + ReLU of the fast
features, concatenated to the slow ones (80 channels). Round 2, res2, one bottleneck per
pathway (temporal kernel (kt, 1, 1) to the inner width + ReLU, (1, 3, 3) + ReLU, 1 x 1 x 1 to
the output width, a 1 x 1 x 1 projection shortcut where the shape changes, the residual add
and a ReLU): slow 80 -> 64 -> 256 with kt 1, fast 8 -> 8 -> 32 with kt 3. Join; the second
lateral ``Conv3d(32, 64, (5, 1, 1), stride (4, 1, 1))`` + ReLU, concatenated (slow 320
channels). Round 3, res3, the same bottleneck with spatial stride 2 (28 -> 14): slow 320 ->
128 -> 512 with kt 1, fast 32 -> 16 -> 64 with kt 3. Join; on the current stream the head:
the global average pool of each pathway over (T, H, W), (2, 512) and (2, 64), concatenated
(2, 576), ``Linear(576, 400)`` and, as PySlowFast's head at test time, a softmax in fp32.
Joins are the project's ``fork_join`` (``wait_stream``, and ``record_stream`` on the branch
outputs outside capture). On a CPU the pathways run in order. Input: the clip (2, 3, 16, 112,
112). Returns the (2, 400) class probabilities (fp32).

    traceinspect profile slowfast_3rounds_2streams_b2.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

ALPHA, BETA, CLASSES, FUSE_KT = 4, 8, 400, 5


def conv_bn(
    cin: int,
    cout: int,
    kernel: tuple[int, int, int],
    stride: tuple[int, int, int] = (1, 1, 1),
    relu: bool = True,
) -> nn.Sequential:
    padding = tuple(k // 2 for k in kernel)
    layers: list[nn.Module] = [
        nn.Conv3d(cin, cout, kernel, stride, padding, bias=False),
        nn.BatchNorm3d(cout),
    ]
    if relu:
        layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def stem(cout: int, kt: int) -> nn.Sequential:
    return nn.Sequential(
        conv_bn(3, cout, (kt, 7, 7), (1, 2, 2)),
        nn.MaxPool3d((1, 3, 3), (1, 2, 2), (0, 1, 1)),
    )


class Bottleneck3d(nn.Module):
    """PySlowFast's bottleneck transform: (kt, 1, 1) -> (1, 3, 3) with the stride -> 1x1x1."""

    def __init__(self, cin: int, mid: int, cout: int, kt: int, stride: int) -> None:
        super().__init__()
        self.a = conv_bn(cin, mid, (kt, 1, 1))
        self.b = conv_bn(mid, mid, (1, 3, 3), (1, stride, stride))
        self.c = conv_bn(mid, cout, (1, 1, 1), relu=False)
        self.shortcut = (
            conv_bn(cin, cout, (1, 1, 1), (1, stride, stride), relu=False)
            if stride != 1 or cin != cout
            else nn.Identity()
        )

    def forward(self, x: Tensor) -> Tensor:
        return F.relu(self.c(self.b(self.a(x))) + self.shortcut(x))


def lateral(cin: int) -> nn.Sequential:
    """Fast -> slow: a time-strided (5, 1, 1) convolution to twice the fast channels."""
    return conv_bn(cin, 2 * cin, (FUSE_KT, 1, 1), (ALPHA, 1, 1))


def random_bn3d_stats(model: nn.Module) -> None:
    for m in model.modules():
        if isinstance(m, nn.BatchNorm3d):
            m.running_mean.normal_(0, 0.1)
            m.running_var.uniform_(0.5, 1.5)


def build(device: torch.device, smoke: bool) -> Built:
    batch, frames, size, w = (2, 8, 32, 16) if smoke else (2, 16, 112, 64)
    f = w // BETA  # fast pathway width
    dtype = low_precision(device)
    slow_stem, fast_stem = stem(w, 1), stem(f, 5)
    lateral1, lateral2 = lateral(f), lateral(4 * f)
    slow_res2 = Bottleneck3d(w + 2 * f, w, 4 * w, 1, 1)
    fast_res2 = Bottleneck3d(f, f, 4 * f, 3, 1)
    slow_res3 = Bottleneck3d(4 * w + 8 * f, 2 * w, 8 * w, 1, 2)
    fast_res3 = Bottleneck3d(4 * f, 2 * f, 8 * f, 3, 2)
    head = nn.Linear(8 * w + 8 * f, CLASSES)
    model = nn.ModuleList(
        [slow_stem, fast_stem, lateral1, lateral2, slow_res2, fast_res2, slow_res3, fast_res3, head]
    )
    random_bn3d_stats(model)
    model.to(device, dtype).eval()
    slow_index = torch.linspace(0, frames - 1, frames // ALPHA, device=device).long()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(clip: Tensor) -> Tensor:
        slow, fast = fork_join(
            device,
            streams,
            [lambda: slow_stem(clip.index_select(2, slow_index)), lambda: fast_stem(clip)],
        )  # round 1: the stems
        slow = torch.cat([slow, lateral1(fast)], dim=1)
        slow, fast = fork_join(device, streams, [lambda: slow_res2(slow), lambda: fast_res2(fast)])
        slow = torch.cat([slow, lateral2(fast)], dim=1)
        slow, fast = fork_join(device, streams, [lambda: slow_res3(slow), lambda: fast_res3(fast)])
        pooled = torch.cat([slow.mean(dim=(2, 3, 4)), fast.mean(dim=(2, 3, 4))], dim=1)
        return head(pooled).float().softmax(dim=-1)

    inputs = [
        (torch.randn(batch, 3, frames, size, size, device=device, dtype=dtype),) for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"SlowFast (alpha {ALPHA}, beta 1/{BETA}), stems + res2 + res3 of the slow / fast "
        f"pathways on 2 side streams in 3 fork/join rounds + laterals + head, b{batch}, "
        f"{frames} frames at {size}",
        [model, slow_index],
    )


if __name__ == "__main__":
    main(build, __doc__)
