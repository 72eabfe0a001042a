"""A Growing Neural Cellular Automaton (Mordvintsev et al., 2020, "Growing Neural Cellular
Automata", Distill) rolled out for 32 steps as a Python loop over 8 grids of 72 x 72 cells
(fifty-fourth hold-out: one stream of some 500 small kernels, about 15 a step, over 2.6 MB
states and 21 MB hidden maps in fp32: PyTorch's depthwise 3x3 convolution, cuDNN 1x1
convolutions, max pools, comparisons and elementwise updates), the update rule as the article's
notebook writes its ``CAModel`` (``perceive``, ``get_living_mask``, ``call``), ported to PyTorch
NCHW. Each cell
has 16 channels (RGBA and 12 hidden). A step on the state x (8, 16, 72, 72): the pre-update
living mask, max_pool2d(alpha, 3, stride 1, padding 1) > 0.1 on channel 3; the perception, a
depthwise ``F.conv2d`` (zero padding 1, groups 16) with three fixed 3x3 filters per channel,
the identity and the Sobel x and y filters divided by 8 (48 channels, in the notebook's order:
channel c's three filters side by side); the update network, ``Conv2d(48, 128, 1)``, ReLU,
``Conv2d(128, 16, 1)``, times the step size 1.0; the stochastic update, x + dx times the step's
fire mask (each cell updated with probability 0.5, the notebook's ``fire_rate``); the
post-update living mask; x times (pre AND post), so cells with no living neighbour die. The
fire masks are drawn at build and passed in, (32, 8, 1, 72, 72) of 0s and 1s (the notebook
draws ``tf.random.uniform(...) <= fire_rate`` inside the step), so a step depends only on its
inputs. The weights are random (torch's default initialization, the last layer scaled by 0.1;
the notebook starts it at zero and trains it), no rotation of the perception (angle 0). The
starting states are partly grown patterns, as the sample pool of the article's training hands
out: per grid a disk of radius 10 to 24 cells around the centre with alpha uniform in 0.2 to 1
and the other channels Gaussian, zeros outside. fp32 (the 1x1 convolutions may use TF32,
PyTorch's default for cuDNN), eval, no gradients. Inputs (two input sets): the states (8, 16,
72, 72) and the fire masks. Returns the final RGBA (8, 4, 72, 72).

    traceinspect profile growing_nca_rollout_loop_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn

CHANNELS, HIDDEN, FIRE_RATE, STEP_SIZE, ALIVE = 16, 128, 0.5, 1.0, 0.1


class CAModel(nn.Module):
    def __init__(self, channels: int, hidden: int) -> None:
        super().__init__()
        self.channels = channels
        identity = torch.tensor([0.0, 1.0, 0.0])
        identity = torch.outer(identity, identity)
        sobel_x = torch.outer(torch.tensor([1.0, 2.0, 1.0]), torch.tensor([-1.0, 0.0, 1.0])) / 8
        filters = torch.stack([identity, sobel_x, sobel_x.t()])  # (3, 3, 3)
        self.register_buffer("kernel", filters.repeat(channels, 1, 1)[:, None])  # (3c, 1, 3, 3)
        self.fc0 = nn.Conv2d(3 * channels, hidden, 1)
        self.fc1 = nn.Conv2d(hidden, channels, 1)
        with torch.no_grad():
            self.fc1.weight.mul_(0.1)
            self.fc1.bias.mul_(0.1)

    @staticmethod
    def living_mask(x: Tensor) -> Tensor:
        return F.max_pool2d(x[:, 3:4], 3, stride=1, padding=1) > ALIVE

    def perceive(self, x: Tensor) -> Tensor:
        return F.conv2d(x, self.kernel, padding=1, groups=self.channels)

    def forward(self, x: Tensor, fire: Tensor) -> Tensor:
        pre_life_mask = self.living_mask(x)
        y = self.perceive(x)
        dx = self.fc1(F.relu(self.fc0(y))) * STEP_SIZE
        x = x + dx * fire
        post_life_mask = self.living_mask(x)
        life_mask = pre_life_mask & post_life_mask
        return x * life_mask.float()


def build(device: torch.device, smoke: bool) -> Built:
    batch, size, steps, hidden = (2, 24, 4, 16) if smoke else (8, 72, 32, HIDDEN)
    model = CAModel(CHANNELS, hidden).to(device).eval()

    @torch.no_grad()
    def step(state: Tensor, fire: Tensor) -> Tensor:
        x = state
        for t in range(steps):
            x = model(x, fire[t])
        return x[:, :4]

    centre = (size - 1) / 2
    ys = torch.arange(size, device=device).view(1, size, 1)
    xs = torch.arange(size, device=device).view(1, 1, size)

    def make() -> tuple[Tensor, Tensor]:
        radius = size * (10 + 14 * torch.rand(batch, 1, 1, device=device)) / 72
        disk = ((ys - centre) ** 2 + (xs - centre) ** 2 <= radius**2).float()[:, None]
        state = torch.randn(batch, CHANNELS, size, size, device=device)
        state[:, 3:4] = 0.2 + 0.8 * torch.rand(batch, 1, size, size, device=device)
        fire = (torch.rand(steps, batch, 1, size, size, device=device) <= FIRE_RATE).float()
        return state * disk, fire

    inputs = [make() for _ in range(2)]
    description = (
        f"Growing NCA rollout, {steps} steps as a Python loop: depthwise identity/Sobel "
        f"perception, 1x1 {3 * CHANNELS}-{hidden}-{CHANNELS}, fire rate {FIRE_RATE}, living "
        f"masks; {CHANNELS} channels, b{batch} x {size}x{size}, fp32"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
