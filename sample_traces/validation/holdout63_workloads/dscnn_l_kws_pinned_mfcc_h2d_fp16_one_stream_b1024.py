"""DS-CNN-L (Zhang, Suda, Lai and Chandra, 2017, "Hello Edge: Keyword Spotting on Microcontrollers":
a depthwise-separable CNN over MFCCs) spotting the 12 Google Speech Commands classes in 1024
one-second clips, the clips' MFCCs handed over by the loader in pinned host memory and copied to the
GPU inside the step (sixty-third hold-out: one stream, fp16: two host-to-device copies with
``non_blocking=True`` from pinned staging buffers, the (1024, 49, 10) fp32 MFCCs (2.0 MB) and the
(1024,) int64 labels; the cast to fp16; the 10 x 4 / (2, 1) convolution to 276 channels after a
TensorFlow-SAME zero pad, BatchNorm and ReLU; 5 depthwise-separable layers of 276 channels (a 3 x 3
depthwise convolution, BatchNorm, ReLU, a 1 x 1 convolution, BatchNorm, ReLU), the first at stride 2
x 2 after its SAME pad, on grids of 25 x 10 and 13 x 5; the average pool, the ``Linear(276, 12)``,
the cross-entropy and the accuracy; some 30 kernels and 2 copies, some 0.2 to 0.5 ms of GPU time).
Laid out as ARM-software/ML-KWS-for-MCU's ``create_ds_cnn_model`` with its DS-CNN-L
``model_size_info`` (6 layers: 276 filters 10 x 4 stride 2 x 1; then 276 filters 3 x 3 at stride 2 x
2, then four at 1 x 1), ``dct_coefficient_count 10``, ``window_size_ms 40``, ``window_stride_ms 20``
(49 frames of a 1 s clip), BatchNorm after every convolution (eval, on random running statistics;
the convolutions keep their biases, as slim's do), the average pool over the whole grid and the
final fully connected layer to the 12 labels (10 keywords, silence, unknown). The loader fills the
staging buffers between steps (here the same buffers every step, as a replayed graph requires); the
step's argument is the per-clip weight of the loss, already on the GPU. fp16 weights and activations
on a GPU (fp32 on a CPU, the staging buffers then not pinned), the loss in fp32, eval, no gradients,
random weights (torch's defaults). Input (two input sets): the per-clip weights (1024,) fp32 in [0,
1); the staging buffers hold the MFCCs (1024, 49, 10), Gaussian x 10, fp32, and the labels (1024,)
int64 below 12. Returns the weighted per-clip losses (1024,) fp32 and the accuracy (a 0-d fp32
tensor).

    traceinspect profile dscnn_l_kws_pinned_mfcc_h2d_fp16_one_stream_b1024.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from _models import random_batch_norm_stats
from torch import Tensor, nn

FRAMES, MFCC, FILTERS, LAYERS, LABELS = 49, 10, 276, 6, 12


def same_pad(size: int, k: int, stride: int) -> tuple[int, int]:
    """TensorFlow's SAME padding along one axis: (before, after)."""
    out = -(-size // stride)
    total = max((out - 1) * stride + k - size, 0)
    return total // 2, total - total // 2


class DSCNN(nn.Module):
    def __init__(self, frames: int, mfcc: int, filters: int, layers: int, labels: int) -> None:
        super().__init__()
        t_pad, f_pad = same_pad(frames, 10, 2), same_pad(mfcc, 4, 1)
        self.pad0 = nn.ZeroPad2d((*f_pad, *t_pad))
        self.conv0 = nn.Conv2d(1, filters, (10, 4), (2, 1))
        self.bn0 = nn.BatchNorm2d(filters, eps=1e-3)
        t, f = -(-frames // 2), mfcc
        t_pad, f_pad = same_pad(t, 3, 2), same_pad(f, 3, 2)
        self.pad1 = nn.ZeroPad2d((*f_pad, *t_pad))
        blocks = []
        for i in range(layers - 1):
            stride = 2 if i == 0 else 1
            blocks.append(
                nn.Sequential(
                    nn.Conv2d(filters, filters, 3, stride, 0 if i == 0 else 1, groups=filters),
                    nn.BatchNorm2d(filters, eps=1e-3),
                    nn.ReLU(),
                    nn.Conv2d(filters, filters, 1),
                    nn.BatchNorm2d(filters, eps=1e-3),
                    nn.ReLU(),
                )
            )
        self.blocks = nn.ModuleList(blocks)
        self.fc = nn.Linear(filters, labels)

    def forward(self, mfcc: Tensor) -> Tensor:
        x = torch.relu(self.bn0(self.conv0(self.pad0(mfcc.unsqueeze(1)))))
        x = self.pad1(x)
        for block in self.blocks:
            x = block(x)
        return self.fc(x.mean((2, 3)))


def build(device: torch.device, smoke: bool) -> Built:
    batch, filters = (8, 16) if smoke else (1024, FILTERS)
    cuda = device.type == "cuda"
    dtype = torch.float16 if cuda else torch.float32
    features = torch.randn(batch, FRAMES, MFCC, pin_memory=cuda).mul_(10)
    labels = torch.randint(0, LABELS, (batch,), pin_memory=cuda)
    model = DSCNN(FRAMES, MFCC, filters, LAYERS, LABELS)
    random_batch_norm_stats(model)
    model = model.to(device, dtype).eval()

    @torch.no_grad()
    def step(weight: Tensor) -> tuple[Tensor, Tensor]:
        x = features.to(device, non_blocking=True)
        y = labels.to(device, non_blocking=True)
        logits = model(x.to(dtype)).float()
        loss = F.cross_entropy(logits, y, reduction="none")
        accuracy = (logits.argmax(dim=-1) == y).float().mean()
        return loss * weight, accuracy

    inputs = [(torch.rand(batch, device=device),) for _ in range(2)]
    precision = str(dtype).removeprefix("torch.")
    description = (
        f"DS-CNN-L keyword spotting: pinned H2D copy of {FRAMES}x{MFCC} MFCCs + labels, conv + "
        f"{LAYERS - 1} DS layers of {filters}, {precision}, one stream, b{batch}"
    )
    return Built(step, inputs, description, [model, features, labels])


if __name__ == "__main__":
    main(build, __doc__)
