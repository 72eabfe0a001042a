"""An Attentive Neural Process (Kim et al., 2019) completing 32 CelebA images of 32 x 32 from 100
context pixels each: the negative ELBO of all 1024 target pixels, as a validation pass computes it,
with the deterministic path on one side stream beside the latent path on the other, then, after the
join, the decoder and the loss (sixty-first hold-out: two concurrent chains of unequal make, fp16:
on side stream 1 the deterministic encoder (a 4-layer ReLU MLP over the 100 (x, y) context points, 2
self-attention layers of 8 heads with residual and LayerNorm) and the cross-attention from the 1024
target coordinates (2-layer MLPs on the queries' and keys' coordinates, 8 heads), some 40 kernels;
on side stream 2 the latent encoder run twice, on the context (the prior) and on all targets (the
posterior), each the MLP, 2 self-attention layers, the mean over the points and the heads to mu and
sigma = 0.1 + 0.9 sigmoid, then the reparameterised sample and the KL divergence between the two
diagonal Gaussians, some 70 kernels; then the decoder, a 3-layer ReLU MLP over [r*, z, x] of 32 x
1024 rows, sigma = 0.1 + 0.9 softplus, the Gaussian log-likelihood and the mean; some 130 kernels in
all, every one small (the largest tensors (32, 1024, 258), 17 MB), some 0.3 to 0.7 ms of GPU time).
Laid out as google-deepmind/neural-processes' ``attentive_neural_process.ipynb`` (``LatentEncoder``,
``DeterministicEncoder`` with ``Attention(rep="mlp", output_sizes=[128, 128], att_type="multihead",
num_heads=8)``, ``Decoder``, ``LatentModel``; hidden size 128, the encoders' MLPs [128] * 4, the
latent 128, the decoder [128, 128, 2 * 3]) with the paper's self-attention in both encoders for
image completion, here each layer as a Transformer encoder's (``F.scaled_dot_product_attention``
over 8 heads of 16, the output projection, residual, ``LayerNorm``), and the notebook's multihead
attention as one with q, k, v and output projections; the loss as ``LatentModel``: -mean(log p(y |
x) - KL / 1024). The sample's Gaussian noise is an input, drawn outside the step, so a replay
computes the same loss. Fork and join are the project's ``fork_join`` (``wait_stream``, and
``record_stream`` on the branch outputs outside capture). fp16 weights and activations on a GPU
(fp32 on a CPU), the log-likelihood and KL in fp32, eval, no gradients, random weights (torch's
defaults). Inputs (two input sets): the images as (32, 1024, 3) pixel values in [0, 1), fp16, the
context pixels' indices (32, 100) int64 (the first 100 of a random permutation per image) and the
latent noise (32, 128), Gaussian, fp16; the pixel coordinates (1024, 2) in [-1, 1] are fixed at
build. Returns the loss (a 0-d fp32 tensor) and the predicted means (32, 1024, 3).

    traceinspect profile anp_deterministic_beside_latent_path_celeba32_2streams_b32.py
"""

from __future__ import annotations

from itertools import pairwise

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

IMAGE, CHANNELS, CONTEXT, HIDDEN, HEADS, SELF_ATTN_LAYERS = 32, 3, 100, 128, 8, 2


class BatchMLP(nn.Module):  # the notebook's batch_mlp: ReLU after every layer but the last
    def __init__(self, sizes: list[int]) -> None:
        super().__init__()
        self.linears = nn.ModuleList(nn.Linear(a, b) for a, b in pairwise(sizes))

    def forward(self, x: Tensor) -> Tensor:
        for linear in self.linears[:-1]:
            x = torch.relu(linear(x))
        return self.linears[-1](x)


class MultiheadAttention(nn.Module):
    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))

    def forward(self, q: Tensor, k: Tensor, v: Tensor) -> Tensor:
        b, h = q.shape[0], self.heads

        def split(x: Tensor) -> Tensor:
            return x.view(b, x.shape[1], h, -1).transpose(1, 2)

        out = F.scaled_dot_product_attention(split(self.q(q)), split(self.k(k)), split(self.v(v)))
        return self.o(out.transpose(1, 2).reshape(b, q.shape[1], -1))


class SelfAttentionLayer(nn.Module):
    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.attn = MultiheadAttention(d, heads)
        self.norm = nn.LayerNorm(d)

    def forward(self, x: Tensor) -> Tensor:
        return self.norm(x + self.attn(x, x, x))


def self_attention(d: int, heads: int, layers: int) -> nn.Sequential:
    return nn.Sequential(*[SelfAttentionLayer(d, heads) for _ in range(layers)])


class DeterministicEncoder(nn.Module):
    def __init__(self, y_dim: int, d: int, heads: int, layers: int) -> None:
        super().__init__()
        self.mlp = BatchMLP([2 + y_dim] + [d] * 4)
        self.self_attn = self_attention(d, heads, layers)
        self.key_mlp = BatchMLP([2, d, d])
        self.query_mlp = BatchMLP([2, d, d])
        self.cross_attn = MultiheadAttention(d, heads)

    def forward(self, context_x: Tensor, context_y: Tensor, target_x: Tensor) -> Tensor:
        hidden = self.self_attn(self.mlp(torch.cat((context_x, context_y), dim=-1)))
        return self.cross_attn(self.query_mlp(target_x), self.key_mlp(context_x), hidden)


class LatentEncoder(nn.Module):
    def __init__(self, y_dim: int, d: int, heads: int, layers: int) -> None:
        super().__init__()
        self.mlp = BatchMLP([2 + y_dim] + [d] * 4)
        self.self_attn = self_attention(d, heads, layers)
        self.penultimate = nn.Linear(d, d)
        self.mean = nn.Linear(d, d)
        self.log_sigma = nn.Linear(d, d)

    def forward(self, x: Tensor, y: Tensor) -> tuple[Tensor, Tensor]:
        hidden = self.self_attn(self.mlp(torch.cat((x, y), dim=-1))).mean(dim=1)
        hidden = torch.relu(self.penultimate(hidden))
        return self.mean(hidden), 0.1 + 0.9 * torch.sigmoid(self.log_sigma(hidden))


class ANP(nn.Module):
    def __init__(self, y_dim: int, d: int, heads: int, layers: int) -> None:
        super().__init__()
        self.deterministic = DeterministicEncoder(y_dim, d, heads, layers)
        self.latent = LatentEncoder(y_dim, d, heads, layers)
        self.decoder = BatchMLP([2 * d + 2, d, d, 2 * y_dim])


def gaussian_kl(mu_q: Tensor, sigma_q: Tensor, mu_p: Tensor, sigma_p: Tensor) -> Tensor:
    """KL(N(mu_q, sigma_q) || N(mu_p, sigma_p)), summed over the last dimension, fp32."""
    mu_q, sigma_q, mu_p, sigma_p = (t.float() for t in (mu_q, sigma_q, mu_p, sigma_p))
    ratio = (sigma_q / sigma_p) ** 2
    kl = 0.5 * (ratio + ((mu_q - mu_p) / sigma_p) ** 2 - 1 - torch.log(ratio))
    return kl.sum(dim=-1)


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, image, context, d, heads, layers = 2, 4, 5, 16, 2, 1
    else:
        batch, image, context, d, heads, layers = (
            32,
            IMAGE,
            CONTEXT,
            HIDDEN,
            HEADS,
            SELF_ATTN_LAYERS,
        )
    dtype = torch.float16 if device.type == "cuda" else torch.float32
    model = ANP(CHANNELS, d, heads, layers).to(device, dtype).eval()
    streams = side_streams(device, 2)
    axis = torch.linspace(-1, 1, image, device=device, dtype=dtype)
    coords = torch.stack(torch.meshgrid(axis, axis, indexing="ij"), dim=-1).reshape(-1, 2)
    target_x = coords.expand(batch, -1, -1)
    n_targets = image * image

    def latent_path(
        context_x: Tensor, context_y: Tensor, target_y: Tensor, eps: Tensor
    ) -> tuple[Tensor, Tensor]:
        prior_mu, prior_sigma = model.latent(context_x, context_y)
        post_mu, post_sigma = model.latent(target_x, target_y)
        z = post_mu + post_sigma * eps
        return z, gaussian_kl(post_mu, post_sigma, prior_mu, prior_sigma)

    @torch.no_grad()
    def step(target_y: Tensor, context_idx: Tensor, eps: Tensor) -> tuple[Tensor, Tensor]:
        idx = context_idx.unsqueeze(-1)
        context_x = torch.gather(target_x, 1, idx.expand(-1, -1, 2))
        context_y = torch.gather(target_y, 1, idx.expand(-1, -1, CHANNELS))
        r, (z, kl) = fork_join(
            device,
            streams,
            [
                lambda: model.deterministic(context_x, context_y, target_x),
                lambda: latent_path(context_x, context_y, target_y, eps),
            ],
        )
        z = z.unsqueeze(1).expand(-1, n_targets, -1)
        out = model.decoder(torch.cat((r, z, target_x), dim=-1))
        mu, log_sigma = out.float().split(CHANNELS, dim=-1)
        sigma = 0.1 + 0.9 * F.softplus(log_sigma)
        log_p = -0.5 * ((target_y.float() - mu) / sigma) ** 2 - torch.log(sigma) - 0.9189385332
        log_p = log_p.sum(dim=-1)  # (b, targets)
        loss = -(log_p - kl.unsqueeze(1) / n_targets).mean()
        return loss, mu

    def make() -> tuple[Tensor, ...]:
        perm = torch.rand(batch, n_targets, device=device).argsort(dim=1)
        return (
            torch.rand(batch, n_targets, CHANNELS, device=device, dtype=dtype),
            perm[:, :context].contiguous(),
            torch.randn(batch, d, device=device, dtype=dtype),
        )

    inputs = [make() for _ in range(2)]
    precision = str(dtype).removeprefix("torch.")
    description = (
        f"Attentive NP: deterministic path beside latent path (prior + posterior) on 2 side "
        f"streams, {context} of {n_targets} pixels, d{d} {heads} heads, {precision}, b{batch}"
    )
    return Built(step, inputs, description, [model, coords])


if __name__ == "__main__":
    main(build, __doc__)
