"""A Set Transformer classifier (Lee et al., 2019) over 64 point clouds of 1024 points in 3-D,
bf16 (thirteenth hold-out), as the paper's ModelNet40 model and its reference ``MAB``,
``ISAB`` and ``PMA`` modules, inference. MAB(Q, K): fc_q(Q), fc_k(K), fc_v(K) (Linears to
256), split into 4 heads, attention with the reference's scale 1/sqrt(256)
(``scaled_dot_product_attention`` with ``scale``), O = fc_q(Q) + heads merged, LayerNorm,
O + ReLU(fc_o(O)), LayerNorm. Encoder: two ISABs with 32 inducing points each (ISAB(X) =
MAB(X, MAB(I, X)) with I a learned 32 x 256 set, expanded to the batch): the inducing
points attend to the 1024 points (32 queries, 1024 keys) and the points to the inducing
points (1024 queries, 32 keys), the first ISAB from the 3 input coordinates. Decoder: PMA,
one learned seed attending to the 1024 encoded points (MAB(S, X)), then a Linear 256->40.
Five MABs of about 11 kernels each, GEMMs of up to 65,536 x 256 x 256. Input: the points
(64 x 1024 x 3). Returns the class logits (64 x 40).

    traceinspect profile set_transformer_b64.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn


class MAB(nn.Module):
    def __init__(self, dim_q: int, dim_k: int, dim: int, heads: int) -> None:
        super().__init__()
        self.heads, self.dim = heads, dim
        self.fc_q, self.fc_k, self.fc_v = (
            nn.Linear(dim_q, dim), nn.Linear(dim_k, dim), nn.Linear(dim_k, dim)
        )  # fmt: skip
        self.ln0, self.ln1, self.fc_o = nn.LayerNorm(dim), nn.LayerNorm(dim), nn.Linear(dim, dim)

    def split(self, x: Tensor) -> Tensor:
        b, n, _ = x.shape
        return x.view(b, n, self.heads, -1).transpose(1, 2)

    def forward(self, q: Tensor, k: Tensor) -> Tensor:
        q = self.fc_q(q)
        att = F.scaled_dot_product_attention(
            self.split(q), self.split(self.fc_k(k)), self.split(self.fc_v(k)),
            scale=self.dim**-0.5,
        )  # fmt: skip
        o = self.ln0(q + att.transpose(1, 2).reshape(q.shape))
        return self.ln1(o + F.relu(self.fc_o(o)))


class ISAB(nn.Module):
    def __init__(self, dim_in: int, dim: int, heads: int, inducing: int) -> None:
        super().__init__()
        self.inducing = nn.Parameter(0.1 * torch.randn(1, inducing, dim))
        self.mab0 = MAB(dim, dim_in, dim, heads)
        self.mab1 = MAB(dim_in, dim, dim, heads)

    def forward(self, x: Tensor) -> Tensor:
        h = self.mab0(self.inducing.expand(x.shape[0], -1, -1), x)
        return self.mab1(x, h)


class SetTransformer(nn.Module):
    def __init__(self, dim_in: int, dim: int, heads: int, inducing: int, classes: int) -> None:
        super().__init__()
        self.enc = nn.Sequential(
            ISAB(dim_in, dim, heads, inducing), ISAB(dim, dim, heads, inducing)
        )
        self.seed = nn.Parameter(0.1 * torch.randn(1, 1, dim))
        self.pma = MAB(dim, dim, dim, heads)
        self.head = nn.Linear(dim, classes)

    def forward(self, x: Tensor) -> Tensor:
        h = self.enc(x)
        pooled = self.pma(self.seed.expand(x.shape[0], -1, -1), h)
        return self.head(pooled.squeeze(1))


def build(device: torch.device, smoke: bool) -> Built:
    batch, points, dim, heads, inducing = (2, 16, 32, 4, 4) if smoke else (64, 1024, 256, 4, 32)
    dtype = low_precision(device)
    model = SetTransformer(3, dim, heads, inducing, 40).to(device=device, dtype=dtype).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    inputs = [(torch.randn(batch, points, 3, device=device, dtype=dtype),) for _ in range(2)]
    description = (
        f"Set Transformer, 2 ISAB (d{dim}, {heads} heads, {inducing} inducing) + PMA, "
        f"batch {batch} x {points} points"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
