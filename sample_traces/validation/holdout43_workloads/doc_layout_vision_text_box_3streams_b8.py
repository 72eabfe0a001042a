"""Form understanding in a LayoutLM-like layout (a document page's image, its OCR words and their
bounding boxes, fused to tag every word as a FUNSD entity), the three encoders on three side
streams, the fusion after the join (forty-third hold-out): 8 pages of 3 x 512 x 384 with 512
OCR words each, d 256, 7 labels (BIO over header, question and answer, and O), bf16 on a GPU
(the log-softmax in fp32), eval mode, no gradients, every BatchNorm in eval mode with running
statistics set at build. Image branch, on side stream 1: 4 of the shared
``_blocks.conv_bn_relu`` (stride-2 3 x 3 ``Conv2d`` without bias + BatchNorm + ReLU) 3 -> 32
(256 x 192), 32 -> 64 (128 x 96), 64 -> 128 (64 x 48), 128 -> 256 (32 x 24), cuDNN's
convolutions; a 1 x 1 ``Conv2d(256, 256)``; flattened to 768 visual tokens, + a learned position
embedding, (8, 768, 256). Text branch, on side stream 2: ``Embedding(30522, 256)`` of the words
+ a learned position embedding (512, 256); 2 layers of the shared ``_blocks.PreNormAttention``
(x + attention(LayerNorm(x)), ``Linear(256, 768)`` to q, k, v of 4 heads of 64,
``F.scaled_dot_product_attention`` over the 512 words, ``Linear(256, 256)``) and
``_blocks.ResidualMLP`` (x + ``Linear(1024, 256)``(GELU(``Linear(256, 1024)``(LayerNorm(x))))),
(8, 512, 256). Layout branch, on side stream 3: the boxes (x0, y0, x1, y1, normalized to
[0, 1]) with their width and height, (8, 512, 6), through the shared ``_blocks.mlp_tower``
``Linear(6, 256)`` + GELU + ``Linear(256, 256)``, (8, 512, 256). Fork and join are the
project's ``fork_join`` (``wait_stream``, and ``record_stream`` on the branch outputs outside
capture). After the join, on the current stream: text + layout; one cross-attention block,
the shared ``_blocks.PreNormAttention`` in its cross form (the words' queries ``Linear(256,
256)``, the visual tokens' keys and values ``Linear(256, 512)`` after their own LayerNorm, 4
heads, SDPA of 512 queries over 768 keys); ``_blocks.ResidualMLP``; a final LayerNorm and
``Linear(256, 7)``; the log-softmax over the labels in fp32. On a CPU the branches run in
order. Inputs: the page images (8, 3, 512, 384), the word ids (8, 512) int64, the boxes (8,
512, 4) in [0, 1]. Returns the per-word label log-probabilities (8, 512, 7), fp32.

    traceinspect profile doc_layout_vision_text_box_3streams_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _blocks import PreNormAttention, ResidualMLP, conv_bn_relu, mlp_tower
from _common import Built, low_precision, main
from _models import random_batch_norm_stats
from _streams import fork_join, side_streams
from torch import Tensor, nn

LABELS, TEXT_LAYERS = 7, 2


class PageEncoder(nn.Module):
    def __init__(self, width: int, d: int, tokens: int) -> None:
        super().__init__()
        widths = (width, 2 * width, 4 * width, 8 * width)
        self.convs = nn.Sequential(
            *(
                conv_bn_relu(cin, cout, 2)
                for cin, cout in zip((3, *widths[:-1]), widths, strict=True)
            ),
            nn.Conv2d(widths[-1], d, 1),
        )
        self.pos = nn.Parameter(torch.randn(tokens, d) * 0.02)

    def forward(self, page: Tensor) -> Tensor:
        return self.convs(page).flatten(2).transpose(1, 2) + self.pos  # (b, tokens, d)


class TextEncoder(nn.Module):
    def __init__(self, vocab: int, d: int, heads: int, words: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(words, d) * 0.02)
        self.attn = nn.ModuleList(PreNormAttention(d, heads) for _ in range(TEXT_LAYERS))
        self.mlp = nn.ModuleList(ResidualMLP(d, 4 * d) for _ in range(TEXT_LAYERS))

    def forward(self, words: Tensor) -> Tensor:
        x = self.embed(words) + self.pos
        for attn, mlp in zip(self.attn, self.mlp, strict=True):
            x = mlp(attn(x))
        return x


class LayoutEncoder(nn.Module):
    def __init__(self, d: int) -> None:
        super().__init__()
        self.mlp = mlp_tower([6, d, d], nn.GELU)

    def forward(self, boxes: Tensor) -> Tensor:  # (b, words, 4): x0, y0, x1, y1
        size = boxes[..., 2:] - boxes[..., :2]
        return self.mlp(torch.cat([boxes, size], dim=-1))


class Fusion(nn.Module):
    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.cross = PreNormAttention(d, heads, cross=True, norm_context=True)
        self.mlp = ResidualMLP(d, 4 * d)
        self.norm, self.out = nn.LayerNorm(d), nn.Linear(d, LABELS)

    def forward(self, words: Tensor, visual: Tensor) -> Tensor:
        x = self.mlp(self.cross(words, visual))
        return self.out(self.norm(x))


def build(device: torch.device, smoke: bool) -> Built:
    batch, height, width_px, words, vocab, width, d, heads = (
        (2, 32, 32, 8, 50, 4, 16, 2) if smoke else (8, 512, 384, 512, 30522, 32, 256, 4)
    )
    dtype = low_precision(device)
    tokens = (height // 16) * (width_px // 16)
    page = PageEncoder(width, d, tokens)
    text = TextEncoder(vocab, d, heads, words)
    layout = LayoutEncoder(d)
    fusion = Fusion(d, heads)
    model = nn.ModuleList([page, text, layout, fusion])
    random_batch_norm_stats(model)
    model = model.to(device, dtype).eval()
    streams = side_streams(device, 3)

    @torch.no_grad()
    def step(images: Tensor, word_ids: Tensor, boxes: Tensor) -> Tensor:
        visual, t, lay = fork_join(
            device,
            streams,
            [lambda: page(images), lambda: text(word_ids), lambda: layout(boxes)],
        )
        return fusion(t + lay, visual).float().log_softmax(dim=-1)

    inputs = []
    for _ in range(2):
        corner = torch.rand(batch, words, 2, device=device) * 0.9
        extent = torch.rand(batch, words, 2, device=device) * 0.1
        inputs.append(
            (
                torch.randn(batch, 3, height, width_px, device=device, dtype=dtype),
                torch.randint(0, vocab, (batch, words), device=device),
                torch.cat([corner, corner + extent], dim=-1).to(dtype),
            )
        )
    return Built(
        step,
        inputs,
        f"document layout tagging: 4-conv page CNN ({tokens} visual tokens), {TEXT_LAYERS}-layer "
        f"text encoder d{d} ({words} words) and box MLP on 3 side streams + cross-attention "
        f"fusion, {LABELS} labels, b{batch}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
