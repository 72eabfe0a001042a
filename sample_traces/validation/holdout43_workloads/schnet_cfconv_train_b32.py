"""A SchNet training step (Schütt et al., 2017: continuous-filter convolutions whose filters are
an MLP of radial basis expansions of interatomic distances, shifted-softplus activations, an
atomwise energy sum) on a batch of small molecules with their radius graphs precomputed
(forty-third hold-out): 32 molecules of 24 atoms each (768 atoms; types H, C, N, O, F), a 5 A
cutoff, fp32 weights, the forward and loss under ``torch.autocast(device_type,
dtype=torch.bfloat16)`` (the Linears in bf16; distances, radial bases, envelopes, messages and
their sums in fp32). Geometry, made at build for each input set: positions drawn per molecule
(normal, 2 A spread); the radius graph, every ordered pair of distinct atoms of one molecule
closer than the cutoff, found on the CPU at build and padded to the larger set's edge count
(some 11,000 edges) with masked edges 0 -> 0, so both input sets have one shape and the step has
no data-dependent shapes. Model, hidden 128 (PyG's SchNet defaults but the cutoff): ``Embedding(
10, 128)`` of the atom types; the edge distances from ``index_select``-ed positions, 50 Gaussian
radial bases exp(-10 (d - mu_k)^2) over mu_k in [0, 5], the cosine envelope 0.5 (cos(pi d / 5)
+ 1) times the edge mask. Six interaction blocks, each: the filter, the shared
``_blocks.mlp_tower`` ``Linear(50, 128)`` + shifted softplus (softplus(x) - log 2) +
``Linear(128, 128)`` of the bases, times the envelope; ``Linear(128, 128, bias=False)`` of the
atom features, gathered at the edges' sources (``index_select``), times the filter, summed at
the edges' targets (``index_add``) into (768, 128); ``Linear(128, 128)`` + shifted softplus +
``Linear(128, 128)`` and a residual add. Readout: ``Linear(128, 64)`` + shifted softplus +
``Linear(64, 1)`` per atom, summed per molecule (a view as (32, 24)), (32,) energies; the
mean-squared error against the targets; ``loss.backward()`` (a dense gradient for the embedding
table; none for the positions); ``torch.optim.AdamW`` (lr 1e-4, ``foreach=True``,
``capturable=True`` on a GPU so the step counts live there and the step can be graphed; torch
allows capturable only for GPU parameters, so a CPU smoke run uses capturable=False). The
optimizer state is allocated at build by one warm step on zero gradients, then the parameters and
the Adam state (exp_avg, exp_avg_sq, step) are snapshotted; every step first restores them
(foreach copies) and zeroes the gradients in place (``zero_grad(set_to_none=False)``), so a step
depends only on its inputs and replayed losses compare with eager ones. Inputs: atom types (768,)
int64, positions (768, 3), edge sources and targets (E,) int64, the edge mask (E,) and the
target energies (32,), fp32. Returns the loss (a 0-d fp32 tensor, detached).

    traceinspect profile schnet_cfconv_train_b32.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _blocks import mlp_tower
from _common import Built, main
from torch import Tensor, nn

CUTOFF, GAMMA, SPREAD, INTERACTIONS, LR = 5.0, 10.0, 2.0, 6, 1e-4
ATOM_TYPES = torch.tensor([1, 6, 7, 8, 9])  # H, C, N, O, F


class ShiftedSoftplus(nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        return F.softplus(x) - math.log(2.0)


class Interaction(nn.Module):
    def __init__(self, hidden: int, bases: int) -> None:
        super().__init__()
        self.filter = mlp_tower([bases, hidden, hidden], ShiftedSoftplus)
        self.in2f = nn.Linear(hidden, hidden, bias=False)
        self.f2out = mlp_tower([hidden, hidden, hidden], ShiftedSoftplus)

    def forward(self, h: Tensor, rbf: Tensor, env: Tensor, src: Tensor, dst: Tensor) -> Tensor:
        filt = self.filter(rbf) * env[:, None]  # (E, hidden), fp32 through the envelope
        msg = self.in2f(h).index_select(0, src) * filt
        agg = torch.zeros(h.shape[0], msg.shape[1], device=h.device, dtype=msg.dtype)
        return h + self.f2out(agg.index_add(0, dst, msg))


class SchNet(nn.Module):
    def __init__(self, hidden: int, bases: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(10, hidden)
        self.register_buffer("centers", torch.linspace(0, CUTOFF, bases))
        self.interactions = nn.ModuleList(Interaction(hidden, bases) for _ in range(INTERACTIONS))
        self.readout = mlp_tower([hidden, hidden // 2, 1], ShiftedSoftplus)

    def forward(
        self, types: Tensor, pos: Tensor, src: Tensor, dst: Tensor, mask: Tensor, molecules: int
    ) -> Tensor:
        d = (pos.index_select(0, src) - pos.index_select(0, dst)).norm(dim=-1)  # (E,)
        rbf = torch.exp(-GAMMA * (d[:, None] - self.centers) ** 2)
        env = 0.5 * (torch.cos(d * (math.pi / CUTOFF)) + 1) * mask
        h = self.embed(types)
        for block in self.interactions:
            h = block(h, rbf, env, src, dst)
        return self.readout(h).view(molecules, -1).sum(dim=1).float()


def radius_graph(pos: Tensor, molecules: int) -> tuple[Tensor, Tensor]:
    """Every ordered pair (source, target) of distinct atoms of one molecule within the cutoff
    (on the CPU, at build)."""
    per = pos.view(molecules, -1, 3)
    atoms = per.shape[1]
    close = torch.cdist(per, per) < CUTOFF
    close &= ~torch.eye(atoms, dtype=torch.bool)
    mol, src, dst = close.nonzero(as_tuple=True)
    return mol * atoms + src, mol * atoms + dst


def build(device: torch.device, smoke: bool) -> Built:
    molecules, atoms, hidden, bases = (3, 5, 16, 8) if smoke else (32, 24, 128, 50)
    autocast = device.type == "cuda"
    model = SchNet(hidden, bases).to(device).train()
    params = list(model.parameters())
    capturable = device.type == "cuda"
    optimizer = torch.optim.AdamW(params, lr=LR, foreach=True, capturable=capturable)
    for p in params:
        p.grad = torch.zeros_like(p)
    optimizer.step()  # allocates exp_avg, exp_avg_sq and the step counts
    state = [optimizer.state[p][key] for key in ("exp_avg", "exp_avg_sq", "step") for p in params]
    live = params + state
    snapshot = [t.detach().clone() for t in live]

    def step(
        types: Tensor, pos: Tensor, src: Tensor, dst: Tensor, mask: Tensor, target: Tensor
    ) -> Tensor:
        with torch.no_grad():
            torch._foreach_copy_(live, snapshot)
        optimizer.zero_grad(set_to_none=False)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=autocast):
            energy = model(types, pos, src, dst, mask, molecules)
        loss = F.mse_loss(energy, target)
        loss.backward()
        optimizer.step()
        return loss.detach()

    geometry = []
    for _ in range(2):
        pos = torch.randn(molecules * atoms, 3) * SPREAD
        types = ATOM_TYPES[torch.randint(0, len(ATOM_TYPES), (molecules * atoms,))]
        geometry.append((types, pos, *radius_graph(pos, molecules)))
    edges = max(len(g[2]) for g in geometry)
    inputs = []
    for types, pos, src, dst in geometry:
        pad = edges - len(src)
        mask = torch.cat([torch.ones(len(src)), torch.zeros(pad)])
        src, dst = (torch.cat([t, torch.zeros(pad, dtype=torch.long)]) for t in (src, dst))
        target = torch.randn(molecules)
        inputs.append(tuple(t.to(device) for t in (types, pos, src, dst, mask, target)))
    description = (
        f"SchNet training step: {INTERACTIONS} cfconv interactions, hidden {hidden}, {bases} "
        f"RBF, cutoff {CUTOFF} A, {edges} radius-graph edges (index_select / index_add), "
        f"{'autocast bf16' if autocast else 'fp32'} + AdamW "
        f"(foreach{', capturable' if capturable else ''}), "
        f"b{molecules} molecules x {atoms} atoms"
    )
    return Built(step, inputs, description, [model, optimizer, snapshot])


if __name__ == "__main__":
    main(build, __doc__)
