"""A capsule network with dynamic routing (Sabour et al., 2017) on 64 MNIST-sized images of
1 x 28 x 28 (twelfth hold-out), inference; the convolutions and the reconstruction decoder
in bf16, the routing in fp32. Conv1: conv9x9 1->256 and ReLU (20 x 20). Primary capsules:
conv9x9 stride 2 256->256 (6 x 6), viewed as 32 capsule types x 8 dimensions at 36
positions: 1152 capsules of 8, squashed (v = s |s|^2 / (1 + |s|^2) / |s|). Predictions:
every primary capsule times its own 160 x 8 matrix for the 10 digit capsules of 16
(``torch.bmm`` batched over the 1152 capsules: 1152 x 160 x 8 by 1152 x 8 x 64), giving
u_hat, 64 x 1152 x 10 x 16. Routing, 3 iterations written out: coupling coefficients
``softmax`` of the logits b (64 x 1152 x 10, zeros at the start) over the 10 digit
capsules, the weighted sum of u_hat over the 1152 inputs, squash, and (but after the last
iteration) the agreement, the dot product of u_hat with the output capsule, added to b.
Then the capsule lengths (the class scores), a mask keeping the longest capsule (its index
``scatter_`` of 1.0 into zeros, no data-dependent shapes) and the reconstruction decoder on
the masked 160 values: Linear 160->512, ReLU, Linear 512->1024, ReLU, Linear 1024->784,
sigmoid. Returns the lengths (64 x 10, fp32) and the reconstructions (64 x 784).

    traceinspect profile capsule_routing_b64.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn

ROUTING_ITERS = 3


def squash(s: Tensor, dim: int = -1) -> Tensor:
    sq = s.pow(2).sum(dim, keepdim=True)
    return s * (sq / (1.0 + sq) / torch.sqrt(sq + 1e-8))


class CapsNet(nn.Module):
    def __init__(self, c: int, types: int, side: int, digits: int, pdim: int, ddim: int,
                 image: int) -> None:  # fmt: skip
        super().__init__()
        self.types, self.pdim, self.digits, self.ddim = types, pdim, digits, ddim
        self.conv1 = nn.Conv2d(1, c, 9)
        self.primary = nn.Conv2d(c, types * pdim, 9, stride=2)
        self.caps = types * side * side
        self.weight = nn.Parameter(0.5 * torch.randn(self.caps, digits * ddim, pdim))
        self.decoder = nn.Sequential(
            nn.Linear(digits * ddim, 512), nn.ReLU(), nn.Linear(512, 1024), nn.ReLU(),
            nn.Linear(1024, image * image), nn.Sigmoid(),
        )  # fmt: skip

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        b = x.shape[0]
        h = self.primary(torch.relu(self.conv1(x)))  # (B, types * pdim, side, side)
        u = h.view(b, self.types, self.pdim, -1).permute(0, 1, 3, 2).reshape(b, -1, self.pdim)
        u = squash(u.float()).to(x.dtype)  # (B, caps, pdim)
        u_hat = torch.bmm(self.weight, u.permute(1, 2, 0))  # (caps, digits * ddim, B)
        u_hat = u_hat.permute(2, 0, 1).float().view(b, self.caps, self.digits, self.ddim)
        logits = torch.zeros(b, self.caps, self.digits, device=x.device)
        for i in range(ROUTING_ITERS):
            coupling = torch.softmax(logits, dim=-1)
            v = squash((coupling.unsqueeze(-1) * u_hat).sum(1))  # (B, digits, ddim)
            if i < ROUTING_ITERS - 1:
                logits = logits + (u_hat * v.unsqueeze(1)).sum(-1)
        lengths = v.norm(dim=-1)  # (B, digits)
        mask = torch.zeros_like(lengths).scatter_(1, lengths.argmax(1, keepdim=True), 1.0)
        masked = (v * mask.unsqueeze(-1)).view(b, -1).to(x.dtype)
        return lengths, self.decoder(masked)


def build(device: torch.device, smoke: bool) -> Built:
    c, types, batch = (16, 4, 2) if smoke else (256, 32, 64)
    image, digits, pdim, ddim = 28, 10, 8, 16
    side = ((image - 8) - 9) // 2 + 1  # 6
    dtype = low_precision(device)
    model = CapsNet(c, types, side, digits, pdim, ddim, image)
    model = model.to(device=device, dtype=dtype).eval()

    @torch.no_grad()
    def step(x: Tensor) -> tuple[Tensor, Tensor]:
        return model(x)

    inputs = [(torch.rand(batch, 1, image, image, device=device, dtype=dtype),) for _ in range(2)]
    description = (
        f"CapsNet, {model.caps} primary capsules -> {digits} x {ddim}, "
        f"{ROUTING_ITERS} routing iterations, batch {batch} x {image}x{image}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
