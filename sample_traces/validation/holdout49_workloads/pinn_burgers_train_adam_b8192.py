"""A training step of a physics-informed neural network for the viscous Burgers equation
(Raissi, Perdikaris and Karniadakis, 2019), fp32 on purpose (forty-ninth hold-out: second
derivatives of the network with respect to its inputs by
``torch.autograd.grad(create_graph=True)``, then a backward pass through them and a capturable
Adam, some 500 small kernels): u_t + u u_x - (0.01 / pi) u_xx = 0 on x in [-1, 1], t in [0, 1],
with u(0, x) = -sin(pi x) and u(t, -1) = u(t, 1) = 0. The network: (t, x) -> 8 hidden ``Linear``
layers of 64 with tanh -> ``Linear(64, 1)``, fp32 (derivatives of a PINN are usually taken in
full precision; the default fp32 matmuls, no TF32). The step: 8,192 collocation points made
leaves that require gradients, u from one forward pass, (u_t, u_x) = ``autograd.grad(u.sum(),
points, create_graph=True)``, u_xx the x column of ``autograd.grad(u_x.sum(), points,
create_graph=True)``, the residual u_t + u u_x - nu u_xx; the network (no derivatives) on 256
initial points and on 256 boundary points; the loss, the mean squared residual plus the mean
squared misfits of u(0, x) against -sin(pi x) and of u on the boundary against 0;
``loss.backward()`` (a third differentiation through the tanh chains); then ``torch.optim.Adam``
(lr 1e-3, ``foreach=True``, ``capturable=True`` on a GPU so the step counts live there and the
step can be graphed; torch allows capturable only for GPU parameters, so a CPU smoke run uses
capturable=False). The optimizer state is allocated at build by one warm step on zero gradients,
then the parameters and the Adam state (exp_avg, exp_avg_sq, step) are snapshotted; every step
first restores them (foreach copies) and zeroes the gradients in place
(``zero_grad(set_to_none=False)``), so a step depends only on its inputs and replayed losses
compare with eager ones. One stream. Inputs: the collocation points (8,192, 2) uniform in the
domain, the initial points (256, 2) (t = 0) and the boundary points (256, 2) (x = +-1), each
column (t, x), fp32. Returns the loss (a 0-d fp32 tensor, detached).

    traceinspect profile pinn_burgers_train_adam_b8192.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn

NU, LR = 0.01 / math.pi, 1e-3


def mlp(width: int, hidden: int) -> nn.Sequential:
    layers: list[nn.Module] = [nn.Linear(2, width), nn.Tanh()]
    for _ in range(hidden - 1):
        layers += [nn.Linear(width, width), nn.Tanh()]
    layers.append(nn.Linear(width, 1))
    return nn.Sequential(*layers)


def build(device: torch.device, smoke: bool) -> Built:
    points, edge, width, hidden = (256, 16, 16, 3) if smoke else (8192, 256, 64, 8)
    net = mlp(width, hidden).to(device).train()
    params = list(net.parameters())
    capturable = device.type == "cuda"
    optimizer = torch.optim.Adam(params, lr=LR, foreach=True, capturable=capturable)
    for p in params:
        p.grad = torch.zeros_like(p)
    optimizer.step()  # allocates exp_avg, exp_avg_sq and the step counts
    state = [optimizer.state[p][key] for key in ("exp_avg", "exp_avg_sq", "step") for p in params]
    live = params + state
    snapshot = [t.detach().clone() for t in live]

    def step(collocation: Tensor, initial: Tensor, boundary: Tensor) -> Tensor:
        with torch.no_grad():
            torch._foreach_copy_(live, snapshot)
        optimizer.zero_grad(set_to_none=False)
        tx = collocation.detach().requires_grad_(True)
        u = net(tx)
        du = torch.autograd.grad(u.sum(), tx, create_graph=True)[0]
        u_t, u_x = du[:, 0:1], du[:, 1:2]
        u_xx = torch.autograd.grad(u_x.sum(), tx, create_graph=True)[0][:, 1:2]
        residual = u_t + u * u_x - NU * u_xx
        u0 = -torch.sin(math.pi * initial[:, 1:2])
        loss = (
            residual.square().mean()
            + (net(initial) - u0).square().mean()
            + net(boundary).square().mean()
        )
        loss.backward()
        optimizer.step()
        return loss.detach()

    inputs = []
    for _ in range(2):
        colloc = torch.rand(points, 2) * torch.tensor([1.0, 2.0]) - torch.tensor([0.0, 1.0])
        initial = torch.stack([torch.zeros(edge), torch.rand(edge) * 2 - 1], dim=1)
        boundary = torch.stack(
            [torch.rand(edge), torch.randint(0, 2, (edge,)).float() * 2 - 1], dim=1
        )
        inputs.append(tuple(t.to(device) for t in (colloc, initial, boundary)))
    description = (
        f"PINN training step, Burgers equation, {hidden} x {width} tanh MLP, u_t/u_x/u_xx by "
        f"double autograd, {points} collocation + {2 * edge} initial/boundary points, fp32 + "
        f"Adam (foreach{', capturable' if capturable else ''})"
    )
    return Built(step, inputs, description, [net, optimizer, snapshot])


if __name__ == "__main__":
    main(build, __doc__)
