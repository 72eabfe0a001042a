"""One greedy decode step of a 12-layer GPT-2-small-sized model over a paged KV cache for two
independent groups of 4 requests, each group on its own side stream, as two-batch overlap
(SGLang's, DeepSeek's inference) runs a decode batch as two micro-batches side by side
(fifty-fifth hold-out: two concurrent chains of some 240 small kernels each, 20 a layer, GEMV-
shaped bf16 GEMMs over 4 rows, cache appends by ``index_copy_``, block gathers by
``index_select`` of 1.6 to 6.3 MB, small batched matmuls and a softmax over 256 or 1024
slots, the chains of unequal weight: the long-context group gathers four times the cache).
The model is laid out as GPT-2 small (Radford et al., 2019; Hugging Face's ``GPT2Model``,
the ``Conv1D`` layers as ``Linear``): token and learned position embeddings (50257 and 1024 x
768), 12 pre-norm blocks of d 768, 12 heads of 64 and an MLP 768 -> 3072 -> 768 with the tanh
GELU, the final LayerNorm and the head tied to the token embedding. The cache, vLLM-style
(Kwon et al., 2023): per layer a pool of 384 pages of 16 slots for keys and one for values,
(384, 16, 12, 64) bf16 each, 9.4 MB, shared by both groups; a block table per group says which
pages hold each request (disjoint pages, drawn from a random permutation of the pool at
build). Group A: 4 requests of 960 to 1023 cached tokens, 64 pages each; group B: 4 requests
of 192 to 255, 16 pages each. Per group, first: the new tokens' slots, slot = table[len //
16] x 16 + len % 16 from the lengths and the block table on the device (vLLM's slot mapping),
and the mask of the gathered slots, slot position > length; the embeddings of the tokens at
position = length. Then per layer: LayerNorm, the fused QKV projection (``Linear(768,
2304)``), the new key and value appended to the pool at their slots (``index_copy_`` into the
flattened pool), the group's pages gathered (``pool.index_select(0, table.flatten())``, keys
and values, (4, pages x 16, 12, 64)), the scores of the one query against them (a batched
``matmul``, (4, 12, 1, 64) @ (4, 12, 64, slots)) divided by 8, the slots past each request's
length masked (-inf), softmax, times the values (a second batched matmul), the output
projection and the residual, then LayerNorm, the MLP and the residual. Last the final
LayerNorm, the logits (4, 50257) and the next tokens by ``argmax``. Side stream 1, group A;
side stream 2, group B. Fork and join are the project's ``fork_join`` (``wait_stream``, and
``record_stream`` on the branch outputs outside capture); after the join, on the current
stream, the two groups' next tokens concatenated. The appends write the same slots every step
of an input set (the lengths and tables are the same in both sets, only the tokens differ) and
each slot is written before it is read, so a step's outputs depend only on its inputs. bf16 on
a GPU (fp32 on a CPU), eval, no gradients, random weights (torch's defaults) and a random cache
(0.5 x Gaussian). Inputs (two input sets): per group the tokens (4,) int64, the lengths (4,)
int64 and the block table (4, pages) int64. Returns the next tokens of both groups (8,) int64.

    traceinspect profile paged_decode_two_batch_overlap_2streams_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

PAGE, VOCAB, POSITIONS = 16, 50257, 1024


class PagedBlock(nn.Module):
    """GPT-2's pre-norm block for one new token per request, its keys and values in pages."""

    def __init__(self, d: int, heads: int, pages: int) -> None:
        super().__init__()
        self.heads, self.head_dim = heads, d // heads
        self.ln_1, self.ln_2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.c_attn, self.c_proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.c_fc, self.mlp_proj = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        shape = (pages, PAGE, heads, self.head_dim)
        self.register_buffer("k_pool", 0.5 * torch.randn(shape))
        self.register_buffer("v_pool", 0.5 * torch.randn(shape))

    def forward(self, x: Tensor, slots: Tensor, table: Tensor, hidden: Tensor) -> Tensor:
        b, d = x.shape
        h, dh = self.heads, self.head_dim
        q, k, v = self.c_attn(self.ln_1(x)).view(b, 3, h, dh).unbind(1)
        self.k_pool.view(-1, h, dh).index_copy_(0, slots, k)
        self.v_pool.view(-1, h, dh).index_copy_(0, slots, v)
        keys = self.k_pool.index_select(0, table.flatten()).view(b, -1, h, dh)
        values = self.v_pool.index_select(0, table.flatten()).view(b, -1, h, dh)
        scores = q[:, :, None] @ keys.permute(0, 2, 3, 1)  # (b, h, 1, slots)
        scores = (scores / dh**0.5).masked_fill(hidden, float("-inf"))
        out = scores.softmax(dim=-1) @ values.transpose(1, 2)  # (b, h, 1, dh)
        x = x + self.c_proj(out.reshape(b, d))
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class PagedGPT2(nn.Module):
    def __init__(self, layers: int, d: int, heads: int, pages: int, vocab: int) -> None:
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(POSITIONS, d)
        self.h = nn.ModuleList(PagedBlock(d, heads, pages) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)

    def forward(self, tokens: Tensor, lens: Tensor, table: Tensor) -> Tensor:
        slots = table.gather(1, (lens // PAGE)[:, None])[:, 0] * PAGE + lens % PAGE
        positions = torch.arange(table.shape[1] * PAGE, device=lens.device)
        hidden = (positions[None] > lens[:, None])[:, None, None]  # (b, 1, 1, slots)
        x = self.wte(tokens) + self.wpe(lens)
        for blk in self.h:
            x = blk(x, slots, table, hidden)
        return F.linear(self.ln_f(x), self.wte.weight).argmax(dim=-1)


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        layers, d, heads, vocab, batch, pages_a, pages_b = 2, 32, 2, 100, 2, 6, 5
    else:
        layers, d, heads, vocab, batch, pages_a, pages_b = 12, 768, 12, VOCAB, 4, 64, 16
    pool = batch * (pages_a + pages_b) * 6 // 5
    dtype = low_precision(device)
    model = PagedGPT2(layers, d, heads, pool, vocab).to(device=device, dtype=dtype).eval()
    streams = side_streams(device, 2)
    order = torch.randperm(pool, device=device)
    table_a = order[: batch * pages_a].view(batch, pages_a)
    table_b = order[batch * pages_a : batch * (pages_a + pages_b)].view(batch, pages_b)
    lens_a = torch.randint(PAGE * (pages_a - 4), PAGE * pages_a, (batch,), device=device)
    lens_b = torch.randint(PAGE * (pages_b - 4), PAGE * pages_b, (batch,), device=device)

    @torch.no_grad()
    def step(
        tokens_a: Tensor, la: Tensor, ta: Tensor, tokens_b: Tensor, lb: Tensor, tb: Tensor
    ) -> Tensor:
        next_a, next_b = fork_join(
            device, streams, [lambda: model(tokens_a, la, ta), lambda: model(tokens_b, lb, tb)]
        )
        return torch.cat((next_a, next_b))

    def make() -> tuple[Tensor, ...]:
        tokens = [torch.randint(0, vocab, (batch,), device=device) for _ in range(2)]
        return tokens[0], lens_a, table_a, tokens[1], lens_b, table_b

    inputs = [make() for _ in range(2)]
    precision = str(dtype).removeprefix("torch.")
    description = (
        f"GPT-2-like paged decode, {layers} layers d{d} {heads} heads, 2 groups of {batch} "
        f"requests ({pages_a} and {pages_b} pages of {PAGE}: index_copy_ append, index_select "
        f"gather, bmm, softmax) on 2 side streams, {precision}"
    )
    return Built(step, inputs, description, [model, table_a, table_b, lens_a, lens_b])


if __name__ == "__main__":
    main(build, __doc__)
