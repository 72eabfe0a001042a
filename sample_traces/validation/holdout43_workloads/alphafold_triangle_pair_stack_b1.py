"""Two iterations of AlphaFold 2's pair stack (Jumper et al., 2021, the pair half of an Evoformer
block: triangle multiplicative updates, triangle self-attention around the starting and the ending
node, the pair transition), on one protein's pair representation (forty-third hold-out): 1 protein
of 128 residues, c_z 128, bf16 on a GPU, eval mode (no dropout), no gradients, no residue mask
(every residue present). Each iteration, on the (1, 128, 128, 128) pair representation z, each
update added to z in turn: (1) the triangle multiplicative update "outgoing": LayerNorm(z); one
``Linear(128, 512)`` to the projections and gates of a and b, a = sigmoid(a_g) x a_p, b =
sigmoid(b_g) x b_p, (1, 128, 128, 128) each; the triangle product out[i, j] = sum_k a[i, k] b[j,
k], per channel, as one batched matmul of 128 channels of (128, 128) @ (128, 128) (``permute`` to
channels first); LayerNorm, ``Linear(128, 128)``, times sigmoid(``Linear(128,
128)``(LayerNorm(z))). (2) The "incoming" update, the same with out[i, j] = sum_k a[k, i] b[k, j].
(3) Triangle attention around the starting node: LayerNorm(z); ``Linear(128, 384, bias=False)`` to
q, k, v of 4 heads of 32; the triangle bias, ``Linear(128, 4, bias=False)`` of the normalized pair,
made contiguous as (1, 4, 128, 128) and broadcast (``expand``, no copy) over the rows;
``F.scaled_dot_product_attention`` over the 128 rows as the batch, (128, 4, 128, 32), with the bias
as an additive mask; gated, sigmoid(``Linear(128, 128)``) x the output, ``Linear(128, 128)``. (4)
Triangle attention around the ending node: the same on z transposed (i <-> j), transposed back. (5)
The pair transition: x + ``Linear(512, 128)``(ReLU(``Linear(128, 512)``(LayerNorm(x)))), the shared
``_blocks.ResidualMLP``. Each triangle product is 0.5 GFLOP, each triangle attention 1 GFLOP, some
20 GFLOP an iteration with the projections. Input: the pair representation (1, 128, 128, 128).
Returns the updated pair representation (1, 128, 128, 128) (bf16 on a GPU).

    traceinspect profile alphafold_triangle_pair_stack_b1.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _blocks import ResidualMLP
from _common import Built, low_precision, main
from torch import Tensor, nn

ITERATIONS = 2


class TriangleMultiplication(nn.Module):
    def __init__(self, c_z: int, hidden: int, outgoing: bool) -> None:
        super().__init__()
        self.outgoing = outgoing
        self.norm_in, self.norm_out = nn.LayerNorm(c_z), nn.LayerNorm(hidden)
        self.proj = nn.Linear(c_z, 4 * hidden)  # a_p, a_g, b_p, b_g
        self.gate, self.out = nn.Linear(c_z, c_z), nn.Linear(hidden, c_z)

    def forward(self, z: Tensor) -> Tensor:  # (b, i, j, c)
        x = self.norm_in(z)
        a_p, a_g, b_p, b_g = self.proj(x).chunk(4, dim=-1)
        a = (torch.sigmoid(a_g) * a_p).permute(0, 3, 1, 2)  # (b, c, i, k)
        b = (torch.sigmoid(b_g) * b_p).permute(0, 3, 1, 2)
        if self.outgoing:
            prod = a @ b.transpose(-1, -2)  # sum_k a[i, k] b[j, k]
        else:
            prod = a.transpose(-1, -2) @ b  # sum_k a[k, i] b[k, j]
        prod = self.norm_out(prod.permute(0, 2, 3, 1))
        return z + torch.sigmoid(self.gate(x)) * self.out(prod)


class TriangleAttention(nn.Module):
    def __init__(self, c_z: int, heads: int, head_dim: int, starting: bool) -> None:
        super().__init__()
        self.heads, self.head_dim, self.starting = heads, head_dim, starting
        self.norm = nn.LayerNorm(c_z)
        self.qkv = nn.Linear(c_z, 3 * heads * head_dim, bias=False)
        self.bias = nn.Linear(c_z, heads, bias=False)
        self.gate, self.out = nn.Linear(c_z, heads * head_dim), nn.Linear(heads * head_dim, c_z)

    def forward(self, z: Tensor) -> Tensor:  # (b, i, j, c)
        x = self.norm(z if self.starting else z.transpose(1, 2))
        b, n = x.shape[:2]
        q, k, v = self.qkv(x).view(b * n, n, 3, self.heads, self.head_dim).unbind(2)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))  # (b rows, heads, n, head_dim)
        # (b, heads, j, k), shared by every row i; contiguous: SDPA's kernels want the keys'
        # dimension of a mask dense
        bias = self.bias(x).permute(0, 3, 1, 2).contiguous()
        bias = bias[:, None].expand(b, n, self.heads, n, n).reshape(b * n, self.heads, n, n)
        o = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
        o = o.transpose(1, 2).reshape(b, n, n, -1)
        out = self.out(torch.sigmoid(self.gate(x)) * o)
        return z + (out if self.starting else out.transpose(1, 2))


class PairStack(nn.Module):
    def __init__(self, c_z: int, hidden: int, heads: int, head_dim: int) -> None:
        super().__init__()
        self.updates = nn.Sequential(
            TriangleMultiplication(c_z, hidden, outgoing=True),
            TriangleMultiplication(c_z, hidden, outgoing=False),
            TriangleAttention(c_z, heads, head_dim, starting=True),
            TriangleAttention(c_z, heads, head_dim, starting=False),
            ResidualMLP(c_z, 4 * c_z, "relu"),
        )

    def forward(self, z: Tensor) -> Tensor:
        return self.updates(z)


def build(device: torch.device, smoke: bool) -> Built:
    batch, residues, c_z, hidden, heads, head_dim = (
        (1, 8, 16, 16, 2, 8) if smoke else (1, 128, 128, 128, 4, 32)
    )
    dtype = low_precision(device)
    stack = nn.Sequential(*(PairStack(c_z, hidden, heads, head_dim) for _ in range(ITERATIONS)))
    stack = stack.to(device, dtype).eval()

    @torch.no_grad()
    def step(pair: Tensor) -> Tensor:
        return stack(pair)

    inputs = [
        (torch.randn(batch, residues, residues, c_z, device=device, dtype=dtype),) for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"AlphaFold pair stack x {ITERATIONS}: triangle multiplication out/in (hidden {hidden}), "
        f"triangle attention start/end ({heads} heads x {head_dim}, pair bias), transition, "
        f"{residues} residues, c_z {c_z}, b{batch}",
        [stack],
    )


if __name__ == "__main__":
    main(build, __doc__)
