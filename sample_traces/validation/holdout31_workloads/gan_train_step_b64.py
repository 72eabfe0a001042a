"""One GAN training step with an MLP generator and discriminator (thirty-first hold-out):
64 latent vectors of 128 values, a generator 128 -> 512 -> 512 -> 784 (ReLU, tanh out), a
discriminator 784 -> 512 -> 256 -> 1 (LeakyReLU 0.2), fp32. The discriminator's step first
(real images against the generator's detached fakes, binary cross-entropy with logits),
then the generator's (its fakes scored as real, through the discriminator), each with its
own ``torch.optim.SGD`` (momentum 0.9, ``foreach=True``): two forward passes of each net,
two backward passes and two optimizer steps, a few hundred small kernels on one stream.

Every step first restores both nets' parameters and momentum buffers from a snapshot taken
at build (foreach copies) and zeroes the gradients in place, so a step depends only on its
inputs and replayed losses compare with eager ones. Returns both losses (0-d tensors).

    traceinspect profile gan_train_step_b64.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn

LR, MOMENTUM = 0.01, 0.9


def build(device: torch.device, smoke: bool) -> Built:
    latent, hidden, image, batch = (8, 16, 32, 4) if smoke else (128, 512, 784, 64)
    gen = nn.Sequential(
        nn.Linear(latent, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
        nn.Linear(hidden, image), nn.Tanh(),
    ).to(device)  # fmt: skip
    disc = nn.Sequential(
        nn.Linear(image, hidden), nn.LeakyReLU(0.2), nn.Linear(hidden, hidden // 2),
        nn.LeakyReLU(0.2), nn.Linear(hidden // 2, 1),
    ).to(device)  # fmt: skip
    gen.train()
    disc.train()
    g_params, d_params = list(gen.parameters()), list(disc.parameters())
    g_opt = torch.optim.SGD(g_params, lr=LR, momentum=MOMENTUM, foreach=True)
    d_opt = torch.optim.SGD(d_params, lr=LR, momentum=MOMENTUM, foreach=True)
    params = g_params + d_params
    for p in params:
        p.grad = torch.zeros_like(p)
    g_opt.step()  # allocates the momentum buffers
    d_opt.step()
    bufs = [g_opt.state[p]["momentum_buffer"] for p in g_params]
    bufs += [d_opt.state[p]["momentum_buffer"] for p in d_params]
    start = [p.detach().clone() for p in params]
    bufs0 = [torch.randn_like(p) * 1e-3 for p in params]

    def step(z: Tensor, real: Tensor) -> tuple[Tensor, Tensor]:
        with torch.no_grad():
            torch._foreach_copy_(params, start)
            torch._foreach_copy_(bufs, bufs0)
        d_opt.zero_grad(set_to_none=False)
        fake = gen(z)
        real_logit, fake_logit = disc(real), disc(fake.detach())
        d_loss = F.binary_cross_entropy_with_logits(
            real_logit, torch.ones_like(real_logit)
        ) + F.binary_cross_entropy_with_logits(fake_logit, torch.zeros_like(fake_logit))
        d_loss.backward()
        d_opt.step()
        g_opt.zero_grad(set_to_none=False)
        scored = disc(fake)
        g_loss = F.binary_cross_entropy_with_logits(scored, torch.ones_like(scored))
        g_loss.backward()
        g_opt.step()
        return d_loss.detach(), g_loss.detach()

    inputs = [
        (
            torch.randn(batch, latent, device=device),
            torch.rand(batch, image, device=device) * 2 - 1,
        )
        for _ in range(2)
    ]
    description = (
        f"MLP GAN training step, G {latent}-{hidden}x2-{image}, D {image}-{hidden}-"
        f"{hidden // 2}-1, two SGD (foreach) steps, batch {batch}"
    )
    return Built(step, inputs, description, [gen, disc, g_opt, d_opt, start, bufs0])


if __name__ == "__main__":
    main(build, __doc__)
