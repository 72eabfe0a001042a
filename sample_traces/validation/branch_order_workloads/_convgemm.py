"""What the branch-order probes share: ``holdout32``'s convolution branch (a patchify
``Conv2d(3, 768, 16, stride=16)`` then two 1 x 1 convolutions with GELUs, cuDNN) and its GEMM
branch (six MLP layers of 768 -> 3072 -> 768 with residual adds, cuBLAS), bf16 on a GPU,
forked onto two side streams in the order a probe asks for. In ``holdout32``'s replay (the
convolution branch captured first) the GEMM branch's first kernel started 100.8 µs in, at the
convolution's one-wave release, while the schedule starts it at once; the probes tell
whether a graph's executor holds a branch behind the kernels captured before it."""

from __future__ import annotations

from collections.abc import Callable

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision
from _streams import fork_join, side_streams
from torch import Tensor, nn

LAYERS = 6


def build_pair(
    device: torch.device, smoke: bool, gemm_first: bool, lead: bool, label: str
) -> Built:
    """The two branches forked with the GEMM branch's lambda first where ``gemm_first``; each
    branch opens with a one-block elementwise kernel (``x * 1``) where ``lead``."""
    batch, image, patch, d, tokens = (2, 32, 16, 16, 8) if smoke else (8, 224, 16, 768, 77)
    dtype = low_precision(device)
    convs = nn.Sequential(
        nn.Conv2d(3, d, patch, stride=patch), nn.Conv2d(d, d, 1), nn.GELU(),
        nn.Conv2d(d, d, 1), nn.GELU(),
    )  # fmt: skip
    mlps = nn.ModuleList(
        nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d)) for _ in range(LAYERS)
    )
    model = nn.ModuleList([convs, mlps]).to(device, dtype).eval()
    streams = side_streams(device, 2)
    scale = torch.ones(1, device=device, dtype=dtype)

    def conv_branch(img: Tensor) -> Tensor:
        if lead:
            img = img * scale
        return convs(img)

    def text_branch(x: Tensor) -> Tensor:
        if lead:
            x = x * scale
        for mlp in mlps:
            x = x + mlp(x)
        return x

    @torch.no_grad()
    def step(img: Tensor, text: Tensor) -> Tensor:
        branches: list[Callable[[], Tensor]] = [lambda: conv_branch(img), lambda: text_branch(text)]
        if gemm_first:
            b, a = fork_join(device, streams, branches[::-1])
        else:
            a, b = fork_join(device, streams, branches)
        a = F.normalize(a.mean(dim=(2, 3)), dim=-1)
        b = F.normalize(b.mean(dim=1), dim=-1)
        return a @ b.t()

    inputs = [
        (
            torch.randn(batch, 3, image, image, device=device, dtype=dtype),
            torch.randn(batch, tokens, d, device=device, dtype=dtype),
        )
        for _ in range(2)
    ]
    return Built(step, inputs, f"{label}, 2 side streams, b{batch}", [model, scale])
