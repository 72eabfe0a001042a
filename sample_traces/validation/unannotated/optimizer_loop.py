"""An optimizer update loop: a plain PyTorch script, no annotations.

AdamW (foreach=False, capturable on the GPU) over 100 parameter tensors (25 groups of a
1024x256 weight, a 256x1024 weight, and two 1024 vectors; fp32). Each step writes new
gradients into the buffer the .grad tensors are views of and calls optimizer.step().

``--mark`` registers one update with ``traceinspect.graph_candidate``.
"""

from __future__ import annotations

import argparse

import torch


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--device")
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--mark", action="store_true", help="register the step as a graph candidate")
    args = ap.parse_args()
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    groups, a, b = (3, 8, 4) if args.smoke else (25, 1024, 256)
    torch.manual_seed(0)
    shapes = [(a, b), (b, a), (a,), (a,)] * groups
    params = [torch.nn.Parameter(torch.randn(s, device=device) * 0.02) for s in shapes]
    total = sum(p.numel() for p in params)
    grads = torch.zeros(total, device=device)
    offset = 0
    for p in params:
        p.grad = grads[offset : offset + p.numel()].view_as(p)
        offset += p.numel()
    opt = torch.optim.AdamW(
        params, lr=1e-4, weight_decay=0.01, foreach=False, capturable=device.type == "cuda"
    )
    new_grads = [torch.randn(total, device=device) * 1e-3 for _ in range(4)]

    def update(g: torch.Tensor) -> None:
        grads.copy_(g)
        opt.step()

    for i in range(args.steps):
        update(new_grads[i % len(new_grads)])
    print("param norm:", float(torch.stack([p.detach().norm() for p in params]).norm()))

    if args.mark:
        import traceinspect

        traceinspect.graph_candidate("step", update, (new_grads[0],))


if __name__ == "__main__":
    main()
