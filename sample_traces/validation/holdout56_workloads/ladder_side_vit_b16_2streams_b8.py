"""A frozen ViT-B/16 backbone with a ladder side network beside it, as Ladder Side-Tuning (LST, Sung
et al., 2022) runs a parameter- and memory-efficient fine-tuned model, classifying 8 images of 224 x
224, the backbone's block i + 1 on one side stream while the side network's block i, which reads
only the backbone's output of block i, runs on the other (fifty-sixth hold-out: 12 fork / join
rounds, in each a bf16 ViT block of some 12 kernels, mid-sized GEMMs over 1576 token rows and a
flash attention, beside an fp32 side block of the same 12 or so kernels at an eighth of the width,
GEMMs of 1576 x 96 and small elementwise kernels, plus its ladder gate's 8 or so: a compute-bound
chain beside a launch-bound one, unequal). The backbone is laid out as timm's
``vit_base_patch16_224`` (Dosovitskiy et al., 2021): the patch embedding ``Conv2d(3, 768, 16, stride
16)``, the class token and 197 position embeddings, 12 pre-norm blocks (d 768, 12 heads, MLP 3072
with GELU), written with the project's ``_blocks.PreNormAttention`` (LayerNorm, a fused
``Linear(768, 2304)``, ``F.scaled_dot_product_attention``, ``Linear(768, 768)``, the residual) and
``_blocks.ResidualMLP`` (LayerNorm, ``Linear(768, 3072)``, GELU, ``Linear(3072, 768)``, the
residual). The side network, as LST builds it, is the backbone scaled down by the reduction factor 8
(d 96, still 12 heads of 8, MLP 384, the same two ``_blocks`` modules), in fp32; its input at layer
i is the gated ladder connection mu_i x down_i(h_i) + (1 - mu_i) x s_(i-1), where h_i is the
backbone's output of block i cast to fp32, down_i a ``Linear(768, 96)`` and mu_i = sigmoid(alpha_i /
0.1) with a learned alpha_i (LST's gate, temperature 0.1; the alphas drawn at build, as after
training); s_0 = down_0 of the embedded tokens. The schedule, with the side network one block behind
the backbone: round 0, side stream 1 runs backbone block 1 on the embedded tokens while side stream
2 computes s_0; round i (1 to 11), side stream 1 runs backbone block i + 1 on h_i while side stream
2 runs side block i on the gated mix of h_i and s_(i-1); after the 12 rounds, on the current stream,
side block 12 on h_12 and s_11, then the side network's final LayerNorm on the class token, LST's
upsampling ``Linear(96, 768)`` and the ``Linear(768, 1000)`` head, in fp32. Fork and join are the
project's ``fork_join`` (``wait_stream``, and ``record_stream`` on the branch outputs outside
capture). The patch embedding and the position embeddings run on the current stream before the first
round. bf16 backbone (frozen), fp32 side network and head on a GPU (all fp32 on a CPU), eval, no
gradients, random weights (torch's defaults). Input (two input sets): the images (8, 3, 224, 224),
random. Returns the logits (8, 1000), fp32.

    traceinspect profile ladder_side_vit_b16_2streams_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _blocks import PreNormAttention, ResidualMLP
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

PATCH, CLASSES, REDUCTION, TEMPERATURE = 16, 1000, 8, 0.1


class Block(nn.Module):
    """A pre-norm transformer block: x + Attn(LN(x)), then x + MLP(LN(x))."""

    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.attn = PreNormAttention(d, heads)
        self.mlp = ResidualMLP(d, 4 * d, "gelu")

    def forward(self, x: Tensor) -> Tensor:
        return self.mlp(self.attn(x))


class Backbone(nn.Module):
    """timm's ViT-B/16's embedding and blocks (the backbone's own head is not used)."""

    def __init__(self, d: int, heads: int, depth: int, image: int) -> None:
        super().__init__()
        self.patch_embed = nn.Conv2d(3, d, PATCH, stride=PATCH)
        self.cls_token = nn.Parameter(0.02 * torch.randn(1, 1, d))
        self.pos_embed = nn.Parameter(0.02 * torch.randn(1, (image // PATCH) ** 2 + 1, d))
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(depth))

    def embed(self, images: Tensor) -> Tensor:
        x = self.patch_embed(images).flatten(2).transpose(1, 2)
        return torch.cat((self.cls_token.expand(x.shape[0], -1, -1), x), dim=1) + self.pos_embed


class SideNetwork(nn.Module):
    """LST's side network: depth + 1 downsamplers, gates, depth blocks at d / 8, the head."""

    def __init__(self, d: int, heads: int, depth: int) -> None:
        super().__init__()
        ds = d // REDUCTION
        self.downs = nn.ModuleList(nn.Linear(d, ds) for _ in range(depth + 1))
        self.alphas = nn.Parameter(torch.randn(depth) * 0.2)
        self.blocks = nn.ModuleList(Block(ds, heads) for _ in range(depth))
        self.norm = nn.LayerNorm(ds)
        self.up = nn.Linear(ds, d)
        self.head = nn.Linear(d, CLASSES)

    def start(self, h: Tensor) -> Tensor:
        return self.downs[0](h.float())

    def layer(self, i: int, h: Tensor, s: Tensor) -> Tensor:
        """Side block i (0-based) on the gated mix of the backbone's h_(i+1) and s."""
        mu = torch.sigmoid(self.alphas[i] / TEMPERATURE)
        return self.blocks[i](mu * self.downs[i + 1](h.float()) + (1 - mu) * s)

    def classify(self, s: Tensor) -> Tensor:
        return self.head(self.up(self.norm(s[:, 0])))


def build(device: torch.device, smoke: bool) -> Built:
    batch, image, d, heads, depth = (2, 32, 64, 4, 3) if smoke else (8, 224, 768, 12, 12)
    dtype = low_precision(device)
    backbone = Backbone(d, heads, depth, image).to(device=device, dtype=dtype).eval()
    side = SideNetwork(d, heads, depth).to(device).eval()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(images: Tensor) -> Tensor:
        h = backbone.embed(images)
        blocks = backbone.blocks
        h_next, s = fork_join(device, streams, [lambda: blocks[0](h), lambda: side.start(h)])
        for i in range(depth - 1):
            h = h_next
            h_next, s = fork_join(
                device,
                streams,
                [lambda: blocks[i + 1](h), lambda: side.layer(i, h, s)],  # noqa: B023
            )
        s = side.layer(depth - 1, h_next, s)
        return side.classify(s)

    inputs = [(torch.randn(batch, 3, image, image, device=device, dtype=dtype),) for _ in range(2)]
    precision = str(dtype).removeprefix("torch.")
    description = (
        f"ViT-B/16-like backbone ({depth} blocks d{d}, {precision}) with an LST ladder side "
        f"network (d{d // REDUCTION}, fp32, gated ladder), backbone block i+1 beside side "
        f"block i on 2 side streams, {depth} rounds, b{batch} at {image}"
    )
    return Built(step, inputs, description, [backbone, side])


if __name__ == "__main__":
    main(build, __doc__)
