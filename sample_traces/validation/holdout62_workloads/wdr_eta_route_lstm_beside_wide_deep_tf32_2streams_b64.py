"""WDR, the Wide-Deep-Recurrent travel-time estimator (Wang, Fu and Ye, KDD 2018: DiDi's ETA model,
a wide linear model of crossed features, a deep MLP over embedded features, and an LSTM over the
route's road links, combined by a regressor) scoring 64 route requests against their actual travel
times, as its offline evaluation runs (sixty-second hold-out: fp32 with TF32 on for cuBLAS and
cuDNN: on side stream 1 the wide and deep models, an ``EmbeddingBag`` sum over 16 crossed feature
ids and an affine map of the dense features, then the 8 sparse fields' embeddings and a 3-layer
MLP of 256, some 20 kernels; on side stream 2 the recurrent model, each link's id embedding and
real-time features through ``Linear(24, 64)``, then ``nn.LSTM(64, 128, num_layers 4)`` over the
64 links, whose four layers cuDNN pipelines over streams of its own (layer l at link t beside
layer l - 1 at link t + 1), some 500 to 800 small GEMM and cell kernels in a serial chain, and the
gather of each route's last link; after the join the concatenation, the regressor MLP and the
mean absolute percentage error; some 2 to 4 ms of GPU time in all, nearly all of it the
recurrence). Laid out as the paper's model (Fig. 3: the wide model's cross-product transformation
and affine transformation, the deep model's embedded sparse features and dense features through
stacked fully connected layers with ReLU, the recurrent model's LSTM over the link sequence with
its last hidden state taken, and the regressor, a fully connected layer over the three outputs,
trained with MAPE), the widths, the layer counts and the feature sets this set's (the paper gives
none of them in full). Routes are padded to 64 links and run through the LSTM whole, the state at
each route's last link taken by a gather (packing them would need their lengths on the host).
fp32 weights and activations with ``torch.backends.cuda.matmul.allow_tf32`` and
``torch.backends.cudnn.allow_tf32`` both on (set at build; the former is off by torch's default),
eval, no gradients, random weights (torch's defaults). Fork and join are the project's
``fork_join`` (``wait_stream``, and ``record_stream`` on the branch outputs outside capture).
Inputs (two input sets): the crossed feature ids (64, 16) int64, uniform below 100,000; the
sparse field ids (64, 8) int64, uniform below 1,000; the dense features (64, 16), Gaussian; the
link ids (64, 64) int64, uniform below 50,000 up to each route's length and 0 after it; the links'
real-time features (64, 64, 4), Gaussian; the route lengths (64,) int64, uniform in [16, 64];
and the travel times (64,), uniform in [300, 3600) s. Returns the predicted times (64,) and the
MAPE (), fp32.

    traceinspect profile wdr_eta_route_lstm_beside_wide_deep_tf32_2streams_b64.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

CROSS_VOCAB, CROSSED, FIELDS, FIELD_VOCAB, DENSE, WIDTH = 100_000, 16, 8, 1000, 16, 256
LINKS, MAX_LINKS, LINK_DIM, LINK_FEATS, LINK_IN, UNITS, LAYERS = 50_000, 64, 20, 4, 64, 128, 4


class WDR(nn.Module):
    def __init__(self, cross_vocab: int, links: int, width: int, units: int) -> None:
        super().__init__()
        self.cross = nn.EmbeddingBag(cross_vocab, width, mode="sum")
        self.wide_affine = nn.Linear(DENSE, width)
        self.fields = nn.Embedding(FIELDS * FIELD_VOCAB, 16)
        self.deep = nn.Sequential(
            nn.Linear(FIELDS * 16 + DENSE, width),
            nn.ReLU(),
            nn.Linear(width, width),
            nn.ReLU(),
            nn.Linear(width, width),
            nn.ReLU(),
        )
        self.link_embedding = nn.Embedding(links, LINK_DIM, padding_idx=0)
        self.link_in = nn.Linear(LINK_DIM + LINK_FEATS, LINK_IN)
        self.lstm = nn.LSTM(LINK_IN, units, LAYERS, batch_first=True)
        self.regressor = nn.Sequential(
            nn.Linear(2 * width + units, width), nn.ReLU(), nn.Linear(width, 1)
        )
        offsets = torch.arange(FIELDS) * FIELD_VOCAB
        self.register_buffer("field_offsets", offsets, persistent=False)

    def wide_deep(self, crossed: Tensor, sparse: Tensor, dense: Tensor) -> Tensor:
        wide = self.cross(crossed) + self.wide_affine(dense)
        embedded = self.fields(sparse + self.field_offsets).flatten(1)
        deep = self.deep(torch.cat((embedded, dense), dim=1))
        return torch.cat((wide, deep), dim=1)

    def recurrent(self, link_ids: Tensor, link_feats: Tensor, lengths: Tensor) -> Tensor:
        x = torch.cat((self.link_embedding(link_ids), link_feats), dim=-1)
        out, _ = self.lstm(torch.relu(self.link_in(x)))
        index = (lengths - 1).view(-1, 1, 1).expand(-1, -1, out.shape[-1])
        return out.gather(1, index).squeeze(1)


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, max_links, cross_vocab, links, width, units = 2, 6, 50, 30, 16, 8
    else:
        batch, max_links, cross_vocab, links = 64, MAX_LINKS, CROSS_VOCAB, LINKS
        width, units = WIDTH, UNITS
    torch.backends.cuda.matmul.allow_tf32 = True  # the workload: TF32 GEMMs
    torch.backends.cudnn.allow_tf32 = True  # and TF32 cuDNN RNN math (torch's default)
    model = WDR(cross_vocab, links, width, units).to(device).eval()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(
        crossed: Tensor,
        sparse: Tensor,
        dense: Tensor,
        link_ids: Tensor,
        link_feats: Tensor,
        lengths: Tensor,
        actual: Tensor,
    ) -> tuple[Tensor, Tensor]:
        wd, rec = fork_join(
            device,
            streams,
            [
                lambda: model.wide_deep(crossed, sparse, dense),
                lambda: model.recurrent(link_ids, link_feats, lengths),
            ],
        )
        predicted = model.regressor(torch.cat((wd, rec), dim=1)).squeeze(1)
        mape = ((predicted - actual).abs() / actual).mean()
        return predicted, mape

    def make() -> tuple[Tensor, ...]:
        lengths = torch.randint(min(16, max_links), max_links + 1, (batch,), device=device)
        positions = torch.arange(max_links, device=device).unsqueeze(0)
        link_ids = torch.randint(1, links, (batch, max_links), device=device)
        link_ids = link_ids.masked_fill(positions >= lengths.unsqueeze(1), 0)
        return (
            torch.randint(0, cross_vocab, (batch, CROSSED), device=device),
            torch.randint(0, FIELD_VOCAB, (batch, FIELDS), device=device),
            torch.randn(batch, DENSE, device=device),
            link_ids,
            torch.randn(batch, max_links, LINK_FEATS, device=device),
            lengths,
            torch.empty(batch, device=device).uniform_(300, 3600),
        )

    inputs = [make() for _ in range(2)]
    description = (
        f"WDR ETA: wide + deep MLP {width} beside route {LAYERS}-layer LSTM {units} over "
        f"{max_links} links on 2 side streams + regressor + MAPE, fp32 TF32 on, b{batch}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
