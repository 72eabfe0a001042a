"""Speculative decoding's verification step (twenty-second hold-out): 4 sequences, 8 draft
tokens each, a 32,000-token vocabulary, fp32. The target's and the draft's logits become
probabilities (softmax over the vocabulary), each draft token's acceptance ratio
min(1, p / q) is compared with given uniforms, the accepted prefix is found (cumulative
product, count), the residual distribution max(p - q, 0) renormalized at every position,
and the next token chosen from it at the first rejection (argmax, deterministic).
Vocabulary-wide elementwise kernels and reductions over 1.2 M values.

    traceinspect profile speculative_verify_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor


def build(device: torch.device, smoke: bool) -> Built:
    batch, draft, vocab = (2, 3, 50) if smoke else (4, 8, 32000)

    @torch.no_grad()
    def step(
        target_logits: Tensor, draft_logits: Tensor, tokens: Tensor, uniforms: Tensor
    ) -> tuple[Tensor, Tensor]:
        p = torch.softmax(target_logits[:, :draft], dim=-1)
        q = torch.softmax(draft_logits, dim=-1)
        p_tok = p.gather(2, tokens.unsqueeze(2)).squeeze(2)
        q_tok = q.gather(2, tokens.unsqueeze(2)).squeeze(2)
        accept = (uniforms <= torch.clamp(p_tok / q_tok, max=1.0)).long()
        accepted = torch.cumprod(accept, dim=1).sum(dim=1)
        residual = torch.clamp(p - q, min=0)
        residual = residual / residual.sum(dim=-1, keepdim=True).clamp_min(1e-20)
        at = accepted.clamp(max=draft - 1)
        chosen = residual[torch.arange(batch, device=p.device), at].argmax(dim=-1)
        bonus = target_logits[:, draft].argmax(dim=-1)
        return accepted, torch.where(accepted == draft, bonus, chosen)

    def make() -> tuple[Tensor, Tensor, Tensor, Tensor]:
        return (
            torch.randn(batch, draft + 1, vocab, device=device),
            torch.randn(batch, draft, vocab, device=device),
            torch.randint(0, vocab, (batch, draft), device=device),
            torch.rand(batch, draft, device=device),
        )

    return Built(step, [make() for _ in range(2)], f"verify {draft} drafts b{batch} vocab {vocab}")


if __name__ == "__main__":
    main(build, __doc__)
