"""The in-batch sampled-softmax loss of a YouTube-style two-tower retrieval model (Covington et
al., 2016; with the sampling-bias correction of Yi et al., 2019) for a batch of 4,096 (user,
watched video) pairs, the user tower with its large embedding bags on one side stream and the
video tower on another (fiftieth hold-out: candidate retrieval, a branch of random row gathers
from a 1 M-row table beside a branch of mid-size GEMMs, a 4,096 x 4,096 GEMM and a softmax after
the join). Side stream 1, the user tower: the mean of the embeddings of the last 50 watched videos
(``nn.EmbeddingBag(1,000,000, 64, mode="mean")``, 204,800 random rows of 128 bytes) and of the 16
tokens of recent searches (``EmbeddingBag(200,000, 64, mode="mean")``), concatenated with 8 dense
features (age, gender, the example age, ...), then ``Linear(136, 1024)`` + ReLU, ``Linear(1024,
512)`` + ReLU, ``Linear(512, 256)`` and an L2 normalization. Side stream 2, the video tower: the
video's id embedding (``nn.Embedding(1,000,000, 64)``), its channel's (``Embedding(100,000, 32)``),
the mean of its 20 title tokens' embeddings (an ``EmbeddingBag(200,000, 64, mode="mean")`` of its
own) and 4 dense features, then ``Linear(164, 2048)`` + ReLU, ``Linear(2048, 1024)`` + ReLU,
``Linear(1024, 256)`` and an L2 normalization (some 12 GMAC). After the join, on the current
stream: the (4,096 x 4,096) logits, user x video^T / 0.05, minus the log of each video's sampling
probability (the logQ correction), the cross-entropy against the diagonal (``F.cross_entropy``,
fp32) and the in-batch recall@10 (``topk`` 10 of each row, compared with the row's index). bf16 on
a GPU (tables and towers), eval mode, no gradients. Fork and join are the project's ``fork_join``
(``wait_stream``, and ``record_stream`` on the branch outputs outside capture). Inputs: the
watch-history ids (4,096, 50), search-token ids (4,096, 16), user dense features (4,096, 8), video
ids (4,096,), channel ids (4,096,), title-token ids (4,096, 20), video dense features (4,096, 4)
and the videos' sampling probabilities (4,096,) fp32. Returns the loss (a 0-d fp32 tensor) and the
recall@10 (a 0-d fp32 tensor).

    traceinspect profile youtube_dnn_logq_towers_2streams_b4096.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _blocks import mlp_tower
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

HISTORY, SEARCH, TITLE, USER_DENSE, VIDEO_DENSE = 50, 16, 20, 8, 4
TEMPERATURE, RECALL_AT = 0.05, 10


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, videos, tokens, channels, d, out = 64, 1000, 500, 100, 8, 16
        user_widths, video_widths = [32, 16], [32, 16]
    else:
        batch, videos, tokens, channels, d, out = 4096, 1_000_000, 200_000, 100_000, 64, 256
        user_widths, video_widths = [1024, 512], [2048, 1024]
    dtype = low_precision(device)
    history = nn.EmbeddingBag(videos, d, mode="mean")
    search = nn.EmbeddingBag(tokens, d, mode="mean")
    user_mlp = mlp_tower([2 * d + USER_DENSE, *user_widths, out])
    video_emb = nn.Embedding(videos, d)
    channel_emb = nn.Embedding(channels, d // 2)
    title = nn.EmbeddingBag(tokens, d, mode="mean")
    video_mlp = mlp_tower([d + d // 2 + d + VIDEO_DENSE, *video_widths, out])
    model = nn.ModuleList([history, search, user_mlp, video_emb, channel_emb, title, video_mlp])
    model = model.to(device=device, dtype=dtype).eval()
    streams = side_streams(device, 2)

    def user_tower(hist: Tensor, query: Tensor, dense: Tensor) -> Tensor:
        x = torch.cat([history(hist), search(query), dense], dim=1)
        return F.normalize(user_mlp(x), dim=1)

    def video_tower(vid: Tensor, chan: Tensor, words: Tensor, dense: Tensor) -> Tensor:
        x = torch.cat([video_emb(vid), channel_emb(chan), title(words), dense], dim=1)
        return F.normalize(video_mlp(x), dim=1)

    labels = torch.arange(batch, device=device)

    @torch.no_grad()
    def step(
        hist: Tensor,
        query: Tensor,
        udense: Tensor,
        vid: Tensor,
        chan: Tensor,
        words: Tensor,
        vdense: Tensor,
        prob: Tensor,
    ) -> tuple[Tensor, Tensor]:
        users, items = fork_join(
            device,
            streams,
            [
                lambda: user_tower(hist, query, udense),
                lambda: video_tower(vid, chan, words, vdense),
            ],
        )
        logits = (users @ items.T).float() / TEMPERATURE - prob.log()[None, :]
        loss = F.cross_entropy(logits, labels)
        top = logits.topk(RECALL_AT, dim=1).indices
        recall = (top == labels[:, None]).any(dim=1).float().mean()
        return loss, recall

    def batch_inputs() -> tuple[Tensor, ...]:
        return (
            torch.randint(0, videos, (batch, HISTORY), device=device),
            torch.randint(0, tokens, (batch, SEARCH), device=device),
            torch.randn(batch, USER_DENSE, device=device, dtype=dtype),
            torch.randint(0, videos, (batch,), device=device),
            torch.randint(0, channels, (batch,), device=device),
            torch.randint(0, tokens, (batch, TITLE), device=device),
            torch.randn(batch, VIDEO_DENSE, device=device, dtype=dtype),
            torch.rand(batch, device=device) * 1e-4 + 1e-6,
        )

    inputs = [batch_inputs() for _ in range(2)]
    description = (
        f"YouTube two-tower retrieval: user tower with EmbeddingBag({videos}, {d}) x{HISTORY} "
        f"beside video tower, in-batch logQ softmax, b{batch}, 2 side streams"
    )
    return Built(step, inputs, description, [model, labels])


if __name__ == "__main__":
    main(build, __doc__)
