"""Training an MLP stack: a plain PyTorch training loop, no annotations.

12 x (Linear(1024, 1024) + ReLU) then Linear(1024, 16), batch 128, fp32, MSE loss, SGD with
momentum; the loss is printed every 10 steps (a read-back every 10th step).

``--mark`` registers one training step (zero_grad, forward, backward, optimizer step) with
``traceinspect.graph_candidate``; the learning rate is then 0 so that eager and replayed
steps compute the same loss and can be compared (the kernels are the same).
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
    layers, width, batch = (2, 16, 4) if args.smoke else (12, 1024, 128)
    torch.manual_seed(0)
    mods: list[nn.Module] = []
    for _ in range(layers):
        mods += [nn.Linear(width, width), nn.ReLU()]
    model = nn.Sequential(*mods, nn.Linear(width, 16)).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.0 if args.mark else 1e-3, momentum=0.9)
    data = [
        (torch.randn(batch, width, device=device), torch.randn(batch, 16, device=device))
        for _ in range(4)
    ]

    def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        opt.zero_grad(set_to_none=True)
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        return loss.detach()

    for i in range(args.steps):
        loss = train_step(*data[i % len(data)])
        if i % 10 == 0:
            print(f"step {i}: loss {loss.item():.4f}")

    if args.mark:
        import traceinspect

        traceinspect.graph_candidate("step", train_step, data[0])


if __name__ == "__main__":
    main()
