"""A FixMatch (Sohn et al., NeurIPS 2020: semi-supervised learning from weakly augmented views'
confident pseudo-labels on strongly augmented views) training step on CIFAR-10 with a WRN-28-2, 8
labelled and 56 unlabelled images (mu = 7), each unlabelled one in a weak and a strong view: the
forward of all 120 images, the supervised and the masked pseudo-label losses, backward, SGD with
Nesterov momentum and the EMA model's update over its parameters and buffers (sixty-third hold-out:
one stream, bf16 autocast over fp32 weights: the interleave of the 120 images, 28 cuDNN convolutions
over 32 x 32, 16 x 16 and 8 x 8 grids of 32 to 128 channels, each beside train-mode BatchNorm
(momentum 0.001) and a LeakyReLU(0.1) in place, the pool and the ``Linear(128, 10)``, the
de-interleave, the cross-entropy of the labelled logits, the softmax of the weak views' logits,
their maximum, the 0.95 threshold's mask and the masked cross-entropy of the strong views; the
backward, twice the forward's kernels; then ``torch.optim.SGD`` (lr 0.03, momentum 0.9, Nesterov,
weight decay 5e-4 but on biases and BatchNorms, ``foreach=True``, two groups) over the 80 parameters
and the EMA (decay 0.999) as a foreach lerp of the 80 EMA parameters and a foreach copy of the 75
buffers; some 400 kernels, most a few to some tens of microseconds, some 1 to 3 ms of GPU time).
Laid out as kekmodel/FixMatch-pytorch's ``train.py`` and ``models/wideresnet.py`` (``WideResNet(10,
depth 28, widen_factor 2, drop_rate 0)``: ``conv1`` 3 x 3 to 16, three ``NetworkBlock`` of 4
``BasicBlock`` to 32, 64 and 128 channels, the first block activating before the residual, each
block's ``bn1`` and ``relu1`` run even where its ``conv1`` reads the un-activated input, as the
repository's forward does; Kaiming-normal convolutions, Xavier-normal ``fc``; ``interleave`` and
``de_interleave`` over 2 mu + 1 = 15; ``Lx`` + ``lambda_u`` (1) x ``Lu`` at temperature 1), with the
changes a replayable step needs: the EMA of ``models/ema.py`` (a per-tensor ``copy_(ema_v * decay +
(1 - decay) * model_v)`` and buffer copies) written as foreach ops, as timm's ``ModelEmaV3`` writes
it; no learning-rate schedule (the cosine of its first step, lr 0.03, held); the loss not read back
(``loss.item()`` for the log would sync the host); the parameters, the BatchNorms' running
statistics, the momentum buffers and the EMA model (the buffers allocated at build by one step on
zero gradients) restored from a snapshot at the start of every step (foreach copies) and the
gradients zeroed there in place (``zero_grad(set_to_none=False)``, where the repository calls
``model.zero_grad()`` after the update), so a step depends only on its inputs and replayed losses
compare with eager ones. Under ``torch.autocast(dtype=torch.bfloat16)`` on a GPU (the repository's
optional apex amp is fp16); fp32 without autocast on a CPU. Inputs (two input sets): the labelled
images (8, 3, 32, 32), the weak and the strong views of the unlabelled ones (56, 3, 32, 32) each,
fp32, Gaussian, and the labels (8,) int64 below 10. Returns the loss (a 0-d fp32 tensor, detached).

    traceinspect profile fixmatch_wrn28_2_cifar10_sgd_nesterov_ema_train_bf16_one_stream_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn

DEPTH, WIDEN, CLASSES, MU, THRESHOLD, LAMBDA_U, TEMPERATURE = 28, 2, 10, 7, 0.95, 1.0, 1.0
LR, MOMENTUM, WEIGHT_DECAY, EMA_DECAY = 0.03, 0.9, 5e-4, 0.999


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int, activate_before_residual: bool) -> None:
        super().__init__()
        self.bn1 = nn.BatchNorm2d(cin, momentum=0.001)
        self.relu1 = nn.LeakyReLU(0.1, inplace=True)
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout, momentum=0.001)
        self.relu2 = nn.LeakyReLU(0.1, inplace=True)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.equal_in_out = cin == cout
        self.conv_shortcut = (
            None if self.equal_in_out else nn.Conv2d(cin, cout, 1, stride, 0, bias=False)
        )
        self.activate_before_residual = activate_before_residual

    def forward(self, x: Tensor) -> Tensor:
        if not self.equal_in_out and self.activate_before_residual:
            x = self.relu1(self.bn1(x))
            out = x
        else:
            out = self.relu1(self.bn1(x))
        out = self.relu2(self.bn2(self.conv1(out if self.equal_in_out else x)))
        out = self.conv2(out)
        shortcut = x if self.conv_shortcut is None else self.conv_shortcut(x)
        return torch.add(shortcut, out)


class WideResNet(nn.Module):
    def __init__(self, classes: int, depth: int, widen: int) -> None:
        super().__init__()
        channels = [16, 16 * widen, 32 * widen, 64 * widen]
        n = (depth - 4) // 6
        self.conv1 = nn.Conv2d(3, channels[0], 3, 1, 1, bias=False)
        blocks = []
        for stage in range(3):
            for i in range(n):
                cin = channels[stage] if i == 0 else channels[stage + 1]
                stride = (1 if stage == 0 else 2) if i == 0 else 1
                blocks.append(BasicBlock(cin, channels[stage + 1], stride, stage == 0))
        self.blocks = nn.Sequential(*blocks)
        self.bn1 = nn.BatchNorm2d(channels[3], momentum=0.001)
        self.relu = nn.LeakyReLU(0.1, inplace=True)
        self.fc = nn.Linear(channels[3], classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="leaky_relu")
            elif isinstance(m, nn.Linear):
                nn.init.xavier_normal_(m.weight)
                nn.init.zeros_(m.bias)

    def forward(self, x: Tensor) -> Tensor:
        out = self.relu(self.bn1(self.blocks(self.conv1(x))))
        return self.fc(F.adaptive_avg_pool2d(out, 1).flatten(1))


def interleave(x: Tensor, size: int) -> Tensor:
    s = list(x.shape)
    return x.reshape([-1, size] + s[1:]).transpose(0, 1).reshape([-1] + s[1:])


def de_interleave(x: Tensor, size: int) -> Tensor:
    s = list(x.shape)
    return x.reshape([size, -1] + s[1:]).transpose(0, 1).reshape([-1] + s[1:])


def build(device: torch.device, smoke: bool) -> Built:
    batch, mu, depth, widen = (2, 2, 10, 1) if smoke else (8, MU, DEPTH, WIDEN)
    autocast = device.type == "cuda"
    model = WideResNet(CLASSES, depth, widen).to(device).train()
    ema = WideResNet(CLASSES, depth, widen).to(device).eval()
    ema.load_state_dict(model.state_dict())
    for p in ema.parameters():
        p.requires_grad_(False)
    no_decay = ("bias", "bn")
    named = list(model.named_parameters())
    optimizer = torch.optim.SGD(
        [
            {
                "params": [p for n, p in named if not any(nd in n for nd in no_decay)],
                "weight_decay": WEIGHT_DECAY,
            },
            {"params": [p for n, p in named if any(nd in n for nd in no_decay)], "weight_decay": 0},
        ],
        lr=LR,
        momentum=MOMENTUM,
        nesterov=True,
        foreach=True,
    )
    params = list(model.parameters())
    buffers = list(model.buffers())
    ema_params, ema_buffers = list(ema.parameters()), list(ema.buffers())
    for p in params:
        p.grad = torch.zeros_like(p)
    optimizer.step()  # allocates the momentum buffers
    live = (
        params
        + buffers
        + [optimizer.state[p]["momentum_buffer"] for p in params]
        + ema_params
        + ema_buffers
    )
    snapshot = [t.detach().clone() for t in live]
    size = 2 * mu + 1

    def step(inputs_x: Tensor, inputs_u_w: Tensor, inputs_u_s: Tensor, targets_x: Tensor) -> Tensor:
        with torch.no_grad():
            torch._foreach_copy_(live, snapshot)
        optimizer.zero_grad(set_to_none=False)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=autocast):
            inputs = interleave(torch.cat((inputs_x, inputs_u_w, inputs_u_s)), size)
            logits = de_interleave(model(inputs), size)
            logits_x = logits[:batch]
            logits_u_w, logits_u_s = logits[batch:].chunk(2)
            lx = F.cross_entropy(logits_x, targets_x, reduction="mean")
            pseudo_label = torch.softmax(logits_u_w.detach() / TEMPERATURE, dim=-1)
            max_probs, targets_u = torch.max(pseudo_label, dim=-1)
            mask = max_probs.ge(THRESHOLD).float()
            lu = (F.cross_entropy(logits_u_s, targets_u, reduction="none") * mask).mean()
            loss = lx + LAMBDA_U * lu
        loss.backward()
        optimizer.step()
        with torch.no_grad():
            torch._foreach_lerp_(ema_params, params, 1 - EMA_DECAY)
            torch._foreach_copy_(ema_buffers, buffers)
        return loss.detach()

    def make() -> tuple[Tensor, ...]:
        return (
            torch.randn(batch, 3, 32, 32, device=device),
            torch.randn(batch * mu, 3, 32, 32, device=device),
            torch.randn(batch * mu, 3, 32, 32, device=device),
            torch.randint(0, CLASSES, (batch,), device=device),
        )

    inputs = [make() for _ in range(2)]
    description = (
        f"FixMatch step: WRN-{depth}-{widen}, {batch} labelled + 2 x {batch * mu} unlabelled "
        f"CIFAR-10 images, {'autocast bf16' if autocast else 'fp32'} + SGD Nesterov (foreach) + "
        f"EMA (foreach lerp) over {len(params)} params, one stream, b{batch}"
    )
    return Built(step, inputs, description, [model, ema, optimizer, snapshot])


if __name__ == "__main__":
    main(build, __doc__)
