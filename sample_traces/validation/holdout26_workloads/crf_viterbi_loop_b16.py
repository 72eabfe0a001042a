"""Viterbi decoding of a linear-chain CRF (twenty-sixth hold-out): 16 sequences of 48 steps
over 24 tags, fp32 — the emission scores from a BiLSTM-less tagger head (a Linear 256 -> 24
over 16 x 48 features), then a Python loop over the 48 steps: each adds the transition matrix
to the running scores, takes the max and argmax over the previous tag and adds the step's
emissions; the back-pointers are stacked and the best path is traced back with 47 gathers.
About 240 small kernels a step, one stream, no host synchronization.

    traceinspect profile crf_viterbi_loop_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn

TAGS = 24


def build(device: torch.device, smoke: bool) -> Built:
    batch, steps, d = (2, 4, 8) if smoke else (16, 48, 256)
    head = nn.Linear(d, TAGS).to(device).eval()
    transitions = torch.randn(TAGS, TAGS, device=device)

    @torch.no_grad()
    def step(features: Tensor) -> Tensor:
        emissions = head(features)  # batch x steps x TAGS
        score = emissions[:, 0]
        pointers = []
        for t in range(1, emissions.shape[1]):
            total = score.unsqueeze(2) + transitions  # previous tag x next tag
            score, best = total.max(dim=1)
            score = score + emissions[:, t]
            pointers.append(best)
        tag = score.argmax(dim=1, keepdim=True)
        path = [tag]
        for best in reversed(pointers):
            tag = best.gather(1, tag)
            path.append(tag)
        return torch.cat(path[::-1], dim=1)

    inputs = [(torch.randn(batch, steps, d, device=device),) for _ in range(2)]
    return Built(step, inputs, f"CRF Viterbi, {steps} steps x {TAGS} tags, b{batch}", [head])


if __name__ == "__main__":
    main(build, __doc__)
