"""A convolution branch beside a GEMM branch, each on its own side stream (thirty-second
hold-out): 8 images of 3 x 224 x 224 and 8 x 77 text tokens of 768 features, bf16 on a GPU,
eval mode, no gradients. Branch A (image), on one side stream: a patchify
``Conv2d(3, 768, kernel_size=16, stride=16)`` to a 14 x 14 grid, then two 1 x 1
``Conv2d(768, 768)``, each followed by a GELU; cuDNN's convolution kernels. Branch B (text), on
the other: 6 MLP layers (``Linear(768, 3072)``, GELU, ``Linear(3072, 768)``, a residual
add) over the 616 token rows; cuBLAS GEMMs. Both streams are forked from the current stream
with ``wait_stream``; the current stream joins both (``wait_stream``, and ``record_stream``
on the branch outputs outside capture), mean-pools each branch to (8, 768), L2-normalizes
them and returns the (8, 8) similarity matrix.

    traceinspect profile conv_beside_gemm_2streams_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

LAYERS = 6


def build(device: torch.device, smoke: bool) -> Built:
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

    def text_branch(x: Tensor) -> Tensor:
        for mlp in mlps:
            x = x + mlp(x)
        return x

    @torch.no_grad()
    def step(img: Tensor, text: Tensor) -> Tensor:
        a, b = fork_join(device, streams, [lambda: convs(img), lambda: text_branch(text)])
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
    return Built(
        step,
        inputs,
        f"patchify + 1x1 convs beside {LAYERS} MLP layers, 2 side streams, b{batch}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
