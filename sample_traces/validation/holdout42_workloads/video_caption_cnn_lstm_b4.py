"""A video-captioning loss evaluation with teacher forcing (the S2VT / mean-pool captioner
layout: per-frame CNN features, temporal mean pooling, an LSTM decoder started from the video
feature), the cross-entropy of given captions (forty-second hold-out): 4 videos of 16 frames of
3 x 112 x 112, captions of 20 tokens over a vocabulary of 8,000, bf16 on a GPU (the LSTM too:
cuDNN takes bf16 RNNs on sm80 and later; the cross-entropy in fp32), eval mode, no gradients;
every BatchNorm in eval mode with running statistics set at build. Frame encoder, on the 64
frames of the batch as one (64, 3, 112, 112) batch: 4 stages, each a stride-2 3 x 3 ``Conv2d``
and a stride-1 one, each + BatchNorm + ReLU, 3 -> 32 (56 x 56), 32 -> 64 (28 x 28), 64 -> 128
(14 x 14), 128 -> 256 (7 x 7); global average pooling to (64, 256), viewed as (4, 16, 256) and
mean-pooled over the 16 frames, (4, 256). Decoder: the initial state from the video feature,
h0 = tanh(``Linear(256, 512)``) and c0 = ``Linear(256, 512)``, (1, 4, 512) each;
``Embedding(8000, 256)`` of the 20 teacher-forced input tokens (the caption shifted right, a
start token first); a 1-layer ``nn.LSTM(256, 512)`` (batch_first) over the whole sequence in one
cuDNN call, (4, 20, 512); ``Linear(512, 8000)`` to (4, 20, 8000) logits; ``F.cross_entropy`` in
fp32 against the 20 target tokens, the mean over the 80 tokens. Inputs: the videos (4, 16, 3,
112, 112), the input tokens (4, 20) and the target tokens (4, 20) int64. Returns the loss, a
scalar fp32.

    traceinspect profile video_caption_cnn_lstm_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _models import random_batch_norm_stats
from torch import Tensor, nn


def conv_bn_relu(cin: int, cout: int, stride: int = 1) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU()
    )


class Captioner(nn.Module):
    def __init__(self, width: int, vocab: int, emb: int, hidden: int) -> None:
        super().__init__()
        widths = (width, 2 * width, 4 * width, 8 * width)
        self.cnn = nn.Sequential(
            *(
                nn.Sequential(conv_bn_relu(cin, cout, 2), conv_bn_relu(cout, cout))
                for cin, cout in zip((3, *widths[:-1]), widths, strict=True)
            ),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
        )
        self.init_h, self.init_c = nn.Linear(widths[-1], hidden), nn.Linear(widths[-1], hidden)
        self.embed = nn.Embedding(vocab, emb)
        self.rnn = nn.LSTM(emb, hidden, 1, batch_first=True)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, video: Tensor, tokens: Tensor) -> Tensor:
        b, frames = video.shape[:2]
        feats = self.cnn(video.flatten(0, 1)).view(b, frames, -1).mean(dim=1)  # (b, c)
        h0, c0 = torch.tanh(self.init_h(feats))[None], self.init_c(feats)[None]
        out, _ = self.rnn(self.embed(tokens), (h0.contiguous(), c0.contiguous()))
        return self.out(out)  # (b, tokens, vocab)


def build(device: torch.device, smoke: bool) -> Built:
    batch, frames, size, width, vocab, emb, hidden, tokens = (
        (1, 2, 32, 8, 50, 16, 32, 5) if smoke else (4, 16, 112, 32, 8000, 256, 512, 20)
    )
    dtype = low_precision(device)
    model = Captioner(width, vocab, emb, hidden)
    random_batch_norm_stats(model)
    model = model.to(device, dtype).eval()
    model.rnn.flatten_parameters()  # one contiguous weight buffer, as cuDNN wants it

    @torch.no_grad()
    def step(video: Tensor, inp: Tensor, target: Tensor) -> Tensor:
        logits = model(video, inp)
        return F.cross_entropy(logits.float().flatten(0, 1), target.flatten())

    inputs = []
    for _ in range(2):
        target = torch.randint(1, vocab, (batch, tokens), device=device)
        inp = torch.cat([torch.zeros_like(target[:, :1]), target[:, :-1]], dim=1)  # start = 0
        video = torch.randn(batch, frames, 3, size, size, device=device, dtype=dtype)
        inputs.append((video, inp, target))
    return Built(
        step,
        inputs,
        f"video captioning: 4-stage CNN ({width}-{8 * width} channels) over {batch} x {frames} "
        f"frames of {size}^2, mean pool, LSTM {hidden} decoder from the video feature "
        f"({tokens} teacher-forced tokens), {vocab}-way cross-entropy, b{batch}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
