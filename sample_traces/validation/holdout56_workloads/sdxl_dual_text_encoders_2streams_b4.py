"""Stable Diffusion XL's prompt encoding (Podell et al., 2023) for a batch of 4 prompts, its two
text encoders side by side, CLIP ViT-L/14's text transformer on one side stream and OpenCLIP
ViT-bigG/14's on the other (fifty-sixth hold-out: two concurrent chains of unequal weight, 12 layers
of d 768 beside 32 layers of d 1280, some 13 to 15 kernels a layer, fp16 GEMMs over 308 token rows,
the largest bigG's MLP 1280 -> 5120 -> 1280 at 4 GFLOP each, small attentions over 77 tokens with an
additive causal mask, LayerNorms, CLIP-L's three-kernel quick GELU; the short chain launch-bound,
the long one mostly GEMM-bound). Laid out as diffusers' ``StableDiffusionXLPipeline.encode_prompt``
calls Hugging Face's ``CLIPTextModel`` (``text_encoder``) and ``CLIPTextModelWithProjection``
(``text_encoder_2``) with ``output_hidden_states=True``: each model, the token embedding (49408
entries) plus the 77 learned position embeddings, then pre-norm layers of ``CLIPEncoderLayer``:
LayerNorm, ``CLIPAttention`` (separate ``q_proj``, ``k_proj``, ``v_proj`` ``Linear(d, d)``,
``F.scaled_dot_product_attention`` with the additive causal mask of
``_create_4d_causal_attention_mask``, the dtype's minimum above the diagonal, ``out_proj``), the
residual, LayerNorm, ``CLIPMLP`` (``fc1``, the activation, ``fc2``), the residual; the final
LayerNorm on the last layer's output and the pooled output, its row at each prompt's end-of-text
token (found as the argmax of the ids, CLIP's legacy rule: end-of-text, 49407, is the largest id),
both computed by each model's forward whether the pipeline uses them or not. ``text_encoder``: d
768, 12 heads, MLP 3072, quick GELU (x sigmoid(1.702 x)), 12 layers; ``text_encoder_2``: d 1280, 20
heads, MLP 5120, GELU, 32 layers, and its pooled output through ``text_projection`` (``Linear(1280,
1280, bias=False)``), the pooled prompt embeddings. The pipeline keeps each encoder's penultimate
hidden state (``hidden_states[-2]``, the output of layer 11 of 12 and 31 of 32; every layer still
runs). Side stream 1, ``text_encoder``; side stream 2, ``text_encoder_2``. Fork and join are the
project's ``fork_join`` (``wait_stream``, and ``record_stream`` on the branch outputs outside
capture). After the join, on the current stream: the two penultimate states concatenated over the
features, the prompt embeddings (4, 77, 2048). fp16 on a GPU, weights included, as SDXL pipelines
load them (``torch_dtype=torch.float16``; fp32 on a CPU), eval, no gradients, random weights
(torch's defaults). Inputs (two input sets): the two tokenizers' ids (4, 77) int64 each,
start-of-text (49406), 8 to 60 random tokens, end-of-text (49407), then padding, end-of-text again
for CLIP-L's tokenizer and 0 ("!") for bigG's. Returns the prompt embeddings (4, 77, 2048) and the
pooled prompt embeddings (4, 1280).

    traceinspect profile sdxl_dual_text_encoders_2streams_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

VOCAB, CONTEXT, BOS, EOS = 49408, 77, 49406, 49407


def quick_gelu(x: Tensor) -> Tensor:
    return x * torch.sigmoid(1.702 * x)


class CLIPEncoderLayer(nn.Module):
    def __init__(self, d: int, heads: int, act: str) -> None:
        super().__init__()
        self.heads = heads
        self.layer_norm1, self.layer_norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.q_proj, self.k_proj, self.v_proj = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.out_proj = nn.Linear(d, d)
        self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.act = quick_gelu if act == "quick_gelu" else F.gelu

    def forward(self, x: Tensor, mask: Tensor) -> Tensor:
        b, n, d = x.shape
        h = self.layer_norm1(x)
        q, k, v = (
            p(h).view(b, n, self.heads, -1).transpose(1, 2)
            for p in (self.q_proj, self.k_proj, self.v_proj)
        )
        attn = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        x = x + self.out_proj(attn.transpose(1, 2).reshape(b, n, d))
        return x + self.fc2(self.act(self.fc1(self.layer_norm2(x))))


class CLIPTextModel(nn.Module):
    """HF's CLIPTextModel(WithProjection): embeddings, layers, final LayerNorm (+ projection)."""

    def __init__(
        self,
        vocab: int,
        context: int,
        d: int,
        heads: int,
        layers: int,
        act: str,
        project: bool,
        dtype: torch.dtype,
    ) -> None:
        super().__init__()
        self.token_embedding = nn.Embedding(vocab, d)
        self.position_embedding = nn.Embedding(context, d)
        self.layers = nn.ModuleList(CLIPEncoderLayer(d, heads, act) for _ in range(layers))
        self.final_layer_norm = nn.LayerNorm(d)
        self.text_projection = nn.Linear(d, d, bias=False) if project else None
        self.register_buffer("position_ids", torch.arange(context)[None])
        causal = torch.full((context, context), torch.finfo(dtype).min, dtype=dtype).triu(1)
        self.register_buffer("causal_mask", causal[None, None])

    def forward(self, ids: Tensor) -> tuple[Tensor, Tensor]:
        """The penultimate hidden state and the pooled output (projected, with a projection)."""
        x = self.token_embedding(ids) + self.position_embedding(self.position_ids)
        penultimate = x
        for i, layer in enumerate(self.layers):
            x = layer(x, self.causal_mask)
            if i == len(self.layers) - 2:
                penultimate = x
        last = self.final_layer_norm(x)
        pooled = last[torch.arange(last.shape[0], device=ids.device), ids.argmax(dim=-1)]
        if self.text_projection is not None:
            pooled = self.text_projection(pooled)
        return penultimate, pooled


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, vocab, context, large, big_g = 2, VOCAB, 16, (32, 2, 2), (48, 3, 3)
    else:
        batch, vocab, context, large, big_g = 4, VOCAB, CONTEXT, (768, 12, 12), (1280, 20, 32)
    dtype = torch.float16 if device.type == "cuda" else torch.float32
    text_encoder = CLIPTextModel(vocab, context, *large, "quick_gelu", False, dtype)
    text_encoder_2 = CLIPTextModel(vocab, context, *big_g, "gelu", True, dtype)
    text_encoder = text_encoder.to(device=device, dtype=dtype).eval()
    text_encoder_2 = text_encoder_2.to(device=device, dtype=dtype).eval()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(ids_1: Tensor, ids_2: Tensor) -> tuple[Tensor, Tensor]:
        (h_1, _), (h_2, pooled) = fork_join(
            device, streams, [lambda: text_encoder(ids_1), lambda: text_encoder_2(ids_2)]
        )
        return torch.cat((h_1, h_2), dim=-1), pooled

    def make() -> tuple[Tensor, Tensor]:
        lengths = torch.randint(min(8, context - 3), min(61, context - 1), (batch,))
        ids_1 = torch.full((batch, context), EOS, dtype=torch.long)
        ids_2 = torch.zeros((batch, context), dtype=torch.long)
        for row, n in enumerate(lengths.tolist()):
            words = torch.randint(1, BOS, (n,))
            for ids in (ids_1, ids_2):
                ids[row, 0], ids[row, 1 : n + 1], ids[row, n + 1] = BOS, words, EOS
        return ids_1.to(device), ids_2.to(device)

    inputs = [make() for _ in range(2)]
    precision = str(dtype).removeprefix("torch.")
    description = (
        f"SDXL encode_prompt: CLIP-L text ({large[2]} layers d{large[0]}) beside OpenCLIP bigG "
        f"text ({big_g[2]} layers d{big_g[0]}, pooled + projection) on 2 side streams, "
        f"penultimate states concatenated, {batch} prompts x {context} tokens, {precision}"
    )
    return Built(step, inputs, description, [text_encoder, text_encoder_2])


if __name__ == "__main__":
    main(build, __doc__)
