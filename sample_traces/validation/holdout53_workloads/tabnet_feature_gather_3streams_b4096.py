"""A three-tower tabular classifier on 4096 rows, each tower on its own side stream and joined by
a concatenation and a 2-layer MLP head (fifty-third hold-out: three concurrent chains of small
kernels of unequal length, sorts and gathers, 32 row gathers from 410 MB of embedding tables,
a bucketize and a gather, beside small GEMMs). Side stream 1, a TabNet encoder (Arik and
Pfister, 2021; dreamquark-ai's ``pytorch_tabnet`` ``TabNetEncoder``, in eval mode) over 256
dense features: n_d = n_a = 64, 3 decision steps, gamma 1.3, 2 shared and 2 step-specific GLU
layers per feature transformer (each ``Linear(., 256, bias=False)``, BatchNorm, the GLU
x[:, :128] x sigmoid(x[:, 128:]), the later ones residual and scaled by sqrt(0.5)); the input
BatchNorm, the initial splitter, then per step the attentive transformer (``Linear(64, 256,
bias=False)``, BatchNorm, times the prior, sparsemax as ``pytorch_tabnet.sparsemax`` computes
it: the row max subtracted, ``torch.sort``, ``cumsum``, the support size, its threshold read by
``torch.gather``, clamp), the prior update (gamma - M) x prior, the mask times the features,
the step's feature transformer, ReLU of its first 64 outputs summed over the steps (64). Side
stream 2, an AutoInt tower (Song et al., 2019; DeepCTR-Torch's ``AutoInt``): 32 categorical
fields, each looked up in its own ``nn.Embedding(100000, 32)`` (``F.embedding``, 4096 rows of
128 bytes a field, normal with std 1e-4 as DeepCTR initializes them), stacked to (4096, 32, 32),
then 3 of DeepCTR's ``InteractingLayer`` (field-wise multi-head self-attention: 2 heads of 16,
the query, key, value and residual projections as ``torch.tensordot`` with (32, 32) weights,
the heads split and stacked, unscaled dot products, softmax over the fields, the heads
concatenated back, plus the residual projection, ReLU), flattened (1024). Side stream 3, a
bucketized numeric encoder (the piecewise, quantile-binned embeddings of Gorishniy et al.,
2022, simplified to a lookup): 64 numeric features standardized with per-feature training
statistics (buffers), ``torch.bucketize`` against 63 fixed boundaries (the standard normal's
quantiles at 1/64 .. 63/64, equal-frequency bins for a Gaussian feature), offset by 64 x the
feature's index and looked up in one ``nn.Embedding(64 x 64, 16)`` (a gather of 262,144 rows),
flattened (1024). Fork and join are the project's ``fork_join`` (``wait_stream``, and
``record_stream`` on the branch outputs outside capture). After the join, on the current stream:
the three outputs concatenated (2112), ``Linear(2112, 256)``, ReLU, ``Linear(256, 1)``, sigmoid.
Every BatchNorm is a plain ``BatchNorm1d`` in eval mode with running statistics drawn at build
(TabNet's ghost batch norm splits the batch into chunks of 128 even in eval, which in eval gives
the same values one chunk at a time). fp32, eval mode, no gradients. Inputs (three input sets):
the dense features (4096, 256) fp32, the categorical ids (4096, 32) int64 uniform over the rows,
and the numeric features (4096, 64) fp32 drawn around the training statistics. Returns the
probabilities (4096, 1).

    traceinspect profile tabnet_feature_gather_3streams_b4096.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

GAMMA, STEPS, HEADS, ATT_LAYERS = 1.3, 3, 2, 3


def sparsemax(x: Tensor) -> Tensor:
    """pytorch_tabnet.sparsemax.SparsemaxFunction.forward over the last dimension."""
    x = x - x.max(dim=-1, keepdim=True).values
    srt = torch.sort(x, dim=-1, descending=True).values
    cumsum = srt.cumsum(dim=-1) - 1
    rhos = torch.arange(1, x.shape[-1] + 1, device=x.device, dtype=x.dtype)
    support = (rhos * srt > cumsum).sum(dim=-1, keepdim=True)
    tau = cumsum.gather(-1, support - 1) / support.to(x.dtype)
    return torch.clamp(x - tau, min=0)


class GLU(nn.Module):
    def __init__(self, fc: nn.Linear) -> None:
        super().__init__()
        self.fc, self.bn = fc, nn.BatchNorm1d(fc.out_features)

    def forward(self, x: Tensor) -> Tensor:
        x = self.bn(self.fc(x))
        half = x.shape[1] // 2
        return x[:, :half] * torch.sigmoid(x[:, half:])


class GLUBlock(nn.Module):
    def __init__(self, fcs: list[nn.Linear], first: bool) -> None:
        super().__init__()
        self.layers, self.first = nn.ModuleList(GLU(fc) for fc in fcs), first

    def forward(self, x: Tensor) -> Tensor:
        layers = list(self.layers)
        if self.first:
            x = layers.pop(0)(x)
        for layer in layers:
            x = (x + layer(x)) * math.sqrt(0.5)
        return x


class FeatTransformer(nn.Module):
    def __init__(self, shared: list[nn.Linear], width: int) -> None:
        super().__init__()
        self.shared = GLUBlock(shared, first=True)
        self.specific = GLUBlock([nn.Linear(width, 2 * width, bias=False) for _ in range(2)], False)

    def forward(self, x: Tensor) -> Tensor:
        return self.specific(self.shared(x))


class TabNetEncoder(nn.Module):
    def __init__(self, features: int, n_d: int, n_a: int) -> None:
        super().__init__()
        self.n_d, width = n_d, n_d + n_a
        self.initial_bn = nn.BatchNorm1d(features)
        shared = nn.ModuleList(
            [nn.Linear(features, 2 * width, bias=False), nn.Linear(width, 2 * width, bias=False)]
        )
        self.initial_splitter = FeatTransformer(list(shared), width)
        self.feat = nn.ModuleList(FeatTransformer(list(shared), width) for _ in range(STEPS))
        self.att_fc = nn.ModuleList(nn.Linear(n_a, features, bias=False) for _ in range(STEPS))
        self.att_bn = nn.ModuleList(nn.BatchNorm1d(features) for _ in range(STEPS))

    def forward(self, x: Tensor) -> Tensor:
        x = self.initial_bn(x)
        prior = torch.ones_like(x)
        att = self.initial_splitter(x)[:, self.n_d :]
        res = None
        for fc, bn, feat in zip(self.att_fc, self.att_bn, self.feat, strict=True):
            mask = sparsemax(bn(fc(att)) * prior)  # the attentive transformer
            prior = (GAMMA - mask) * prior
            out = feat(mask * x)
            d = F.relu(out[:, : self.n_d])
            res = d if res is None else res + d
            att = out[:, self.n_d :]
        return res


class InteractingLayer(nn.Module):
    """DeepCTR-Torch's InteractingLayer (use_res, no scaling)."""

    def __init__(self, e: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.w_query, self.w_key, self.w_value, self.w_res = (
            nn.Parameter(0.05 * torch.randn(e, e)) for _ in range(4)
        )

    def forward(self, x: Tensor) -> Tensor:  # (b, fields, e)
        size = x.shape[-1] // self.heads
        q, k, v = (
            torch.stack(torch.split(torch.tensordot(x, w, dims=([-1], [0])), size, dim=2))
            for w in (self.w_query, self.w_key, self.w_value)
        )  # (heads, b, fields, size)
        scores = F.softmax(torch.einsum("bnik,bnjk->bnij", q, k), dim=-1)
        out = torch.cat(torch.split(torch.matmul(scores, v), 1), dim=-1).squeeze(0)
        return F.relu(out + torch.tensordot(x, self.w_res, dims=([-1], [0])))


class AutoInt(nn.Module):
    def __init__(self, fields: int, rows: int, e: int) -> None:
        super().__init__()
        self.tables = nn.ModuleList(nn.Embedding(rows, e) for _ in range(fields))
        for table in self.tables:
            nn.init.normal_(table.weight, std=1e-4)
        self.layers = nn.Sequential(*(InteractingLayer(e, HEADS) for _ in range(ATT_LAYERS)))

    def forward(self, ids: Tensor) -> Tensor:
        x = torch.stack([F.embedding(ids[:, f], t.weight) for f, t in enumerate(self.tables)], 1)
        return self.layers(x).flatten(1)


class BucketEncoder(nn.Module):
    def __init__(self, numeric: int, buckets: int, e: int) -> None:
        super().__init__()
        self.register_buffer("mean", torch.randn(numeric))
        self.register_buffer("std", torch.rand(numeric) + 0.5)
        quantiles = torch.arange(1, buckets) / buckets
        self.register_buffer("boundaries", torch.special.ndtri(quantiles))
        self.register_buffer("offsets", torch.arange(numeric) * buckets)
        self.table = nn.Embedding(numeric * buckets, e)

    def forward(self, x: Tensor) -> Tensor:
        ids = torch.bucketize((x - self.mean) / self.std, self.boundaries) + self.offsets
        return F.embedding(ids, self.table.weight).flatten(1)


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, dense, n_d, fields, rows, e, numeric, buckets, e_num, hidden = (
            16, 16, 8, 4, 100, 8, 8, 8, 4, 32
        )  # fmt: skip
    else:
        batch, dense, n_d, fields, rows, e, numeric, buckets, e_num, hidden = (
            4096, 256, 64, 32, 100_000, 32, 64, 64, 16, 256
        )  # fmt: skip
    tabnet = TabNetEncoder(dense, n_d, n_d)
    autoint = AutoInt(fields, rows, e)
    bucket = BucketEncoder(numeric, buckets, e_num)
    head = nn.Sequential(
        nn.Linear(n_d + fields * e + numeric * e_num, hidden), nn.ReLU(), nn.Linear(hidden, 1),
        nn.Sigmoid(),
    )  # fmt: skip
    for bn in tabnet.modules():
        if isinstance(bn, nn.BatchNorm1d):  # trained running statistics
            bn.running_mean.normal_(0.0, 0.1)
            bn.running_var.uniform_(0.5, 2.0)
    modules = [m.to(device).eval() for m in (tabnet, autoint, bucket, head)]
    streams = side_streams(device, 3)

    @torch.no_grad()
    def step(x_dense: Tensor, ids: Tensor, x_num: Tensor) -> Tensor:
        outs = fork_join(
            device,
            streams,
            [lambda: tabnet(x_dense), lambda: autoint(ids), lambda: bucket(x_num)],
        )
        return head(torch.cat(outs, dim=1))

    def make() -> tuple[Tensor, Tensor, Tensor]:
        return (
            torch.randn(batch, dense, device=device),
            torch.randint(0, rows, (batch, fields), device=device),
            bucket.mean + bucket.std * torch.randn(batch, numeric, device=device),
        )

    inputs = [make() for _ in range(3)]
    description = (
        f"3 tabular towers on 3 side streams: TabNet encoder ({dense} features, n_d=n_a={n_d}, "
        f"{STEPS} steps, sparsemax), AutoInt ({fields} x Embedding({rows}, {e}), {ATT_LAYERS} "
        f"interacting layers), bucketize + Embedding ({numeric} numeric x {buckets} buckets x "
        f"{e_num}); concat + MLP {hidden}-1, fp32, b{batch}"
    )
    return Built(step, inputs, description, modules)


if __name__ == "__main__":
    main(build, __doc__)
