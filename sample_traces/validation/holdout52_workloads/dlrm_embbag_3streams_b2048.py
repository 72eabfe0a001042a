"""DLRM click-through inference (Naumov et al., 2019) on 2048 samples of 13 dense and 24 sparse
features, the 24 embedding tables in 3 groups of 8, each group looked up on its own side stream
while the current stream runs the bottom MLP (fifty-second hold-out: three concurrent chains of
random-row gathers from 1.2 GB of tables beside small GEMMs), after facebookresearch/dlrm's
``dlrm_s_pytorch.py`` (``emb_l`` of ``nn.EmbeddingBag``, ``interact_features`` with the "dot"
interaction, ``arch-mlp-bot`` 13-512-256-64, ``arch-mlp-top`` 512-256-1). Each table 200,000 x
64, fp32, ``nn.EmbeddingBag(mode="sum")`` initialized uniform in +-sqrt(1 / rows) as DLRM's;
every sample has a fixed-size bag of 20 ids per feature, given as a 2-D (2048, 20) index tensor
(no offsets: torch makes the bag offsets with an ``arange`` on the device), so each table
gathers 40,960 random 256-byte rows (10.5 MB) and sums them 20 by 20. Side stream g (g = 1, 2,
3): the 8 lookups of group g, stacked to (2048, 8, 64). Between the fork and the join the
current stream runs the bottom MLP on the dense features: ``Linear(13, 512)``, ReLU,
``Linear(512, 256)``, ReLU, ``Linear(256, 64)``, ReLU. After the join, on the current stream:
the dot interaction, T = the bottom output and the 24 pooled embeddings (2048, 25, 64), Z = T
T^T (``bmm``), its 300 strictly lower-triangular entries (gathered with index tensors made at
build), concatenated with the bottom output (364), and the top MLP ``Linear(364, 512)``, ReLU,
``Linear(512, 256)``, ReLU, ``Linear(256, 1)``, sigmoid. The fork and join follow the project's
``fork_join`` (each side stream ``wait_stream`` on the current one; the current stream
``wait_stream`` on each after its own work, and ``record_stream`` on the branch outputs outside
capture), written out here so the current stream can work between them. fp32, eval mode, no
gradients. Inputs (three input sets, different random ids): the dense features (2048, 13) and
per group the ids (8, 2048, 20) int64, uniform over the rows. Returns the click probabilities
(2048, 1).

    traceinspect profile dlrm_embbag_3streams_b2048.py
"""

from __future__ import annotations

from collections.abc import Sequence

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from _streams import side_streams
from torch import Tensor, nn

DENSE, GROUPS, TABLES_PER_GROUP, BAG = 13, 3, 8, 20


def mlp(sizes: Sequence[int], sigmoid_last: bool = False) -> nn.Sequential:
    """dlrm_s_pytorch's create_mlp: Linear + ReLU, the last activation sigmoid or ReLU."""
    layers: list[nn.Module] = []
    for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:], strict=True)):
        layers.append(nn.Linear(n_in, n_out))
        last = i == len(sizes) - 2
        layers.append(nn.Sigmoid() if last and sigmoid_last else nn.ReLU())
    return nn.Sequential(*layers)


class DLRM(nn.Module):
    def __init__(self, rows: int, dim: int, device: torch.device) -> None:
        super().__init__()
        self.groups = nn.ModuleList(
            nn.ModuleList(
                nn.EmbeddingBag(rows, dim, mode="sum", device=device)
                for _ in range(TABLES_PER_GROUP)
            )
            for _ in range(GROUPS)
        )
        for bag in self.groups.modules():
            if isinstance(bag, nn.EmbeddingBag):  # initialized as dlrm_s_pytorch's
                nn.init.uniform_(bag.weight, -(rows**-0.5), rows**-0.5)
        self.bottom = mlp([DENSE, 512, 256, dim]).to(device)
        features = 1 + GROUPS * TABLES_PER_GROUP
        li, lj = torch.tril_indices(features, features, offset=-1, device=device)
        self.register_buffer("li", li)
        self.register_buffer("lj", lj)
        self.top = mlp([dim + li.numel(), 512, 256, 1], sigmoid_last=True).to(device)

    def lookup(self, group: int, ids: Tensor) -> Tensor:
        """ids (tables, b, bag) -> pooled (b, tables, dim)."""
        tables = self.groups[group]
        return torch.stack([bag(ids[t]) for t, bag in enumerate(tables)], dim=1)

    def interact(self, x: Tensor, pooled: Sequence[Tensor]) -> Tensor:
        t = torch.cat((x[:, None], *pooled), dim=1)  # (b, 25, dim)
        z = torch.bmm(t, t.transpose(1, 2))
        return torch.cat((x, z[:, self.li, self.lj]), dim=1)


def build(device: torch.device, smoke: bool) -> Built:
    batch, rows, dim = (16, 100, 8) if smoke else (2048, 200_000, 64)
    model = DLRM(rows, dim, device).eval()
    streams = side_streams(device, GROUPS)

    @torch.no_grad()
    def step(dense: Tensor, *ids: Tensor) -> Tensor:
        if not streams:
            pooled = [model.lookup(g, ids[g]) for g in range(GROUPS)]
            return model.top(model.interact(model.bottom(dense), pooled))
        current = torch.cuda.current_stream(device)
        pooled = []
        for g, stream in enumerate(streams):
            stream.wait_stream(current)
            with torch.cuda.stream(stream):
                pooled.append(model.lookup(g, ids[g]))
        x = model.bottom(dense)
        for stream in streams:
            current.wait_stream(stream)
        if not torch.cuda.is_current_stream_capturing():
            for p in pooled:
                p.record_stream(current)
        return model.top(model.interact(x, pooled))

    def make() -> tuple[Tensor, ...]:
        ids = [
            torch.randint(0, rows, (TABLES_PER_GROUP, batch, BAG), device=device)
            for _ in range(GROUPS)
        ]
        return (torch.randn(batch, DENSE, device=device), *ids)

    inputs = [make() for _ in range(3)]
    tables = GROUPS * TABLES_PER_GROUP
    description = (
        f"DLRM: {tables} EmbeddingBags {rows}x{dim} (sum, bags of {BAG}) in {GROUPS} groups "
        f"on {GROUPS} side streams, bottom MLP {DENSE}-512-256-{dim} on the current stream, "
        f"dot interaction, top MLP 512-256-1, fp32, b{batch}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
