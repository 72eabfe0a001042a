"""An LSTM cell loop: a plain PyTorch inference loop, no annotations.

Each step runs nn.LSTMCell(256, 256) over 32 time steps of a batch of 32 sequences (fp32)
and a linear read-out; 20 steps, the outputs read back once at the end.

``--mark`` registers one step with ``traceinspect.graph_candidate``.
"""

from __future__ import annotations

import argparse

import torch
from torch import nn


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--device")
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--mark", action="store_true", help="register the step as a graph candidate")
    args = ap.parse_args()
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    hidden, length, batch = (8, 4, 2) if args.smoke else (256, 32, 32)
    torch.manual_seed(0)
    cell = nn.LSTMCell(hidden, hidden).to(device).eval()
    readout = nn.Linear(hidden, 10).to(device).eval()

    @torch.no_grad()
    def run_sequence(xs: torch.Tensor) -> torch.Tensor:
        h = torch.zeros(xs.shape[0], hidden, device=xs.device)
        c = torch.zeros_like(h)
        for t in range(xs.shape[1]):
            h, c = cell(xs[:, t], (h, c))
        return readout(h)

    batches = [torch.randn(batch, length, hidden, device=device) for _ in range(4)]
    outs = [run_sequence(batches[i % len(batches)]) for i in range(args.steps)]
    print("mean output:", torch.stack(outs).mean().item())

    if args.mark:
        import traceinspect

        traceinspect.graph_candidate("step", run_sequence, (batches[0],))


if __name__ == "__main__":
    main()
