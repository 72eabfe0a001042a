"""The loss of a deep cross-modal hashing model in the DCMH layout (Jiang and Li, 2017: an image
tower and a text tower map each modality to k-bit codes; a pairwise likelihood over the
inner products of the two sides' codes and a quantization term toward the shared binary
codes), the image tower on one side stream and the text tower on the other, the loss after the
join (forty-third hold-out): 512 image-text pairs (MIRFlickr-25K's layout: 4,096 precomputed
CNN image features, a 1,386-word bag of words per caption, 24 multi-hot labels), 64-bit codes,
fp32 throughout and full fp32 GEMMs (TF32 left off, torch's default for matmuls: this workload
is about two fp32 GEMM towers side by side), eval mode, no gradients. Image tower, on side
stream 1, the shared ``_blocks.mlp_tower``: ``Linear(4096, 2048)`` + ReLU, ``Linear(2048,
2048)`` + ReLU, ``Linear(2048, 64)``, then tanh, (512, 64), some 13 GFLOP. Text tower, on side
stream 2: ``Linear(1386, 2048)`` + ReLU, ``Linear(2048, 2048)`` + ReLU, ``Linear(2048, 64)``,
tanh, (512, 64), some 7.3 GFLOP. Fork and join are the project's ``fork_join`` (``wait_stream``,
and ``record_stream`` on the branch outputs outside capture). After the join, on the current
stream, in fp32: the pairwise similarity S = (L L^T > 0) of the labels (512, 512); theta =
0.5 F G^T of the image codes F and text codes G; the negative log-likelihood -(S theta -
softplus(theta)) averaged over the 262,144 pairs; the shared codes B = sign(F + G); the
quantization term, the mean of (B - F)^2 + (B - G)^2; the bit balance term, the mean of the
squared column sums of F and G over the batch, divided by the batch; the loss, likelihood + 1 x
quantization + 0.1 x balance. On a CPU the branches run in order. Inputs: image features (512,
4096), bags of words (512, 1386) (0 / 1), labels (512, 24) (0 / 1), fp32. Returns the loss (a
0-d fp32 tensor) and the binary codes B (512, 64), fp32.

    traceinspect profile cross_modal_hashing_fp32_towers_2streams_b512.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _blocks import mlp_tower
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

BITS, LABELS, GAMMA, ETA = 64, 24, 1.0, 0.1


def build(device: torch.device, smoke: bool) -> Built:
    batch, image_dim, text_dim, hidden = (4, 32, 20, 16) if smoke else (512, 4096, 1386, 2048)
    image = mlp_tower([image_dim, hidden, hidden, BITS])
    text = mlp_tower([text_dim, hidden, hidden, BITS])
    model = nn.ModuleList([image, text]).to(device).eval()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(feats: Tensor, words: Tensor, labels: Tensor) -> tuple[Tensor, Tensor]:
        f, g = fork_join(
            device, streams, [lambda: torch.tanh(image(feats)), lambda: torch.tanh(text(words))]
        )
        sim = (labels @ labels.T > 0).float()
        theta = 0.5 * f @ g.T
        likelihood = -(sim * theta - F.softplus(theta)).mean()
        codes = torch.sign(f + g)
        quantization = ((codes - f) ** 2 + (codes - g) ** 2).mean()
        balance = (f.sum(dim=0) ** 2 + g.sum(dim=0) ** 2).mean() / f.shape[0]
        return likelihood + GAMMA * quantization + ETA * balance, codes

    inputs = [
        (
            torch.randn(batch, image_dim, device=device).relu(),
            (torch.rand(batch, text_dim, device=device) < 0.02).float(),
            (torch.rand(batch, LABELS, device=device) < 0.1).float(),
        )
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"cross-modal hashing: fp32 image tower {image_dim}-{hidden}-{hidden}-{BITS} and text "
        f"tower {text_dim}-{hidden}-{hidden}-{BITS} on 2 side streams + DCMH likelihood / "
        f"quantization / balance loss, {BITS} bits, b{batch} pairs",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
