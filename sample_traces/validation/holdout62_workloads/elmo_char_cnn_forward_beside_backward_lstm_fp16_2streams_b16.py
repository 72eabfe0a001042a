"""ELMo (Peters et al., 2018: a character-convolutional token encoder under a forward and a backward
LSTM language model, their layers mixed into contextual word vectors) embedding 16 sentences of 48
tokens for a downstream tagger, as AllenNLP's ``Elmo`` module computes them, the forward language
model on one side stream beside the backward one on the other (sixty-second hold-out: fp16: on the
current stream the character CNN, 7 ``Conv1d`` widths over the 50 characters of each of the 768
tokens, a max over characters, 2 highway layers and the projection to 512, some 30 kernels; then on
side stream 1 the forward ``nn.LSTM(512, 512, num_layers 2)`` over the 48 tokens and on side stream
2 the backward one over the reversed tokens, each one cuDNN call whose two layers cuDNN pipelines
over streams of its own, some 190 to 250 GEMM and cell kernels a side in two concurrent serial
chains; after the join the reversal undone, the layers concatenated and the scalar mix (a softmax
over the layer weights, the weighted sum and gamma); some 1.5 to 3.5 ms of GPU time in all). Laid
out as AllenNLP's ``_ElmoCharacterEncoder`` (262 character ids embedded in 16 dimensions; filters
[[1, 32], [2, 32], [3, 64], [4, 128], [5, 256], [6, 512], [7, 1024]], 2048 in all, ReLU; 2
``Highway`` layers, each ``Linear(2048, 4096)`` split into the transform and the sigmoid gate, the
gate carrying the input; ``Linear(2048, 512)``), ``_ElmoBiLm`` (the token layer duplicated for the
two directions, then each direction's stack) and ``ScalarMix`` (mixture weights softmax-normalised,
times gamma), with changes that keep cuDNN's multi-layer path: each direction's stack is one 2-layer
``nn.LSTM`` of 512 units (ELMo's ``ElmoLstm`` is a hand-written LSTM of 4096 cells with a 512
projection, cell clipping and a residual connection between its layers; the sizes are this set's),
so the mix is over the token layer and the top layer only (a 2-layer ``nn.LSTM`` hands back the top
layer alone; the paper reports this top-only variant too). The character ids are random (no word
markers, no padding within a word); no sentence is padded (full-length sentences, so the backward
direction is a flip of the whole sequence). fp16 weights and activations on a GPU, the LSTMs
included (fp32 on a CPU), eval, no gradients, random weights (torch's defaults). Input (two input
sets), batch first: the character ids (16, 48, 50) int64, uniform in [1, 262). Returns the ELMo
representations (16, 48, 1024).

    traceinspect profile elmo_char_cnn_forward_beside_backward_lstm_fp16_2streams_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

CHAR_IDS, CHAR_DIM, MAX_CHARS, TOKENS, PROJ, UNITS = 262, 16, 50, 48, 512, 512
FILTERS = ((1, 32), (2, 32), (3, 64), (4, 128), (5, 256), (6, 512), (7, 1024))


class Highway(nn.Module):
    def __init__(self, dim: int, layers: int) -> None:
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(dim, 2 * dim) for _ in range(layers))

    def forward(self, x: Tensor) -> Tensor:
        for layer in self.layers:
            nonlinear, gate = layer(x).chunk(2, dim=-1)
            gate = torch.sigmoid(gate)
            x = gate * x + (1 - gate) * torch.relu(nonlinear)
        return x


class CharacterEncoder(nn.Module):
    def __init__(self, filters: tuple[tuple[int, int], ...], char_dim: int, proj: int) -> None:
        super().__init__()
        self.char_embedding = nn.Embedding(CHAR_IDS, char_dim, padding_idx=0)
        self.convs = nn.ModuleList(nn.Conv1d(char_dim, n, w) for w, n in filters)
        n_filters = sum(n for _, n in filters)
        self.highways = Highway(n_filters, 2)
        self.projection = nn.Linear(n_filters, proj)

    def forward(self, chars: Tensor) -> Tensor:
        b, t, c = chars.shape
        x = self.char_embedding(chars.view(b * t, c)).transpose(1, 2)  # (b t, dim, chars)
        feats = [torch.relu(conv(x).max(dim=-1).values) for conv in self.convs]
        token = self.projection(self.highways(torch.cat(feats, dim=-1)))
        return token.view(b, t, -1)


class ElmoBiLm(nn.Module):
    def __init__(self, filters: tuple[tuple[int, int], ...], char_dim: int, proj: int, units: int):
        super().__init__()
        self.token_encoder = CharacterEncoder(filters, char_dim, proj)
        self.forward_lm = nn.LSTM(proj, units, 2, batch_first=True)
        self.backward_lm = nn.LSTM(proj, units, 2, batch_first=True)
        self.mix_weights = nn.Parameter(torch.zeros(2))
        self.gamma = nn.Parameter(torch.ones(1))


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, tokens, chars, char_dim, proj, units = 2, 5, 9, 4, 8, 8
        filters: tuple[tuple[int, int], ...] = ((1, 4), (2, 4), (3, 8))
    else:
        batch, tokens, chars, char_dim, proj, units = 16, TOKENS, MAX_CHARS, CHAR_DIM, PROJ, UNITS
        filters = FILTERS
    dtype = torch.float16 if device.type == "cuda" else torch.float32
    model = ElmoBiLm(filters, char_dim, proj, units).to(device, dtype).eval()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(char_ids: Tensor) -> Tensor:
        token = model.token_encoder(char_ids)  # (b, t, proj)
        fwd, bwd = fork_join(
            device,
            streams,
            [
                lambda: model.forward_lm(token)[0],
                lambda: model.backward_lm(token.flip(1))[0],
            ],
        )
        top = torch.cat((fwd, bwd.flip(1)), dim=-1)
        layer0 = torch.cat((token, token), dim=-1)
        w = torch.softmax(model.mix_weights.float(), dim=0).to(top.dtype)
        return model.gamma * (w[0] * layer0 + w[1] * top)

    inputs = [
        (torch.randint(1, CHAR_IDS, (batch, tokens, chars), device=device),) for _ in range(2)
    ]
    precision = str(dtype).removeprefix("torch.")
    description = (
        f"ELMo: char CNN ({sum(n for _, n in filters)} filters) + highways, forward beside "
        f"backward 2-layer LSTM {units} over {tokens} tokens on 2 side streams + scalar mix, "
        f"{precision}, b{batch}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
