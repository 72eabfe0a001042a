"""A DeepAR forecast (Salinas et al., 2020: an autoregressive LSTM over the target, covariates
and a series embedding, emitting a likelihood's parameters per step) with a Student-t
likelihood, the context encoded in one call and the horizon decoded step by step (forty-second
hold-out): 128 series, 168 context steps (a week of hours), 24 forecast steps, fp32 throughout
(the LSTM too), eval mode, no gradients. Scaling, DeepAR's: each series' scale v = 1 + the mean
of |target| over the context; the targets fed to the net are divided by v. Per-step input, 25
values: the scaled target, 4 covariates, and ``Embedding(370, 20)`` of the series id. Encoder:
a 3-layer ``nn.LSTM(25, 64)`` (batch_first) over the 168 context steps in one cuDNN call,
keeping its final (h, c), (3, 128, 64) each. Decoder: 24 steps in a Python loop, each calling
the same ``nn.LSTM`` on one step, (128, 1, 25), with the carried (h, c) (the stepping of an
``nn.LSTMCell`` stack, through cuDNN); ``Linear(64, 3)`` to the Student-t's mu, sigma =
softplus(.) + 1e-3 and nu = 2 + softplus(.), mu and sigma rescaled by v; the next step's target
input is the distribution's mean (mu, for nu > 1), scaled. Launch-bound: 24 one-step LSTM calls
and their small heads. Inputs: the context targets (128, 168), the covariates (128, 192, 4)
over context and horizon, the series ids (128,) int64. Returns mu, sigma and nu, (128, 24)
each, fp32.

    traceinspect profile deepar_lstm_forecast_b128.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn

COVARIATES, SERIES, SERIES_EMB = 4, 370, 20


class DeepAR(nn.Module):
    def __init__(self, hidden: int, layers: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(SERIES, SERIES_EMB)
        self.rnn = nn.LSTM(1 + COVARIATES + SERIES_EMB, hidden, layers, batch_first=True)
        self.head = nn.Linear(hidden, 3)

    def forward(
        self, target: Tensor, covariates: Tensor, series: Tensor, horizon: int
    ) -> tuple[Tensor, Tensor, Tensor]:
        context = target.shape[1]
        scale = 1 + target.abs().mean(dim=1, keepdim=True)  # (b, 1)
        emb = self.embed(series)[:, None]  # (b, 1, emb)
        x = torch.cat(
            [(target / scale)[..., None], covariates[:, :context], emb.expand(-1, context, -1)],
            dim=-1,
        )
        _, state = self.rnn(x)
        prev = target[:, -1:] / scale  # (b, 1)
        mus, sigmas, nus = [], [], []
        for t in range(horizon):
            x_t = torch.cat([prev[..., None], covariates[:, context + t, None], emb], dim=-1)
            out, state = self.rnn(x_t, state)
            mu, sigma, nu = self.head(out[:, 0]).unbind(dim=-1)
            sigma, nu = F.softplus(sigma) + 1e-3, 2 + F.softplus(nu)
            mus.append(mu * scale[:, 0])
            sigmas.append(sigma * scale[:, 0])
            nus.append(nu)
            prev = mu[:, None]  # the Student-t's mean, still scaled
        return torch.stack(mus, 1), torch.stack(sigmas, 1), torch.stack(nus, 1)


def build(device: torch.device, smoke: bool) -> Built:
    batch, context, horizon, hidden, layers = (4, 12, 3, 8, 3) if smoke else (128, 168, 24, 64, 3)
    model = DeepAR(hidden, layers).to(device).eval()
    model.rnn.flatten_parameters()  # one contiguous weight buffer, as cuDNN wants it

    @torch.no_grad()
    def step(target: Tensor, covariates: Tensor, series: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        return model(target, covariates, series, horizon)

    inputs = [
        (
            torch.rand(batch, context, device=device) * 10,
            torch.randn(batch, context + horizon, COVARIATES, device=device),
            torch.randint(0, SERIES, (batch,), device=device),
        )
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"DeepAR: {layers}-layer LSTM {hidden} over {context} context steps, then {horizon} "
        f"one-step LSTM calls with Student-t heads (mean fed back), fp32, b{batch} series",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
