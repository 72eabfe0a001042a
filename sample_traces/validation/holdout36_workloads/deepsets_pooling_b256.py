"""DeepSets set classifiers (Zaheer et al., 2017) at batch 256 (thirty-sixth hold-out): 256
sets of 64 elements of 32 features, fp32 (explicitly, also on a GPU), eval mode, no
gradients. Two models with their own weights run on the same sets, one after the other.
The invariant one: phi, 3 x (``Linear`` -> 256 + ReLU) on every element (32 -> 256, then
256 -> 256 twice, on the (256 x 64)-row element batch), sum pooling over the 64 elements,
then rho, 3 x (``Linear(256, 256)`` + ReLU) and ``Linear(256, 10)``. The equivariant variant:
the same layout with a permutation-equivariant step in front of phi, each element minus the
mean over its set (x - x.mean(set)), so phi reads set-centred elements. Input: the sets
(256, 64, 32) fp32. Returns the two models' logits, each (256, 10).

    traceinspect profile deepsets_pooling_b256.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn

WIDTH, LAYERS, CLASSES = 256, 3, 10


def mlp(cin: int, width: int) -> nn.Sequential:
    layers: list[nn.Module] = []
    for i in range(LAYERS):
        layers += [nn.Linear(cin if i == 0 else width, width), nn.ReLU()]
    return nn.Sequential(*layers)


class DeepSets(nn.Module):
    def __init__(self, features: int, width: int, equivariant: bool) -> None:
        super().__init__()
        self.equivariant = equivariant
        self.phi = mlp(features, width)
        self.rho = nn.Sequential(mlp(width, width), nn.Linear(width, CLASSES))

    def forward(self, x: Tensor) -> Tensor:  # x (b, n, f)
        if self.equivariant:
            x = x - x.mean(dim=1, keepdim=True)
        return self.rho(self.phi(x).sum(dim=1))


def build(device: torch.device, smoke: bool) -> Built:
    batch, elements, features, width = (4, 8, 8, 32) if smoke else (256, 64, 32, WIDTH)
    invariant = DeepSets(features, width, equivariant=False)
    centred = DeepSets(features, width, equivariant=True)
    model = nn.ModuleList([invariant, centred]).to(device, torch.float32).eval()

    @torch.no_grad()
    def step(x: Tensor) -> tuple[Tensor, Tensor]:
        return invariant(x), centred(x)

    inputs = [(torch.randn(batch, elements, features, device=device),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"DeepSets sum pooling + mean-centred variant, phi/rho {LAYERS} x {width}, "
        f"b{batch} sets of {elements} x {features}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
