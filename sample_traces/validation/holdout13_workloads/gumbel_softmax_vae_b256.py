"""A categorical VAE with the straight-through Gumbel-softmax (Jang et al., 2017) on 256
MNIST-sized images, the MLPs in bf16 and the sampling and losses in fp32 (thirteenth
hold-out), one evaluation of the loss, inference mode. Encoder: Linear 784->512, ReLU,
Linear 512->256, ReLU, Linear 256->512 giving the logits of 32 categorical latents of 16
classes. Sampling, with the uniform noise passed in as an input (256 x 32 x 16, fp32) so the
step is deterministic: Gumbel noise -log(-log(u + 1e-20) + 1e-20), a ``softmax`` of
(logits + noise) / 0.5 over the 16 classes, the hard one-hot of its ``argmax`` (a
``scatter_`` of 1.0 into zeros) and the straight-through sample one_hot - soft + soft.
Decoder on the 512 flattened sample values: Linear 512->256, ReLU, Linear 256->512, ReLU,
Linear 512->784. Loss per image: the binary cross-entropy of the decoder's logits against
the image (``binary_cross_entropy_with_logits``, summed over the 784 pixels) plus the KL
divergence of the latent posteriors from the uniform prior, sum of q (log q + log 16) with q
the ``softmax`` of the logits and log q their ``log_softmax``. About 35 kernels, all small:
launch-bound. Inputs: the images (256 x 784, in [0, 1]) and the noise. Returns the
reconstructions (``sigmoid``, 256 x 784), the loss per image (256) and the hard codes (256
x 32 x 16).

    traceinspect profile gumbel_softmax_vae_b256.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

TAU, EPS = 0.5, 1e-20


def build(device: torch.device, smoke: bool) -> Built:
    batch, pixels, hidden, latents, classes = (
        (4, 64, 32, 4, 8) if smoke else (256, 784, 512, 32, 16)
    )
    dtype = low_precision(device)
    encoder = nn.Sequential(
        nn.Linear(pixels, hidden), nn.ReLU(), nn.Linear(hidden, hidden // 2), nn.ReLU(),
        nn.Linear(hidden // 2, latents * classes),
    ).to(device=device, dtype=dtype).eval()  # fmt: skip
    decoder = nn.Sequential(
        nn.Linear(latents * classes, hidden // 2), nn.ReLU(), nn.Linear(hidden // 2, hidden),
        nn.ReLU(), nn.Linear(hidden, pixels),
    ).to(device=device, dtype=dtype).eval()  # fmt: skip

    @torch.no_grad()
    def step(x: Tensor, u: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        b = x.shape[0]
        logits = encoder(x.to(dtype)).float().view(b, latents, classes)
        gumbel = -torch.log(-torch.log(u + EPS) + EPS)
        soft = torch.softmax((logits + gumbel) / TAU, dim=-1)
        hard = torch.zeros_like(soft).scatter_(-1, soft.argmax(-1, keepdim=True), 1.0)
        sample = hard - soft + soft  # straight-through: the forward value is the one-hot
        recon_logits = decoder(sample.view(b, -1).to(dtype)).float()
        bce = F.binary_cross_entropy_with_logits(recon_logits, x, reduction="none").sum(-1)
        q, log_q = torch.softmax(logits, dim=-1), torch.log_softmax(logits, dim=-1)
        kl = (q * (log_q + math.log(classes))).sum((-1, -2))
        return torch.sigmoid(recon_logits), bce + kl, hard

    inputs = [
        (
            torch.rand(batch, pixels, device=device),
            torch.rand(batch, latents, classes, device=device),
        )
        for _ in range(2)
    ]
    description = (
        f"Gumbel-softmax VAE, MLP {pixels}-{hidden}-{hidden // 2}, {latents} latents x "
        f"{classes} classes, batch {batch}"
    )
    return Built(step, inputs, description, [encoder, decoder])


if __name__ == "__main__":
    main(build, __doc__)
