"""A small GPT decoding 24 tokens greedily: a plain PyTorch script, no annotations.

Startup as a real script has it: the weights are saved to a checkpoint file, loaded back on
the host and uploaded to the GPU; then one decode step per token (6 layers, d_model 768,
12 heads, static KV cache, bf16), the next token picked on the GPU by argmax and fed back,
the position kept in a GPU tensor; the tokens are read back once at the end.

``--mark`` registers the decode step with ``traceinspect.graph_candidate`` (imported only
then), so ``traceinspect profile`` measures it eager and replayed as a CUDA graph.
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile

import torch
import torch.nn.functional as F  # noqa: N812
from torch import nn


class Block(nn.Module):
    def __init__(self, d: int, heads: int, batch: int, cache: int) -> None:
        super().__init__()
        self.heads, self.dh = heads, d // heads
        self.ln1 = nn.LayerNorm(d)
        self.attn = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 4 * d)
        self.out = nn.Linear(4 * d, d)
        self.register_buffer("k", torch.zeros(batch, heads, cache, self.dh), persistent=False)
        self.register_buffer("v", torch.zeros(batch, heads, cache, self.dh), persistent=False)
        self.register_buffer("slots", torch.arange(cache), persistent=False)

    def forward(self, x: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        b = x.shape[0]
        q, k, v = self.attn(self.ln1(x)).view(b, 1, 3, self.heads, self.dh).unbind(2)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
        self.k.index_copy_(2, pos, k)
        self.v.index_copy_(2, pos, v)
        scores = (q @ self.k.transpose(-1, -2)) / math.sqrt(self.dh)
        scores = scores.masked_fill(self.slots > pos, float("-inf"))
        att = torch.softmax(scores.float(), dim=-1).to(x.dtype) @ self.v
        x = x + self.proj(att.transpose(1, 2).reshape(b, 1, -1))
        return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class GPT(nn.Module):
    def __init__(self, vocab: int, d: int, layers: int, heads: int, batch: int, cache: int):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(cache, d)
        self.blocks = nn.ModuleList(Block(d, heads, batch, cache) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)

    def forward(self, token: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        x = self.wte(token) + self.wpe(pos)
        for blk in self.blocks:
            x = blk(x, pos)
        logits = self.ln_f(x) @ self.wte.weight.t()  # tied head
        return logits.argmax(-1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tokens", type=int, default=24)
    ap.add_argument("--device")
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--mark", action="store_true", help="register the step as a graph candidate")
    args = ap.parse_args()
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    vocab, d, layers, heads = (64, 32, 2, 2) if args.smoke else (32000, 768, 6, 12)
    batch, cache = 1, 64
    torch.manual_seed(0)

    # Startup: a checkpoint on disk, loaded on the host, uploaded to the GPU.
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "gpt.pt")
        torch.save(GPT(vocab, d, layers, heads, batch, cache).state_dict(), path)
        model = GPT(vocab, d, layers, heads, batch, cache)
        model.load_state_dict(torch.load(path, map_location="cpu"))
    model = model.to(device=device, dtype=dtype).eval()

    @torch.no_grad()
    def decode_step(token: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        return model(token, pos)

    token = torch.zeros(batch, 1, dtype=torch.long, device=device)
    pos = torch.zeros(1, dtype=torch.long, device=device)
    out = torch.zeros(batch, args.tokens, dtype=torch.long, device=device)
    for i in range(args.tokens):
        token = decode_step(token, pos)
        out[:, i] = token[:, 0]
        pos += 1
    print("generated:", out[0].tolist())

    if args.mark:
        import traceinspect

        traceinspect.graph_candidate("step", decode_step, (token, torch.tensor([5], device=device)))


if __name__ == "__main__":
    main()
