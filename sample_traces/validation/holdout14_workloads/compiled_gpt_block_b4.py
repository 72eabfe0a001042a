"""One GPT-2-small transformer block compiled with ``torch.compile`` (Inductor, mode="default",
``fullgraph=True``: Triton kernels launched through the driver API, no CUDA graphs of its
own) on 4 sequences of 256 tokens, d 768, 12 heads of 64, bf16 (fourteenth hold-out),
inference, as Hugging Face's ``GPT2Block``: LayerNorm, the fused c_attn Linear 768->2304,
split into q, k and v and the heads, ``F.scaled_dot_product_attention(is_causal=True)``,
the heads merged, the c_proj Linear 768->768 and the residual add; LayerNorm, the c_fc
Linear 768->3072, GELU with the tanh approximation (GPT-2's ``gelu_new``), the c_proj
Linear 3072->768 and the residual add. Inductor fuses the norms, the GELU and the residual
adds into a handful of Triton kernels around the four GEMMs (extern cuBLAS calls) and the
flash-attention kernel. Compiled (and run once) at build, before the measured steps; the
graph candidate is the compiled function. Input: 4 x 256 x 768. Returns 4 x 256 x 768.

    traceinspect profile compiled_gpt_block_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn


class GPT2Block(nn.Module):
    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.ln_1, self.ln_2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.c_attn, self.attn_proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.c_fc, self.mlp_proj = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x: Tensor) -> Tensor:
        b, s, d = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).view(b, s, 3, self.heads, d // self.heads).unbind(2)
        att = F.scaled_dot_product_attention(
            q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True
        )
        x = x + self.attn_proj(att.transpose(1, 2).reshape(b, s, d))
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


def build(device: torch.device, smoke: bool) -> Built:
    d, heads, seq, batch = (32, 2, 8, 2) if smoke else (768, 12, 256, 4)
    dtype = low_precision(device)
    model = GPT2Block(d, heads).to(device=device, dtype=dtype).eval()
    compiled = torch.compile(model, mode="default", fullgraph=True)

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return compiled(x)

    inputs = [(torch.randn(batch, seq, d, device=device, dtype=dtype),) for _ in range(2)]
    step(*inputs[0])  # compile now, not inside the measured steps
    description = f"compiled GPT-2 block d{d} ({heads} heads, causal SDPA), batch {batch} x {seq}"
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
