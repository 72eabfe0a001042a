"""A MuZero (Schrittwieser et al., 2020) learner step on 9 x 9 Go: 128 positions from the replay
buffer, the representation network on each, the dynamics network unrolled over the 5 actions played
after it with the prediction heads at every step, the value, reward and policy losses against the
n-step targets and MCTS visit distributions, backward, and SGD with momentum (sixty-first hold-out:
one stream, bf16 autocast over fp32 weights: 47 small cuDNN convolutions forward (3 x 3 and 1 x 1
over 128 x 81 positions, 64 channels) and twice as many backward, each beside train-mode BatchNorm,
ReLU, residual adds, the per-channel min-max scaling of the hidden state, a scatter for the one-hot
action plane, small head GEMMs, log-softmaxes over 21 and 82 bins, the two-hot target scatters and
the gradient scalings, then a foreach SGD update over 49 parameters; some 1,000 to 1,400 kernels,
nearly all of them a few microseconds long, some 2.5 to 4.5 ms of GPU time). Laid out as
werner-duvaud/muzero-general's ``MuZeroResidualNetwork`` and ``Trainer.update_weights`` (the paper's
learner) at this set's sizes: the representation ``conv3x3(17, 64)`` (no bias), BatchNorm, ReLU and
2 residual blocks of 64 (each conv3x3, BN, ReLU, conv3x3, BN, add, ReLU); the dynamics the hidden
state concatenated with the action as a one-hot plane (the paper's board-game encoding; pass an
all-zero plane), ``conv3x3(65, 64)``, BN, ReLU, 2 residual blocks, and the reward head ``conv1x1(64,
1)``, BN, ReLU, ``Linear(81, 64)``, ReLU, ``Linear(64, 21)``; the prediction heads on the hidden
state as the paper's AlphaZero-style heads (no residual blocks of their own): the policy
``conv1x1(64, 2)``, BN, ReLU, ``Linear(162, 82)``, the value ``conv1x1(64, 1)``, BN, ReLU,
``Linear(81, 64)``, ReLU, ``Linear(64, 21)``; every hidden state min-max scaled to [0, 1] per sample
and channel (muzero-general's ``scale[scale < 1e-5] += 1e-5`` written as a ``torch.where``, since a
boolean index would sync the host), and the gradient into each dynamics step halved (a hook, as
muzero-general's ``register_hook(lambda grad: grad * 0.5)``). The loss as ``update_weights``: the
scalar targets through h(x) = sign(x) (sqrt(|x| + 1) - 1) + 0.001 x and ``scalar_to_support``
(support size 10: 21 bins, two-hot by two ``scatter_``), cross-entropies -sum(target *
log_softmax(logits)) for value (weight 0.25), reward (steps 1 to 5) and policy, the unrolled steps'
losses scaled in gradient by 1 / 5, weighted by the prioritized-replay importance weights, averaged;
``loss.backward()``; ``torch.optim.SGD`` (lr 0.02, momentum 0.9, weight decay 1e-4,
``foreach=True``). The parameters, the BatchNorms' running statistics and the momentum buffers
(allocated at build by one step on zero gradients) are restored from a snapshot at the start of
every step (foreach copies) and the gradients zeroed in place (``zero_grad(set_to_none=False)``), so
a step depends only on its inputs and replayed losses compare with eager ones. Under
``torch.autocast(dtype=torch.bfloat16)`` on a GPU (convolutions and linears in bf16, BatchNorm on
the bf16 activations with its fp32 parameters and statistics, the losses in fp32); fp32 without
autocast on a CPU; random weights (torch's defaults). Inputs (two input sets): the observations
(128, 17, 9, 9) fp32 of 0s and 1s (AlphaGo Zero's 8 + 8 stone planes and the colour to play), the
actions (128, 5) int64 in [0, 82), the target values (128, 6) fp32 in [-1, 1), the target rewards
(128, 6) fp32 in {-1, 0, 1}, the target policies (128, 6, 82) fp32 (softmaxes of Gaussians), and the
importance weights (128,) fp32 in [0.5, 1). Returns the loss (a 0-d fp32 tensor, detached).

    traceinspect profile muzero_go9x9_unroll5_sgd_train_bf16_one_stream_b128.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn

PLANES, CHANNELS, BLOCKS, BOARD, UNROLL, SUPPORT = 17, 64, 2, 9, 5, 10
LR, MOMENTUM, WEIGHT_DECAY, VALUE_LOSS_WEIGHT = 0.02, 0.9, 1e-4, 0.25


def conv_bn(cin: int, cout: int, kernel: int) -> list[nn.Module]:
    return [nn.Conv2d(cin, cout, kernel, padding=kernel // 2, bias=False), nn.BatchNorm2d(cout)]


class ResidualBlock(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv1, self.bn1 = conv_bn(channels, channels, 3)
        self.conv2, self.bn2 = conv_bn(channels, channels, 3)

    def forward(self, x: Tensor) -> Tensor:
        out = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(self.bn2(self.conv2(out)) + x)


def tower(cin: int, channels: int, blocks: int) -> nn.Sequential:
    layers = [*conv_bn(cin, channels, 3), nn.ReLU()]
    return nn.Sequential(*layers, *[ResidualBlock(channels) for _ in range(blocks)])


def scalar_head(channels: int, board: int, bins: int) -> nn.Sequential:
    return nn.Sequential(
        *conv_bn(channels, 1, 1),
        nn.ReLU(),
        nn.Flatten(),
        nn.Linear(board * board, 64),
        nn.ReLU(),
        nn.Linear(64, bins),
    )


def scale_hidden(state: Tensor) -> Tensor:
    flat = state.flatten(2)
    low = flat.min(2, keepdim=True)[0].unsqueeze(-1)
    high = flat.max(2, keepdim=True)[0].unsqueeze(-1)
    scale = high - low
    scale = torch.where(scale < 1e-5, scale + 1e-5, scale)
    return (state - low) / scale


def scale_gradient(x: Tensor, scale: float) -> Tensor:
    return x * scale + x.detach() * (1 - scale)


class MuZeroNet(nn.Module):
    def __init__(self, channels: int, blocks: int, board: int, support: int) -> None:
        super().__init__()
        bins, self.board, self.actions = 2 * support + 1, board, board * board + 1
        self.representation = tower(PLANES, channels, blocks)
        self.dynamics = tower(channels + 1, channels, blocks)
        self.reward = scalar_head(channels, board, bins)
        self.policy = nn.Sequential(
            *conv_bn(channels, 2, 1),
            nn.ReLU(),
            nn.Flatten(),
            nn.Linear(2 * board * board, self.actions),
        )
        self.value = scalar_head(channels, board, bins)

    def initial_inference(self, obs: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        state = scale_hidden(self.representation(obs))
        return state, self.value(state), self.policy(state)

    def recurrent_inference(self, state: Tensor, action: Tensor) -> tuple[Tensor, ...]:
        b = state.shape[0]
        one_hot = torch.zeros(b, self.actions, device=state.device, dtype=state.dtype)
        one_hot.scatter_(1, action.unsqueeze(1), 1.0)
        plane = one_hot[:, : self.board * self.board].view(b, 1, self.board, self.board)
        x = self.dynamics(torch.cat((state, plane), dim=1))
        reward = self.reward(x)
        state = scale_hidden(x)
        return state, reward, self.value(state), self.policy(state)


def scalar_to_support(x: Tensor, support: int) -> Tensor:
    x = torch.sign(x) * (torch.sqrt(torch.abs(x) + 1) - 1) + 0.001 * x
    x = torch.clamp(x, -support, support)
    floor = x.floor()
    prob = x - floor
    logits = torch.zeros(*x.shape, 2 * support + 1, device=x.device)
    logits.scatter_(2, (floor + support).long().unsqueeze(-1), (1 - prob).unsqueeze(-1))
    indexes = floor + support + 1
    prob = prob.masked_fill(2 * support < indexes, 0.0)
    indexes = indexes.masked_fill(2 * support < indexes, 0.0)
    logits.scatter_(2, indexes.long().unsqueeze(-1), prob.unsqueeze(-1))
    return logits


def cross_entropy(logits: Tensor, target: Tensor) -> Tensor:
    return (-target * torch.log_softmax(logits.float(), dim=1)).sum(1)


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, channels, blocks, board, unroll, support = 4, 8, 1, 3, 2, 2
    else:
        batch, channels, blocks, board, unroll, support = (
            128,
            CHANNELS,
            BLOCKS,
            BOARD,
            UNROLL,
            SUPPORT,
        )
    autocast = device.type == "cuda"
    model = MuZeroNet(channels, blocks, board, support).to(device).train()
    params = list(model.parameters())
    optimizer = torch.optim.SGD(
        params, lr=LR, momentum=MOMENTUM, weight_decay=WEIGHT_DECAY, foreach=True
    )
    for p in params:
        p.grad = torch.zeros_like(p)
    optimizer.step()  # allocates the momentum buffers
    buffers = [b for b in model.buffers() if b.is_floating_point()]
    live = params + buffers + [optimizer.state[p]["momentum_buffer"] for p in params]
    snapshot = [t.detach().clone() for t in live]

    def losses(
        obs: Tensor,
        actions: Tensor,
        target_value: Tensor,
        target_reward: Tensor,
        target_policy: Tensor,
        weights: Tensor,
    ) -> Tensor:
        target_value = scalar_to_support(target_value, support)
        target_reward = scalar_to_support(target_reward, support)
        state, value, policy = model.initial_inference(obs)
        value_loss = cross_entropy(value, target_value[:, 0])
        reward_loss = torch.zeros_like(value_loss)
        policy_loss = cross_entropy(policy, target_policy[:, 0])
        for i in range(1, unroll + 1):
            state, reward, value, policy = model.recurrent_inference(state, actions[:, i - 1])
            state.register_hook(lambda grad: grad * 0.5)
            value_loss = value_loss + scale_gradient(
                cross_entropy(value, target_value[:, i]), 1 / unroll
            )
            reward_loss = reward_loss + scale_gradient(
                cross_entropy(reward, target_reward[:, i]), 1 / unroll
            )
            policy_loss = policy_loss + scale_gradient(
                cross_entropy(policy, target_policy[:, i]), 1 / unroll
            )
        loss = value_loss * VALUE_LOSS_WEIGHT + reward_loss + policy_loss
        return (loss * weights).mean()

    def step(*batch_tensors: Tensor) -> Tensor:
        with torch.no_grad():
            torch._foreach_copy_(live, snapshot)
        optimizer.zero_grad(set_to_none=False)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=autocast):
            loss = losses(*batch_tensors)
        loss.backward()
        optimizer.step()
        return loss.detach()

    actions = board * board + 1

    def make() -> tuple[Tensor, ...]:
        return (
            torch.randint(0, 2, (batch, PLANES, board, board), device=device).float(),
            torch.randint(0, actions, (batch, unroll), device=device),
            torch.rand(batch, unroll + 1, device=device) * 2 - 1,
            torch.randint(-1, 2, (batch, unroll + 1), device=device).float(),
            torch.softmax(torch.randn(batch, unroll + 1, actions, device=device), dim=-1),
            torch.rand(batch, device=device) * 0.5 + 0.5,
        )

    inputs = [make() for _ in range(2)]
    description = (
        f"MuZero learner step: {board}x{board} Go, representation + {unroll} dynamics unrolls "
        f"({blocks} res blocks x {channels} ch), categorical value/reward, "
        f"{'autocast bf16' if autocast else 'fp32'} + SGD momentum (foreach), one stream, "
        f"b{batch}"
    )
    return Built(step, inputs, description, [model, optimizer, snapshot])


if __name__ == "__main__":
    main(build, __doc__)
