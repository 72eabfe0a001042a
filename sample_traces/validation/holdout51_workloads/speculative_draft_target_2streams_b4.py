"""Pipelined speculative decoding for 4 sequences: a small draft model proposes the next 4 tokens
on one side stream while the target model verifies the 4 tokens drafted the step before on another
(fifty-first hold-out: greedy speculative decoding with the draft run ahead, a chain of 4 dependent
single-token passes of GEMV-shaped kernels beside one 4-position pass of a model 6 times larger,
some 500 launches, then the acceptance on the current stream; the draft continues from the last
drafted token, betting that all 4 will be accepted, so the two branches are independent). Both
models are pre-norm decoders over a shared 32,000-token vocabulary, no positional encoding: token
embedding, per layer RMSNorm, a fused QKV projection, the new keys and values written into the
layer's static cache of 256 positions (``index_copy_`` along the position axis with device index
tensors), ``F.scaled_dot_product_attention`` over the whole cache with a boolean mask of the
positions filled so far (cache position <= query position, compared on the device), the output
projection and a SiLU MLP (x 2.75), then a final RMSNorm and the LM head. Draft: 2 layers, d 512, 8
heads; target: 6 layers, d 1024, 16 heads. The caches (batch 4, heads, 256, head dim), keys and
values per layer, are made at build and hold random keys and values up to where each model has
read: the target's its first p = 200 positions (a prefilled prompt of 200 tokens), the draft's p +
4 (the prompt and the tokens it drafted last step); the rest are zeros until written. Side stream
1, the draft: 4 greedy passes, pass i embedding its token (the last drafted token, then each
argmax), writing position p + 4 + i, attending to positions <= p + 4 + i and taking the argmax of
its logits; all on the device, no host reads. Side stream 2, the target: one pass over the last
accepted token and the first 3 of last step's drafts at positions p .. p + 3 (causal within them),
and the argmax of its logits at the 4 positions. Joined with the project's ``fork_join``
(``wait_stream``, and ``record_stream`` on the branch outputs outside capture), then on the current
stream: the target's argmax compared with the 4 drafts, the accepted count as the sum of the
cumulative product of the matches, and the next token, the target's at the first mismatch (the last
draft when all 4 match). Every write comes before the reads of the same positions within the step,
and both input sets share p, so a step depends only on its inputs. bf16 on a GPU, eval mode, no
gradients. Inputs: the tokens to verify (4, 5) int64 (the last accepted token and the 4 drafts of
last step) and the position p (1,) int64 (200 in both input sets). Returns the new drafts (4, 4)
int64, the accepted counts (4,) and the next tokens (4,).

    traceinspect profile speculative_draft_target_2streams_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

DRAFT = 4  # tokens proposed (and verified) per step


def rms_norm(x: Tensor, weight: Tensor) -> Tensor:
    return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6).to(x.dtype) * weight


class Layer(nn.Module):
    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.Parameter(torch.ones(d)), nn.Parameter(torch.ones(d))
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.out = nn.Linear(d, d, bias=False)
        self.up = nn.Linear(d, d * 11 // 4, bias=False)
        self.down = nn.Linear(d * 11 // 4, d, bias=False)

    def forward(
        self, x: Tensor, k_cache: Tensor, v_cache: Tensor, index: Tensor, mask: Tensor
    ) -> Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(rms_norm(x, self.norm1)).view(b, t, 3, self.heads, -1).unbind(2)
        k_cache.index_copy_(2, index, k.transpose(1, 2))
        v_cache.index_copy_(2, index, v.transpose(1, 2))
        y = F.scaled_dot_product_attention(q.transpose(1, 2), k_cache, v_cache, attn_mask=mask)
        x = x + self.out(y.transpose(1, 2).reshape(b, t, d))
        return x + self.down(F.silu(self.up(rms_norm(x, self.norm2))))


class Decoder(nn.Module):
    """A decoder with a static KV cache per layer; ``forward`` runs t new tokens at ``index``."""

    def __init__(
        self, layers: int, d: int, heads: int, vocab: int, batch: int, ctx: int, filled: int
    ) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList(Layer(d, heads) for _ in range(layers))
        self.norm = nn.Parameter(torch.ones(d))
        self.head = nn.Linear(d, vocab, bias=False)
        shape = (layers, 2, batch, heads, ctx, d // heads)
        cache = torch.zeros(shape)
        cache[..., :filled, :] = torch.randn(*shape[:4], filled, d // heads)
        self.register_buffer("cache", cache)
        self.register_buffer("positions", torch.arange(ctx))

    def forward(self, tokens: Tensor, index: Tensor) -> Tensor:
        """tokens (batch, t), index (t,) the cache positions: the logits (batch, t, vocab)."""
        mask = self.positions <= index[:, None]  # (t, ctx): causal up to each query
        mask = mask[None, None]
        x = self.embed(tokens)
        for i, layer in enumerate(self.layers):
            x = layer(x, self.cache[i, 0], self.cache[i, 1], index, mask)
        return self.head(rms_norm(x, self.norm))


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, ctx, filled, vocab, dd, hd, dt, ht = 4, 16, 6, 50, 16, 2, 32, 2
    else:
        batch, ctx, filled, vocab, dd, hd, dt, ht = 4, 256, 200, 32000, 512, 8, 1024, 16
    dtype = low_precision(device)
    draft = Decoder(2, dd, hd, vocab, batch, ctx, filled + DRAFT).to(device, dtype).eval()
    target = Decoder(6, dt, ht, vocab, batch, ctx, filled).to(device, dtype).eval()
    offsets = torch.arange(2 * DRAFT, device=device)  # target at p .. p+3, draft at p+4 .. p+7
    streams = side_streams(device, 2)

    def propose(token: Tensor, index: Tensor) -> Tensor:
        drafts = []
        for i in range(DRAFT):
            logits = draft(token[:, None], index[i : i + 1])
            token = logits[:, -1].argmax(-1)
            drafts.append(token)
        return torch.stack(drafts, dim=1)  # (batch, DRAFT)

    def verify(tokens: Tensor, index: Tensor) -> Tensor:
        return target(tokens, index).argmax(-1)  # (batch, DRAFT)

    @torch.no_grad()
    def step(pending: Tensor, pos: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        index = pos + offsets
        drafts, predicted = fork_join(
            device,
            streams,
            [
                lambda: propose(pending[:, DRAFT], index[DRAFT:]),
                lambda: verify(pending[:, :DRAFT], index[:DRAFT]),
            ],
        )
        matches = (predicted == pending[:, 1:]).long()
        accepted = matches.cumprod(dim=1).sum(dim=1)
        next_token = predicted.gather(1, accepted.clamp(max=DRAFT - 1)[:, None]).squeeze(1)
        return drafts, accepted, next_token

    inputs = [
        (
            torch.randint(0, vocab, (batch, DRAFT + 1), device=device),
            torch.full((1,), filled, device=device, dtype=torch.long),
        )
        for _ in range(2)
    ]
    description = (
        f"pipelined speculative decoding, draft 2x{dd} proposing {DRAFT} greedily beside target "
        f"6x{dt} verifying {DRAFT}, static KV caches of {ctx}, vocab {vocab}, b{batch}, "
        f"2 side streams"
    )
    return Built(step, inputs, description, [draft, target, offsets])


if __name__ == "__main__":
    main(build, __doc__)
