"""SGD with momentum over 160 parameter tensors, ``foreach=True`` (third hold-out).

    traceinspect profile sgd_foreach.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main


def build(device: torch.device, smoke: bool) -> Built:
    count, size = (4, 16) if smoke else (160, 32_768)
    params = [torch.randn(size, device=device, requires_grad=True) for _ in range(count)]
    for p in params:
        p.grad = torch.randn_like(p)
    opt = torch.optim.SGD(params, lr=1e-3, momentum=0.9, foreach=True)
    opt.step()  # momentum buffers allocated before the measured steps

    def step(scale: torch.Tensor) -> torch.Tensor:
        opt.step()
        return scale

    inputs = [(torch.ones(1, device=device),) for _ in range(2)]
    return Built(step, inputs, f"SGD foreach over {count} x {size}", params)


if __name__ == "__main__":
    main(build, __doc__)
