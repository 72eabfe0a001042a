"""Segment Anything's prompt encoder and mask decoder (Kirillov et al., 2023) turning 8 box prompts
on one image into masks, as ``SamPredictor.predict_torch`` runs them on a cached image embedding,
with the masks upscaled to the image's size (fifty-sixth hold-out: one stream of some 170 kernels,
fp32 GEMMs over 32768 image-token rows of 256 -> 128 and 128 -> 256, some 2 GFLOP each in full fp32,
explicit attentions as batched matmuls and softmaxes, many elementwise kernels and LayerNorms over
(8, 4096, 256) fp32 tensors of 34 MB, two transposed convolutions to 34 and 67 MB, and bilinear
upsamplings and a threshold over 34 to 61 MB: a mix dominated by memory-bound kernels with a few
GEMM-bound ones). Laid out as facebookresearch/segment-anything's ``PromptEncoder``, ``MaskDecoder``
and ``TwoWayTransformer`` (the same for every SAM size): the box prompts (8, 4) in the resized
1024-pixel frame, + 0.5, as corner pairs through ``PositionEmbeddingRandom.forward_with_coords``
(coordinates over the input size, 2 c - 1, @ a Gaussian (2, 128) matrix, x 2 pi, sin and cos) plus
the two corner embeddings, the sparse prompts (8, 2, 256); the dense prompts, ``no_mask_embed``
expanded to (8, 256, 64, 64); the dense positional encoding ``get_dense_pe()`` (the 64 x 64 grid's
cumsums, normalized, through the same encoding, computed at each call as the predictor does).
``MaskDecoder.predict_masks``: the IoU token and 4 mask tokens concatenated with the sparse prompts
(8, 7, 256); the image embedding ``repeat_interleave``d to the 8 prompts plus the dense prompts, and
the positional encoding likewise; ``TwoWayTransformer`` (depth 2, d 256, 8 heads, MLP 2048 with
ReLU): per ``TwoWayAttentionBlock`` the tokens' self-attention (its positional encodings skipped in
the first block), LayerNorm, token-to-image cross-attention, LayerNorm, MLP, LayerNorm,
image-to-token cross-attention updating the image tokens, LayerNorm; SAM's ``Attention``:
``q_proj``, ``k_proj``, ``v_proj`` (internal width 128 in the cross-attentions, downsample rate 2),
heads separated, q k^T / sqrt(d_head), softmax, times v, ``out_proj``; then the final token-to-image
attention and LayerNorm. ``output_upscaling``: ``ConvTranspose2d(256, 64, 2, stride 2)``,
``LayerNorm2d``, GELU, ``ConvTranspose2d(64, 32, 2, stride 2)``, GELU, to (8, 32, 256, 256); the 4
hypernetwork MLPs (256 -> 256 -> 256 -> 32) on the mask tokens, stacked, times the upscaled
embedding (a batched matmul) to the masks (8, 4, 256, 256); the IoU head (256 -> 256 -> 256 -> 4).
``multimask_output=False``, as for box prompts: the first mask and its IoU. Then
``Sam.postprocess_masks``: bilinear upsampling to 1024 x 1024, the crop to the resized input (768 x
1024), bilinear upsampling to the original 1200 x 1600, and the threshold ``masks > 0.0``. The
prompt encoder's boolean-indexed point padding is not reached (boxes only). fp32, PyTorch's defaults
(GEMMs in full fp32, the transposed convolutions may use TF32), eval, no gradients, random weights
(torch's defaults, the Gaussian matrix and the embeddings N(0, 1)). Inputs (two input sets): the
image embedding (1, 256, 64, 64), Gaussian, as the ViT image encoder leaves it cached, and the boxes
(8, 4), x0 < x1 and y0 < y1 inside the 1024 x 768 frame. Returns the masks (8, 1, 1200, 1600) bool,
the IoU predictions (8, 1) and the low-resolution mask logits (8, 1, 256, 256).

    traceinspect profile sam_mask_decoder_box_prompts_b8.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn

D, HEADS, MLP_DIM, DEPTH, MASK_TOKENS, IMAGE, EMBED = 256, 8, 2048, 2, 4, 1024, 64
ORIGINAL = (1200, 1600)  # (height, width); resized longest side 1024 -> input (768, 1024)


class LayerNorm2d(nn.Module):
    def __init__(self, channels: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.weight, self.bias = (
            nn.Parameter(torch.ones(channels)),
            nn.Parameter(torch.zeros(channels)),
        )
        self.eps = eps

    def forward(self, x: Tensor) -> Tensor:
        u = x.mean(1, keepdim=True)
        s = (x - u).pow(2).mean(1, keepdim=True)
        x = (x - u) / torch.sqrt(s + self.eps)
        return self.weight[:, None, None] * x + self.bias[:, None, None]


class MLP(nn.Module):
    """SAM's MLP: Linear layers, ReLU between."""

    def __init__(self, d_in: int, hidden: int, d_out: int, layers: int) -> None:
        super().__init__()
        dims = [d_in] + [hidden] * (layers - 1)
        self.layers = nn.ModuleList(
            nn.Linear(n, k) for n, k in zip(dims, dims[1:] + [d_out], strict=True)
        )

    def forward(self, x: Tensor) -> Tensor:
        for i, layer in enumerate(self.layers):
            x = F.relu(layer(x)) if i < len(self.layers) - 1 else layer(x)
        return x


class Attention(nn.Module):
    """SAM's Attention: projections to d / downsample_rate, explicit softmax attention."""

    def __init__(self, d: int, heads: int, downsample_rate: int = 1) -> None:
        super().__init__()
        self.heads, internal = heads, d // downsample_rate
        self.q_proj, self.k_proj = nn.Linear(d, internal), nn.Linear(d, internal)
        self.v_proj, self.out_proj = nn.Linear(d, internal), nn.Linear(internal, d)

    def _separate(self, x: Tensor) -> Tensor:
        b, n, c = x.shape
        return x.reshape(b, n, self.heads, c // self.heads).transpose(1, 2)

    def forward(self, q: Tensor, k: Tensor, v: Tensor) -> Tensor:
        q, k, v = (
            self._separate(p(x)) for p, x in ((self.q_proj, q), (self.k_proj, k), (self.v_proj, v))
        )
        attn = q @ k.permute(0, 1, 3, 2)
        attn = torch.softmax(attn / math.sqrt(q.shape[-1]), dim=-1)
        out = (attn @ v).transpose(1, 2)
        return self.out_proj(out.reshape(out.shape[0], out.shape[1], -1))


class TwoWayAttentionBlock(nn.Module):
    def __init__(self, d: int, heads: int, mlp_dim: int, skip_first_layer_pe: bool) -> None:
        super().__init__()
        self.self_attn = Attention(d, heads)
        self.cross_attn_token_to_image = Attention(d, heads, 2)
        self.cross_attn_image_to_token = Attention(d, heads, 2)
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.norm3, self.norm4 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, mlp_dim), nn.ReLU(), nn.Linear(mlp_dim, d))
        self.skip_first_layer_pe = skip_first_layer_pe

    def forward(
        self, queries: Tensor, keys: Tensor, query_pe: Tensor, key_pe: Tensor
    ) -> tuple[Tensor, Tensor]:
        if self.skip_first_layer_pe:
            queries = self.self_attn(queries, queries, queries)
        else:
            q = queries + query_pe
            queries = queries + self.self_attn(q, q, queries)
        queries = self.norm1(queries)
        q, k = queries + query_pe, keys + key_pe
        queries = self.norm2(queries + self.cross_attn_token_to_image(q, k, keys))
        queries = self.norm3(queries + self.mlp(queries))
        q, k = queries + query_pe, keys + key_pe
        keys = self.norm4(keys + self.cross_attn_image_to_token(k, q, queries))
        return queries, keys


class PromptEncoderAndMaskDecoder(nn.Module):
    def __init__(self, d: int, heads: int, mlp_dim: int, embed: int) -> None:
        super().__init__()
        self.embed = embed
        self.register_buffer("gaussian", torch.randn(2, d // 2))  # PositionEmbeddingRandom
        self.point_embeddings = nn.ModuleList(nn.Embedding(1, d) for _ in range(4))
        self.no_mask_embed = nn.Embedding(1, d)
        self.iou_token, self.mask_tokens = nn.Embedding(1, d), nn.Embedding(MASK_TOKENS, d)
        self.layers = nn.ModuleList(
            TwoWayAttentionBlock(d, heads, mlp_dim, i == 0) for i in range(DEPTH)
        )
        self.final_attn_token_to_image = Attention(d, heads, 2)
        self.norm_final_attn = nn.LayerNorm(d)
        self.output_upscaling = nn.Sequential(
            nn.ConvTranspose2d(d, d // 4, 2, stride=2),
            LayerNorm2d(d // 4),
            nn.GELU(),
            nn.ConvTranspose2d(d // 4, d // 8, 2, stride=2),
            nn.GELU(),
        )
        self.hypernetworks = nn.ModuleList(MLP(d, d, d // 8, 3) for _ in range(MASK_TOKENS))
        self.iou_head = MLP(d, d, MASK_TOKENS, 3)

    def _pe_encoding(self, coords: Tensor) -> Tensor:
        coords = (2 * coords - 1) @ self.gaussian
        coords = 2 * math.pi * coords
        return torch.cat([torch.sin(coords), torch.cos(coords)], dim=-1)

    def dense_pe(self) -> Tensor:
        h = w = self.embed
        grid = torch.ones((h, w), device=self.gaussian.device, dtype=torch.float32)
        y_embed = (grid.cumsum(dim=0) - 0.5) / h
        x_embed = (grid.cumsum(dim=1) - 0.5) / w
        return self._pe_encoding(torch.stack([x_embed, y_embed], dim=-1)).permute(2, 0, 1)

    def prompts(self, boxes: Tensor, image: int) -> tuple[Tensor, Tensor]:
        coords = (boxes + 0.5).reshape(-1, 2, 2).clone()
        coords[:, :, 0] = coords[:, :, 0] / image
        coords[:, :, 1] = coords[:, :, 1] / image
        corners = self._pe_encoding(coords.to(torch.float))
        corners[:, 0, :] += self.point_embeddings[2].weight
        corners[:, 1, :] += self.point_embeddings[3].weight
        sparse = torch.cat([corners.new_empty((boxes.shape[0], 0, corners.shape[-1])), corners], 1)
        dense = self.no_mask_embed.weight.reshape(1, -1, 1, 1).expand(
            boxes.shape[0], -1, self.embed, self.embed
        )
        return sparse, dense

    def decode(
        self, image_embeddings: Tensor, image_pe: Tensor, sparse: Tensor, dense: Tensor
    ) -> tuple[Tensor, Tensor]:
        output_tokens = torch.cat([self.iou_token.weight, self.mask_tokens.weight], dim=0)
        output_tokens = output_tokens.unsqueeze(0).expand(sparse.size(0), -1, -1)
        tokens = torch.cat((output_tokens, sparse), dim=1)
        src = torch.repeat_interleave(image_embeddings, tokens.shape[0], dim=0) + dense
        pos_src = torch.repeat_interleave(image_pe[None], tokens.shape[0], dim=0)
        b, c, h, w = src.shape
        keys = src.flatten(2).permute(0, 2, 1)
        key_pe = pos_src.flatten(2).permute(0, 2, 1)
        queries = tokens
        for layer in self.layers:
            queries, keys = layer(queries, keys, tokens, key_pe)
        q, k = queries + tokens, keys + key_pe
        queries = self.norm_final_attn(queries + self.final_attn_token_to_image(q, k, keys))
        src = keys.transpose(1, 2).view(b, c, h, w)
        upscaled = self.output_upscaling(src)
        hyper_in = torch.stack(
            [mlp(queries[:, 1 + i, :]) for i, mlp in enumerate(self.hypernetworks)], dim=1
        )
        b, c, h, w = upscaled.shape
        masks = (hyper_in @ upscaled.view(b, c, h * w)).view(b, -1, h, w)
        return masks[:, 0:1], self.iou_head(queries[:, 0, :])[:, 0:1]


def postprocess_masks(
    masks: Tensor, image: int, input_size: tuple[int, int], original: tuple[int, int]
) -> Tensor:
    """Sam.postprocess_masks: upscale to the encoder's frame, crop the padding, resize."""
    masks = F.interpolate(masks, (image, image), mode="bilinear", align_corners=False)
    masks = masks[..., : input_size[0], : input_size[1]]
    return F.interpolate(masks, original, mode="bilinear", align_corners=False)


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        prompts, d, heads, mlp_dim, embed, image, original = 2, 32, 2, 64, 8, 128, (60, 80)
    else:
        prompts, d, heads, mlp_dim, embed, image, original = (
            8,
            D,
            HEADS,
            MLP_DIM,
            EMBED,
            IMAGE,
            ORIGINAL,
        )
    scale = image / max(original)
    input_size = (int(original[0] * scale + 0.5), int(original[1] * scale + 0.5))
    model = PromptEncoderAndMaskDecoder(d, heads, mlp_dim, embed).to(device).eval()

    @torch.no_grad()
    def step(image_embedding: Tensor, boxes: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        sparse, dense = model.prompts(boxes, image)
        low_res, iou = model.decode(image_embedding, model.dense_pe(), sparse, dense)
        masks = postprocess_masks(low_res, image, input_size, original)
        return masks > 0.0, iou, low_res

    def make() -> tuple[Tensor, Tensor]:
        corners = torch.rand(prompts, 2, 2, device=device)
        lo, hi = corners.min(dim=1).values, corners.max(dim=1).values
        frame = torch.tensor([input_size[1], input_size[0]], device=device, dtype=torch.float32)
        boxes = torch.cat((lo * frame, hi * frame), dim=1)
        return torch.randn(1, d, embed, embed, device=device), boxes

    inputs = [make() for _ in range(2)]
    description = (
        f"SAM prompt encoder + mask decoder (TwoWayTransformer depth {DEPTH} d{d}, upscaling, "
        f"hypernetwork MLPs) for {prompts} box prompts on a {embed}x{embed} embedding, masks "
        f"upsampled to {original[0]}x{original[1]} and thresholded, fp32"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
