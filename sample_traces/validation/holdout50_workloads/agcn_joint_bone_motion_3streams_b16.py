"""Skeleton action recognition with a multi-stream adaptive graph convolutional network (2s-AGCN,
Shi et al., 2019, with the joint-motion stream of its MS-AAGCN follow-up) for 16 clips of 64
frames of 2 NTU RGB+D skeletons of 25 joints, the joint, bone and motion networks on three side
streams (fiftieth hold-out: spatio-temporal graph convolution, three equal branches of
mid-size 1 x 1 and 9 x 1 convolutions, tiny batched matrix products for the data-dependent graphs
and many BatchNorm / ReLU kernels, the score fusion after the join). Each stream is its own
10-layer AGCN, as the authors' ``agcn.py`` lays it out: a ``BatchNorm1d(2 x 25 x 3)`` of the input,
the two persons folded into the batch (32 sequences), then layers of 3 -> 64, 64 x 3, 64 -> 128
(temporal stride 2), 128 x 2, 128 -> 256 (stride 2), 256 x 2 channels. A layer: the adaptive
graph convolution, for each of the 3 spatial partitions k of the NTU skeleton (self, inward,
outward; column-normalized adjacency made at build) the graph A_k + B_k (B_k learned) + C_k, C_k
the softmax over joints of (theta(x) viewed (n, 25, c_e T)) x (phi(x) viewed (n, c_e T, 25)) /
(c_e T), theta and phi ``Conv2d(c, c_e, 1)`` with c_e = c_out / 4, then (x viewed (n, c T, 25)) x
A times a ``Conv2d(c, c_out, 1)``, summed over k, BatchNorm, plus a residual (a 1 x 1 convolution
+ BatchNorm where the channels change), ReLU; then the temporal unit, ``Conv2d(c_out, c_out, (9,
1), stride (s, 1), padding (4, 0))`` + BatchNorm, plus the layer's residual, ReLU (some 55 GMAC a
stream). The mean over frames, joints and persons and ``Linear(256, 60)``. Side stream 1 runs the
joint network on the coordinates, side stream 2 the bone network on the bone vectors (each joint
minus its parent, an ``index_select`` of the parents), side stream 3 the motion network on the
frame differences (the last frame's zero). After the join, on the current stream: the three
softmaxes summed and the class ``argmax``. bf16 on a GPU, eval mode with running batch-norm
statistics set at build, no gradients. Fork and join are the project's ``fork_join``
(``wait_stream``, and ``record_stream`` on the branch outputs outside capture). Input: the
skeletons (16, 3, 64, 25, 2) (batch, coordinates, frames, joints, persons). Returns the fused
scores (16, 60) and the predicted classes (16,) int64.

    traceinspect profile agcn_joint_bone_motion_3streams_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from _models import random_batch_norm_stats
from _streams import fork_join, side_streams
from torch import Tensor, nn

JOINTS, PERSONS, CLASSES, SUBSETS = 25, 2, 60, 3
# NTU RGB+D's bones, (child, parent), 1-based; the spine joint 21 is the centre
INWARD = [
    (1, 2), (2, 21), (3, 21), (4, 3), (5, 21), (6, 5), (7, 6), (8, 7), (9, 21), (10, 9),
    (11, 10), (12, 11), (13, 1), (14, 13), (15, 14), (16, 15), (17, 1), (18, 17), (19, 18),
    (20, 19), (22, 23), (23, 8), (24, 25), (25, 12),
]  # fmt: skip
LAYERS = [(64, 1), (64, 1), (64, 1), (64, 1), (128, 2), (128, 1), (128, 1), (256, 2), (256, 1),
          (256, 1)]  # fmt: skip


def partitions() -> Tensor:
    """The 3 spatial partitions (self, inward, outward), column-normalized: (3, 25, 25)."""
    inward = torch.zeros(JOINTS, JOINTS)
    for child, parent in INWARD:
        inward[parent - 1, child - 1] = 1.0

    def norm(a: Tensor) -> Tensor:
        deg = a.sum(0)
        return a / torch.where(deg > 0, deg, torch.ones_like(deg))

    return torch.stack([torch.eye(JOINTS), norm(inward), norm(inward.T)])


def parents() -> Tensor:
    idx = list(range(JOINTS))
    for child, parent in INWARD:
        idx[child - 1] = parent - 1
    return torch.tensor(idx)


class AdaptiveGraphConv(nn.Module):
    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        self.inter = cout // 4
        self.register_buffer("a", partitions())
        self.b = nn.Parameter(torch.full((SUBSETS, JOINTS, JOINTS), 1e-6))
        self.theta = nn.ModuleList(nn.Conv2d(cin, self.inter, 1) for _ in range(SUBSETS))
        self.phi = nn.ModuleList(nn.Conv2d(cin, self.inter, 1) for _ in range(SUBSETS))
        self.conv = nn.ModuleList(nn.Conv2d(cin, cout, 1) for _ in range(SUBSETS))
        self.bn = nn.BatchNorm2d(cout)
        self.down = (
            nn.Sequential(nn.Conv2d(cin, cout, 1), nn.BatchNorm2d(cout))
            if cin != cout
            else nn.Identity()
        )

    def forward(self, x: Tensor) -> Tensor:
        n, c, t, v = x.shape
        flat = x.reshape(n, c * t, v)
        out = None
        for k in range(SUBSETS):
            q = self.theta[k](x).permute(0, 3, 1, 2).reshape(n, v, self.inter * t)
            kk = self.phi[k](x).reshape(n, self.inter * t, v)
            graph = torch.softmax(q @ kk / (self.inter * t), dim=-2) + self.a[k] + self.b[k]
            y = self.conv[k]((flat @ graph).view(n, c, t, v))
            out = y if out is None else out + y
        assert out is not None
        return torch.relu(self.bn(out) + self.down(x))


class AGCNLayer(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int, residual: bool) -> None:
        super().__init__()
        self.gcn = AdaptiveGraphConv(cin, cout)
        self.tcn = nn.Sequential(
            nn.Conv2d(cout, cout, (9, 1), (stride, 1), (4, 0)), nn.BatchNorm2d(cout)
        )
        if not residual:
            self.residual = None
        elif cin == cout and stride == 1:
            self.residual = nn.Identity()
        else:
            self.residual = nn.Sequential(
                nn.Conv2d(cin, cout, 1, (stride, 1)), nn.BatchNorm2d(cout)
            )

    def forward(self, x: Tensor) -> Tensor:
        y = self.tcn(self.gcn(x))
        return torch.relu(y if self.residual is None else y + self.residual(x))


class AGCN(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.data_bn = nn.BatchNorm1d(PERSONS * JOINTS * 3)
        layers, cin = [], 3
        for i, (mult, stride) in enumerate(LAYERS):
            cout = mult * width // 64
            layers.append(AGCNLayer(cin, cout, stride, residual=i > 0))
            cin = cout
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(cin, CLASSES)

    def forward(self, x: Tensor) -> Tensor:
        n, c, t, v, m = x.shape
        x = self.data_bn(x.permute(0, 4, 3, 1, 2).reshape(n, m * v * c, t))
        x = x.view(n, m, v, c, t).permute(0, 1, 3, 4, 2).reshape(n * m, c, t, v)
        x = self.layers(x)
        return self.fc(x.mean(dim=(2, 3)).view(n, m, -1).mean(dim=1))


def build(device: torch.device, smoke: bool) -> Built:
    batch, frames, width = (2, 8, 16) if smoke else (16, 64, 64)
    dtype = low_precision(device)
    nets = nn.ModuleList(AGCN(width) for _ in range(3))
    for m in nets.modules():
        if isinstance(m, nn.BatchNorm1d):
            m.running_mean.normal_(0, 0.1)
            m.running_var.uniform_(0.5, 1.5)
    random_batch_norm_stats(nets)
    nets = nets.to(device=device, dtype=dtype).eval()
    parent = parents().to(device)
    streams = side_streams(device, 3)

    def bones(x: Tensor) -> Tensor:
        return nets[1](x - x.index_select(3, parent))

    def motion(x: Tensor) -> Tensor:
        diff = x[:, :, 1:] - x[:, :, :-1]
        return nets[2](torch.cat([diff, torch.zeros_like(x[:, :, :1])], dim=2))

    @torch.no_grad()
    def step(skeletons: Tensor) -> tuple[Tensor, Tensor]:
        logits = fork_join(
            device,
            streams,
            [lambda: nets[0](skeletons), lambda: bones(skeletons), lambda: motion(skeletons)],
        )
        scores = sum(torch.softmax(x.float(), dim=-1) for x in logits)
        assert isinstance(scores, Tensor)
        return scores, scores.argmax(dim=-1)

    inputs = [
        (torch.randn(batch, 3, frames, JOINTS, PERSONS, device=device, dtype=dtype),)
        for _ in range(2)
    ]
    description = (
        f"AGCN joint/bone/motion streams: 10 layers to {4 * width} channels, {frames} frames x "
        f"{JOINTS} joints x {PERSONS} persons, {CLASSES} classes, b{batch}, 3 side streams"
    )
    return Built(step, inputs, description, [nets, parent])


if __name__ == "__main__":
    main(build, __doc__)
