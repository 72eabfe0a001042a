"""TPA-LSTM (Shih, Sun and Lee, 2019: a stacked LSTM over a window of a multivariate series, then
temporal pattern attention over the hidden states' rows) forecasting the next hour of the
Electricity data set's 321 clients from the last 96 hours, for 32 windows (sixtieth hold-out: one
stream, fp32 with TF32 off for cuBLAS and cuDNN: ``nn.LSTM(321, 256, num_layers 4)`` over the 96
steps, whose four layers cuDNN pipelines over streams of its own (layer l at step t beside layer l -
1 at step t + 1), some 500 small fp32 GEMM and cell kernels on the FP32 pipe; then the temporal
pattern attention: a cuDNN convolution of 32 filters spanning the 95 earlier steps, two small GEMMs,
a batched matrix-vector score, a sigmoid and the weighted sum; the output GEMMs; some 1 to 2.5 ms of
GPU time in all, nearly all of it the recurrence). Laid out as the paper's model (the authors' code
is ``gantheory/TPA-LSTM``): the LSTM's hidden states H = (h_1 .. h_{w-1}) of the last layer over the
window, the final h_w; k = 32 CNN filters C_j of length w - 1 applied to each row of H (here
``Conv2d(1, 32, (w - 1, 1))`` over H as a (w - 1) x m image), giving H^C (m x k); the scoring
function f(H^C_i, h_w) = (H^C_i)^T W_a h_w (``Linear(256, 32, bias False)`` then a batched product),
alpha_i = sigmoid(f), v_w = sum_i alpha_i H^C_i; h'_w = W_h h_w + W_v v_w (``Linear(256, 256)`` +
``Linear(32, 256, bias False)``), the forecast ``Linear(256, 321)``(h'_w), plus LSTNet's
autoregressive highway (Lai et al., 2018), added here: a ``Linear(24, 1)`` over each client's last
24 hours. The layer count and widths are hyperparameters in the reference; these are this set's.
fp32 weights and activations with ``torch.backends.cuda.matmul.allow_tf32`` and
``torch.backends.cudnn.allow_tf32`` both off (set at build; cuDNN's is on by torch's default), eval,
no gradients, random weights (torch's defaults). Input (two input sets), batch first: the scaled
windows (32, 96, 321), Gaussian, fp32. Returns the forecast (32, 321), fp32.

    traceinspect profile tpa_lstm_electricity_fp32_one_stream_b32.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn

N_SERIES, WINDOW, HIDDEN, LAYERS, FILTERS, HIGHWAY = 321, 96, 256, 4, 32, 24


class TPALSTM(nn.Module):
    def __init__(self, n_series: int, window: int, hidden: int, filters: int, highway: int):
        super().__init__()
        self.lstm = nn.LSTM(n_series, hidden, LAYERS, batch_first=True)
        self.conv = nn.Conv2d(1, filters, (window - 1, 1))
        self.w_a = nn.Linear(hidden, filters, bias=False)
        self.w_h = nn.Linear(hidden, hidden)
        self.w_v = nn.Linear(filters, hidden, bias=False)
        self.out = nn.Linear(hidden, n_series)
        self.highway_window = highway
        self.highway = nn.Linear(highway, 1)

    def forward(self, x: Tensor) -> Tensor:
        states, _ = self.lstm(x)  # (b, w, m)
        h_last = states[:, -1]  # (b, m)
        rows = states[:, :-1].unsqueeze(1)  # (b, 1, w - 1, m)
        h_c = self.conv(rows).squeeze(2).transpose(1, 2)  # (b, m, k)
        scores = torch.bmm(h_c, self.w_a(h_last).unsqueeze(2))  # (b, m, 1)
        alpha = torch.sigmoid(scores)
        v = (alpha * h_c).sum(dim=1)  # (b, k)
        h_prime = self.w_h(h_last) + self.w_v(v)
        ar = self.highway(x[:, -self.highway_window :].transpose(1, 2)).squeeze(2)  # (b, n)
        return self.out(h_prime) + ar


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, window, n_series, hidden, filters, highway = 2, 8, 5, 16, 4, 3
    else:
        batch, window, n_series, hidden = 32, WINDOW, N_SERIES, HIDDEN
        filters, highway = FILTERS, HIGHWAY
    torch.backends.cuda.matmul.allow_tf32 = False  # full fp32 GEMMs (torch's default)
    torch.backends.cudnn.allow_tf32 = False  # and full fp32 cuDNN RNN and convolution math
    model = TPALSTM(n_series, window, hidden, filters, highway).to(device).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    inputs = [(torch.randn(batch, window, n_series, device=device),) for _ in range(2)]
    description = (
        f"TPA-LSTM: {LAYERS}-layer LSTM {hidden} over {window} steps x {n_series} series + "
        f"temporal pattern attention ({filters} filters) + AR {highway}, fp32 TF32 off, "
        f"one stream, b{batch}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
