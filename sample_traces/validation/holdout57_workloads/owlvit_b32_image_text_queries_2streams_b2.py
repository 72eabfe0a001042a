"""OWL-ViT's open-vocabulary detection (Minderer et al., 2022) of 8 text queries in each of 2 images
at 768 x 768, the ViT-B/32 image tower with its box head on one side stream and the text tower on
the queries on the other, then the class head and the post-processing (fifty-seventh hold-out: two
concurrent chains of unequal weight in fp32 with TF32 GEMMs, 12 layers of d 768 over 2 x 577 image
tokens, GEMMs of 1.4 to 5.4 GFLOP, beside 12 layers of d 512 over 16 x 16 query tokens with a
causal mask, small launch-bound GEMMs, some 13 to 14 kernels a layer on each side; then some 25
kernels on the current stream, a batched matmul, norms and elementwise work over (2, 576, 8)
logits). Laid out as Hugging Face's ``OwlViTForObjectDetection`` (``google/owlvit-base-patch32``)
as ``OwlViTProcessor`` and ``post_process_object_detection`` drive it: side stream 1, the vision
model (``Conv2d(3, 768, 32, stride 32, bias=False)``, the class embedding and 577 learned
positions, ``pre_layernorm``, 12 pre-norm ``OwlViTEncoderLayer``s of 12 heads, separate q / k / v /
out ``Linear(768, 768)``, MLP 3072 with quick GELU, ``F.scaled_dot_product_attention``), its
``post_layernorm`` on every token, the class token multiplied into the patch tokens
(``image_text_embedder``), the detector's ``layer_norm``, then ``OwlViTBoxPredictionHead``
(``Linear(768, 768)``, GELU, ``Linear(768, 768)``, GELU, ``Linear(768, 4)``) plus the fixed box
bias (the logit of each patch's grid centre and of 1/24, cached) and the sigmoid, the boxes
(cx, cy, w, h); side stream 2, the text model on the 2 x 8 queries (token and 16 position
embeddings, 12 layers of d 512, 8 heads, MLP 2048, quick GELU, the additive causal mask, the final
LayerNorm, the pooled row at each query's end-of-text token, the argmax of its ids, and
``text_projection`` ``Linear(512, 512, bias=False)``). Fork and join are the project's
``fork_join`` (``wait_stream``, and ``record_stream`` on the branch outputs outside capture). After
the join, on the current stream, ``OwlViTClassPredictionHead``: ``dense0`` ``Linear(768, 512)`` on
the patch embeddings, both sides divided by their norm plus 1e-6, the einsum ``...pd,...qd->...pq``,
``logit_shift`` and ``elu(logit_scale) + 1`` (``Linear(768, 1)`` each), the logits of padding
queries (first id 0) set to the dtype's minimum; then ``post_process_object_detection``'s
arithmetic without its data-dependent threshold filter: the maximum over the queries, its sigmoid
and argmax (scores and labels), the boxes to corners and scaled to each image's original size.
fp32 with TF32 on for matrix multiplications (``torch.backends.cuda.matmul.allow_tf32 = True``, set
in build), eval, no gradients, random weights (torch's defaults). Inputs (two input sets): the
processed images (2, 3, 768, 768), normalized Gaussians, the query ids (2, 8, 16) int64 (start
49406, 1 to 6 random tokens, end 49407, then 0 padding; the last 2 of each image's 8 queries all
padding), batch first, and the original sizes (2,
2) as (height, width). Returns the scores (2, 576), the labels (2, 576) and the boxes (2, 576, 4)
in pixels.

    traceinspect profile owlvit_b32_image_text_queries_2streams_b2.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

VOCAB, BOS, EOS, QUERIES, TEXT_LEN = 49408, 49406, 49407, 8, 16


def quick_gelu(x: Tensor) -> Tensor:
    return x * torch.sigmoid(1.702 * x)


class EncoderLayer(nn.Module):
    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.layer_norm1, self.layer_norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.q_proj, self.k_proj, self.v_proj = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.out_proj = nn.Linear(d, d)
        self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> Tensor:
        b, n, d = x.shape
        h = self.layer_norm1(x)
        q, k, v = (
            p(h).view(b, n, self.heads, -1).transpose(1, 2)
            for p in (self.q_proj, self.k_proj, self.v_proj)
        )
        attn = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        x = x + self.out_proj(attn.transpose(1, 2).reshape(b, n, d))
        return x + self.fc2(quick_gelu(self.fc1(self.layer_norm2(x))))


class VisionTower(nn.Module):
    """Vision model, post_layernorm, class-token merge, the detector's layer_norm, box head."""

    def __init__(self, d: int, heads: int, layers: int, patch: int, image: int) -> None:
        super().__init__()
        self.grid = image // patch
        self.patch_embedding = nn.Conv2d(3, d, patch, stride=patch, bias=False)
        self.class_embedding = nn.Parameter(torch.randn(d))
        self.position_embedding = nn.Parameter(0.02 * torch.randn(1, self.grid**2 + 1, d))
        self.pre_layernorm, self.post_layernorm = nn.LayerNorm(d), nn.LayerNorm(d)
        self.layers = nn.ModuleList(EncoderLayer(d, heads) for _ in range(layers))
        self.layer_norm = nn.LayerNorm(d)
        self.box_head = nn.Sequential(
            nn.Linear(d, d), nn.GELU(), nn.Linear(d, d), nn.GELU(), nn.Linear(d, 4)
        )
        centers = (torch.arange(self.grid, dtype=torch.float32) + 1) / self.grid
        cy, cx = torch.meshgrid(centers, centers, indexing="ij")
        coords = torch.stack((cx, cy), dim=-1).reshape(-1, 2).clip(0.0, 1.0)
        size = torch.full_like(coords, 1.0 / self.grid)
        bias = [torch.log(c + 1e-4) - torch.log1p(-c + 1e-4) for c in (coords, size)]
        self.register_buffer("box_bias", torch.cat(bias, dim=-1), persistent=False)

    def forward(self, pixels: Tensor) -> tuple[Tensor, Tensor]:
        x = self.patch_embedding(pixels).flatten(2).transpose(1, 2)
        cls = self.class_embedding.expand(x.shape[0], 1, -1)
        x = self.pre_layernorm(torch.cat([cls, x], dim=1) + self.position_embedding)
        for layer in self.layers:
            x = layer(x)
        x = self.post_layernorm(x)
        feats = self.layer_norm(x[:, 1:] * x[:, :1])
        boxes = torch.sigmoid(self.box_head(feats) + self.box_bias)
        return feats, boxes


class TextTower(nn.Module):
    def __init__(self, d: int, heads: int, layers: int, length: int) -> None:
        super().__init__()
        self.token_embedding = nn.Embedding(VOCAB, d)
        self.position_embedding = nn.Parameter(0.01 * torch.randn(1, length, d))
        self.layers = nn.ModuleList(EncoderLayer(d, heads) for _ in range(layers))
        self.final_layer_norm = nn.LayerNorm(d)
        self.text_projection = nn.Linear(d, d, bias=False)
        causal = torch.full((length, length), torch.finfo(torch.float32).min).triu(1)
        self.register_buffer("causal_mask", causal[None, None], persistent=False)

    def forward(self, ids: Tensor) -> Tensor:
        x = self.token_embedding(ids) + self.position_embedding
        for layer in self.layers:
            x = layer(x, self.causal_mask)
        x = self.final_layer_norm(x)
        pooled = x[torch.arange(x.shape[0], device=ids.device), ids.argmax(dim=-1)]
        return self.text_projection(pooled)


class ClassHead(nn.Module):
    def __init__(self, d_vision: int, d_text: int) -> None:
        super().__init__()
        self.dense0 = nn.Linear(d_vision, d_text)
        self.logit_shift, self.logit_scale = nn.Linear(d_vision, 1), nn.Linear(d_vision, 1)

    def forward(self, feats: Tensor, queries: Tensor, query_mask: Tensor) -> Tensor:
        image_class = self.dense0(feats)
        image_class = image_class / (torch.linalg.norm(image_class, dim=-1, keepdim=True) + 1e-6)
        queries = queries / (torch.linalg.norm(queries, dim=-1, keepdim=True) + 1e-6)
        logits = torch.einsum("...pd,...qd->...pq", image_class, queries)
        scale = F.elu(self.logit_scale(feats)) + 1
        logits = (logits + self.logit_shift(feats)) * scale
        return torch.where(query_mask[:, None, :], logits, torch.finfo(logits.dtype).min)


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, vision, text, image = 2, (32, 2, 2, 32), (16, 2, 2), 96
    else:
        batch, vision, text, image = 2, (768, 12, 12, 32), (512, 8, 12), 768
    torch.backends.cuda.matmul.allow_tf32 = True  # the workload: TF32 GEMMs
    vision_tower = VisionTower(*vision, image).to(device).eval()
    text_tower = TextTower(*text, TEXT_LEN).to(device).eval()
    class_head = ClassHead(vision[0], text[0]).to(device).eval()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(pixels: Tensor, query_ids: Tensor, sizes: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        ids = query_ids.flatten(0, 1)
        (feats, boxes), query_embeds = fork_join(
            device, streams, [lambda: vision_tower(pixels), lambda: text_tower(ids)]
        )
        query_embeds = query_embeds.view(query_ids.shape[0], query_ids.shape[1], -1)
        logits = class_head(feats, query_embeds, query_ids[..., 0] > 0)
        best = torch.max(logits, dim=-1)
        scores, labels = torch.sigmoid(best.values), best.indices
        cx, cy, w, h = boxes.unbind(-1)
        corners = torch.stack((cx - 0.5 * w, cy - 0.5 * h, cx + 0.5 * w, cy + 0.5 * h), dim=-1)
        img_h, img_w = sizes.unbind(1)
        scale = torch.stack((img_w, img_h, img_w, img_h), dim=1)
        return scores, labels, corners * scale[:, None, :]

    def make() -> tuple[Tensor, Tensor, Tensor]:
        ids = torch.zeros(batch, QUERIES, TEXT_LEN, dtype=torch.long)
        for i in range(batch):
            for q in range(QUERIES - 2):  # the last two queries are padding
                n = int(torch.randint(1, 7, ()))
                ids[i, q, 0], ids[i, q, n + 1] = BOS, EOS
                ids[i, q, 1 : n + 1] = torch.randint(1, BOS, (n,))
        sizes = torch.randint(480, 1281, (batch, 2)).float()
        return torch.randn(batch, 3, image, image, device=device), ids.to(device), sizes.to(device)

    inputs = [make() for _ in range(2)]
    precision = "fp32, TF32 GEMMs" if device.type == "cuda" else "fp32"
    description = (
        f"OWL-ViT B/32-like: image tower ({vision[2]} layers d{vision[0]}, {image}px) + box head "
        f"beside text tower ({text[2]} layers d{text[0]}) on {QUERIES} queries/image on 2 side "
        f"streams, class head + post-processing, b{batch}, {precision}"
    )
    return Built(step, inputs, description, [vision_tower, text_tower, class_head])


if __name__ == "__main__":
    main(build, __doc__)
