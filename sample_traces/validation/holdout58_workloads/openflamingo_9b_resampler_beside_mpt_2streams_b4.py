"""OpenFlamingo-9B (Awadalla et al., 2023, after Alayrac et al.'s Flamingo, 2022) reading 4 image-
text pairs, one image and 64 text tokens each, through the first 4 of its language model's 32
layers: the CLIP ViT-L/14 vision encoder and the Perceiver Resampler on one side stream beside the
language model's first three decoder layers, which need no image, on the other, then the gated
cross-attention block and the fourth layer (fifty-eighth hold-out: two concurrent chains of unequal
weight in bf16, on one side some 490 kernels, 24 ViT layers over 4 x 257 tokens of d 1024, GEMMs of
2 to 9 GFLOP, then 6 resampler layers over 64 latents, GEMMs of 0.3 to 3 GFLOP, some 690 GFLOP in
all; on the other some 70 kernels, three MPT-7B layers over 256 token rows of d 4096, GEMMs of 9 to
34 GFLOP, some 310 GFLOP; after the join some 60 kernels on the current stream, the masked cross-
attention to the 64 visual latents, its 4096 -> 16384 -> 4096 feed-forward and the fourth layer,
some 175 GFLOP: GEMM-bound chains side by side, then a GEMM-bound tail). Laid out as mlfoundations/
open_flamingo's ``create_model_and_transforms("ViT-L-14", "openai", "anas-awadalla/mpt-7b", ...,
cross_attn_every_n_layers=4)``: ``Flamingo._encode_vision_x`` on the images (b, T_img 1, F 1, 3,
224, 224), open_clip's ViT-L/14 visual tower (``conv1`` ``Conv2d(3, 1024, 14, stride 14,
bias=False)``, the class embedding and 257 positions, ``ln_pre``, 24 pre-norm residual attention
blocks of 16 heads (``in_proj`` ``Linear(1024, 3072)``, ``F.scaled_dot_product_attention`` here,
``out_proj``), MLP 4096 with QuickGELU as the OpenAI weights use; ``ln_post`` and ``proj`` on the
class token, which Flamingo drops; its ``output_tokens``, the 256 patch tokens) then
``PerceiverResampler(dim=1024)`` (64 learned latents, depth 6, 8 heads of 64: per layer
``PerceiverAttention``, LayerNorms on the media and the latents, ``to_q`` on the latents, ``to_kv``
on the media and latents concatenated, q scaled, the explicit einsum similarity minus its row
maximum, softmax, einsum, ``to_out``, residual; ``FeedForward`` LayerNorm, ``Linear(1024, 4096,
bias=False)``, GELU, ``Linear(4096, 1024, bias=False)``, residual; the final LayerNorm) to (4, 1,
64, 1024); MPT-7B's decoder (d 4096, 32 heads, no biases, LayerNorms without bias, ALiBi with
``alibi_bias_max`` 8, ``attn_impl="torch"``: ``Wqkv`` ``Linear(4096, 12288)``, the explicit q k^T
times 1/sqrt(128), plus the ALiBi bias, the causal mask filled with the dtype's minimum, softmax,
the product with v, ``out_proj``; FFN ``Linear(4096, 16384)``, GELU, ``Linear(16384, 4096)``), each
``FlamingoLayer`` running its ``GatedCrossAttentionBlock`` (dim 4096, ``dim_visual`` 1024, 8 heads
of 64, ``only_attend_immediate_media``) before the decoder layer where (index + 1) % 4 == 0, here
before the fourth. Side stream 1, the vision encoder and the resampler; side stream 2, the token
embedding (``wte``, 50432 x 4096) and decoder layers 1 to 3. Fork and join are the project's
``fork_join`` (``wait_stream``, and ``record_stream`` on the branch outputs outside capture). After
the join, on the current stream: the media locations (the ids equal to the ``<image>`` token),
``MaskedCrossAttention`` (LayerNorm, ``to_q`` ``Linear(4096, 512, bias=False)``, ``to_kv``
``Linear(1024, 1024, bias=False)`` on the latents, the einsum similarity, the text time as the
cumulative count of media tokens, the mask of each token to its own image, ``masked_fill`` with
minus the dtype's maximum, the row maximum subtracted, softmax, the rows of tokens before any image
zeroed, einsum, ``to_out``) times tanh of ``attn_gate``, residual; its ``FeedForward`` (4096 ->
16384 -> 4096, no biases) times tanh of ``ff_gate``, residual; decoder layer 4; then ``norm_f`` and
the logits of each sequence's last position through the tied embedding. bf16 on a GPU, weights
included (fp32 on a CPU), eval, no gradients, random weights (torch's defaults; the two gates, which
Flamingo initializes at 0, set to 0.5, as trained gates are not zero). Inputs (two input sets): the
images (4, 1, 1, 3, 224, 224), normalized Gaussians, and the token ids (4, 64) int64, the
``<image>`` token (id 50277 here) first, the rest uniform below it. Returns the next-token logits
(4, 50432).

    traceinspect profile openflamingo_9b_resampler_beside_mpt_2streams_b4.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

MEDIA_TOKEN, EVERY, ALIBI_MAX, GATE = 50277, 4, 8, 0.5


class ResidualAttentionBlock(nn.Module):
    """open_clip's pre-norm block with QuickGELU."""

    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.ln_1, self.ln_2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.in_proj, self.out_proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.c_fc, self.c_proj = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x: Tensor) -> Tensor:
        b, n, d = x.shape
        qkv = self.in_proj(self.ln_1(x)).view(b, n, 3, self.heads, d // self.heads)
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)
        attn = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, n, d)
        x = x + self.out_proj(attn)
        h = self.c_fc(self.ln_2(x))
        return x + self.c_proj(h * torch.sigmoid(1.702 * h))


class VisionTransformer(nn.Module):
    def __init__(self, d: int, heads: int, depth: int, image: int, patch: int, out: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, d, patch, stride=patch, bias=False)
        scale = d**-0.5
        self.class_embedding = nn.Parameter(scale * torch.randn(d))
        self.positional_embedding = nn.Parameter(scale * torch.randn((image // patch) ** 2 + 1, d))
        self.ln_pre, self.ln_post = nn.LayerNorm(d), nn.LayerNorm(d)
        self.blocks = nn.ModuleList(ResidualAttentionBlock(d, heads) for _ in range(depth))
        self.proj = nn.Parameter(scale * torch.randn(d, out))

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        x = self.conv1(x).flatten(2).transpose(1, 2)
        cls = self.class_embedding.view(1, 1, -1).expand(x.shape[0], 1, -1).to(x.dtype)
        x = torch.cat((cls, x), dim=1) + self.positional_embedding.to(x.dtype)
        x = self.ln_pre(x)
        for block in self.blocks:
            x = block(x)
        pooled, tokens = x[:, 0], x[:, 1:]
        return self.ln_post(pooled) @ self.proj, tokens


def feed_forward(d: int, mult: int = 4) -> nn.Sequential:
    return nn.Sequential(
        nn.LayerNorm(d), nn.Linear(d, mult * d, bias=False), nn.GELU(),
        nn.Linear(mult * d, d, bias=False),
    )  # fmt: skip


class PerceiverAttention(nn.Module):
    def __init__(self, d: int, dim_head: int, heads: int) -> None:
        super().__init__()
        self.heads, self.scale = heads, dim_head**-0.5
        self.norm_media, self.norm_latents = nn.LayerNorm(d), nn.LayerNorm(d)
        self.to_q = nn.Linear(d, dim_head * heads, bias=False)
        self.to_kv = nn.Linear(d, 2 * dim_head * heads, bias=False)
        self.to_out = nn.Linear(dim_head * heads, d, bias=False)

    def forward(self, x: Tensor, latents: Tensor) -> Tensor:
        x, latents = self.norm_media(x), self.norm_latents(latents)
        b, t, n = latents.shape[:3]
        q = self.to_q(latents)
        k, v = self.to_kv(torch.cat((x, latents), dim=-2)).chunk(2, dim=-1)
        q, k, v = (z.unflatten(-1, (self.heads, -1)).permute(0, 3, 1, 2, 4) for z in (q, k, v))
        sim = torch.einsum("...id,...jd->...ij", q * self.scale, k)
        sim = sim - sim.amax(dim=-1, keepdim=True)
        out = torch.einsum("...ij,...jd->...id", sim.softmax(dim=-1), v)
        return self.to_out(out.permute(0, 2, 3, 1, 4).reshape(b, t, n, -1))


class PerceiverResampler(nn.Module):
    def __init__(self, d: int, depth: int, dim_head: int, heads: int, latents: int) -> None:
        super().__init__()
        self.latents = nn.Parameter(torch.randn(latents, d))
        self.layers = nn.ModuleList(
            nn.ModuleList([PerceiverAttention(d, dim_head, heads), feed_forward(d)])
            for _ in range(depth)
        )
        self.norm = nn.LayerNorm(d)

    def forward(self, x: Tensor) -> Tensor:
        b, t = x.shape[:2]
        x = x.flatten(2, 3)  # b T (F v) d
        latents = self.latents.view(1, 1, *self.latents.shape).expand(b, t, -1, -1)
        for attn, ff in self.layers:
            latents = attn(x, latents) + latents
            latents = ff(latents) + latents
        return self.norm(latents)


class MaskedCrossAttention(nn.Module):
    def __init__(self, d: int, d_visual: int, dim_head: int, heads: int) -> None:
        super().__init__()
        self.heads, self.scale = heads, dim_head**-0.5
        self.norm = nn.LayerNorm(d)
        self.to_q = nn.Linear(d, dim_head * heads, bias=False)
        self.to_kv = nn.Linear(d_visual, 2 * dim_head * heads, bias=False)
        self.to_out = nn.Linear(dim_head * heads, d, bias=False)

    def forward(self, x: Tensor, media: Tensor, media_locations: Tensor) -> Tensor:
        b, t_img, n = media.shape[:3]
        q = self.to_q(self.norm(x))
        k, v = self.to_kv(media.flatten(1, 2)).chunk(2, dim=-1)
        q, k, v = (z.unflatten(-1, (self.heads, -1)).transpose(1, 2) for z in (q, k, v))
        sim = torch.einsum("...id,...jd->...ij", q * self.scale, k)
        media_time = torch.arange(t_img, device=x.device) + 1
        text_time = media_locations.cumsum(dim=-1)
        mask = torch.eq(text_time[:, None, :, None], media_time.repeat_interleave(n)[None, None])
        sim = sim.masked_fill(~mask, -torch.finfo(sim.dtype).max)
        sim = sim - sim.amax(dim=-1, keepdim=True)
        attn = sim.softmax(dim=-1).masked_fill((text_time == 0)[:, None, :, None], 0.0)
        out = torch.einsum("...ij,...jd->...id", attn, v)
        return self.to_out(out.transpose(1, 2).flatten(2))


class GatedCrossAttentionBlock(nn.Module):
    def __init__(self, d: int, d_visual: int, dim_head: int, heads: int) -> None:
        super().__init__()
        self.attn = MaskedCrossAttention(d, d_visual, dim_head, heads)
        self.attn_gate = nn.Parameter(torch.tensor([GATE]))
        self.ff = feed_forward(d)
        self.ff_gate = nn.Parameter(torch.tensor([GATE]))

    def forward(self, x: Tensor, media: Tensor, media_locations: Tensor) -> Tensor:
        x = self.attn(x, media, media_locations) * self.attn_gate.tanh() + x
        return self.ff(x) * self.ff_gate.tanh() + x


class MPTBlock(nn.Module):
    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.norm_1, self.norm_2 = nn.LayerNorm(d, bias=False), nn.LayerNorm(d, bias=False)
        self.Wqkv = nn.Linear(d, 3 * d, bias=False)  # noqa: N815 - MPT's name
        self.out_proj = nn.Linear(d, d, bias=False)
        self.up_proj, self.down_proj = nn.Linear(d, 4 * d, bias=False), nn.Linear(4 * d, d, False)

    def forward(self, x: Tensor, alibi: Tensor) -> Tensor:
        b, s, d = x.shape
        q, k, v = self.Wqkv(self.norm_1(x)).chunk(3, dim=2)
        q = q.view(b, s, self.heads, -1).transpose(1, 2)
        k = k.view(b, s, self.heads, -1).permute(0, 2, 3, 1)
        v = v.view(b, s, self.heads, -1).transpose(1, 2)
        attn_weight = q.matmul(k) * (1 / math.sqrt(d // self.heads))
        attn_weight = attn_weight + alibi[:, :, :, -s:]
        causal = ~attn_weight.new_ones(s, s, dtype=torch.float32).tril().to(torch.bool)
        attn_weight = attn_weight.masked_fill(causal.view(1, 1, s, s), torch.finfo(q.dtype).min)
        out = torch.softmax(attn_weight, dim=-1).matmul(v)
        x = x + self.out_proj(out.transpose(1, 2).reshape(b, s, d))
        return x + self.down_proj(F.gelu(self.up_proj(self.norm_2(x))))


def alibi_bias(heads: int, length: int) -> Tensor:
    """MPT's build_alibi_bias (full=False): (1, heads, 1, length)."""
    slopes = 1.0 / torch.pow(2, torch.arange(1, heads + 1) * (ALIBI_MAX / heads))
    return torch.arange(1 - length, 1).view(1, 1, 1, length) * slopes.view(1, heads, 1, 1)


class Flamingo(nn.Module):
    def __init__(self, vit: tuple[int, ...], lm: tuple[int, int, int, int], resampler: int) -> None:
        super().__init__()
        d_vis = vit[0]
        d, heads, layers, vocab = lm
        self.vision_encoder = VisionTransformer(*vit)
        self.perceiver = PerceiverResampler(d_vis, resampler, 64, 8, 64)
        self.wte = nn.Embedding(vocab, d)
        self.blocks = nn.ModuleList(MPTBlock(d, heads) for _ in range(layers))
        self.gated = nn.ModuleDict(
            {
                str(i): GatedCrossAttentionBlock(d, d_vis, 64, 8)
                for i in range(layers)
                if (i + 1) % EVERY == 0
            }
        )
        self.norm_f = nn.LayerNorm(d, bias=False)
        self.heads = heads

    def encode_vision(self, vision_x: Tensor) -> Tensor:
        b, t, f = vision_x.shape[:3]
        _, tokens = self.vision_encoder(vision_x.flatten(0, 2))
        return self.perceiver(tokens.view(b, t, f, *tokens.shape[1:]))


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, text, image, vit, lm, resampler = (
            2,
            8,
            28,
            (32, 2, 2, 28, 14, 16),
            (64, 4, 4, 500),
            2,
        )
    else:
        batch, text, image = 4, 64, 224
        vit, lm, resampler = (1024, 16, 24, 224, 14, 768), (4096, 32, 4, 50432), 6
    media_token = min(MEDIA_TOKEN, lm[3] - 1)
    dtype = low_precision(device)
    model = Flamingo(vit, lm, resampler).to(device=device, dtype=dtype).eval()
    alibi = alibi_bias(lm[1], text).to(device=device, dtype=dtype)
    split = EVERY - 1  # decoder layers before the first cross-attention block
    streams = side_streams(device, 2)

    def text_branch(lang_x: Tensor) -> Tensor:
        x = model.wte(lang_x)
        for block in model.blocks[:split]:
            x = block(x, alibi)
        return x

    @torch.no_grad()
    def step(vision_x: Tensor, lang_x: Tensor) -> Tensor:
        media, x = fork_join(
            device,
            streams,
            [lambda: model.encode_vision(vision_x), lambda: text_branch(lang_x)],
        )
        media_locations = lang_x == media_token
        for i in range(split, len(model.blocks)):
            if str(i) in model.gated:
                x = model.gated[str(i)](x, media, media_locations)
            x = model.blocks[i](x, alibi)
        return F.linear(model.norm_f(x[:, -1]), model.wte.weight)

    def make() -> tuple[Tensor, Tensor]:
        ids = torch.randint(0, media_token, (batch, text), device=device)
        ids[:, 0] = media_token
        images = torch.randn(batch, 1, 1, 3, image, image, device=device, dtype=dtype)
        return images, ids

    inputs = [make() for _ in range(2)]
    precision = str(dtype).removeprefix("torch.")
    description = (
        f"OpenFlamingo-9B-like: CLIP ViT ({vit[2]} layers d{vit[0]}) + Perceiver resampler "
        f"({resampler} layers) beside MPT layers 1-{split} (d{lm[0]}) on 2 side streams, then "
        f"gated xattn + layer {split + 1}, {batch} x {text} tokens, {precision}"
    )
    return Built(step, inputs, description, [model, alibi])


if __name__ == "__main__":
    main(build, __doc__)
