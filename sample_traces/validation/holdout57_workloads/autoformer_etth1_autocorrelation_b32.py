"""Autoformer (Wu et al., 2021) forecasting 96 steps of 7 ETTh1-style series from the last 96 for a
batch of 32 windows: series decomposition, the FFT-based Auto-Correlation in two encoder layers and
one decoder layer, and the accumulated trend (fifty-seventh hold-out: one stream of some 500 kernels
in fp32 with TF32 off: GEMMs and 1 x 1 convolutions over 3072 or 4608 rows, 512 -> 512 or 512 <->
2048, 1.6 to 9.7 GFLOP in full fp32, real FFTs and their inverses over (32, 8, 64, 96 or 144) with a
complex conjugate product, the top-k of the mean correlation, then per attention 13 or 14 delays
aggregated as gather, multiply and add over 6 to 9 MB, the moving averages as padded ``AvgPool1d``
of 25 taps and subtractions: memory-bound stretches of mid-sized kernels between GEMMs). Laid out as
thuml/Autoformer's ``models/Autoformer.py`` with its ETTh1 script's settings (``seq_len`` 96,
``label_len`` 48, ``pred_len`` 96, ``enc_in`` = ``dec_in`` = ``c_out`` 7, ``d_model`` 512, 8 heads,
``d_ff`` 2048, ``e_layers`` 2, ``d_layers`` 1, ``moving_avg`` 25, ``factor`` 3, ``embed`` ``timeF``
with 4 hourly time features, GELU, dropout inactive in eval): the encoder input's mean and
``series_decomp`` (the series padded with its first and last values repeated 12 times,
``AvgPool1d(25, stride 1)``, the residual) giving the decoder's seasonal init (the last 48 steps
then zeros) and trend init (the last 48 steps then the mean); ``DataEmbedding_wo_pos``
(``TokenEmbedding``, ``Conv1d(7, 512, 3, padding 1, circular, bias=False)``, plus
``TimeFeatureEmbedding``, ``Linear(4, 512, bias=False)``); ``EncoderLayer``s
(``AutoCorrelationLayer``: q / k / v ``Linear(512, 512)``, ``AutoCorrelation`` in eval, that is
``time_delay_agg_inference``: ``torch.fft.rfft`` of queries and keys, their conjugate product,
``irfft``, the mean over heads and channels, ``topk`` of int(3 ln L) delays, their softmaxed
weights, and per delay a ``torch.gather`` from the values repeated twice along time, weighted and
accumulated; ``out_projection``; the residual, ``series_decomp``, the FFN as ``Conv1d`` 1 x 1 512 ->
2048, GELU, 2048 -> 512, the residual, ``series_decomp``); ``my_Layernorm`` (LayerNorm minus its
mean over time); the ``DecoderLayer`` (self Auto-Correlation, decomposition, cross Auto-Correlation
on the encoder output, its 96 steps zero-padded to the decoder's 144, decomposition, FFN,
decomposition, the three trends summed through ``Conv1d(512, 7, 3, circular, bias=False)``), the
trend accumulated, ``my_Layernorm`` and ``Linear(512, 7)``; the last 96 steps of seasonal plus
trend. fp32 with TF32 off for matrix multiplications (``torch.backends.cuda.matmul.allow_tf32 =
False``, torch's default) and for cuDNN's convolutions (``torch.backends.cudnn.allow_tf32 =
False``), both set in build, eval, no gradients, random weights (torch's defaults). Inputs (two
input sets), batch first: ``x_enc`` (32, 96, 7), ``x_mark_enc`` (32, 96, 4), ``x_dec`` (32, 144, 7)
and ``x_mark_dec`` (32, 144, 4), smooth random series and time features in [-0.5, 0.5] as
``Dataset_ETT_hour`` gives them (``x_dec`` read for its shape only, as the model does). Returns the
forecast (32, 96, 7).

    traceinspect profile autoformer_etth1_autocorrelation_b32.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn

SERIES, MARKS, MOVING_AVG, FACTOR = 7, 4, 25, 3


class SeriesDecomp(nn.Module):
    def __init__(self, kernel: int) -> None:
        super().__init__()
        self.kernel = kernel
        self.avg = nn.AvgPool1d(kernel, stride=1, padding=0)

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        pad = (self.kernel - 1) // 2
        front = x[:, 0:1, :].repeat(1, pad, 1)
        end = x[:, -1:, :].repeat(1, pad, 1)
        moving_mean = self.avg(torch.cat([front, x, end], dim=1).permute(0, 2, 1)).permute(0, 2, 1)
        return x - moving_mean, moving_mean


class AutoCorrelationLayer(nn.Module):
    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.query_projection, self.key_projection = nn.Linear(d, d), nn.Linear(d, d)
        self.value_projection, self.out_projection = nn.Linear(d, d), nn.Linear(d, d)

    def time_delay_agg_inference(self, values: Tensor, corr: Tensor) -> Tensor:
        batch, head, channel, length = values.shape
        init_index = torch.arange(length, device=values.device)[None, None, None]
        init_index = init_index.repeat(batch, head, channel, 1)
        top_k = int(FACTOR * math.log(length))
        mean_value = torch.mean(torch.mean(corr, dim=1), dim=1)
        weights, delay = torch.topk(mean_value, top_k, dim=-1)
        tmp_corr = torch.softmax(weights, dim=-1)
        tmp_values = values.repeat(1, 1, 1, 2)
        delays_agg = torch.zeros_like(values)
        for i in range(top_k):
            tmp_delay = init_index + delay[:, i].view(-1, 1, 1, 1).repeat(1, head, channel, length)
            pattern = torch.gather(tmp_values, dim=-1, index=tmp_delay)
            weight = tmp_corr[:, i].view(-1, 1, 1, 1).repeat(1, head, channel, length)
            delays_agg = delays_agg + pattern * weight
        return delays_agg

    def forward(self, queries: Tensor, keys: Tensor, values: Tensor) -> Tensor:
        b, length, _ = queries.shape
        s, h = keys.shape[1], self.heads
        q = self.query_projection(queries).view(b, length, h, -1)
        k = self.key_projection(keys).view(b, s, h, -1)
        v = self.value_projection(values).view(b, s, h, -1)
        if length > s:
            zeros = torch.zeros_like(q[:, : (length - s), :]).float()
            v, k = torch.cat([v, zeros], dim=1), torch.cat([k, zeros], dim=1)
        else:
            v, k = v[:, :length], k[:, :length]
        q_fft = torch.fft.rfft(q.permute(0, 2, 3, 1).contiguous(), dim=-1)
        k_fft = torch.fft.rfft(k.permute(0, 2, 3, 1).contiguous(), dim=-1)
        corr = torch.fft.irfft(q_fft * torch.conj(k_fft), n=length, dim=-1)
        agg = self.time_delay_agg_inference(v.permute(0, 2, 3, 1).contiguous(), corr)
        return self.out_projection(agg.permute(0, 3, 1, 2).reshape(b, length, -1))


class FFN(nn.Module):
    def __init__(self, d: int, d_ff: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv1d(d, d_ff, 1, bias=False)
        self.conv2 = nn.Conv1d(d_ff, d, 1, bias=False)

    def forward(self, x: Tensor) -> Tensor:
        return self.conv2(F.gelu(self.conv1(x.transpose(-1, 1)))).transpose(-1, 1)


class EncoderLayer(nn.Module):
    def __init__(self, d: int, heads: int, d_ff: int) -> None:
        super().__init__()
        self.attention = AutoCorrelationLayer(d, heads)
        self.ffn = FFN(d, d_ff)
        self.decomp1, self.decomp2 = SeriesDecomp(MOVING_AVG), SeriesDecomp(MOVING_AVG)

    def forward(self, x: Tensor) -> Tensor:
        x, _ = self.decomp1(x + self.attention(x, x, x))
        res, _ = self.decomp2(x + self.ffn(x))
        return res


class DecoderLayer(nn.Module):
    def __init__(self, d: int, heads: int, d_ff: int, c_out: int) -> None:
        super().__init__()
        self.self_attention = AutoCorrelationLayer(d, heads)
        self.cross_attention = AutoCorrelationLayer(d, heads)
        self.ffn = FFN(d, d_ff)
        self.decomps = nn.ModuleList(SeriesDecomp(MOVING_AVG) for _ in range(3))
        self.projection = nn.Conv1d(d, c_out, 3, padding=1, padding_mode="circular", bias=False)

    def forward(self, x: Tensor, cross: Tensor) -> tuple[Tensor, Tensor]:
        x, trend1 = self.decomps[0](x + self.self_attention(x, x, x))
        x, trend2 = self.decomps[1](x + self.cross_attention(x, cross, cross))
        x, trend3 = self.decomps[2](x + self.ffn(x))
        residual_trend = trend1 + trend2 + trend3
        return x, self.projection(residual_trend.permute(0, 2, 1)).transpose(1, 2)


class MyLayernorm(nn.Module):
    def __init__(self, d: int) -> None:
        super().__init__()
        self.layernorm = nn.LayerNorm(d)

    def forward(self, x: Tensor) -> Tensor:
        x_hat = self.layernorm(x)
        return x_hat - torch.mean(x_hat, dim=1).unsqueeze(1)


class DataEmbedding(nn.Module):
    def __init__(self, c_in: int, d: int) -> None:
        super().__init__()
        self.token = nn.Conv1d(c_in, d, 3, padding=1, padding_mode="circular", bias=False)
        self.temporal = nn.Linear(MARKS, d, bias=False)

    def forward(self, x: Tensor, x_mark: Tensor) -> Tensor:
        return self.token(x.permute(0, 2, 1)).transpose(1, 2) + self.temporal(x_mark)


class Autoformer(nn.Module):
    def __init__(self, d: int, heads: int, d_ff: int, e_layers: int, label: int, pred: int):
        super().__init__()
        self.label_len, self.pred_len = label, pred
        self.decomp = SeriesDecomp(MOVING_AVG)
        self.enc_embedding, self.dec_embedding = DataEmbedding(SERIES, d), DataEmbedding(SERIES, d)
        self.encoder = nn.ModuleList(EncoderLayer(d, heads, d_ff) for _ in range(e_layers))
        self.enc_norm, self.dec_norm = MyLayernorm(d), MyLayernorm(d)
        self.decoder = DecoderLayer(d, heads, d_ff, SERIES)
        self.projection = nn.Linear(d, SERIES)

    def forward(
        self, x_enc: Tensor, x_mark_enc: Tensor, x_dec: Tensor, x_mark_dec: Tensor
    ) -> Tensor:
        mean = torch.mean(x_enc, dim=1).unsqueeze(1).repeat(1, self.pred_len, 1)
        zeros = torch.zeros([x_dec.shape[0], self.pred_len, x_dec.shape[2]], device=x_enc.device)
        seasonal_init, trend_init = self.decomp(x_enc)
        trend_init = torch.cat([trend_init[:, -self.label_len :, :], mean], dim=1)
        seasonal_init = torch.cat([seasonal_init[:, -self.label_len :, :], zeros], dim=1)
        enc_out = self.enc_embedding(x_enc, x_mark_enc)
        for layer in self.encoder:
            enc_out = layer(enc_out)
        enc_out = self.enc_norm(enc_out)
        x = self.dec_embedding(seasonal_init, x_mark_dec)
        x, residual_trend = self.decoder(x, enc_out)
        trend = trend_init + residual_trend
        seasonal = self.projection(self.dec_norm(x))
        return (trend + seasonal)[:, -self.pred_len :, :]


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, d, heads, d_ff, seq, label, pred = 2, 16, 2, 32, 32, 16, 16
    else:
        batch, d, heads, d_ff, seq, label, pred = 32, 512, 8, 2048, 96, 48, 96
    torch.backends.cuda.matmul.allow_tf32 = False  # full fp32 GEMMs
    torch.backends.cudnn.allow_tf32 = False  # and 1 x 1 convolutions
    model = Autoformer(d, heads, d_ff, 2, label, pred).to(device).eval()

    @torch.no_grad()
    def step(x_enc: Tensor, x_mark_enc: Tensor, x_dec: Tensor, x_mark_dec: Tensor) -> Tensor:
        return model(x_enc, x_mark_enc, x_dec, x_mark_dec)

    def make() -> tuple[Tensor, Tensor, Tensor, Tensor]:
        t = torch.arange(seq + pred, dtype=torch.float32)
        phase = 2 * math.pi * torch.rand(batch, 1, SERIES)
        series = torch.sin(2 * math.pi * t[None, :, None] / 24 + phase)
        series = series + 0.1 * torch.randn(batch, seq + pred, SERIES).cumsum(1)
        marks = torch.rand(batch, seq + pred, MARKS) - 0.5
        x_enc, x_mark_enc = series[:, :seq], marks[:, :seq]
        x_dec = torch.cat((series[:, seq - label : seq], torch.zeros(batch, pred, SERIES)), 1)
        x_mark_dec = marks[:, seq - label :]
        return tuple(a.to(device) for a in (x_enc, x_mark_enc, x_dec, x_mark_dec))

    inputs = [make() for _ in range(2)]
    description = (
        f"Autoformer: 2 encoder + 1 decoder layers d{d} with FFT Auto-Correlation "
        f"(top {int(FACTOR * math.log(seq))} delays) and series decomposition, "
        f"{seq} -> {pred} steps of {SERIES} series, b{batch}, fp32 (TF32 off)"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
