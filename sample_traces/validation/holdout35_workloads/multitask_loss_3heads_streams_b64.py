"""A multi-task evaluation step with three heads on three side streams and a combined loss
after the join (thirty-fifth hold-out): 64 feature rows of 512 values, bf16 on a GPU (the
losses in fp32), eval mode, no gradients, nothing trained. On the current stream a shared
MLP trunk: 3 x (``Linear`` + GELU), 512 -> 1024 -> 1024 -> 1024. Then the three heads are
forked from the current stream with ``wait_stream``, each on its own side stream, all
reading the trunk's features: the classification head ``Linear(1024, 512)`` + GELU +
``Linear(512, 100)`` to the class logits; the box-regression head ``Linear(1024, 256)`` +
GELU + ``Linear(256, 16 * 4)``, reshaped to (64, 16, 4) (4 box offsets for each of 16
anchors); the keypoint head ``Linear(1024, 1024)`` + GELU + ``Linear(1024, 17 * 2)``,
reshaped to (64, 17, 2) (x, y of 17 keypoints). The current stream joins all three (the
project's ``fork_join``: ``wait_stream``, and ``record_stream`` on the head outputs outside
capture) and then, on the current stream, the combined loss against the fixed targets given
as inputs, each head's output cast to fp32: cross-entropy of the logits against the labels,
smooth-L1 (beta 1) of the boxes against the box targets and MSE of the keypoints against the
keypoint targets (both mean-reduced), summed with weights 1.0, 2.0 and 0.5. On a CPU the
heads run in order. Inputs: features (64, 512), labels (64,) long, box targets (64, 16, 4)
fp32, keypoint targets (64, 17, 2) fp32. Returns the weighted loss (a 0-d fp32 tensor).

    traceinspect profile multitask_loss_3heads_streams_b64.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

TRUNK_LAYERS, BOX_COORDS, KP_COORDS = 3, 4, 2
W_CLS, W_BOX, W_KP = 1.0, 2.0, 0.5


def mlp2(d_in: int, hidden: int, d_out: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(d_in, hidden), nn.GELU(), nn.Linear(hidden, d_out))


def build(device: torch.device, smoke: bool) -> Built:
    batch, d_in, width, cls_hidden, classes, box_hidden, anchors, kp_hidden, keypoints = (
        (8, 32, 64, 32, 10, 16, 4, 64, 5) if smoke else (64, 512, 1024, 512, 100, 256, 16, 1024, 17)
    )
    dtype = low_precision(device)
    trunk_layers: list[nn.Module] = []
    for i in range(TRUNK_LAYERS):
        trunk_layers += [nn.Linear(d_in if i == 0 else width, width), nn.GELU()]
    trunk = nn.Sequential(*trunk_layers)
    cls_head = mlp2(width, cls_hidden, classes)
    box_head = mlp2(width, box_hidden, anchors * BOX_COORDS)
    kp_head = mlp2(width, kp_hidden, keypoints * KP_COORDS)
    model = nn.ModuleList([trunk, cls_head, box_head, kp_head]).to(device, dtype).eval()
    streams = side_streams(device, 3)

    @torch.no_grad()
    def step(x: Tensor, labels: Tensor, box_target: Tensor, kp_target: Tensor) -> Tensor:
        feats = trunk(x)
        logits, boxes, kps = fork_join(
            device,
            streams,
            [
                lambda: cls_head(feats),
                lambda: box_head(feats).view(-1, anchors, BOX_COORDS),
                lambda: kp_head(feats).view(-1, keypoints, KP_COORDS),
            ],
        )
        cls_loss = F.cross_entropy(logits.float(), labels)
        box_loss = F.smooth_l1_loss(boxes.float(), box_target, beta=1.0)
        kp_loss = F.mse_loss(kps.float(), kp_target)
        return W_CLS * cls_loss + W_BOX * box_loss + W_KP * kp_loss

    inputs = [
        (
            torch.randn(batch, d_in, device=device, dtype=dtype),
            torch.randint(0, classes, (batch,), device=device),
            torch.randn(batch, anchors, BOX_COORDS, device=device) * 0.5,
            torch.rand(batch, keypoints, KP_COORDS, device=device),
        )
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"MLP trunk {d_in} -> {TRUNK_LAYERS} x {width} + class / box / keypoint heads on 3 "
        f"side streams + weighted CE / smooth-L1 / MSE loss, b{batch}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
