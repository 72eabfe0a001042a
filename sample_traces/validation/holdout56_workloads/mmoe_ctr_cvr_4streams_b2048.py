"""A multi-gate mixture-of-experts (MMoE, Ma et al., 2018) ranking model scoring 2048 impressions
for two tasks, click-through and conversion, its four expert MLPs each on its own side stream
(fifty-sixth hold-out: 26 embedding lookups and their index casts, a few concatenations, then four
concurrent chains of three fp32 GEMMs with ReLUs, 2048 x 429 -> 1024 -> 512 -> 256, some 0.5 to 2
GFLOP each and in full fp32 (TF32 off), then the two gates' and towers' small GEMMs, softmaxes and a
batched matmul on the current stream: compute-bound chains of equal weight side by side, between
launch-bound stretches). Laid out as DeepCTR-Torch's ``MMOE`` (``deepctr_torch
.models.multitask.mmoe``) over Criteo-style features: the input ``X`` (2048, 39) fp32, as DeepCTR
feeds it, the 26 categorical ids (columns 0 to 25) then the 13 dense features (columns 26 to 38);
each sparse column sliced and cast to int64 (``X[:, i:i+1].long()``) and looked up in its own
``nn.Embedding`` of 16 (the Criteo Kaggle cardinalities, hashed to at most 100000 buckets), the
dense columns sliced; the embeddings concatenated and flattened and the dense values concatenated
after them (``combined_dnn_input``): (2048, 429). Four experts, each a DeepCTR ``DNN`` (``Linear`` +
ReLU per layer, dropout 0, no BatchNorm) with hidden units (1024, 512, 256), widened from DeepCTR's
default (256, 128); side streams 1 to 4, expert 1 to 4. Fork and join are the project's
``fork_join`` (``wait_stream``, and ``record_stream`` on the branch outputs outside capture). After
the join, on the current stream: the expert outputs stacked (2048, 4, 256); per task a gate ``DNN``
(64,) and a ``Linear(64, 4, bias=False)``, softmax over the experts, the weighted sum of the experts
as a batched matmul (2048, 1, 4) @ (2048, 4, 256); per task a tower ``DNN`` (64,), a ``Linear(64, 1,
bias=False)`` and DeepCTR's ``PredictionLayer`` (a bias, the sigmoid); the two concatenated. fp32
with TF32 off for matrix multiplications (``torch.backends.cuda.matmul.allow_tf32 = False``, torch's
default, set in build), eval, no gradients, weights as DeepCTR initializes them (embeddings and
linear weights N(0, 1e-4), torch's default biases). Inputs (two input sets): ``X`` (2048, 39), the
ids uniform over each field's buckets and stored as floats (exact below 2^24), the dense features
Gaussian. Returns the two tasks' probabilities (2048, 2).

    traceinspect profile mmoe_ctr_cvr_4streams_b2048.py
"""

from __future__ import annotations

from functools import partial

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

# Criteo Kaggle's 26 categorical cardinalities, hashed to at most 100000 buckets
CARDINALITIES = (
    1460, 583, 10131227, 2202608, 305, 24, 12517, 633, 3, 93145, 5683, 8351593, 3194,
    27, 14992, 5461306, 10, 5652, 2173, 4, 7046547, 18, 15, 286181, 105, 142572,
)  # fmt: skip
BUCKETS, DENSE, EMBED, EXPERTS, TASKS, INIT_STD = 100000, 13, 16, 4, 2, 1e-4


def dnn(widths: tuple[int, ...]) -> nn.Sequential:
    """DeepCTR's DNN: Linear + ReLU (+ dropout 0) for each hidden unit count."""
    layers: list[nn.Module] = []
    for cin, cout in zip(widths[:-1], widths[1:], strict=True):
        layers += [nn.Linear(cin, cout), nn.ReLU()]
    return nn.Sequential(*layers)


class MMOE(nn.Module):
    def __init__(
        self, vocabs: tuple[int, ...], experts: tuple[int, ...], gate: int, tower: int
    ) -> None:
        super().__init__()
        self.sparse = len(vocabs)
        self.embeddings = nn.ModuleList(nn.Embedding(v, EMBED) for v in vocabs)
        d_in = self.sparse * EMBED + DENSE
        self.experts = nn.ModuleList(dnn((d_in, *experts)) for _ in range(EXPERTS))
        self.gates = nn.ModuleList(dnn((d_in, gate)) for _ in range(TASKS))
        self.gate_final = nn.ModuleList(nn.Linear(gate, EXPERTS, bias=False) for _ in range(TASKS))
        self.towers = nn.ModuleList(dnn((experts[-1], tower)) for _ in range(TASKS))
        self.tower_final = nn.ModuleList(nn.Linear(tower, 1, bias=False) for _ in range(TASKS))
        self.out_bias = nn.Parameter(torch.zeros(TASKS))
        for name, p in self.named_parameters():
            if "embeddings" in name or name.endswith("weight"):
                nn.init.normal_(p, std=INIT_STD)

    def dnn_input(self, x: Tensor) -> Tensor:
        sparse = [emb(x[:, i : i + 1].long()) for i, emb in enumerate(self.embeddings)]
        dense = [x[:, i : i + 1] for i in range(self.sparse, self.sparse + DENSE)]
        return torch.cat([torch.flatten(torch.cat(sparse, dim=-1), start_dim=1), *dense], dim=-1)

    def heads(self, dnn_input: Tensor, expert_outs: list[Tensor]) -> Tensor:
        stacked = torch.stack(expert_outs, 1)
        outs = []
        for t in range(TASKS):
            gate = self.gate_final[t](self.gates[t](dnn_input))
            mixed = torch.matmul(gate.softmax(1).unsqueeze(1), stacked).squeeze(1)
            logit = self.tower_final[t](self.towers[t](mixed))
            outs.append(torch.sigmoid(logit + self.out_bias[t]))
        return torch.cat(outs, -1)


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, buckets, experts, gate, tower = 64, 50, (64, 32, 16), 8, 8
    else:
        batch, buckets, experts, gate, tower = 2048, BUCKETS, (1024, 512, 256), 64, 64
    torch.backends.cuda.matmul.allow_tf32 = False  # full fp32 GEMMs
    vocabs = tuple(min(c, buckets) for c in CARDINALITIES)
    model = MMOE(vocabs, experts, gate, tower).to(device).eval()
    streams = side_streams(device, EXPERTS)

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        dnn_input = model.dnn_input(x)
        expert_outs = fork_join(device, streams, [partial(e, dnn_input) for e in model.experts])
        return model.heads(dnn_input, expert_outs)

    def make() -> tuple[Tensor]:
        ids = torch.stack(
            [torch.randint(0, v, (batch,), device=device) for v in vocabs], dim=1
        ).float()
        return (torch.cat((ids, torch.randn(batch, DENSE, device=device)), dim=1),)

    inputs = [make() for _ in range(2)]
    widths = "-".join(str(w) for w in experts)
    description = (
        f"MMoE (DeepCTR-Torch) CTR + CVR: {len(vocabs)} embedding lookups of {EMBED}, "
        f"{EXPERTS} expert DNNs {len(vocabs) * EMBED + DENSE}-{widths} on {EXPERTS} side "
        f"streams, 2 gates + towers, fp32 (TF32 off), b{batch}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
