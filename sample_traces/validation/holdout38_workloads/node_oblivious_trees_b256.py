"""NODE, Neural Oblivious Decision Ensembles (Popov et al., 2020), a differentiable
gradient-boosting-style tabular classifier, as the reference ``DenseBlock`` of ``ODST`` layers
with entmax feature choice and entmoid thresholds runs at inference (thirty-eighth hold-out):
256 rows of 64 numeric features, fp32 (explicitly, also on a GPU), eval mode, no gradients.
A DenseBlock of 3 ODST layers of 256 oblivious trees of depth 6 with 3 outputs per tree (2
classes + 1, as the reference classifier), each layer reading the input features
concatenated with every earlier layer's flattened outputs (64, 832 and 1,600 features). Per
layer: the feature choice, entmax-1.5 over the input features of the (features, 256, 6)
selection logits (written out as the entmax package's exact sort-based threshold: the logits
less their max, halved, sorted descending, cumulative means of the values and their squares,
tau = mean - sqrt(clamp((1 - rho (mean_sq - mean^2)) / rho, 0)), the support size counted as
tau <= sorted and tau* gathered at it, out = clamp(x - tau*, 0)^2; recomputed every step
from the parameters); the chosen feature values ``einsum('bi,ind->bnd')``; the threshold
logits (value - threshold) x exp(-log_temperature), stacked with their negatives; entmoid-1.5
of them (the reference ``entmoid15``: tau = (|x| + sqrt(relu(8 - x^2))) / 2, set to 2 where
tau <= |x|, y = 0.25 relu(tau - |x|)^2, 1 - y where x >= 0); the bins matched against the
(6, 64, 2) one-hot bin codes (``einsum('btds,dcs->btdc')``, (256, 256, 6, 64)), their product
over the depth, the 64 leaf weights per tree; the response, ``einsum('bnd,ncd->bnc')`` with
the (256, 3, 64) leaf values. The prediction: the first 2 outputs of all 768 trees averaged,
(256, 2). Input: the features (256, 64) fp32. Returns the class logits (256, 2).

    traceinspect profile node_oblivious_trees_b256.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn

LAYERS, CLASSES = 3, 2


def entmax15(x: Tensor, dim: int) -> Tensor:
    """The entmax package's exact entmax-1.5 (sort-based threshold), forward only."""
    x = (x - x.amax(dim=dim, keepdim=True)) / 2
    srt, _ = torch.sort(x, dim=dim, descending=True)
    shape = [1] * x.dim()
    shape[dim] = -1
    rho = torch.arange(1, x.shape[dim] + 1, device=x.device, dtype=x.dtype).view(shape)
    mean = srt.cumsum(dim) / rho
    mean_sq = (srt**2).cumsum(dim) / rho
    delta = (1 - rho * (mean_sq - mean**2)) / rho
    tau = mean - delta.clamp(min=0).sqrt()
    support = (tau <= srt).sum(dim=dim, keepdim=True)
    tau_star = tau.gather(dim, support - 1)
    return (x - tau_star).clamp(min=0) ** 2


def entmoid15(x: Tensor) -> Tensor:
    """The reference ``entmoid15`` (a sparse sigmoid), forward only."""
    is_pos = x >= 0
    a = x.abs()
    tau = (a + F.relu(8 - a**2).sqrt()) / 2
    tau = tau.masked_fill(tau <= a, 2.0)
    y_neg = 0.25 * F.relu(tau - a) ** 2
    return torch.where(is_pos, 1 - y_neg, y_neg)


class ODST(nn.Module):
    """Oblivious decision trees: every level of a tree tests one (soft-chosen) feature."""

    def __init__(self, features: int, trees: int, depth: int, tree_dim: int) -> None:
        super().__init__()
        self.response = nn.Parameter(torch.randn(trees, tree_dim, 2**depth))
        self.selection_logits = nn.Parameter(torch.rand(features, trees, depth))
        self.thresholds = nn.Parameter(torch.randn(trees, depth) * 0.5)
        self.log_temperatures = nn.Parameter(torch.randn(trees, depth) * 0.1)
        indices = torch.arange(2**depth)
        offsets = 2 ** torch.arange(depth)
        codes = (indices.view(1, -1) // offsets.view(-1, 1) % 2).float()
        self.register_buffer("codes_1hot", torch.stack([codes, 1.0 - codes], dim=-1))

    def forward(self, x: Tensor) -> Tensor:
        selectors = entmax15(self.selection_logits, dim=0)  # (features, trees, depth)
        values = torch.einsum("bi,ind->bnd", x, selectors)
        logits = (values - self.thresholds) * torch.exp(-self.log_temperatures)
        bins = entmoid15(torch.stack([-logits, logits], dim=-1))  # (b, trees, depth, 2)
        matches = torch.einsum("btds,dcs->btdc", bins, self.codes_1hot)
        weights = matches.prod(dim=-2)  # (b, trees, 2 ** depth)
        return torch.einsum("bnd,ncd->bnc", weights, self.response).flatten(1)


class DenseBlock(nn.Module):
    def __init__(self, features: int, trees: int, depth: int, tree_dim: int) -> None:
        super().__init__()
        self.layers = nn.ModuleList(
            ODST(features + i * trees * tree_dim, trees, depth, tree_dim) for i in range(LAYERS)
        )
        self.features, self.tree_dim = features, tree_dim

    def forward(self, x: Tensor) -> Tensor:
        for layer in self.layers:
            x = torch.cat([x, layer(x)], dim=-1)
        out = x[:, self.features :].view(x.shape[0], -1, self.tree_dim)  # (b, all trees, dim)
        return out[..., :CLASSES].mean(dim=-2)


def build(device: torch.device, smoke: bool) -> Built:
    batch, features, trees, depth = (4, 8, 8, 3) if smoke else (256, 64, 256, 6)
    dtype = torch.float32
    model = DenseBlock(features, trees, depth, CLASSES + 1).to(device, dtype).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    inputs = [(torch.randn(batch, features, device=device, dtype=dtype),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"NODE, {LAYERS} dense ODST layers x {trees} oblivious trees of depth {depth} "
        f"(entmax-1.5 feature choice, entmoid thresholds), fp32, b{batch} x {features}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
