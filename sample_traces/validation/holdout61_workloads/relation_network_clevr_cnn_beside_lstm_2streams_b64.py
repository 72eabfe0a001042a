"""A Relation Network (Santoro et al., 2017) answering 64 CLEVR questions from pixels: the image CNN
on one side stream beside the question LSTM on the other, then, after the join, g over all 4096
ordered pairs of the 64 feature-map cells (each pair with the question), the sum, and f to the 29
answers (sixty-first hold-out: two concurrent chains of unequal make, bf16: on side stream 1 four 3
x 3 stride-2 convolutions of 24 channels over the (64, 3, 128, 128) images, each with BatchNorm and
ReLU, some 12 kernels; on side stream 2 the word embedding and ``nn.LSTM(32, 128)`` over the 45
padded tokens, one cuDNN call of some 90 small GEMM and cell kernels in a serial chain, and the
gather of each question's last token; then the coordinates concatenated to the cells, the pairs
built by repeats and concatenations into (64, 64, 64, 180) (94 MB), g's four ``Linear(.., 256)`` and
ReLUs over 262,144 rows (127 GFLOP, 134 MB activations each), the sum over the pairs and f's three
linears and the log-softmax; some 20 kernels after the join, most of them memory-bound; some 0.8 to
1.5 ms of GPU time in all, most of it after the join). Laid out as the paper's CLEVR-from-pixels
model (its appendix: four convolutional layers of 24 kernels, ReLU and batch normalisation; word
embeddings of 32 and an LSTM of 128; g a four-layer MLP of 256 units with ReLUs; f 256, 256 (with
dropout, off in eval) and 29 units) with the pairing of kimhc6028/relational-networks'
``RN.forward`` (each cell's features tagged with its (x, y) coordinate in [-1, 1]; x_i repeated over
the first cell axis, x_j concatenated with the question and repeated over the second, concatenated,
flattened to rows for g, summed per image; the output a log-softmax). The questions are padded to 45
tokens and run through the LSTM whole, the state at each question's last token taken by a gather
(packing them would need their lengths on the host). Fork and join are the project's ``fork_join``
(``wait_stream``, and ``record_stream`` on the branch outputs outside capture). bf16 weights and
activations on a GPU, the LSTM included (fp32 on a CPU), eval (BatchNorm on random running
statistics), no gradients, random weights (torch's defaults). Inputs (two input sets): the images
(64, 3, 128, 128) bf16, Gaussian, the question tokens (64, 45) int64, uniform in [1, 90) up to each
question's length and 0 after it, and the lengths (64,) int64, uniform in [10, 45]. Returns the
answer log-probabilities (64, 29).

    traceinspect profile relation_network_clevr_cnn_beside_lstm_2streams_b64.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from _models import random_batch_norm_stats
from _streams import fork_join, side_streams
from torch import Tensor, nn

IMAGE, KERNELS, CONV_LAYERS, VOCAB, EMBED, LSTM_UNITS = 128, 24, 4, 90, 32, 128
MAX_TOKENS, G_UNITS, ANSWERS = 45, 256, 29


class RelationNetwork(nn.Module):
    def __init__(self, kernels: int, vocab: int, embed: int, units: int, g_units: int) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        cin = 3
        for _ in range(CONV_LAYERS):
            layers += [nn.Conv2d(cin, kernels, 3, 2, 1), nn.BatchNorm2d(kernels), nn.ReLU()]
            cin = kernels
        self.cnn = nn.Sequential(*layers)
        self.embedding = nn.Embedding(vocab, embed, padding_idx=0)
        self.lstm = nn.LSTM(embed, units, batch_first=True)
        pair = 2 * (kernels + 2) + units
        self.g = nn.Sequential(
            nn.Linear(pair, g_units),
            nn.ReLU(),
            nn.Linear(g_units, g_units),
            nn.ReLU(),
            nn.Linear(g_units, g_units),
            nn.ReLU(),
            nn.Linear(g_units, g_units),
            nn.ReLU(),
        )
        self.f = nn.Sequential(
            nn.Linear(g_units, g_units),
            nn.ReLU(),
            nn.Linear(g_units, g_units),
            nn.ReLU(),
            nn.Dropout(0.5),
            nn.Linear(g_units, ANSWERS),
        )

    def question(self, tokens: Tensor, lengths: Tensor) -> Tensor:
        out, _ = self.lstm(self.embedding(tokens))
        index = (lengths - 1).view(-1, 1, 1).expand(-1, -1, out.shape[-1])
        return out.gather(1, index).squeeze(1)

    def relate(self, feats: Tensor, qst: Tensor, coords: Tensor) -> Tensor:
        mb, _, d, _ = feats.shape
        cells = d * d
        x_flat = feats.flatten(2).transpose(1, 2)  # (mb, cells, kernels)
        x_flat = torch.cat((x_flat, coords.expand(mb, -1, -1)), dim=2)
        qst = qst.unsqueeze(1).repeat(1, cells, 1).unsqueeze(2)  # (mb, cells, 1, units)
        x_i = x_flat.unsqueeze(1).repeat(1, cells, 1, 1)  # (mb, cells, cells, k + 2)
        x_j = torch.cat((x_flat.unsqueeze(2), qst), dim=3).repeat(1, 1, cells, 1)
        x_full = torch.cat((x_i, x_j), dim=3)
        x_g = self.g(x_full.view(mb * cells * cells, -1)).view(mb, cells * cells, -1).sum(1)
        return F.log_softmax(self.f(x_g), dim=1)


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, image, kernels, vocab, embed, units, tokens, g_units = 2, 32, 4, 10, 4, 8, 6, 16
    else:
        batch, image, kernels, vocab = 64, IMAGE, KERNELS, VOCAB
        embed, units, tokens, g_units = EMBED, LSTM_UNITS, MAX_TOKENS, G_UNITS
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    model = RelationNetwork(kernels, vocab, embed, units, g_units)
    random_batch_norm_stats(model)
    model = model.to(device, dtype).eval()
    d = image // 2**CONV_LAYERS
    axis = torch.linspace(-1, 1, d, device=device, dtype=dtype)
    coords = torch.stack(torch.meshgrid(axis, axis, indexing="ij"), dim=-1).reshape(1, d * d, 2)
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(images: Tensor, question: Tensor, lengths: Tensor) -> Tensor:
        feats, qst = fork_join(
            device,
            streams,
            [lambda: model.cnn(images), lambda: model.question(question, lengths)],
        )
        return model.relate(feats, qst, coords)

    def make() -> tuple[Tensor, ...]:
        lengths = torch.randint(min(10, tokens - 1), tokens + 1, (batch,), device=device)
        ids = torch.randint(1, vocab, (batch, tokens), device=device)
        positions = torch.arange(tokens, device=device).unsqueeze(0)
        ids = ids.masked_fill(positions >= lengths.unsqueeze(1), 0)
        return (torch.randn(batch, 3, image, image, device=device, dtype=dtype), ids, lengths)

    inputs = [make() for _ in range(2)]
    precision = str(dtype).removeprefix("torch.")
    description = (
        f"Relation Network: CNN ({CONV_LAYERS} convs x {kernels}) beside question LSTM {units} on "
        f"2 side streams, g over {(d * d) ** 2} pairs x {g_units}, {precision}, b{batch}"
    )
    return Built(step, inputs, description, [model, coords])


if __name__ == "__main__":
    main(build, __doc__)
