"""Top-p (nucleus) sampling (Holtzman et al., 2020) of the next token for 16 sequences over a
32,000-token vocabulary (fourteenth hold-out), the filter written on the probabilities
(equivalent to Hugging Face's ``TopPLogitsWarper``): the LM head, a Linear 1024->32000
without bias in bf16, on the last hidden state of each sequence (16 x 1024), then in fp32 the
temperature (0.8), ``softmax``, ``sort`` descending (16 x 32,000 values and their token ids),
``cumsum``, the mask of the tokens outside the nucleus (those whose preceding cumulative
probability already exceeds 0.9, so the token crossing the threshold is kept), ``masked_fill``
to zero, the renormalization, and inverse-CDF sampling: the cumulative sum of the
renormalized probabilities searched (``searchsorted``) for one uniform draw per sequence,
passed in as an input (16 x 1, fp32) so the step is deterministic and its replay can be
checked against eager, as a sampler fed its random numbers by the caller does. Then
``gather`` of the sampled positions back to token ids and to their probabilities. The 16 x
1024 x 32,000 GEMM and the segmented sort over 512,000 values take most of the GPU time.
Inputs: the hidden states (16 x 1024) and the uniform draws. Returns the sampled token ids (16
x 1) and their log-probabilities under the renormalized nucleus distribution (16 x 1, fp32).

    traceinspect profile nucleus_sampling_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn

TOP_P, TEMPERATURE = 0.9, 0.8


def build(device: torch.device, smoke: bool) -> Built:
    batch, d, vocab = (2, 32, 500) if smoke else (16, 1024, 32_000)
    dtype = low_precision(device)
    head = nn.Linear(d, vocab, bias=False).to(device=device, dtype=dtype).eval()

    @torch.no_grad()
    def step(hidden: Tensor, u: Tensor) -> tuple[Tensor, Tensor]:
        logits = head(hidden).float() / TEMPERATURE
        probs = torch.softmax(logits, dim=-1)
        sorted_probs, sorted_ids = probs.sort(dim=-1, descending=True)
        outside = sorted_probs.cumsum(dim=-1) - sorted_probs > TOP_P
        sorted_probs = sorted_probs.masked_fill(outside, 0.0)
        sorted_probs = sorted_probs / sorted_probs.sum(dim=-1, keepdim=True)
        cdf = sorted_probs.cumsum(dim=-1)
        # (B, 1) positions in the sorted order; the clamp keeps a draw above the last
        # cumulative value (rounding) on the last kept token's side of the range
        choice = torch.searchsorted(cdf, u).clamp_(max=cdf.shape[-1] - 1)
        tokens = sorted_ids.gather(-1, choice)
        return tokens, torch.log(sorted_probs.gather(-1, choice))

    inputs = [
        (
            torch.randn(batch, d, device=device, dtype=dtype),
            torch.rand(batch, 1, device=device),
        )
        for _ in range(2)
    ]
    description = f"LM head {d}->{vocab} + top-p {TOP_P} sampling (T {TEMPERATURE}), batch {batch}"
    return Built(step, inputs, description, [head])


if __name__ == "__main__":
    main(build, __doc__)
