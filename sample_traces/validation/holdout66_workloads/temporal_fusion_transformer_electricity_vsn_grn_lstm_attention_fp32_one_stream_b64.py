"""The Temporal Fusion Transformer (Lim, Arik, Loeff and Pfister, International Journal of
Forecasting 2021, "Temporal Fusion Transformers for interpretable multi-horizon time series
forecasting": static covariate encoders, variable selection networks built of gated residual
networks, an LSTM encoder-decoder seeded from the static context, gated skip connections, static
enrichment, interpretable multi-head attention and quantile outputs) forecasting the next 24 hours
of 64 Electricity-like series from their last 168, scored with the quantile loss, as its validation
pass does (sixty-sixth hold-out: one stream, fp32 with TF32 off for cuBLAS and cuDNN: the
embeddings, ``Embedding(count, 64)`` lookups of the 5 known categorical inputs (hour of day, day of
week, day of month, month, holiday flag) over all 192 steps and of the static client id (370
clients), and a ``Linear(1, 64)`` for each real input (the static scaled client level, the 2 known
reals over all 192 steps: hours from start and day of year, and the observed power usage over the
168 past steps), stacked to (64, T, 64, inputs); the static variable selection (a gated residual
network over the flattened 2 static embeddings to 2 weights, their softmax, a GRN per static input,
the weighted sum) and the 4 static context GRNs (variable selection, enrichment, and the LSTM's
initial h and c); the past variable selection over 8 inputs on 10,752 (series, step) rows and the
future one over the 7 known inputs on 1,536 rows, each a GRN over the flattened inputs (512 or 448
wide) with the selection context added, its softmax over the inputs, one GRN per input one after
another and the weighted sum; the encoder ``nn.LSTM(64, 64)`` over the 168 past steps from the
static (h, c) and the decoder ``nn.LSTM(64, 64)`` over the 24 future steps from the encoder's final
state (cuDNN, some two kernels a step); the gated skip connection (a GLU: two ``Linear(64, 64)``, a
sigmoid and a product) added to the selected inputs and LayerNorm; static enrichment (a GRN with the
enrichment context); the interpretable multi-head attention over the 192 steps, 4 heads of 16: per
head a query and a key ``Linear(64, 16)``, one value ``Linear(64, 16)`` shared by the heads, ``bmm``
scores over sqrt(16), the causal mask (-1e9 above the diagonal, made at build) added, softmax and
``bmm`` with the values; the heads stacked and averaged, ``Linear(16, 64)``; a GLU, add and
LayerNorm; the position-wise GRN; a GLU, the add to the temporal features and LayerNorm;
``Linear(64, 3)`` over the 24 decoder steps to the 0.1, 0.5 and 0.9 quantiles; the quantile loss,
the pinball losses summed over the quantiles and averaged over series and steps; some 750 kernels,
half of them the LSTMs' 192 steps, most GEMMs a few MFLOP, some 1 to 3 ms of GPU time, launch-bound
eager). Laid out as google-research's ``tft/libs/tft_model.py`` (``gated_residual_network`` with its
separate skip ``Dense`` where the output size differs, the context ``Dense`` without bias, ELU, the
``apply_gating_layer`` GLU of two ``Dense`` layers, ``add_and_norm`` with Keras's LayerNorm epsilon
1e-3; ``get_tft_embeddings``, ``static_combine_and_mask``, ``lstm_combine_and_mask`` stacking the
embeddings on the last axis and flattening them so; the encoder LSTM seeded with
``static_context_state_h`` and ``_c``, the decoder with the encoder's final states; the gated skip,
the enrichment, ``InterpretableMultiHeadAttention`` with ``get_decoder_mask`` and
``ScaledDotProductAttention``'s -1e9 masking, the final gated skip, the output ``Dense`` over the
decoder steps, ``tensorflow_quantile_loss``) with the Electricity experiment's ``total_time_steps
192, num_encoder_steps 168, num_heads 4, stack_size 1, minibatch_size 64`` and quantiles (0.1, 0.5,
0.9), but hidden size 64 for its 160 and a wider input set than its formatter's (8 time-varying
inputs and 2 static ones for its 4 and 1); the shared value projection computed once rather than
once per head (the same layer on the same input, as pytorch-forecasting's port does), dropout off
(eval). fp32 weights and activations with ``torch.backends.cuda.matmul.allow_tf32`` and
``torch.backends.cudnn.allow_tf32`` both off (set at build), eval, no gradients, random weights
(torch's defaults). Inputs (two input sets), batch first: the client ids (64,) int64 below 370,
their static levels (64, 1) fp32, the known categoricals (64, 192, 5) int64 (a calendar from a
random start hour), the known reals (64, 192, 2) fp32, the observed power usage (64, 168, 1) fp32
and the 24 future values to score (64, 24) fp32, Gaussian. Returns the quantile forecasts (64, 24,
3) fp32 and the quantile loss (a 0-d fp32 tensor).

    traceinspect profile temporal_fusion_transformer_electricity_vsn_grn_lstm_attention_fp32_one_stream_b64.py
"""  # noqa: E501 - the profile line: the file name is long

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn

ENCODER_STEPS, DECODER_STEPS, HIDDEN, HEADS, BATCH, CLIENTS = 168, 24, 64, 4, 64, 370
KNOWN_CATEGORIES = (24, 7, 31, 12, 2)  # hour, day of week, day of month, month, holiday
KNOWN_REALS, OBSERVED_REALS, QUANTILES, LN_EPS = 2, 1, (0.1, 0.5, 0.9), 1e-3


class GatingLayer(nn.Module):
    """``apply_gating_layer``: a GLU of two dense layers, the second through a sigmoid."""

    def __init__(self, size_in: int, size_out: int) -> None:
        super().__init__()
        self.activation_layer = nn.Linear(size_in, size_out)
        self.gated_layer = nn.Linear(size_in, size_out)

    def forward(self, x: Tensor) -> Tensor:
        return self.activation_layer(x) * torch.sigmoid(self.gated_layer(x))


class AddAndNorm(nn.Module):
    def __init__(self, size: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(size, eps=LN_EPS)

    def forward(self, x: Tensor, skip: Tensor) -> Tensor:
        return self.norm(x + skip)


class GatedResidualNetwork(nn.Module):
    def __init__(
        self, size_in: int, hidden: int, output_size: int | None = None, context: bool = False
    ) -> None:
        super().__init__()
        self.skip = nn.Linear(size_in, output_size) if output_size is not None else None
        size_out = hidden if output_size is None else output_size
        self.hidden_1 = nn.Linear(size_in, hidden)
        self.context = nn.Linear(hidden, hidden, bias=False) if context else None
        self.hidden_2 = nn.Linear(hidden, hidden)
        self.gate = GatingLayer(hidden, size_out)
        self.add_and_norm = AddAndNorm(size_out)

    def forward(self, x: Tensor, context: Tensor | None = None) -> Tensor:
        skip = x if self.skip is None else self.skip(x)
        hidden = self.hidden_1(x)
        if self.context is not None:
            hidden = hidden + self.context(context)
        hidden = self.hidden_2(F.elu(hidden))
        return self.add_and_norm(self.gate(hidden), skip)


class StaticCombineAndMask(nn.Module):
    def __init__(self, num_static: int, hidden: int) -> None:
        super().__init__()
        self.flat = GatedResidualNetwork(num_static * hidden, hidden, output_size=num_static)
        self.per_input = nn.ModuleList(
            GatedResidualNetwork(hidden, hidden) for _ in range(num_static)
        )

    def forward(self, embedding: Tensor) -> tuple[Tensor, Tensor]:  # (b, num_static, hidden)
        sparse_weights = F.softmax(self.flat(embedding.flatten(1)), dim=-1)[..., None]
        transformed = torch.cat(
            [grn(embedding[:, i : i + 1, :]) for i, grn in enumerate(self.per_input)], dim=1
        )
        return (sparse_weights * transformed).sum(dim=1), sparse_weights


class LSTMCombineAndMask(nn.Module):
    def __init__(self, num_inputs: int, hidden: int) -> None:
        super().__init__()
        self.flat = GatedResidualNetwork(
            num_inputs * hidden, hidden, output_size=num_inputs, context=True
        )
        self.per_input = nn.ModuleList(
            GatedResidualNetwork(hidden, hidden) for _ in range(num_inputs)
        )

    def forward(self, embedding: Tensor, context: Tensor) -> tuple[Tensor, Tensor]:
        b, t, hidden, num_inputs = embedding.shape  # stacked on the last axis, as Keras does
        flatten = embedding.reshape(b, t, hidden * num_inputs)
        mlp_outputs = self.flat(flatten, context[:, None])  # the context broadcast over time
        sparse_weights = F.softmax(mlp_outputs, dim=-1)[:, :, None]  # (b, t, 1, inputs)
        transformed = torch.stack(
            [grn(embedding[..., i]) for i, grn in enumerate(self.per_input)], dim=-1
        )
        return (sparse_weights * transformed).sum(dim=-1), sparse_weights


class InterpretableMultiHeadAttention(nn.Module):
    def __init__(self, n_head: int, d_model: int) -> None:
        super().__init__()
        self.n_head = n_head
        self.d_k = d_model // n_head
        self.qs_layers = nn.ModuleList(
            nn.Linear(d_model, self.d_k, bias=False) for _ in range(n_head)
        )
        self.ks_layers = nn.ModuleList(
            nn.Linear(d_model, self.d_k, bias=False) for _ in range(n_head)
        )
        self.vs_layer = nn.Linear(d_model, self.d_k, bias=False)  # shared by the heads
        self.w_o = nn.Linear(self.d_k, d_model, bias=False)

    def forward(self, x: Tensor, mmask: Tensor) -> tuple[Tensor, Tensor]:
        temper = math.sqrt(self.d_k)
        vs = self.vs_layer(x)
        heads, attns = [], []
        for qs_layer, ks_layer in zip(self.qs_layers, self.ks_layers, strict=True):
            attn = torch.bmm(qs_layer(x), ks_layer(x).transpose(1, 2)) / temper
            attn = F.softmax(attn + mmask, dim=-1)
            heads.append(torch.bmm(attn, vs))
            attns.append(attn)
        outputs = torch.stack(heads).mean(dim=0)
        return self.w_o(outputs), torch.stack(attns)


class TemporalFusionTransformer(nn.Module):
    def __init__(self, hidden: int, encoder_steps: int, clients: int) -> None:
        super().__init__()
        self.encoder_steps = encoder_steps
        self.static_id_embedding = nn.Embedding(clients, hidden)
        self.static_real = nn.Linear(1, hidden)
        self.known_embeddings = nn.ModuleList(nn.Embedding(n, hidden) for n in KNOWN_CATEGORIES)
        self.known_reals = nn.ModuleList(nn.Linear(1, hidden) for _ in range(KNOWN_REALS))
        self.observed_reals = nn.ModuleList(nn.Linear(1, hidden) for _ in range(OBSERVED_REALS))
        known = len(KNOWN_CATEGORIES) + KNOWN_REALS
        self.static_selection = StaticCombineAndMask(2, hidden)
        self.static_context_variable_selection = GatedResidualNetwork(hidden, hidden)
        self.static_context_enrichment = GatedResidualNetwork(hidden, hidden)
        self.static_context_state_h = GatedResidualNetwork(hidden, hidden)
        self.static_context_state_c = GatedResidualNetwork(hidden, hidden)
        self.historical_selection = LSTMCombineAndMask(known + OBSERVED_REALS, hidden)
        self.future_selection = LSTMCombineAndMask(known, hidden)
        self.encoder_lstm = nn.LSTM(hidden, hidden, batch_first=True)
        self.decoder_lstm = nn.LSTM(hidden, hidden, batch_first=True)
        self.lstm_gate = GatingLayer(hidden, hidden)
        self.lstm_add_and_norm = AddAndNorm(hidden)
        self.enrichment = GatedResidualNetwork(hidden, hidden, context=True)
        self.self_attn = InterpretableMultiHeadAttention(HEADS, hidden)
        self.attn_gate = GatingLayer(hidden, hidden)
        self.attn_add_and_norm = AddAndNorm(hidden)
        self.decoder_grn = GatedResidualNetwork(hidden, hidden)
        self.final_gate = GatingLayer(hidden, hidden)
        self.final_add_and_norm = AddAndNorm(hidden)
        self.output = nn.Linear(hidden, len(QUANTILES))

    def forward(
        self,
        client: Tensor,
        level: Tensor,
        known_cat: Tensor,
        known_real: Tensor,
        obs: Tensor,
        mmask: Tensor,
    ) -> Tensor:
        enc = self.encoder_steps
        # get_tft_embeddings
        static_inputs = torch.stack(
            [self.static_real(level), self.static_id_embedding(client)], dim=1
        )  # (b, 2, hidden)
        known_combined = torch.stack(
            [layer(known_real[..., i : i + 1]) for i, layer in enumerate(self.known_reals)]
            + [emb(known_cat[..., i]) for i, emb in enumerate(self.known_embeddings)],
            dim=-1,
        )  # (b, T, hidden, 7)
        obs_inputs = torch.stack(
            [layer(obs[..., i : i + 1]) for i, layer in enumerate(self.observed_reals)], dim=-1
        )  # (b, enc, hidden, 1)
        historical_inputs = torch.cat([known_combined[:, :enc], obs_inputs], dim=-1)
        future_inputs = known_combined[:, enc:]
        # static covariate encoders
        static_encoder, _ = self.static_selection(static_inputs)
        c_selection = self.static_context_variable_selection(static_encoder)
        c_enrichment = self.static_context_enrichment(static_encoder)
        state_h = self.static_context_state_h(static_encoder)
        state_c = self.static_context_state_c(static_encoder)
        # variable selection
        historical_features, _ = self.historical_selection(historical_inputs, c_selection)
        future_features, _ = self.future_selection(future_inputs, c_selection)
        # LSTM encoder-decoder
        history_lstm, (h_n, c_n) = self.encoder_lstm(
            historical_features, (state_h[None].contiguous(), state_c[None].contiguous())
        )
        future_lstm, _ = self.decoder_lstm(future_features, (h_n, c_n))
        lstm_layer = torch.cat([history_lstm, future_lstm], dim=1)
        input_embeddings = torch.cat([historical_features, future_features], dim=1)
        temporal_feature_layer = self.lstm_add_and_norm(
            self.lstm_gate(lstm_layer), input_embeddings
        )
        # static enrichment, self-attention, position-wise feed-forward
        enriched = self.enrichment(temporal_feature_layer, c_enrichment[:, None])
        x, _ = self.self_attn(enriched, mmask)
        x = self.attn_add_and_norm(self.attn_gate(x), enriched)
        decoder = self.decoder_grn(x)
        transformer_layer = self.final_add_and_norm(
            self.final_gate(decoder), temporal_feature_layer
        )
        return self.output(transformer_layer[:, enc:])


def quantile_loss(targets: Tensor, predictions: Tensor, quantiles: Tensor) -> Tensor:
    """``tensorflow_quantile_loss`` for each quantile, summed over the quantiles, averaged."""
    prediction_underflow = targets[..., None] - predictions
    q_loss = quantiles * F.relu(prediction_underflow) + (1.0 - quantiles) * F.relu(
        -prediction_underflow
    )
    return q_loss.sum(dim=-1).mean()


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, encoder_steps, decoder_steps, hidden, clients = 3, 10, 4, 16, 7
    else:
        batch, encoder_steps, decoder_steps = BATCH, ENCODER_STEPS, DECODER_STEPS
        hidden, clients = HIDDEN, CLIENTS
    torch.backends.cuda.matmul.allow_tf32 = False  # full fp32 GEMMs (torch's default)
    torch.backends.cudnn.allow_tf32 = False  # and full fp32 cuDNN LSTM math
    model = TemporalFusionTransformer(hidden, encoder_steps, clients).to(device).eval()
    steps = encoder_steps + decoder_steps
    mask = torch.ones(steps, steps, device=device).tril()  # get_decoder_mask: j <= i
    mmask = -1e9 * (1.0 - mask)
    quantiles = torch.tensor(QUANTILES, device=device)

    @torch.no_grad()
    def step(
        client: Tensor,
        level: Tensor,
        known_cat: Tensor,
        known_real: Tensor,
        obs: Tensor,
        targets: Tensor,
    ) -> tuple[Tensor, Tensor]:
        predictions = model(client, level, known_cat, known_real, obs, mmask)
        return predictions, quantile_loss(targets, predictions, quantiles)

    def windows() -> tuple[Tensor, ...]:
        hours = torch.randint(0, 24 * 365, (batch, 1)) + torch.arange(steps)  # (b, T)
        days = hours // 24
        holiday = (torch.rand(batch, steps) < 0.03).long()
        known_cat = torch.stack((hours % 24, days % 7, days % 31, (days // 31) % 12, holiday), -1)
        return (
            torch.randint(0, clients, (batch,), device=device),
            torch.randn(batch, 1, device=device),
            known_cat.to(device),
            torch.randn(batch, steps, KNOWN_REALS, device=device),
            torch.randn(batch, encoder_steps, OBSERVED_REALS, device=device),
            torch.randn(batch, decoder_steps, device=device),
        )

    inputs = [windows() for _ in range(2)]
    description = (
        f"Temporal Fusion Transformer: static + past ({len(KNOWN_CATEGORIES) + KNOWN_REALS + 1} "
        f"inputs) + future VSNs of GRNs, LSTM {encoder_steps} + {decoder_steps} steps, "
        f"interpretable {HEADS}-head attention, hidden {hidden}, {len(QUANTILES)} quantiles + "
        f"quantile loss, fp32 TF32 off, one stream, b{batch}"
    )
    return Built(step, inputs, description, [model, mmask, quantiles])


if __name__ == "__main__":
    main(build, __doc__)
