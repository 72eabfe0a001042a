"""CLIP's symmetric contrastive loss (Radford et al., 2021) over a global batch of 32768
image-text pairs, as one data-parallel rank of eight computes it with OpenCLIP's ``ClipLoss``
(``local_loss=True``: the rank's 4096 rows against all 32768 gathered columns), the
image-to-text half on one side stream and the text-to-image half on the other (fifty-fifth
hold-out: two concurrent chains of one large compute-bound bf16 GEMM each, 4096 x 32768 x 512,
137 GFLOP, beside and after memory-bound kernels over 0.25 to 0.5 GB logits: an fp32 cast, a
log-softmax over 32768 columns and the loss's ``nll_loss``, plus the L2 normalizations of 32 MB
embedding batches). The features come in as the towers' projections, unnormalized, the whole
global batch gathered (``gather_features``, not modelled) and the rank's own 4096 rows at
rows 12288 to 16383 of it (rank 3). Side stream 1, image to text: the 32768 text embeddings
L2-normalized (``F.normalize(dim=-1)``, as OpenCLIP's ``encode_text(normalize=True)``), the
rank's 4096 image embeddings likewise, logits_per_image = logit_scale * image @ all_text.T
(OpenCLIP's expression, evaluated left to right: the small image block scaled first, then the
GEMM), (4096, 32768) in bf16, and ``F.cross_entropy`` against the labels arange(4096) + 4096
x 3 (``get_ground_truth``) on the logits cast to fp32, as autocast runs the loss
(cross-entropy is on its fp32 list): a cast to 512 MB, ``log_softmax`` and ``nll_loss``. Side
stream 2, text to image: the same with the roles swapped. logit_scale = exp(t), t a learned
scalar (log(1 / 0.07) at CLIP's initialization, here log 50, as after some training), fp32,
taken on the current stream before the fork (the model's forward returns it; a 0-d fp32
factor leaves the bf16 block bf16). Fork and join are the
project's ``fork_join`` (``wait_stream``, and ``record_stream`` on the branch outputs outside
capture). After the join, on the current stream: the total loss, the mean of the two. bf16 on
a GPU (fp32 on a CPU), no gradients. Inputs (two input sets): the gathered image and text
features (32768, 512) each, Gaussian, the matching pairs correlated (text = image + 4 x
Gaussian noise), so the losses are about 1.5, far from log 32768. Returns the total and the two
halves (3,), fp32.

    traceinspect profile openclip_local_loss_2streams_b32768.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor

WORLD, RANK, DIM, LOGIT_SCALE = 8, 3, 512, math.log(50.0)


def local_loss(
    local: Tensor, everyone: Tensor, logit_scale: Tensor, labels: Tensor, rows: slice
) -> Tensor:
    """One half of OpenCLIP's ClipLoss with local_loss: the rank's rows of ``local``'s tower
    against all of ``everyone``'s, cross-entropy over the columns."""
    mine = F.normalize(local[rows], dim=-1)
    others = F.normalize(everyone, dim=-1)
    logits = logit_scale * mine @ others.T
    return F.cross_entropy(logits.float(), labels)


def build(device: torch.device, smoke: bool) -> Built:
    total, dim = (512, 32) if smoke else (32768, DIM)
    local_rows = total // WORLD
    rows = slice(RANK * local_rows, (RANK + 1) * local_rows)
    dtype = low_precision(device)
    t = torch.tensor(LOGIT_SCALE, device=device)
    labels = torch.arange(local_rows, device=device) + local_rows * RANK
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(image: Tensor, text: Tensor) -> Tensor:
        logit_scale = t.exp()
        per_image, per_text = fork_join(
            device,
            streams,
            [
                lambda: local_loss(image, text, logit_scale, labels, rows),
                lambda: local_loss(text, image, logit_scale, labels, rows),
            ],
        )
        halves = torch.stack((per_image, per_text))
        return torch.cat(((halves.sum() / 2).view(1), halves))

    def make() -> tuple[Tensor, Tensor]:
        image = torch.randn(total, dim, device=device)
        text = image + 4.0 * torch.randn(total, dim, device=device)
        return image.to(dtype), text.to(dtype)

    inputs = [make() for _ in range(2)]
    precision = str(dtype).removeprefix("torch.")
    description = (
        f"OpenCLIP ClipLoss (local_loss, rank {RANK} of {WORLD}): {local_rows} x {total} logits "
        f"per direction (normalize, GEMM k{dim}, fp32 cross-entropy) on 2 side streams, "
        f"{precision}"
    )
    return Built(step, inputs, description, [t, labels])


if __name__ == "__main__":
    main(build, __doc__)
