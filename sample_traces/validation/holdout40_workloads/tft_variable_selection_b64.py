"""Temporal Fusion Transformer pieces (Lim et al., 2021, the gated residual networks, variable
selection, static enrichment and interpretable multi-head attention laid out as
pytorch-forecasting's ``TemporalFusionTransformer``) without the LSTM encoder-decoder, for 64
series of 48 time steps with 12 real-valued time-varying inputs and hidden size 128 (fortieth
hold-out): bf16 on a GPU (the softmaxes in fp32), eval mode (dropout off), no gradients. A GRN
(gated residual network) on x with an optional context c: ELU(``Linear(in, 128)`` x +
``Linear(128, 128, bias=False)`` c), ``Linear(128, 128)``, a GLU (``Linear(128, 2 out)`` and
``F.glu``), added to x (through ``Linear(in, out)`` where the sizes differ) and a
LayerNorm(out). Static covariate encoder: two GRNs 128 -> 128 on the given static embedding
(64, 128), the variable-selection context and the enrichment context. Variable selection: each
of the 12 inputs scaled to 128 by its own ``Linear(1, 128)`` (written as one broadcast multiply
and add over a (12, 128) weight and bias), (64, 48, 12, 128); the flattened 1,536 through a
GRN 1536 -> 12 with the selection context broadcast over time and a softmax over the 12: the
variable weights; each variable through its own GRN 128 -> 128 (12 GRNs, one after another on
3,072 rows each); their weighted sum (64, 48, 128). Static enrichment: a GRN 128 -> 128 with
the enrichment context. Interpretable multi-head attention, 4 heads of 32: per-head queries and
keys (``Linear(128, 128)`` each, split into heads), one value projection ``Linear(128, 32)``
shared by the heads, scores / sqrt(32) plus a causal mask (made at build) and a softmax in fp32,
each head's weights times the shared values, the heads averaged and ``Linear(32, 128)``; a gate
(GLU ``Linear(128, 256)``), add to the enriched input and LayerNorm; the position-wise GRN 128 ->
128; a gate, add to the variable-selection output and LayerNorm; ``Linear(128, 7)`` to 7
quantiles. Many small GEMMs on 3,072 rows with LayerNorm / GLU / ELU passes between them.
Inputs: the time-varying inputs (64, 48, 12) and the static embedding (64, 128). Returns the
quantile forecasts (64, 48, 7), the variable weights (64, 48, 12) and the head-averaged
attention weights (64, 48, 48), fp32.

    traceinspect profile tft_variable_selection_b64.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

VARIABLES, STEPS, HEADS, QUANTILES = 12, 48, 4, 7


class GRN(nn.Module):
    def __init__(self, cin: int, hidden: int, cout: int, context: bool = False) -> None:
        super().__init__()
        self.skip = nn.Linear(cin, cout) if cin != cout else nn.Identity()
        self.fc1 = nn.Linear(cin, hidden)
        self.context = nn.Linear(hidden, hidden, bias=False) if context else None
        self.fc2 = nn.Linear(hidden, hidden)
        self.glu = nn.Linear(hidden, 2 * cout)
        self.norm = nn.LayerNorm(cout)

    def forward(self, x: Tensor, c: Tensor | None = None) -> Tensor:
        h = self.fc1(x)
        if self.context is not None and c is not None:
            h = h + self.context(c)
        h = self.fc2(F.elu(h))
        return self.norm(self.skip(x) + F.glu(self.glu(h), dim=-1))


class GateAddNorm(nn.Module):
    def __init__(self, d: int) -> None:
        super().__init__()
        self.glu, self.norm = nn.Linear(d, 2 * d), nn.LayerNorm(d)

    def forward(self, x: Tensor, skip: Tensor) -> Tensor:
        return self.norm(skip + F.glu(self.glu(x), dim=-1))


class InterpretableAttention(nn.Module):
    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.heads, self.dh = heads, d // heads
        self.q, self.k = nn.Linear(d, d), nn.Linear(d, d)
        self.v, self.out = nn.Linear(d, self.dh), nn.Linear(self.dh, d)

    def forward(self, x: Tensor, mask: Tensor) -> tuple[Tensor, Tensor]:
        b, t, d = x.shape
        q, k = (p(x).view(b, t, self.heads, self.dh).transpose(1, 2) for p in (self.q, self.k))
        scores = (q @ k.transpose(-1, -2)).float() / math.sqrt(self.dh) + mask
        att = scores.softmax(dim=-1)  # (b, heads, t, t)
        heads = att.to(x.dtype) @ self.v(x)[:, None]  # (b, heads, t, dh)
        return self.out(heads.mean(dim=1)), att.mean(dim=1)


class TFT(nn.Module):
    def __init__(self, variables: int, d: int, heads: int) -> None:
        super().__init__()
        self.pre_w = nn.Parameter(torch.randn(variables, d))
        self.pre_b = nn.Parameter(torch.randn(variables, d) * 0.1)
        self.static_selection, self.static_enrichment = GRN(d, d, d), GRN(d, d, d)
        self.flat = GRN(variables * d, d, variables, context=True)
        self.variable_grns = nn.ModuleList(GRN(d, d, d) for _ in range(variables))
        self.enrichment = GRN(d, d, d, context=True)
        self.attention = InterpretableAttention(d, heads)
        self.attention_gate = GateAddNorm(d)
        self.positionwise = GRN(d, d, d)
        self.output_gate = GateAddNorm(d)
        self.quantiles = nn.Linear(d, QUANTILES)

    def forward(self, x: Tensor, static: Tensor, mask: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        c_sel = self.static_selection(static)[:, None]  # (b, 1, d), broadcast over time
        c_enr = self.static_enrichment(static)[:, None]
        emb = x[..., None] * self.pre_w + self.pre_b  # (b, t, variables, d)
        weights = self.flat(emb.flatten(2), c_sel).float().softmax(dim=-1)  # (b, t, variables)
        per_var = torch.stack(
            [grn(emb[:, :, i]) for i, grn in enumerate(self.variable_grns)], dim=2
        )
        selected = (per_var * weights.to(x.dtype)[..., None]).sum(dim=2)  # (b, t, d)
        enriched = self.enrichment(selected, c_enr)
        att, att_weights = self.attention(enriched, mask)
        h = self.positionwise(self.attention_gate(att, enriched))
        h = self.output_gate(h, selected)
        return self.quantiles(h).float(), weights, att_weights


def build(device: torch.device, smoke: bool) -> Built:
    batch, steps, variables, d = (2, 6, 3, 16) if smoke else (64, STEPS, VARIABLES, 128)
    dtype = low_precision(device)
    model = TFT(variables, d, HEADS).to(device, dtype).eval()
    mask = torch.full((steps, steps), float("-inf"), device=device).triu(1)

    @torch.no_grad()
    def step(x: Tensor, static: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        return model(x, static, mask)

    inputs = [
        (
            torch.randn(batch, steps, variables, device=device, dtype=dtype),
            torch.randn(batch, d, device=device, dtype=dtype),
        )
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"Temporal Fusion Transformer: variable selection over {variables} inputs ({variables} "
        f"GRNs), static enrichment GRN, interpretable {HEADS}-head attention over {steps} steps, "
        f"hidden {d}, b{batch}",
        [model, mask],
    )


if __name__ == "__main__":
    main(build, __doc__)
