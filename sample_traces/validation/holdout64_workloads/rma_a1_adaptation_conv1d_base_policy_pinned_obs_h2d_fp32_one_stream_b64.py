"""RMA (Kumar, Fu, Pathak and Malik, RSS 2021, "RMA: Rapid Motor Adaptation for Legged Robots": a
base policy conditioned on an extrinsics vector that an adaptation module estimates online from the
recent history of states and actions) choosing the next joint targets of 64 simulated A1 quadrupeds,
their observations handed over by the CPU simulator in pinned host memory and copied to the GPU
inside the step (sixty-fourth hold-out: one stream, fp32, a small model fed by six host-to-device
copies with ``non_blocking=True`` from pinned staging buffers: the joint positions and velocities
(64, 12) each, the base roll and pitch (64, 2), the foot contacts (64, 4), the previous action (64,
12) and the state-action history of the last 50 control steps (64, 50, 42), 538 KB, the others 0.5
to 3 KB; the concatenation of the 30-dim state; the adaptation module over the history: the 2-layer
MLP embedding of each state-action pair to 32 (``Linear(42, 32)``, ReLU, ``Linear(32, 32)``, ReLU),
the transpose to channels first, three ``Conv1d`` of 32 channels (kernel 8 stride 4, kernel 5,
kernel 5, each with a ReLU) over the 50 steps down to 3, the flatten and ``Linear(96, 8)`` to the
extrinsics z; the base policy's 3-layer MLP over the state, the previous action and z (``Linear(50,
128)``, ReLU, ``Linear(128, 128)``, ReLU, ``Linear(128, 12)``); the joint targets as the nominal
pose plus 0.5 x the action, clamped to the joint limits; some 25 kernels and 6 copies, a few
microseconds each, some 0.1 to 0.3 ms of GPU time, the copies a large share of it). Laid out as the
paper's architecture (the base policy a 3-layer MLP of 128 hidden units over x_t (30: joint
positions and velocities, roll and pitch, the binarised foot contacts), a_t-1 (12) and z_t (8); the
adaptation module's embedding of the last 50 state-action pairs to 32 dims by a 2-layer MLP, then a
3-layer 1-D CNN with (kernel, channels, stride) (8, 32, 4), (5, 32, 1), (5, 32, 1), flattened and
projected to z_t; the paper's action the 12 joints' PD targets, here, as legged-robot codebases
scale it, the nominal pose plus 0.5 x the action), the PD loop and the simulator left to the host.
The loader fills the staging buffers between steps (here the same buffers every step, as a replayed
graph requires); the step's argument is each robot's nominal pose, already on the GPU. fp32 weights
and activations (TF32 off for cuBLAS and cuDNN, set at build), eval, no gradients, random weights
(torch's defaults). Input (two input sets): the nominal joint positions (64, 12) fp32, 0.1 x
Gaussian; the staging buffers hold Gaussian observations, the contacts 0s and 1s. Returns the
actions (64, 12), the joint targets (64, 12) and the extrinsics (64, 8), fp32.

    traceinspect profile rma_a1_adaptation_conv1d_base_policy_pinned_obs_h2d_fp32_one_stream_b64.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn

JOINTS, HISTORY, EXTRINSICS, HIDDEN, EMBED, ACTION_SCALE, JOINT_LIMIT = 12, 50, 8, 128, 32, 0.5, 2.0
STATE = 2 * JOINTS + 2 + 4  # joint positions, velocities, roll and pitch, foot contacts


class AdaptationModule(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Sequential(
            nn.Linear(STATE + JOINTS, EMBED), nn.ReLU(), nn.Linear(EMBED, EMBED), nn.ReLU()
        )
        self.cnn = nn.Sequential(
            nn.Conv1d(EMBED, EMBED, 8, 4),
            nn.ReLU(),
            nn.Conv1d(EMBED, EMBED, 5, 1),
            nn.ReLU(),
            nn.Conv1d(EMBED, EMBED, 5, 1),
            nn.ReLU(),
            nn.Flatten(),
        )
        steps = ((HISTORY - 8) // 4 + 1 - 4) - 4
        self.out = nn.Linear(EMBED * steps, EXTRINSICS)

    def forward(self, history: Tensor) -> Tensor:
        return self.out(self.cnn(self.embed(history).transpose(1, 2)))


class BasePolicy(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.mlp = nn.Sequential(
            nn.Linear(STATE + JOINTS + EXTRINSICS, HIDDEN),
            nn.ReLU(),
            nn.Linear(HIDDEN, HIDDEN),
            nn.ReLU(),
            nn.Linear(HIDDEN, JOINTS),
        )

    def forward(self, state: Tensor, prev_action: Tensor, z: Tensor) -> Tensor:
        return self.mlp(torch.cat((state, prev_action, z), dim=1))


def build(device: torch.device, smoke: bool) -> Built:
    batch = 4 if smoke else 64
    cuda = device.type == "cuda"
    torch.backends.cuda.matmul.allow_tf32 = False  # full fp32 GEMMs (torch's default)
    torch.backends.cudnn.allow_tf32 = False  # and convolutions

    def staging(*shape: int) -> Tensor:
        return torch.randn(*shape, pin_memory=cuda)

    joint_pos, joint_vel, roll_pitch = (
        staging(batch, JOINTS),
        staging(batch, JOINTS),
        staging(batch, 2),
    )
    contacts = torch.randint(0, 2, (batch, 4), dtype=torch.float32, pin_memory=cuda)
    prev_action = staging(batch, JOINTS)
    history = staging(batch, HISTORY, STATE + JOINTS)
    host = (joint_pos, joint_vel, roll_pitch, contacts, prev_action, history)
    adaptation = AdaptationModule().to(device).eval()
    policy = BasePolicy().to(device).eval()

    @torch.no_grad()
    def step(nominal: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        q, dq, rp, feet, a_prev, hist = (t.to(device, non_blocking=True) for t in host)
        state = torch.cat((q, dq, rp, feet), dim=1)
        z = adaptation(hist)
        action = policy(state, a_prev, z)
        target = (nominal + ACTION_SCALE * action).clamp(-JOINT_LIMIT, JOINT_LIMIT)
        return action, target, z

    inputs = [(0.1 * torch.randn(batch, JOINTS, device=device),) for _ in range(2)]
    description = (
        f"RMA (A1): 6 pinned H2D observation copies (history {HISTORY} x {STATE + JOINTS}), "
        f"adaptation MLP + 3 Conv1d -> z{EXTRINSICS}, base policy MLP {HIDDEN}, fp32, one stream, "
        f"b{batch}"
    )
    return Built(step, inputs, description, [adaptation, policy, host])


if __name__ == "__main__":
    main(build, __doc__)
