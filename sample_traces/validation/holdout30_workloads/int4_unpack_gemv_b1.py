"""Weight-only 4-bit quantized linear layers at batch 1, the weights unpacked with bit
operations before each GEMV (thirtieth hold-out): an MLP block of a 4,096-wide model (gate
and up 4,096 -> 11,008, down 11,008 -> 4,096), fp16 on a GPU. Each weight is stored as
uint8 pairs of 4-bit values with one fp16 scale and zero point per group of 128 inputs; per
layer the nibbles are split (``&`` and ``>>``), interleaved (``stack`` + ``view``), shifted by
the zero point, scaled per group and cast, then ``F.linear`` on the one token. Two blocks.
Memory-bound elementwise kernels over 45M weights per block, then three GEMVs; one stream.

    traceinspect profile int4_unpack_gemv_b1.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor

BLOCKS, GROUP = 2, 128


class Int4Linear:
    def __init__(self, cin: int, cout: int, device: torch.device, dtype: torch.dtype) -> None:
        g = torch.Generator().manual_seed(cin * 7 + cout)
        self.packed = torch.randint(0, 256, (cout, cin // 2), generator=g, dtype=torch.uint8)
        self.packed = self.packed.to(device)
        self.scale = (torch.rand(cout, cin // GROUP, generator=g) * 0.02).to(device, dtype)
        self.zero = torch.full((cout, cin // GROUP), 8.0).to(device, dtype)
        self.cin, self.cout, self.dtype = cin, cout, dtype

    def weight(self) -> Tensor:
        low = (self.packed & 0x0F).to(self.dtype)
        high = (self.packed >> 4).to(self.dtype)
        w = torch.stack([low, high], dim=-1).view(self.cout, self.cin // GROUP, GROUP)
        return ((w - self.zero[..., None]) * self.scale[..., None]).view(self.cout, self.cin)

    def __call__(self, x: Tensor) -> Tensor:
        return F.linear(x, self.weight())


def build(device: torch.device, smoke: bool) -> Built:
    d, hidden = (256, 512) if smoke else (4096, 11008)
    dtype = torch.float16 if device.type == "cuda" else torch.float32
    blocks = [
        (
            Int4Linear(d, hidden, device, dtype),
            Int4Linear(d, hidden, device, dtype),
            Int4Linear(hidden, d, device, dtype),
        )
        for _ in range(BLOCKS)
    ]

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        for gate, up, down in blocks:
            x = x + down(F.silu(gate(x)) * up(x))
        return x

    inputs = [(torch.randn(1, d, device=device, dtype=dtype),) for _ in range(2)]
    return Built(step, inputs, f"int4 unpack + GEMV MLP blocks d{d}->{hidden}, b1", [blocks])


if __name__ == "__main__":
    main(build, __doc__)
