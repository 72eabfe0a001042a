"""ECAPA-TDNN speaker embedding and identification (Desplanques et al., 2020, laid out as
SpeechBrain's ``ECAPA_TDNN`` with channels 512 / 512 / 512 / 512 / 1536) for 16 three-second
utterances (thirty-ninth hold-out): 300 frames of 80 log-mel filterbanks each, bf16 on a GPU
(the pooling statistics and the scoring in fp32), eval mode, no gradients. Every TDNN block is
a ``Conv1d`` with "same" reflect padding (``padding_mode="reflect"``), a ReLU and a BatchNorm1d
(eval, running statistics set at build). The first block 80 -> 512, kernel 5. Three SE-Res2Net
blocks, kernel 3 and dilation 2, 3 and 4: a 1 x 1 TDNN block 512 -> 512; the Res2Net part, the
channels split into 8 groups of 64, the first kept, the second through a TDNN block 64 -> 64,
each later one added to the previous group's output before its own; a 1 x 1 TDNN block; the
squeeze-excitation (the mean over time, ``Conv1d(512, 128, 1)`` + ReLU, ``Conv1d(128, 512, 1)``
+ sigmoid, the channels scaled); the residual add. The multi-layer feature aggregation: the
three blocks' outputs concatenated (1,536 channels) and a 1 x 1 TDNN block 1536 -> 1536.
Attentive statistics pooling with global context (the statistics, the softmax and the sums in
fp32, the two convolutions in bf16): the mean and standard deviation over the 300 frames,
concatenated to every frame (4,608 channels), a 1 x 1 TDNN block 4608 -> 128, tanh,
``Conv1d(128, 1536, 1)``, a softmax over time, and the attention-weighted mean and standard
deviation (sqrt of the weighted variance clamped at 1e-12), (16, 3072). Then, in bf16,
BatchNorm1d(3072) and ``Conv1d(3072, 192, 1)`` to the embeddings. Identification against an
enrolled bank of 1,211 speakers (VoxCeleb1's dev speakers; (1211, 192) unit vectors made at
build): the cosine scores of the L2-normalized embeddings and their top 5 (``topk``). Input:
the filterbanks (16, 300, 80). Returns the embeddings (16, 192), the top-5 scores (16, 5),
fp32, and the top-5 speaker ids (16, 5) int64.

    traceinspect profile ecapa_tdnn_speaker_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

SCALE, DILATIONS, ATTENTION, EMBED, SPEAKERS, TOP = 8, (2, 3, 4), 128, 192, 1211, 5


class TDNNBlock(nn.Module):
    def __init__(self, cin: int, cout: int, kernel: int, dilation: int = 1) -> None:
        super().__init__()
        self.conv = nn.Conv1d(
            cin, cout, kernel, dilation=dilation, padding=dilation * (kernel - 1) // 2,
            padding_mode="reflect" if kernel > 1 else "zeros",
        )  # fmt: skip
        self.norm = nn.BatchNorm1d(cout)

    def forward(self, x: Tensor) -> Tensor:
        return self.norm(F.relu(self.conv(x)))


class Res2NetBlock(nn.Module):
    def __init__(self, c: int, kernel: int, dilation: int) -> None:
        super().__init__()
        w = c // SCALE
        self.blocks = nn.ModuleList(TDNNBlock(w, w, kernel, dilation) for _ in range(SCALE - 1))

    def forward(self, x: Tensor) -> Tensor:
        ys: list[Tensor] = []
        for i, x_i in enumerate(x.chunk(SCALE, dim=1)):
            if i == 0:
                ys.append(x_i)
            elif i == 1:
                ys.append(self.blocks[0](x_i))
            else:
                ys.append(self.blocks[i - 1](x_i + ys[-1]))
        return torch.cat(ys, dim=1)


class SEBlock(nn.Module):
    def __init__(self, c: int, se: int) -> None:
        super().__init__()
        self.conv1, self.conv2 = nn.Conv1d(c, se, 1), nn.Conv1d(se, c, 1)

    def forward(self, x: Tensor) -> Tensor:
        s = torch.sigmoid(self.conv2(F.relu(self.conv1(x.mean(dim=2, keepdim=True)))))
        return x * s


class SERes2NetBlock(nn.Module):
    def __init__(self, c: int, kernel: int, dilation: int, se: int) -> None:
        super().__init__()
        self.body = nn.Sequential(
            TDNNBlock(c, c, 1), Res2NetBlock(c, kernel, dilation), TDNNBlock(c, c, 1),
            SEBlock(c, se),
        )  # fmt: skip

    def forward(self, x: Tensor) -> Tensor:
        return self.body(x) + x


def weighted_stats(x: Tensor, w: Tensor) -> tuple[Tensor, Tensor]:
    """x (b, c, t), weights summing to 1 over t -> mean, std (b, c, 1)."""
    mean = (w * x).sum(dim=2, keepdim=True)
    std = (w * (x - mean).square()).sum(dim=2, keepdim=True).clamp(min=1e-12).sqrt()
    return mean, std


class ECAPA(nn.Module):
    def __init__(self, mels: int, c: int, mfa: int, se: int, att: int, embed: int) -> None:
        super().__init__()
        self.first = TDNNBlock(mels, c, 5)
        self.blocks = nn.ModuleList(SERes2NetBlock(c, 3, d, se) for d in DILATIONS)
        self.mfa = TDNNBlock(len(DILATIONS) * c, mfa, 1)
        self.att_tdnn = TDNNBlock(3 * mfa, att, 1)
        self.att_conv = nn.Conv1d(att, mfa, 1)
        self.asp_bn = nn.BatchNorm1d(2 * mfa)
        self.fc = nn.Conv1d(2 * mfa, embed, 1)

    def forward(self, feats: Tensor) -> Tensor:
        x = self.first(feats.transpose(1, 2))  # (b, c, t)
        outs = []
        for blk in self.blocks:
            x = blk(x)
            outs.append(x)
        x = self.mfa(torch.cat(outs, dim=1)).float()
        t = x.shape[2]
        mean, std = weighted_stats(x, torch.full_like(x[:, :1], 1.0 / t))
        ctx = torch.cat([x, mean.expand_as(x), std.expand_as(x)], dim=1)
        dtype = self.att_conv.weight.dtype
        att = self.att_conv(torch.tanh(self.att_tdnn(ctx.to(dtype)))).float().softmax(dim=2)
        mean, std = weighted_stats(x, att)
        pooled = torch.cat([mean, std], dim=1).to(dtype)  # (b, 2 mfa, 1)
        return self.fc(self.asp_bn(pooled))[:, :, 0]


def build(device: torch.device, smoke: bool) -> Built:
    batch, frames, mels, c, mfa, se, att, speakers = (
        (2, 40, 16, 32, 48, 8, 8, 20)
        if smoke
        else (16, 300, 80, 512, 1536, 128, ATTENTION, SPEAKERS)
    )
    dtype = low_precision(device)
    model = ECAPA(mels, c, mfa, se, att, EMBED)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm1d):
            m.running_mean.normal_(0, 0.1)
            m.running_var.uniform_(0.5, 1.5)
    model = model.to(device, dtype).eval()
    bank = F.normalize(torch.randn(speakers, EMBED, device=device), dim=-1)

    @torch.no_grad()
    def step(feats: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        emb = model(feats).float()
        scores = F.normalize(emb, dim=-1) @ bank.T
        top, ids = scores.topk(TOP, dim=-1)
        return emb, top, ids

    inputs = [(torch.randn(batch, frames, mels, device=device, dtype=dtype),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"ECAPA-TDNN (C {c}, Res2Net scale {SCALE}, 3 SE-Res2Net blocks, attentive stats "
        f"pooling) + cosine top-{TOP} over {speakers} speakers, b{batch} x {frames} frames",
        [model, bank],
    )


if __name__ == "__main__":
    main(build, __doc__)
