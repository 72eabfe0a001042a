"""A DreamerV2-style world-model agent (Hafner et al., 2021) on a continuous-control task: the
observation encoder over a replay batch of 16 sequences x 50 frames of 64 x 64 on one side stream,
beside a 15-step imagination rollout of the actor in the recurrent state-space model from 16 start
states on another (fiftieth hold-out: a model-based reinforcement-learning agent, a short wide
convolution branch beside a long loop of low-occupancy batch-16 GEMMs and elementwise kernels, the
critic's lambda-returns after the join; the rollout starts from the previous batch's posterior
states, so the two are independent). Side stream 1, the encoder on the 800 frames: ``Conv2d(3, 48,
4, stride 2)``, 48 -> 96, 96 -> 192 and 192 -> 384 likewise, each + ELU, flattened to 1,536 (some 26
GMAC). Side stream 2, the imagination, 15 steps, each: the features [deterministic state (600),
stochastic state (32 categoricals of 32 classes, 1,024)]; the actor (4 x ``Linear`` of 400 + ELU,
``Linear(400, 6)``, tanh: the action's mode, 6 dimensions); the RSSM's image step: ``Linear(1024 +
6, 600)`` + ELU, the layer-normalized GRU of DreamerV2 (``Linear(600 + 600, 1800, bias=False)``,
LayerNorm, split into reset, candidate and update, reset = sigmoid, cand = tanh(reset x cand),
update = sigmoid(update - 1), h = update x cand + (1 - update) x h), the prior ``Linear(600, 600)``
+ ELU + ``Linear(600, 1024)`` to 32 x 32 logits and the stochastic state as the one-hot of each
categorical's mode (``argmax``, and 1 scattered into zeros): some 35 kernels a step, 500 in all, on
16 rows. After the join, on the current stream: on the 16 x 16 imagined features (start included)
the reward head and the critic (each 4 x ``Linear`` of 400 + ELU and ``Linear(400, 1)``), and the
lambda-returns (gamma 0.99, lambda 0.95) as a backward loop of 15 steps of elementwise kernels. bf16
on a GPU, eval mode, no gradients. Fork and join are the project's ``fork_join`` (``wait_stream``,
and ``record_stream`` on the branch outputs outside capture). Inputs: the frames (800, 3, 64, 64)
channels-last, the start deterministic states (16, 600) and stochastic states (16, 1024) (one-hot).
Returns the frame embeddings (800, 1536) and the lambda-returns (15, 16).

    traceinspect profile dreamer_encoder_imagine_2streams_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _blocks import mlp_tower
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

ACTIONS, HORIZON, GAMMA, LAMBDA = 6, 15, 0.99, 0.95


class LayerNormGRU(nn.Module):
    """DreamerV2's GRU cell: one bias-free Linear of [input, state], LayerNorm, update bias -1."""

    def __init__(self, d_in: int, d: int) -> None:
        super().__init__()
        self.linear = nn.Linear(d_in + d, 3 * d, bias=False)
        self.norm = nn.LayerNorm(3 * d)

    def forward(self, x: Tensor, h: Tensor) -> Tensor:
        reset, cand, update = self.norm(self.linear(torch.cat([x, h], dim=-1))).chunk(3, -1)
        reset = torch.sigmoid(reset)
        cand = torch.tanh(reset * cand)
        update = torch.sigmoid(update - 1)
        return update * cand + (1 - update) * h


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        frames, image, depth, starts, deter, groups, classes, hidden = 8, 64, 4, 4, 16, 4, 4, 16
    else:
        frames, image, depth, starts, deter, groups, classes, hidden = (
            800,
            64,
            48,
            16,
            600,
            32,
            32,
            400,
        )
    stoch = groups * classes
    dtype = low_precision(device)
    fmt = torch.channels_last
    chans = [3, depth, 2 * depth, 4 * depth, 8 * depth]
    enc_layers: list[nn.Module] = []
    for i in range(4):
        enc_layers += [nn.Conv2d(chans[i], chans[i + 1], 4, 2), nn.ELU()]
    encoder = nn.Sequential(*enc_layers, nn.Flatten())
    actor = mlp_tower([deter + stoch] + [hidden] * 4 + [ACTIONS], nn.ELU)
    img_in = nn.Sequential(nn.Linear(stoch + ACTIONS, deter), nn.ELU())
    gru = LayerNormGRU(deter, deter)
    prior = nn.Sequential(nn.Linear(deter, deter), nn.ELU(), nn.Linear(deter, stoch))
    reward = mlp_tower([deter + stoch] + [hidden] * 4 + [1], nn.ELU)
    critic = mlp_tower([deter + stoch] + [hidden] * 4 + [1], nn.ELU)
    agent = nn.ModuleList([encoder, actor, img_in, gru, prior, reward, critic])
    agent = agent.to(device=device, dtype=dtype).eval()
    encoder.to(memory_format=fmt)
    streams = side_streams(device, 2)

    def imagine(h: Tensor, z: Tensor) -> Tensor:
        feats = [torch.cat([h, z], dim=-1)]
        for _ in range(HORIZON):
            action = torch.tanh(actor(feats[-1]))
            h = gru(img_in(torch.cat([z, action], dim=-1)), h)
            logits = prior(h).view(-1, groups, classes)
            mode = logits.argmax(-1, keepdim=True)
            z = torch.zeros_like(logits).scatter_(-1, mode, 1.0).flatten(1)
            feats.append(torch.cat([h, z], dim=-1))
        return torch.stack(feats)  # (horizon + 1, starts, features)

    @torch.no_grad()
    def step(images: Tensor, h0: Tensor, z0: Tensor) -> tuple[Tensor, Tensor]:
        embed, feats = fork_join(
            device, streams, [lambda: encoder(images), lambda: imagine(h0, z0)]
        )
        rewards = reward(feats[1:]).squeeze(-1).float()
        values = critic(feats).squeeze(-1).float()
        ret = values[-1]
        returns = []
        for t in reversed(range(HORIZON)):
            ret = rewards[t] + GAMMA * ((1 - LAMBDA) * values[t + 1] + LAMBDA * ret)
            returns.append(ret)
        return embed, torch.stack(returns[::-1])

    def start_state() -> tuple[Tensor, Tensor, Tensor]:
        images = torch.rand(frames, 3, image, image, device=device, dtype=dtype) - 0.5
        h0 = torch.randn(starts, deter, device=device, dtype=dtype)
        idx = torch.randint(0, classes, (starts, groups), device=device)
        z0 = F.one_hot(idx, classes).to(dtype).flatten(1)
        return images.to(memory_format=fmt), h0, z0

    inputs = [start_state() for _ in range(2)]
    description = (
        f"DreamerV2 agent: conv encoder on {frames} frames {image}x{image} beside a "
        f"{HORIZON}-step RSSM imagination from {starts} starts, deter {deter}, "
        f"stoch {groups}x{classes}, 2 side streams"
    )
    return Built(step, inputs, description, [agent])


if __name__ == "__main__":
    main(build, __doc__)
