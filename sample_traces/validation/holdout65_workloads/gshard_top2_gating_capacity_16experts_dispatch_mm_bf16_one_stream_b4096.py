"""Two GShard mixture-of-experts sublayers (Lepikhin et al., ICLR 2021, "GShard: Scaling Giant
Models with Conditional Computation and Automatic Sharding": top-2 gating with a fixed expert
capacity, the tokens dispatched to and combined from per-expert buffers by dense one-hot matrices,
and the load balancing auxiliary loss) over 4096 tokens (8 sequences of 512) on one GPU holding all
16 experts (sixty-fifth hold-out: one stream, bf16 with the gating in fp32: in each sublayer the
LayerNorm, the gate's ``Linear(768, 16)`` and its fp32 softmax; the first expert's argmax and
one-hot (a zeros and a ``scatter_``), the logits with it masked to -inf, the second's argmax and
one-hot; each token's place in its experts' queues by ``cumsum`` less one, the second choices after
all the first; the auxiliary loss from the mean gates and the first choices' fractions; the masks of
the places within the capacity of 2 S / E = 512, the two gates renormalized over the kept choices,
the places' one-hot rows over the capacity and the combine weights (4096, 16, 512) as two ``bmm``
outer products and their sum (134 MB in fp32), the dispatch mask; the dispatch as one (8,192 x
4,096) x (4,096 x 768) ``mm`` of the transposed mask, then the 16 experts one after another, each
``Linear(768, 3072)``, ReLU and ``Linear(3072, 768)`` on its 512 slots, their concatenation, the
combine as one (4,096 x 8,192) x (8,192 x 768) ``mm`` and the residual add; the two sublayers'
auxiliary losses summed; some 220 kernels, 360 GFLOP in all (the dispatch and combine products 52
GFLOP each a sublayer, the experts' 32 GEMMs of 512 x 768 x 3072), the gating's elementwise kernels
over the (4096, 16, 512) tensors some 1 GB of memory traffic a sublayer, some 1 to 2 ms of GPU
time). Laid out as fairseq's ``MOELayer`` and ``Top2Gate`` (``top2gating`` with ``use_fp32=True``,
its ``one_hot``, ``fused_cumsum_sub_one``, ``l_aux = mean(me * ce) * E * E``, the capacity ``2 *
ceil(S / E)``, ``normalize_gate_prob_before_dropping=False``; the ``MOELayer`` forward's
``dispatch_mask.to(input.dtype).permute(1, 2, 0)`` and ``mm``, the local experts' loop over
``chunk``s and the combine ``mm``; experts as ``FeedForwardNetwork`` with ReLU) on one rank (no
all-to-all), with ``second_expert_policy "all"`` (the default "sampling" adds Gumbel noise to the
second choice's logits, which would make replayed outputs differ from eager ones) and the training
capacity (the evaluation capacity fraction off), each sublayer pre-norm with its residual, the
attention sublayers between them left out. bf16 weights and activations on a GPU (fp32 on a CPU),
the gate's logits and the routing in fp32, eval, no gradients, random weights (torch's defaults).
Input (two input sets): the hidden states (8, 512, 768) bf16, Gaussian. Returns the hidden states
(8, 512, 768) and the summed auxiliary loss (a 0-d fp32 tensor).

    traceinspect profile gshard_top2_gating_capacity_16experts_dispatch_mm_bf16_one_stream_b4096.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

SEQS, SEQ_LEN, MODEL_DIM, FFN_DIM, EXPERTS, SUBLAYERS = 8, 512, 768, 3072, 16, 2


def one_hot(indices: Tensor, num_classes: int, unsqueeze_indices: bool = False) -> Tensor:
    if unsqueeze_indices:
        indices = indices.unsqueeze(-1)
    output = torch.zeros(
        indices.shape[:-1] + (num_classes,), device=indices.device, dtype=indices.dtype
    )
    output.scatter_(len(output.shape) - 1, indices, 1)
    return output


def top2gating(logits: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """fairseq's ``top2gating``: (l_aux, combine_weights (S, E, C), dispatch_mask (S, E, C))."""
    orig_dtype = logits.dtype
    logits = logits.float()
    gates = F.softmax(logits, dim=1)
    num_tokens, num_experts = gates.shape
    capacity = 2 * math.ceil(num_tokens / num_experts)
    indices1_s = torch.argmax(gates, dim=1, keepdim=True)
    mask1 = one_hot(indices1_s, num_experts)
    logits_except1 = logits.masked_fill(mask1.bool(), float("-inf"))
    indices2_s = torch.argmax(logits_except1, dim=1, keepdim=True)
    mask2 = one_hot(indices2_s, num_experts)
    locations1 = torch.cumsum(mask1, dim=0) - 1
    locations2 = torch.cumsum(mask2, dim=0) - 1
    locations2 += torch.sum(mask1, dim=0, keepdim=True)
    me = torch.mean(gates, dim=0)
    ce = torch.mean(mask1.to(gates.dtype), dim=0)
    l_aux = torch.mean(me * ce) * num_experts * num_experts
    mask1 = mask1 * torch.lt(locations1, capacity)
    mask2 = mask2 * torch.lt(locations2, capacity)
    gates1_s = (gates * mask1).sum(dim=1)
    gates2_s = (gates * mask2).sum(dim=1)
    denom_s = torch.clamp(gates1_s + gates2_s, min=torch.finfo(gates.dtype).eps)
    gates1_s = gates1_s / denom_s
    gates2_s = gates2_s / denom_s
    locations1_s = torch.sum(locations1 * mask1, dim=1)
    locations2_s = torch.sum(locations2 * mask2, dim=1)
    gates1 = gates1_s.unsqueeze(-1) * mask1.to(gates1_s.dtype)
    gates2 = gates2_s.unsqueeze(-1) * mask2.to(gates2_s.dtype)
    locations1_sc = one_hot(locations1_s, capacity, unsqueeze_indices=True)
    locations2_sc = one_hot(locations2_s, capacity, unsqueeze_indices=True)
    combine1_sec = torch.bmm(gates1.unsqueeze(-1), locations1_sc.to(gates1.dtype).unsqueeze(1))
    combine2_sec = torch.bmm(gates2.unsqueeze(-1), locations2_sc.to(gates2.dtype).unsqueeze(1))
    combine_weights = combine1_sec + combine2_sec
    dispatch_mask = combine_weights.bool()
    return l_aux, combine_weights.to(orig_dtype), dispatch_mask


class MOELayer(nn.Module):
    def __init__(self, model_dim: int, ffn_dim: int, experts: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(model_dim)
        self.wg = nn.Linear(model_dim, experts, bias=False)  # Top2Gate
        self.experts = nn.ModuleList(
            nn.Sequential(nn.Linear(model_dim, ffn_dim), nn.ReLU(), nn.Linear(ffn_dim, model_dim))
            for _ in range(experts)
        )

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        d_model = x.shape[-1]
        reshaped_input = self.norm(x).reshape(-1, d_model)
        l_aux, combine_weights, dispatch_mask = top2gating(self.wg(reshaped_input))
        dispatch_mask = dispatch_mask.to(x.dtype).permute(1, 2, 0)  # S, E, C -> E, C, S
        e, c, s = dispatch_mask.size()
        dispatched_input = torch.mm(dispatch_mask.view(e * c, s), reshaped_input)
        chunks = dispatched_input.reshape(e, c, d_model).chunk(e, dim=0)
        expert_output = torch.cat(
            [expert(chunk) for chunk, expert in zip(chunks, self.experts, strict=True)], dim=0
        )
        combined_output = combine_weights.view(s, e * c).mm(expert_output.view(e * c, d_model))
        return x + combined_output.reshape(x.shape), l_aux


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        seqs, seq_len, model_dim, ffn_dim, experts = 2, 16, 16, 32, 4
    else:
        seqs, seq_len, model_dim, ffn_dim, experts = SEQS, SEQ_LEN, MODEL_DIM, FFN_DIM, EXPERTS
    dtype = low_precision(device)
    layers = nn.ModuleList(MOELayer(model_dim, ffn_dim, experts) for _ in range(SUBLAYERS))
    layers = layers.to(device, dtype).eval()

    @torch.no_grad()
    def step(x: Tensor) -> tuple[Tensor, Tensor]:
        l_aux_total = torch.zeros((), device=x.device)
        for layer in layers:
            x, l_aux = layer(x)
            l_aux_total = l_aux_total + l_aux
        return x, l_aux_total

    inputs = [
        (torch.randn(seqs, seq_len, model_dim, device=device, dtype=dtype),) for _ in range(2)
    ]
    tokens = seqs * seq_len
    precision = str(dtype).removeprefix("torch.")
    description = (
        f"GShard top-2 MoE: {SUBLAYERS} sublayers, {experts} experts {model_dim}-{ffn_dim}, "
        f"capacity {2 * math.ceil(tokens / experts)}, one-hot dispatch/combine mm, {precision}, "
        f"one stream, b{tokens}"
    )
    return Built(step, inputs, description, [layers])


if __name__ == "__main__":
    main(build, __doc__)
