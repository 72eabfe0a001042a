"""PLE (Tang, Liu, Zhao and Gong, RecSys 2020: Progressive Layered Extraction, multi-task learning
with task-specific and shared experts mixed by per-task gates, stacked in extraction levels) scoring
a serving batch of 2048 impressions for two tasks, click-through and conversion, with the log losses
a validation pass reports, each extraction level's expert groups on three side streams (sixty-third
hold-out: fp32 with TF32 off for cuBLAS, three program fork / joins a step: on the current stream
one embedding gather over the 24 categorical fields and the concatenation with the 16 dense
features; then in each of the 2 levels, on side stream 1 task 1's 2 experts and its gate, on side
stream 2 the 2 shared experts and (in the first level) the shared gate, on side stream 3 task 2's 2
experts and its gate, each expert an MLP of two ``Linear`` + ReLU (the first level's 400 -> 256 ->
128, the second's 128 -> 256 -> 128), each gate a ``Linear`` to its experts' count and a softmax;
after the join the gates' weighted sums of their experts' outputs; then task 1's tower on side
stream 1 beside task 2's on side stream 2 (``Linear(128, 64)``, ReLU, ``Linear(64, 1)`` without
bias, the prediction layer's bias and a sigmoid) and the two binary cross-entropies; some 100
kernels, small GEMMs of 7 to 420 MFLOP and elementwise kernels of a few microseconds, each side
stream 5 to 10 a fork; some 0.2 to 0.5 ms of GPU time). Laid out as DeepCTR-Torch's ``PLE``
(``shared_expert_num 2, specific_expert_num 2, num_levels 2, expert_dnn_hidden_units (256, 128),
gate_dnn_hidden_units (), tower_dnn_hidden_units (64,)``, ReLU, no batch norm, dropout off in eval;
``cgc_net``: each task's gate over its own and the shared experts on that task's input, the shared
gate over all experts on the shared input, the last level without the shared gate; the weighted sum
as ``torch.matmul`` of the gate (b, 1, n) with the stacked experts (b, n, 128); ``PredictionLayer``
a bias and a sigmoid) and its input layer (one embedding of 16 per categorical field, a single table
with per-field offsets, 24 fields of 10,000 buckets; the dense features concatenated raw): the field
and bucket counts are this set's. Fork and join are the project's ``fork_join`` (``wait_stream``,
and ``record_stream`` on the branch outputs outside capture). fp32 weights and activations with
``torch.backends.cuda.matmul.allow_tf32`` off (torch's default, set at build), eval, no gradients,
random weights (torch's defaults). Inputs (two input sets): the field indices (2048, 24) int64,
uniform below 10,000, the dense features (2048, 16) fp32, Gaussian, and the click and conversion
labels (2048, 2) fp32 of 0s and 1s. Returns the two tasks' probabilities (2048, 1) each and their
log losses (two 0-d fp32 tensors).

    traceinspect profile ple_two_level_cgc_experts_fp32_3streams_b2048.py
"""

from __future__ import annotations

from collections.abc import Sequence

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

FIELDS, BUCKETS, EMBED, DENSE, EXPERT_UNITS, TOWER_UNITS = 24, 10_000, 16, 16, (256, 128), 64
TASKS, SPECIFIC, SHARED, LEVELS = 2, 2, 2, 2


def mlp(cin: int, units: Sequence[int]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for u in units:
        layers += [nn.Linear(cin, u), nn.ReLU()]
        cin = u
    return nn.Sequential(*layers)


class Gate(nn.Module):
    def __init__(self, cin: int, experts: int) -> None:
        super().__init__()
        self.linear = nn.Linear(cin, experts, bias=False)

    def forward(self, x: Tensor) -> Tensor:
        return torch.softmax(self.linear(x), dim=-1).unsqueeze(1)  # (b, 1, n)


def mix(gate: Tensor, experts: Sequence[Tensor]) -> Tensor:
    return torch.matmul(gate, torch.stack(list(experts), dim=1)).squeeze(1)


class CGCLevel(nn.Module):
    """One extraction level: per-task experts, shared experts, per-task gates and (but in the last
    level) the shared gate."""

    def __init__(self, cin: int, units: Sequence[int], last: bool) -> None:
        super().__init__()
        self.specific = nn.ModuleList(
            nn.ModuleList(mlp(cin, units) for _ in range(SPECIFIC)) for _ in range(TASKS)
        )
        self.shared = nn.ModuleList(mlp(cin, units) for _ in range(SHARED))
        self.task_gates = nn.ModuleList(Gate(cin, SPECIFIC + SHARED) for _ in range(TASKS))
        self.shared_gate = None if last else Gate(cin, TASKS * SPECIFIC + SHARED)

    def forward(
        self, inputs: Sequence[Tensor], device: torch.device, streams: Sequence[torch.cuda.Stream]
    ) -> list[Tensor]:
        def task(i: int) -> tuple[Tensor, ...]:
            return (*(e(inputs[i]) for e in self.specific[i]), self.task_gates[i](inputs[i]))

        def shared() -> tuple[Tensor, ...]:
            outs = tuple(e(inputs[-1]) for e in self.shared)
            if self.shared_gate is None:
                return outs
            return (*outs, self.shared_gate(inputs[-1]))

        t1, sh, t2 = fork_join(device, streams, [lambda: task(0), shared, lambda: task(1)])
        shared_out = sh[:SHARED]
        task_outs = [t1[:SPECIFIC], t2[:SPECIFIC]]
        outs = [mix(t[-1], (*e, *shared_out)) for t, e in zip((t1, t2), task_outs, strict=True)]
        if self.shared_gate is not None:
            outs.append(mix(sh[-1], (*task_outs[0], *task_outs[1], *shared_out)))
        return outs


class PLE(nn.Module):
    def __init__(self, fields: int, buckets: int, units: Sequence[int]) -> None:
        super().__init__()
        self.register_buffer("offsets", torch.arange(fields) * buckets)
        self.embedding = nn.Embedding(fields * buckets, EMBED)
        cin = fields * EMBED + DENSE
        levels = []
        for level in range(LEVELS):
            levels.append(CGCLevel(cin, units, last=level == LEVELS - 1))
            cin = units[-1]
        self.levels = nn.ModuleList(levels)
        self.towers = nn.ModuleList(
            nn.Sequential(mlp(cin, (TOWER_UNITS,)), nn.Linear(TOWER_UNITS, 1, bias=False))
            for _ in range(TASKS)
        )
        self.prediction_bias = nn.ParameterList(nn.Parameter(torch.zeros(1)) for _ in range(TASKS))

    def forward(
        self,
        fields: Tensor,
        dense: Tensor,
        device: torch.device,
        streams: Sequence[torch.cuda.Stream],
    ) -> list[Tensor]:
        emb = self.embedding(fields + self.offsets).flatten(1)
        x = torch.cat((emb, dense), dim=1)
        inputs = [x] * (TASKS + 1)
        for level in self.levels:
            inputs = level(inputs, device, streams)

        def tower(i: int) -> Tensor:
            logit = self.towers[i](inputs[i])
            logit += self.prediction_bias[i]
            return torch.sigmoid(logit)

        return fork_join(device, streams[:TASKS], [lambda: tower(0), lambda: tower(1)])


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, fields, buckets, units = 8, 3, 10, (8, 4)
    else:
        batch, fields, buckets, units = 2048, FIELDS, BUCKETS, EXPERT_UNITS
    torch.backends.cuda.matmul.allow_tf32 = False  # full fp32 GEMMs (torch's default)
    model = PLE(fields, buckets, units).to(device).eval()
    streams = side_streams(device, 3)

    @torch.no_grad()
    def step(idx: Tensor, dense: Tensor, labels: Tensor) -> tuple[Tensor, ...]:
        ctr, cvr = model(idx, dense, device, streams)
        ctr_loss = F.binary_cross_entropy(ctr.squeeze(1), labels[:, 0])
        cvr_loss = F.binary_cross_entropy(cvr.squeeze(1), labels[:, 1])
        return ctr, cvr, ctr_loss, cvr_loss

    inputs = [
        (
            torch.randint(0, buckets, (batch, fields), device=device),
            torch.randn(batch, DENSE, device=device),
            torch.randint(0, 2, (batch, TASKS), device=device).float(),
        )
        for _ in range(2)
    ]
    description = (
        f"PLE: {LEVELS} CGC levels, {SPECIFIC} experts a task + {SHARED} shared (MLP {units}) on "
        f"3 side streams, towers on 2, {fields} fields, fp32 TF32 off, b{batch}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
