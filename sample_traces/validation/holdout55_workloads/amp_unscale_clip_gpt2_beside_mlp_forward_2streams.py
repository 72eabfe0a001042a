"""The end of a mixed-precision (fp16) training step of one model beside the start of the next
micro-batch's forward of another: ``GradScaler``'s gradient unscale and inf check, the gradient
clipping and the scale update of a GPT-2 small's 124 M fp32 gradients on one side stream,
while a small MLP's autocast forward runs on the other (fifty-fifth hold-out: a chain of
multi-tensor kernels over 498 MB of fp32 gradients in 148 tensors, one copy, the fused
``_amp_foreach_non_finite_check_and_unscale_``, a ``_foreach_norm`` and a ``_foreach_mul_``,
purely memory-bound at some 0.2 to 0.35 ms each on an H100, plus a few scalar kernels, beside
a chain of fp16 GEMMs of 34 GFLOP each with their weight casts, LayerNorms and GELUs: a
bandwidth-bound chain and a mostly compute-bound one side by side). Model A is laid out as
GPT-2 small (Radford et al., 2019; Hugging Face's ``GPT2LMHeadModel``, the ``Conv1D`` layers
as ``Linear``, the head tied to the token embedding): token and position embeddings (50257 and
1024 x 768), 12 blocks of two LayerNorms, ``c_attn`` (768 -> 2304), ``c_proj`` (768 -> 768),
``c_fc`` (768 -> 3072) and the MLP's ``c_proj`` (3072 -> 768), the final LayerNorm: 148
tensors, 124.4 M values. Its gradients are views of one flat fp32 buffer (as DDP's
``gradient_as_bucket_view`` lays them out). Side stream 1, as the recipe of ``torch.amp``'s
documentation runs it (``scaler.unscale_(optimizer)``, ``clip_grad_norm_``, the optimizer
step, not modelled, ``scaler.update()``), each call written out as PyTorch writes it: the
scaled gradients, as the backward left them, copied into the flat buffer (one ``copy_``), so
a step depends only on its inputs, and the scale (65536) and growth tracker (1999) restored;
``unscale_``: inv_scale = scale.double().reciprocal().float(), found_inf = ``torch.full((),
0.0)``, ``torch._amp_foreach_non_finite_check_and_unscale_(grads, found_inf, inv_scale)``
over the 148 tensors (one dtype, one device, one group); ``clip_grad_norm_(max_norm=1.0,
foreach=True)``: ``_foreach_norm``, the norms stacked, their ``vector_norm``, the clip factor
min(1 / (norm + 1e-6), 1) and ``_foreach_mul_``; ``update()``: ``torch._amp_update_scale_``
(growth 2, backoff 0.5, interval 2000). Side stream 2, model B's forward on the next
micro-batch of 4096 rows: 2 residual pre-norm MLP blocks of width 1024 (LayerNorm,
``Linear(1024, 4096)``, GELU, ``Linear(4096, 1024)``, the residual), a LayerNorm and a
``Linear(1024, 1000)`` head, fp32 weights under ``torch.autocast(dtype=torch.float16)`` (each
Linear casts its weight and runs in fp16, each LayerNorm in fp32), and the cross-entropy
against its targets (fp32, on autocast's list); no autograd recorded (the backward is not part
of the step). Fork and join are the project's ``fork_join`` (``wait_stream``, and
``record_stream`` on the branch outputs outside capture). On a CPU, no autocast, fp32. Inputs
(two input sets): the flat scaled gradients (124.4 M, fp32, 65536 x 1e-3 x Gaussian; the second
set with one inf, in a ``c_fc`` weight's gradient of the last block, as after an fp16
overflow, so its step finds it, leaves the clipped gradients NaN and halves the scale where the
first set's doubles it), model B's rows (4096, 1024) and targets (4096,) int64. Returns model
A's gradient norm, found_inf and the next scale (3,), and model B's loss.

    traceinspect profile amp_unscale_clip_gpt2_beside_mlp_forward_2streams.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _blocks import ResidualMLP
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

INIT_SCALE, GROWTH_TRACKER, GROWTH, BACKOFF, INTERVAL = 65536.0, 1999, 2.0, 0.5, 2000
MAX_NORM, VOCAB, POSITIONS, CLASSES = 1.0, 50257, 1024, 1000


class GPT2Block(nn.Module):
    """GPT-2's block's parameters, in Hugging Face's registration order."""

    def __init__(self, d: int) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(d)
        self.c_attn, self.attn_proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.ln_2 = nn.LayerNorm(d)
        self.c_fc, self.mlp_proj = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)


class GPT2(nn.Module):
    """GPT2LMHeadModel's parameters (the head is tied to wte, no tensor of its own)."""

    def __init__(self, layers: int, d: int, vocab: int) -> None:
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(POSITIONS, d)
        self.h = nn.ModuleList(GPT2Block(d) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)


class MLPNet(nn.Module):
    def __init__(self, d: int, blocks: int) -> None:
        super().__init__()
        self.blocks = nn.Sequential(*(ResidualMLP(d, 4 * d, "gelu") for _ in range(blocks)))
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, CLASSES)

    def forward(self, x: Tensor) -> Tensor:
        return self.head(self.norm(self.blocks(x)))


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        layers, d, vocab, rows, width = 2, 32, 100, 64, 64
    else:
        layers, d, vocab, rows, width = 12, 768, VOCAB, 4096, 1024
    model_a = GPT2(layers, d, vocab).to(device)
    params = list(model_a.parameters())
    total = sum(p.numel() for p in params)
    flat = torch.zeros(total, device=device)
    grads = [
        c.view_as(p) for c, p in zip(flat.split([p.numel() for p in params]), params, strict=True)
    ]
    for p, g in zip(params, grads, strict=True):
        p.grad = g
    scale = torch.full((), INIT_SCALE, device=device)
    growth_tracker = torch.full((), GROWTH_TRACKER, dtype=torch.int32, device=device)
    state = [scale, growth_tracker]
    snapshot = [t.clone() for t in state]
    model_b = MLPNet(width, 2).to(device).train()
    autocast = torch.autocast(device.type, dtype=torch.float16, enabled=device.type == "cuda")
    streams = side_streams(device, 2)

    def unscale_clip_update(scaled: Tensor) -> Tensor:
        flat.copy_(scaled)
        for t, s in zip(state, snapshot, strict=True):
            t.copy_(s)
        inv_scale = scale.double().reciprocal().float()
        found_inf = torch.full((), 0.0, device=device)
        torch._amp_foreach_non_finite_check_and_unscale_(grads, found_inf, inv_scale)
        norms = torch._foreach_norm(grads, 2.0)
        total_norm = torch.linalg.vector_norm(torch.stack(norms), 2.0)
        clip_coef = MAX_NORM / (total_norm + 1e-6)
        torch._foreach_mul_(grads, torch.clamp(clip_coef, max=1.0))
        torch._amp_update_scale_(scale, growth_tracker, found_inf, GROWTH, BACKOFF, INTERVAL)
        return torch.stack((total_norm, found_inf, scale))

    def forward_b(x: Tensor, targets: Tensor) -> Tensor:
        with autocast:
            return F.cross_entropy(model_b(x), targets)

    @torch.no_grad()
    def step(scaled: Tensor, x: Tensor, targets: Tensor) -> tuple[Tensor, Tensor]:
        stats, loss = fork_join(
            device, streams, [lambda: unscale_clip_update(scaled), lambda: forward_b(x, targets)]
        )
        return stats, loss

    def make(overflow: bool) -> tuple[Tensor, ...]:
        scaled = INIT_SCALE * 1e-3 * torch.randn(total, device=device)
        if overflow:
            idx = len(params) - 6  # the last block's c_fc.weight
            start = sum(p.numel() for p in params[:idx])
            scaled[start + params[idx].numel() // 3] = float("inf")
        x = torch.randn(rows, width, device=device)
        return scaled, x, torch.randint(0, CLASSES, (rows,), device=device)

    inputs = [make(False), make(True)]
    description = (
        f"GradScaler unscale_ (_amp_foreach_non_finite_check_and_unscale_) + clip_grad_norm_ + "
        f"update of GPT-2-like grads ({len(params)} tensors, {total} values, fp32) beside a "
        f"2-block MLP {width} autocast fp16 forward + CE of {rows} rows, on 2 side streams"
    )
    return Built(step, inputs, description, [model_a, model_b, flat, state, snapshot])


if __name__ == "__main__":
    main(build, __doc__)
