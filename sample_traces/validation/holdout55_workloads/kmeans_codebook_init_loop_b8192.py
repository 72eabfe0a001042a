"""K-means initialization of two VQ codebooks of 256 codes over 8192 encoder vectors of 64 each,
10 Lloyd iterations as a Python loop, as lucidrains' vector-quantize-pytorch initializes its
codebooks (``kmeans`` in ``vector_quantize_pytorch.py``, ``kmeans_init=True``, with two
codebooks, ``num_codebooks=2`` / heads, Euclidean distances, and its ``cdist`` and
``batched_bincount``) (fifty-fifth hold-out: one stream of some 210 kernels, 21 an
iteration: a batched fp32 GEMM of 0.54 GFLOP, elementwise kernels and an ``argmax`` over the 2
x 8192 x 256 distance matrix, 16.8 MB, and two ``scatter_add_`` of atomic adds, the bin counts
and the per-cluster sums, 16384 x 64 values into 512 x 64, with the small divisions and
selections between). The starting means are 256 of each codebook's vectors (vector-quantize-
pytorch's ``batched_sample_vectors`` draws them with ``torch.randperm``; here their indices are
drawn at build and gathered in the step). An iteration on samples (2, 8192, 64) and means (2,
256, 64): the distances as its ``cdist`` writes them, sqrt(clamp(|x|^2 + |c|^2 - 2 x.c, min
0)) (two squared-norm reductions, an ``einsum`` to a batched matmul, times -2, the broadcast
sums, ``clamp``, ``sqrt``), negated; buckets = ``argmax`` over the 256 codes; the bins by
``batched_bincount``, a ``scatter_add_`` of ones (int64) into zeros (2, 256); zero_mask = bins
== 0 and the bins with zeros replaced by 1 (``masked_fill``); the new means, a ``scatter_add_``
of the samples into zeros (2, 256, 64) at the buckets expanded over the 64 features (einops'
``repeat``, an expanded view), divided by the clamped bins; the means kept where a code got no
vector (``torch.where``). The data: per codebook 256 true centres, Gaussian with std 1, and the
vectors drawn around them with std 0.35, then rounded to multiples of 1/64 and clipped to [-4,
4): every partial sum the float ``scatter_add_`` forms is then exact, so the atomics' order
cannot change a bit and a replay gives what an eager step gives. fp32, no gradients. Inputs
(two input sets): the samples (2, 8192, 64) and the starting indices (2, 256) int64. Returns
the means (2, 256, 64) and the bins (2, 256) int64.

    traceinspect profile kmeans_codebook_init_loop_b8192.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor

CODEBOOKS, CODES, DIM, ITERS, QUANTUM = 2, 256, 64, 10, 1 / 64


def cdist(x: Tensor, y: Tensor) -> Tensor:
    """vector-quantize-pytorch's cdist: (b, i, d), (b, j, d) -> (b, i, j) Euclidean."""
    x2 = (x**2).sum(dim=-1)
    y2 = (y**2).sum(dim=-1)
    xy = torch.einsum("b i d, b j d -> b i j", x, y) * -2
    return (x2[:, :, None] + y2[:, None, :] + xy).clamp(min=0).sqrt()


def batched_bincount(x: Tensor, minlength: int) -> Tensor:
    target = torch.zeros(x.shape[0], minlength, dtype=x.dtype, device=x.device)
    values = torch.ones_like(x)
    target.scatter_add_(-1, x, values)
    return target


def kmeans(samples: Tensor, means: Tensor, iters: int) -> tuple[Tensor, Tensor]:
    """vector-quantize-pytorch's kmeans after the initial sample, Euclidean."""
    codebooks, _, dim = samples.shape
    codes = means.shape[1]
    for _ in range(iters):
        dists = -cdist(samples, means)
        buckets = torch.argmax(dists, dim=-1)
        bins = batched_bincount(buckets, minlength=codes)
        zero_mask = bins == 0
        bins_min_clamped = bins.masked_fill(zero_mask, 1)
        new_means = buckets.new_zeros(codebooks, codes, dim, dtype=samples.dtype)
        new_means.scatter_add_(1, buckets[:, :, None].expand(-1, -1, dim), samples)
        new_means = new_means / bins_min_clamped[..., None]
        means = torch.where(zero_mask[..., None], means, new_means)
    return means, bins


def build(device: torch.device, smoke: bool) -> Built:
    n, codes, dim, iters = (256, 16, 8, 3) if smoke else (8192, CODES, DIM, ITERS)

    @torch.no_grad()
    def step(samples: Tensor, start: Tensor) -> tuple[Tensor, Tensor]:
        means = samples.gather(1, start[:, :, None].expand(-1, -1, samples.shape[-1]))
        return kmeans(samples, means, iters)

    def make() -> tuple[Tensor, Tensor]:
        centres = torch.randn(CODEBOOKS, codes, dim, device=device)
        which = torch.randint(0, codes, (CODEBOOKS, n), device=device)
        samples = centres.gather(1, which[:, :, None].expand(-1, -1, dim))
        samples = samples + 0.35 * torch.randn(CODEBOOKS, n, dim, device=device)
        samples = (samples / QUANTUM).round().clamp(-4 / QUANTUM, 4 / QUANTUM - 1) * QUANTUM
        start = torch.stack([torch.randperm(n, device=device)[:codes] for _ in range(CODEBOOKS)])
        return samples, start

    inputs = [make() for _ in range(2)]
    description = (
        f"k-means codebook init (vector-quantize-pytorch), {CODEBOOKS} codebooks x {codes} "
        f"codes, {n} vectors of {dim}, {iters} Lloyd iterations as a Python loop (cdist GEMM, "
        f"argmax, scatter_add_ bincount and sums), fp32"
    )
    return Built(step, inputs, description)


if __name__ == "__main__":
    main(build, __doc__)
