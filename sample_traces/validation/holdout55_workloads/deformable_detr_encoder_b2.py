"""The transformer encoder of Deformable DETR (Zhu et al., 2021), 6 layers of multi-scale
deformable attention over the four feature levels of 2 images of 384 x 384, with the
attention's PyTorch reference path (fifty-fifth hold-out: one stream of some 200 kernels,
about 34 a layer: fp32 GEMMs over 6120 token rows, the largest the FFN's 256 -> 1024 -> 256,
3.2 GFLOP each, bilinear ``F.grid_sample`` gathers from each level's value map, the copies of
transposes and a ``stack`` between them, a weighted sum over the 16 samples a head, LayerNorms;
a mix of compute-bound GEMMs and memory-bound gathers and copies over 6 to 100 MB tensors). Laid
out as fundamentalvision/Deformable-DETR's ``DeformableTransformerEncoderLayer`` and
``MSDeformAttn`` (d_model 256, 8 heads, 4 levels, 4 points, d_ffn 1024, ReLU, post-norm) with
``ms_deform_attn_core_pytorch``, the reference the CUDA extension is checked against. The
levels are the backbone's strides 8, 16, 32 and 64 after the input projections, 48 x 48, 24 x
24, 12 x 12 and 6 x 6, flattened and concatenated: 3060 tokens an image. A layer on src (2,
3060, 256): query = src + pos; ``MSDeformAttn``: the value ``Linear(256, 256)`` of src viewed
as 8 heads of 32; the sampling offsets ``Linear(256, 256)`` viewed (2, 3060, 8, 4, 4, 2) and
the attention weights ``Linear(256, 128)``, softmax over the 16 level-point pairs of a head;
the sampling locations, the reference points plus the offsets divided by each level's (width,
height); then the reference path: the grids 2 loc - 1, per level the value map transposed to
(16, 32, H, W) and the level's grid to (16, 3060, 4, 2) (copies), ``F.grid_sample``
(bilinear, zero padding, ``align_corners=False``) to (16, 32, 3060, 4); the four stacked and
flattened to 16 samples, times the attention weights, summed, back to (2, 3060, 256) (a copy)
and the output ``Linear(256, 256)``; src = LayerNorm(src + that); src = LayerNorm(src +
``Linear(1024, 256)``(ReLU(``Linear(256, 1024)``(src)))); dropout none (eval). The level sizes
are Python ints here (the reference reads them from a tensor on the host, a sync); no padding
mask, so the valid ratios are 1. Made at build: the reference points (each token's pixel
centre, normalized, the same on every level, as ``get_reference_points``), the positional
embeddings (``PositionEmbeddingSine(128, normalize=True)`` on each level plus the learned
level embedding). Weights: torch's defaults where Deformable-DETR's ``_reset_parameters``
leaves them, its own init elsewhere (the offsets' bias the 8 directions times 1..4 points,
value and output projections Xavier), plus Gaussian weights of std 0.05 for the offsets and
attention weights (zero at init), as after training. fp32 (the GEMMs in full fp32, PyTorch's
default), eval, no gradients. Input (two input sets): the flattened multi-scale features (2,
3060, 256), Gaussian. Returns the encoder's memory (2, 3060, 256).

    traceinspect profile deformable_detr_encoder_b2.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn

D_MODEL, HEADS, LEVELS, POINTS, D_FFN, LAYERS, STRIDES = 256, 8, 4, 4, 1024, 6, (8, 16, 32, 64)
Shapes = tuple[tuple[int, int], ...]


def ms_deform_attn_core_pytorch(
    value: Tensor, shapes: Shapes, sampling_locations: Tensor, attention_weights: Tensor
) -> Tensor:
    """Deformable-DETR's reference multi-scale deformable attention (shapes as Python ints)."""
    n, _, m, d = value.shape
    _, lq, m, levels, p, _ = sampling_locations.shape
    value_list = value.split([h * w for h, w in shapes], dim=1)
    sampling_grids = 2 * sampling_locations - 1
    sampling_value_list = []
    for lid, (h, w) in enumerate(shapes):
        value_l = value_list[lid].flatten(2).transpose(1, 2).reshape(n * m, d, h, w)
        grid_l = sampling_grids[:, :, :, lid].transpose(1, 2).flatten(0, 1)
        sampling_value_list.append(
            F.grid_sample(
                value_l, grid_l, mode="bilinear", padding_mode="zeros", align_corners=False
            )
        )
    attention_weights = attention_weights.transpose(1, 2).reshape(n * m, 1, lq, levels * p)
    output = (torch.stack(sampling_value_list, dim=-2).flatten(-2) * attention_weights).sum(-1)
    return output.view(n, m * d, lq).transpose(1, 2).contiguous()


class MSDeformAttn(nn.Module):
    def __init__(self, d: int, levels: int, heads: int, points: int, shapes: Shapes) -> None:
        super().__init__()
        self.d, self.levels, self.heads, self.points, self.shapes = d, levels, heads, points, shapes
        self.sampling_offsets = nn.Linear(d, heads * levels * points * 2)
        self.attention_weights = nn.Linear(d, heads * levels * points)
        self.value_proj = nn.Linear(d, d)
        self.output_proj = nn.Linear(d, d)
        self.register_buffer(
            "offset_normalizer", torch.tensor([[w, h] for h, w in shapes], dtype=torch.float32)
        )
        self._reset_parameters()

    @torch.no_grad()
    def _reset_parameters(self) -> None:
        """Deformable-DETR's init, then the offsets' and weights' Linear as after training."""
        thetas = torch.arange(self.heads, dtype=torch.float32) * (2.0 * math.pi / self.heads)
        grid = torch.stack([thetas.cos(), thetas.sin()], -1)
        grid = (grid / grid.abs().max(-1, keepdim=True)[0]).view(self.heads, 1, 1, 2)
        grid = grid.repeat(1, self.levels, self.points, 1)
        grid = grid * torch.arange(1, self.points + 1, dtype=torch.float32).view(1, 1, -1, 1)
        self.sampling_offsets.bias.copy_(grid.view(-1))
        self.attention_weights.bias.zero_()
        for lin in (self.value_proj, self.output_proj):
            nn.init.xavier_uniform_(lin.weight)
            lin.bias.zero_()
        self.sampling_offsets.weight.normal_(0, 0.05)
        self.attention_weights.weight.normal_(0, 0.05)

    def forward(self, query: Tensor, reference_points: Tensor, input_flatten: Tensor) -> Tensor:
        n, len_q, _ = query.shape
        _, len_in, _ = input_flatten.shape
        m, lv, p = self.heads, self.levels, self.points
        value = self.value_proj(input_flatten).view(n, len_in, m, self.d // m)
        sampling_offsets = self.sampling_offsets(query).view(n, len_q, m, lv, p, 2)
        attention_weights = self.attention_weights(query).view(n, len_q, m, lv * p)
        attention_weights = F.softmax(attention_weights, -1).view(n, len_q, m, lv, p)
        sampling_locations = (
            reference_points[:, :, None, :, None, :]
            + sampling_offsets / self.offset_normalizer[None, None, None, :, None, :]
        )
        output = ms_deform_attn_core_pytorch(
            value, self.shapes, sampling_locations, attention_weights
        )
        return self.output_proj(output)


class EncoderLayer(nn.Module):
    """DeformableTransformerEncoderLayer, post-norm, eval (no dropout)."""

    def __init__(self, d: int, ffn: int, levels: int, heads: int, points: int, shapes: Shapes):
        super().__init__()
        self.self_attn = MSDeformAttn(d, levels, heads, points, shapes)
        self.norm1 = nn.LayerNorm(d)
        self.linear1, self.linear2 = nn.Linear(d, ffn), nn.Linear(ffn, d)
        self.norm2 = nn.LayerNorm(d)

    def forward(self, src: Tensor, pos: Tensor, reference_points: Tensor) -> Tensor:
        src = self.norm1(src + self.self_attn(src + pos, reference_points, src))
        return self.norm2(src + self.linear2(F.relu(self.linear1(src))))


def sine_position_embedding(h: int, w: int, d: int, temperature: float = 10000.0) -> Tensor:
    """Deformable-DETR's PositionEmbeddingSine(d // 2, normalize=True) without padding:
    (h w, d), the y half first."""
    feats, eps, scale = d // 2, 1e-6, 2 * math.pi
    y_embed = torch.arange(1, h + 1, dtype=torch.float32)[:, None].expand(h, w)
    x_embed = torch.arange(1, w + 1, dtype=torch.float32)[None, :].expand(h, w)
    y_embed = (y_embed - 0.5) / (h + eps) * scale
    x_embed = (x_embed - 0.5) / (w + eps) * scale
    dim_t = torch.arange(feats, dtype=torch.float32)
    dim_t = temperature ** (2 * (dim_t // 2) / feats)
    pos_x, pos_y = x_embed[..., None] / dim_t, y_embed[..., None] / dim_t
    pos_x = torch.stack((pos_x[..., 0::2].sin(), pos_x[..., 1::2].cos()), dim=3).flatten(2)
    pos_y = torch.stack((pos_y[..., 0::2].sin(), pos_y[..., 1::2].cos()), dim=3).flatten(2)
    return torch.cat((pos_y, pos_x), dim=2).view(h * w, d)


def reference_points(shapes: Shapes, levels: int) -> Tensor:
    """get_reference_points with valid ratios 1: (tokens, levels, 2), (x, y) in [0, 1]."""
    refs = []
    for h, w in shapes:
        ref_y, ref_x = torch.meshgrid(
            torch.linspace(0.5, h - 0.5, h), torch.linspace(0.5, w - 0.5, w), indexing="ij"
        )
        refs.append(torch.stack((ref_x.reshape(-1) / w, ref_y.reshape(-1) / h), -1))
    return torch.cat(refs, 0)[:, None].expand(-1, levels, -1)


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, image, d, heads, ffn, layers = 2, 128, 32, 2, 64, 2
    else:
        batch, image, d, heads, ffn, layers = 2, 384, D_MODEL, HEADS, D_FFN, LAYERS
    shapes = tuple((image // s, image // s) for s in STRIDES)
    model = nn.ModuleList(
        EncoderLayer(d, ffn, LEVELS, heads, POINTS, shapes) for _ in range(layers)
    )
    model = model.to(device).eval()
    level_embed = torch.randn(LEVELS, d)
    pos = torch.cat(
        [sine_position_embedding(h, w, d) + level_embed[i] for i, (h, w) in enumerate(shapes)]
    )
    pos = pos.to(device)[None].expand(batch, -1, -1)
    refs = reference_points(shapes, LEVELS).to(device)[None].expand(batch, -1, -1, -1)
    tokens = sum(h * w for h, w in shapes)

    @torch.no_grad()
    def step(src: Tensor) -> Tensor:
        for layer in model:
            src = layer(src, pos, refs)
        return src

    inputs = [(torch.randn(batch, tokens, d, device=device),) for _ in range(2)]
    description = (
        f"Deformable DETR encoder, {layers} layers d{d} {heads} heads {LEVELS} levels "
        f"{POINTS} points (grid_sample reference path), FFN {ffn}, {tokens} tokens "
        f"({'/'.join(f'{h}x{w}' for h, w in shapes)}), fp32, b{batch} at {image}"
    )
    return Built(step, inputs, description, [model, pos, refs])


if __name__ == "__main__":
    main(build, __doc__)
