"""PoolFormer-S12 (Yu et al., CVPR 2022, "MetaFormer Is Actually What You Need for Vision": a
MetaFormer whose token mixer is a 3 x 3 average pool minus its input) classifying 32 ImageNet images
at 224 x 224 (sixty-third hold-out: one stream, bf16: the 7 x 7 / 4 patch embedding to 64 channels;
then 2, 2, 6 and 2 PoolFormer blocks of 64, 128, 320 and 512 channels at 56, 28, 14 and 7 pixels,
with a 3 x 3 / 2 patch embedding between stages, each block a GroupNorm of one group, the average
pool (padding not counted) minus its input, the layer scale and the residual add, then a second
GroupNorm, the MLP as two 1 x 1 convolutions (ratio 4) around a GELU, the layer scale and the
residual add; the final GroupNorm, the mean over the grid and ``Linear(512, 1000)``; some 200
kernels, most of them memory-bound norms, pools and elementwise kernels over 1.6 to 13 MB (the MLP's
hidden activations four times that, the largest (32, 256, 56, 56), 51 MB), the rest cuDNN 1 x 1
convolutions, 115 GFLOP in all; some 1 to 2.5 ms of GPU time). Laid out as sail-sg/poolformer's
``poolformer_s12`` (``layers [2, 2, 6, 2]``, ``embed_dims [64, 128, 320, 512]``, ``mlp_ratios [4, 4,
4, 4]``, ``downsamples [True, True, True, True]``, ``pool_size 3``, ``GroupNorm`` as
``nn.GroupNorm(1, dim)``, GELU, ``layer_scale_init_value 1e-5``, drop path and dropout off in eval;
``PatchEmbed`` a strided convolution with bias; ``Pooling`` as ``self.pool(x) - x`` with
``AvgPool2d(3, 1, 1, count_include_pad=False)``; the block ``x +
layer_scale_1.unsqueeze(-1).unsqueeze(-1) * token_mixer(norm1(x))`` then the same with the MLP; the
head on ``norm(x).mean([-2, -1])``), its layer scales drawn around 1e-5 instead of equal to it. bf16
weights and activations on a GPU (fp32 on a CPU), eval, no gradients, random weights (torch's
defaults). Input (two input sets): the images (32, 3, 224, 224) bf16, Gaussian. Returns the logits
(32, 1000).

    traceinspect profile poolformer_s12_imagenet_bf16_one_stream_b32.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn

LAYERS, DIMS, MLP_RATIO, LAYER_SCALE = (2, 2, 6, 2), (64, 128, 320, 512), 4, 1e-5


class PoolFormerBlock(nn.Module):
    def __init__(self, dim: int, mlp_ratio: int) -> None:
        super().__init__()
        self.norm1 = nn.GroupNorm(1, dim)
        self.pool = nn.AvgPool2d(3, 1, 1, count_include_pad=False)
        self.norm2 = nn.GroupNorm(1, dim)
        self.fc1 = nn.Conv2d(dim, dim * mlp_ratio, 1)
        self.fc2 = nn.Conv2d(dim * mlp_ratio, dim, 1)
        self.layer_scale_1 = nn.Parameter(LAYER_SCALE * (1 + 0.1 * torch.randn(dim)))
        self.layer_scale_2 = nn.Parameter(LAYER_SCALE * (1 + 0.1 * torch.randn(dim)))

    def forward(self, x: Tensor) -> Tensor:
        y = self.norm1(x)
        x = x + self.layer_scale_1.unsqueeze(-1).unsqueeze(-1) * (self.pool(y) - y)
        y = self.fc2(nn.functional.gelu(self.fc1(self.norm2(x))))
        return x + self.layer_scale_2.unsqueeze(-1).unsqueeze(-1) * y


class PoolFormer(nn.Module):
    def __init__(self, layers: tuple[int, ...], dims: tuple[int, ...], classes: int) -> None:
        super().__init__()
        blocks: list[nn.Module] = [nn.Conv2d(3, dims[0], 7, 4, 2)]
        for i, (n, dim) in enumerate(zip(layers, dims, strict=True)):
            if i > 0:
                blocks.append(nn.Conv2d(dims[i - 1], dim, 3, 2, 1))
            blocks += [PoolFormerBlock(dim, MLP_RATIO) for _ in range(n)]
        self.network = nn.Sequential(*blocks)
        self.norm = nn.GroupNorm(1, dims[-1])
        self.head = nn.Linear(dims[-1], classes)

    def forward(self, x: Tensor) -> Tensor:
        return self.head(self.norm(self.network(x)).mean([-2, -1]))


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, image, layers, dims, classes = 2, 32, (1, 1, 1, 1), (8, 8, 16, 16), 10
    else:
        batch, image, layers, dims, classes = 32, 224, LAYERS, DIMS, 1000
    dtype = low_precision(device)
    model = PoolFormer(layers, dims, classes).to(device, dtype).eval()

    @torch.no_grad()
    def step(images: Tensor) -> Tensor:
        return model(images)

    inputs = [(torch.randn(batch, 3, image, image, device=device, dtype=dtype),) for _ in range(2)]
    precision = str(dtype).removeprefix("torch.")
    description = (
        f"PoolFormer-S12: {sum(layers)} pool-mixer blocks {layers} x {dims}, {image} px, "
        f"{precision}, one stream, b{batch}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
