"""A spiking convolutional network of leaky integrate-and-fire (LIF) neurons classifying 16
CIFAR-10-sized images over 8 time steps, the time steps a Python loop (fifty-fifth hold-out:
one stream of some 430 kernels, about 53 a time step, most of them small elementwise kernels
over 1 to 8 MB fp32 maps: each LIF layer's membrane update, threshold and hard reset, ten
kernels, between cuDNN 3x3 convolutions on binary spike maps and cuDNN's inference
BatchNorm), as SpikingJelly (Fang et al., 2023) runs a network in single-step mode: its
``activation_based`` layers, ``LIFNode(tau=2.0, v_threshold=1.0, v_reset=0.0,
decay_input=True)``, the ``torch`` backend in eval mode (``LIFNode.single_step_forward``
calling ``jit_eval_single_step_forward_hard_reset_decay_input``, written here as plain Python,
no fuser): v = v + (x - (v - v_reset)) / tau, spike = (v >= v_threshold).to(x), v = v_reset x
spike + (1 - spike) x v; the membranes start at 0 as ``full_like`` on the first step (after
``functional.reset_net``), and the loop, ``for t in range(T): out_fr += net(img)`` then
``out_fr / T``, follows SpikingJelly's CSNN examples with direct input encoding (the image
fed at every step). The network, a CSNN widened for CIFAR-10 (3 x 32 x 32): ``Conv2d(3, 64,
3, padding 1, bias=False)``, ``BatchNorm2d``, LIF; ``Conv2d(64, 128, 3)``, BatchNorm, LIF,
``MaxPool2d(2)`` to 16 x 16; ``Conv2d(128, 128, 3)``, BatchNorm, LIF, ``MaxPool2d(2)`` to 8 x
8; ``Conv2d(128, 256, 3)``, BatchNorm, LIF; then a non-spiking readout, the spikes
average-pooled and a ``Linear(256, 10)``, summed over the steps and divided by 8. The weights
are random (torch's defaults); the BatchNorm running statistics are estimated at build by one
pass over the first input set in training mode with a cumulative average (momentum None, as
``torch.optim.swa_utils.update_bn`` does), so every layer sees unit-scale inputs and spikes.
fp32 NCHW (the convolutions may use TF32, PyTorch's default for cuDNN), eval, no gradients.
Input (two input sets): the images (16, 3, 32, 32), Gaussian. Returns the mean readout (16,
10).

    traceinspect profile spiking_csnn_lif_loop_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn

TIMESTEPS, TAU, V_THRESHOLD, V_RESET, CLASSES = 8, 2.0, 1.0, 0.0, 10


def lif_eval_step(x: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
    """SpikingJelly's LIFNode.jit_eval_single_step_forward_hard_reset_decay_input."""
    v = v + (x - (v - V_RESET)) / TAU
    spike = (v >= V_THRESHOLD).to(x)
    v = V_RESET * spike + (1.0 - spike) * v
    return spike, v


class CSNN(nn.Module):
    def __init__(self, widths: tuple[int, ...], pools: tuple[bool, ...]) -> None:
        super().__init__()
        c_in, convs, norms = 3, [], []
        for w in widths:
            convs.append(nn.Conv2d(c_in, w, 3, padding=1, bias=False))
            norms.append(nn.BatchNorm2d(w))
            c_in = w
        self.convs, self.norms, self.pools = nn.ModuleList(convs), nn.ModuleList(norms), pools
        self.pool = nn.MaxPool2d(2, 2)
        self.fc = nn.Linear(c_in, CLASSES)

    def forward(self, img: Tensor, timesteps: int) -> Tensor:
        membranes: list[Tensor | None] = [None] * len(self.convs)
        out = None
        for _ in range(timesteps):
            x = img
            for i, (conv, norm) in enumerate(zip(self.convs, self.norms, strict=True)):
                x = norm(conv(x))
                v = membranes[i]
                if v is None:  # LIFNode.v_float_to_tensor on the first step
                    v = torch.full_like(x, V_RESET)
                x, membranes[i] = lif_eval_step(x, v)
                if self.pools[i]:
                    x = self.pool(x)
            y = self.fc(x.mean(dim=(2, 3)))
            out = y if out is None else out + y
        return out / timesteps


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, size, timesteps, widths = 2, 16, 3, (8, 16, 16, 32)
    else:
        batch, size, timesteps, widths = 16, 32, TIMESTEPS, (64, 128, 128, 256)
    model = CSNN(widths, (False, True, True, False)).to(device)
    inputs = [(torch.randn(batch, 3, size, size, device=device),) for _ in range(2)]
    for m in model.modules():  # update_bn: a cumulative average over one pass
        if isinstance(m, nn.BatchNorm2d):
            m.reset_running_stats()
            m.momentum = None
    with torch.no_grad():
        model.train()(inputs[0][0], timesteps)
    model.eval()

    @torch.no_grad()
    def step(img: Tensor) -> Tensor:
        return model(img, timesteps)

    description = (
        f"spiking CSNN, {len(widths)} x (3x3 conv + eval BN + LIF, 10 elementwise kernels), "
        f"widths {'/'.join(map(str, widths))}, {timesteps} time steps as a Python loop, fp32, "
        f"b{batch} at {size}x{size}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
