"""A video-language matching step: a 3D-convolution video encoder beside a BERT-style text
encoder on two side streams, then a cross-attention fusion layer, the video-text matching
(ITM) head and the contrastive similarities after the join (thirty-ninth hold-out): 4
clip-caption pairs, clips of 8 frames of 3 x 112 x 112 and captions of 32 tokens, bf16 on a
GPU (the heads' softmax and normalization in fp32), eval mode, no gradients. Video branch, on
one side stream: ``Conv3d(3, 64, (3, 7, 7), stride (1, 2, 2), padding (1, 3, 3),
bias=False)`` + BatchNorm3d + ReLU and ``MaxPool3d((1, 3, 3), (1, 2, 2), (0, 1, 1))`` (to 64
x 8 x 28 x 28), two 3D basic blocks at 64 channels (``Conv3d(3 x 3 x 3, padding 1,
bias=False)`` + BatchNorm3d + ReLU, the same + BatchNorm3d, the residual add and a ReLU), a
tubelet projection ``Conv3d(64, 512, (2, 4, 4), stride (2, 4, 4))`` to 4 x 7 x 7 = 196
tokens of 512, plus a learned (196, 512) position embedding and a LayerNorm (BatchNorms in
eval mode, running statistics set at build). Text branch, on the other: the token ids through
``nn.Embedding(30522, 512)`` plus a learned (32, 512) position embedding and a LayerNorm, then
4 post-norm BERT layers (d 512, 8 heads, FFN 2048, GELU: fused QKV ``Linear(512, 1536)``,
``F.scaled_dot_product_attention``, ``Linear(512, 512)``, residual add, LayerNorm;
``Linear(512, 2048)``, GELU, ``Linear(2048, 512)``, residual add, LayerNorm). Fork and join
are the project's ``fork_join`` (``wait_stream``, and ``record_stream`` on the branch outputs
outside capture). After the join, on the current stream: one post-norm fusion layer, the 32
text states attending to the 196 video tokens (``Linear(512, 512)`` queries, ``Linear(512,
1024)`` keys and values, 8 heads, SDPA, ``Linear(512, 512)``, residual, LayerNorm, then the
same FFN as the text layers); the ITM head ``Linear(512, 2)`` on the first (CLS) fused state
and its softmax in fp32; and the contrastive part: the video tokens' mean and the text CLS
state each through ``Linear(512, 256)``, L2-normalized in fp32, the (4, 4) similarities
divided by the temperature 0.07. On a CPU the branches run in order. Inputs: clips (4, 3, 8,
112, 112), token ids (4, 32) int64. Returns the ITM probabilities (4, 2) and the video-text
similarity logits (4, 4), fp32.

    traceinspect profile video_text_itm_3dconv_2streams_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

TUBELET, TEMPERATURE, VOCAB = (2, 4, 4), 0.07, 30522


def conv3d_bn(
    cin: int, cout: int, kernel: tuple[int, int, int], stride: tuple[int, int, int] = (1, 1, 1)
) -> list[nn.Module]:
    padding = tuple(k // 2 for k in kernel)
    return [nn.Conv3d(cin, cout, kernel, stride, padding, bias=False), nn.BatchNorm3d(cout)]


class BasicBlock3d(nn.Module):
    def __init__(self, c: int) -> None:
        super().__init__()
        self.body = nn.Sequential(
            *conv3d_bn(c, c, (3, 3, 3)), nn.ReLU(), *conv3d_bn(c, c, (3, 3, 3))
        )

    def forward(self, x: Tensor) -> Tensor:
        return F.relu(self.body(x) + x)


class VideoEncoder(nn.Module):
    def __init__(self, c: int, d: int, tokens: int) -> None:
        super().__init__()
        self.stem = nn.Sequential(
            *conv3d_bn(3, c, (3, 7, 7), (1, 2, 2)), nn.ReLU(),
            nn.MaxPool3d((1, 3, 3), (1, 2, 2), (0, 1, 1)),
        )  # fmt: skip
        self.blocks = nn.Sequential(BasicBlock3d(c), BasicBlock3d(c))
        self.tubelet = nn.Conv3d(c, d, TUBELET, TUBELET)
        self.pos = nn.Parameter(torch.randn(tokens, d) * 0.02)
        self.norm = nn.LayerNorm(d)

    def forward(self, clip: Tensor) -> Tensor:
        x = self.tubelet(self.blocks(self.stem(clip)))  # (b, d, t, h, w)
        return self.norm(x.flatten(2).transpose(1, 2) + self.pos)


class PostNormLayer(nn.Module):
    """BERT's post-norm layer; given ``memory``, cross-attention (keys / values from it)."""

    def __init__(self, d: int, heads: int, cross: bool = False) -> None:
        super().__init__()
        self.heads = heads
        if cross:
            self.q, self.kv = nn.Linear(d, d), nn.Linear(d, 2 * d)
        else:
            self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.norm1 = nn.LayerNorm(d)
        self.up, self.down = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.norm2 = nn.LayerNorm(d)

    def split(self, t: Tensor) -> Tensor:
        b, s, d = t.shape
        return t.view(b, s, self.heads, d // self.heads).transpose(1, 2)

    def forward(self, x: Tensor, memory: Tensor | None = None) -> Tensor:
        if memory is None:
            q, k, v = self.qkv(x).chunk(3, dim=-1)
        else:
            q, (k, v) = self.q(x), self.kv(memory).chunk(2, dim=-1)
        att = F.scaled_dot_product_attention(self.split(q), self.split(k), self.split(v))
        x = self.norm1(x + self.proj(att.transpose(1, 2).flatten(2)))
        return self.norm2(x + self.down(F.gelu(self.up(x))))


class TextEncoder(nn.Module):
    def __init__(self, vocab: int, seq: int, d: int, heads: int, layers: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(seq, d) * 0.02)
        self.norm = nn.LayerNorm(d)
        self.layers = nn.Sequential(*(PostNormLayer(d, heads) for _ in range(layers)))

    def forward(self, ids: Tensor) -> Tensor:
        return self.layers(self.norm(self.embed(ids) + self.pos))


def build(device: torch.device, smoke: bool) -> Built:
    batch, frames, size, c, d, heads, layers, seq, vocab, proj = (
        (2, 4, 32, 8, 32, 4, 2, 8, 100, 16) if smoke else (4, 8, 112, 64, 512, 8, 4, 32, VOCAB, 256)
    )
    dtype = low_precision(device)
    tokens = (frames // TUBELET[0]) * (size // 4 // TUBELET[1]) ** 2
    video = VideoEncoder(c, d, tokens)
    text = TextEncoder(vocab, seq, d, heads, layers)
    fusion = PostNormLayer(d, heads, cross=True)
    itm_head = nn.Linear(d, 2)
    video_proj, text_proj = nn.Linear(d, proj), nn.Linear(d, proj)
    model = nn.ModuleList([video, text, fusion, itm_head, video_proj, text_proj])
    for m in model.modules():
        if isinstance(m, nn.BatchNorm3d):
            m.running_mean.normal_(0, 0.1)
            m.running_var.uniform_(0.5, 1.5)
    model.to(device, dtype).eval()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(clip: Tensor, ids: Tensor) -> tuple[Tensor, Tensor]:
        vid, txt = fork_join(device, streams, [lambda: video(clip), lambda: text(ids)])
        fused = fusion(txt, vid)
        itm = itm_head(fused[:, 0]).float().softmax(dim=-1)
        v = F.normalize(video_proj(vid.mean(dim=1)).float(), dim=-1)
        t = F.normalize(text_proj(txt[:, 0]).float(), dim=-1)
        return itm, v @ t.T / TEMPERATURE

    inputs = [
        (
            torch.randn(batch, 3, frames, size, size, device=device, dtype=dtype),
            torch.randint(0, vocab, (batch, seq), device=device),
        )
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"video-text ITM: 3D-conv video encoder ({tokens} tubelet tokens) and {layers}-layer "
        f"BERT text encoder on 2 side streams + cross-attention fusion + ITM / contrastive "
        f"heads, b{batch}, {frames} frames at {size}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
