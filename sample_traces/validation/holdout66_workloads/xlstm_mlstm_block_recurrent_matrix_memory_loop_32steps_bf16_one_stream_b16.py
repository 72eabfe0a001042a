"""A stack of 2 xLSTM mLSTM blocks (Beck, Pöppel, Spanring, Auer, Prudnikova, Kopp, Klambauer,
Brandstetter and Hochreiter, NeurIPS 2024, "xLSTM: Extended Long Short-Term Memory": the mLSTM's
matrix memory C updated by the outer product of value and key, an exponential input gate and a
sigmoid forget gate kept in range by the stabilizer state m, a normalizer state n, inside a
pre-up-projection block with a causal convolution and an output gate) run in its recurrent form over
a chunk of 32 steps for 16 sequences, the memory, normalizer, stabilizer and convolution states
carried in and out as a chunked or streaming run passes them on (sixty-sixth hold-out: one stream,
bf16 autocast over fp32 weights: in each block the pre-norm (``layer_norm`` in fp32 with the weight
stored as 1 + w), the up-projection ``Linear(512, 2048)`` split into the mLSTM branch and the output
gate z; the carried 3 frames concatenated before the branch and the depthwise causal ``Conv1d(1024,
1024, 4, groups=1024)``, SiLU; the query and key (from the convolved branch) and value (from the raw
branch) ``LinearHeadwiseExpand`` projections, 256 blocks of 4 x 4 (``einsum`` as ``bmm``); the input
and forget gate pre-activations ``Linear(3072, 4)`` over the concatenated q, k and v; then the
recurrence as a Python loop of 32 steps, each the reference's ``recurrent_step_stabilized_simple``
on (16, 4 heads) of head dimension 256: ``logsigmoid`` of the forget pre-activation, the new
stabilizer m = max(log f + m, i~), f = exp(log f + m - m_new) and i = exp(i~ - m_new), k /
sqrt(256), C = f C + i (k v^T) (a batched (256 x 1) x (1 x 256) outer product and the updates of the
(16, 4, 256, 256) memory, 8.4 MB in bf16), n = f n + i k, the numerator q^T C and the dot product
q^T n as two batched products, the denominator max(|q^T n|, exp(-m)) + 1e-6 and the division, some
25 small kernels a step; the 32 outputs concatenated, the multi-head group norm (``group_norm`` of 4
groups in fp32), the learnable skip of the convolved branch, the SiLU output gate, the
down-projection ``Linear(1024, 512)`` and the residual add; after the 2 blocks the post-blocks
LayerNorm; some 1,700 kernels, 1,600 of them the recurrence's, each a few microseconds, the memory
updates some 84 MB of traffic a step, some 2.5 to 5 ms of GPU time, launch-bound eager). Laid out as
NX-AI/xlstm's ``mLSTMLayer`` (``proj_up``, ``CausalConv1d``, ``conv_act_fn`` SiLU, ``q_proj``,
``k_proj`` and ``v_proj`` as ``LinearHeadwiseExpand`` with ``qkv_proj_blocksize 4``,
``learnable_skip``, ``ogate_act_fn`` SiLU, ``proj_down``), ``mLSTMCell`` (``igate`` and ``fgate``
over ``cat([q, k, v])``, the states cast to the queries' dtype as its ``step`` does,
``MultiHeadLayerNorm``), ``backends.recurrent_step_stabilized_simple`` verbatim, the block's
``LayerNorm`` with ``residual_weight`` and the stack's ``post_blocks_norm``, with ``embedding_dim
512, num_heads 4, proj_factor 2.0, conv1d_kernel_size 4, bias False, dropout 0``, 2 mLSTM blocks and
no sLSTM; the chunk run through the step function one step at a time after the projections for the
whole chunk (the projections, convolution and gate pre-activations do not depend on the recurrent
state; the reference's ``step`` does them one token at a time), the convolution's carried state
being its last 3 inputs (the reference's ``conv1d_step`` keeps 4 and rolls them), and the queries,
keys and values laid out head-major and contiguous once before the loop. Initialized as the
reference's ``reset_parameters`` (small init and Wang init for the projections, forget-gate biases
linearly spaced over [3, 6], input-gate biases normal with std 0.1) but the gate weights normal with
std 0.02 rather than zero, so the gates read the input. Under
``torch.autocast(dtype=torch.bfloat16)`` on a GPU, where the products and the convolution run in
bf16 and so, as in the reference, do the carried states (fp32 without autocast on a CPU), eval, no
gradients. Inputs (two input sets): the chunk's block inputs (16, 32, 512) fp32, Gaussian, and the
carried states of the 2 blocks, each set's from running the stack over a random 32-step chunk from
zero states at build: C (2, 16, 4, 256, 256), n (2, 16, 4, 256, 1), m (2, 16, 4, 1, 1) and the
convolution's last inputs (2, 16, 3, 1024), bf16. Returns the outputs (16, 32, 512) fp32 and the 4
new states.

    traceinspect profile xlstm_mlstm_block_recurrent_matrix_memory_loop_32steps_bf16_one_stream_b16.py
"""  # noqa: E501 - the profile line: the file name is long

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn

EMBEDDING, HEADS, PROJ_FACTOR, KERNEL, BLOCKSIZE, BLOCKS, STEPS, BATCH = 512, 4, 2, 4, 4, 2, 32, 16
GATE_STD, EPS = 0.02, 1e-6


class LayerNorm(nn.Module):
    """xlstm's LayerNorm: no bias, the weight stored as its offset from one."""

    def __init__(self, ndim: int) -> None:
        super().__init__()
        self.ndim = ndim
        self.weight = nn.Parameter(torch.zeros(ndim))

    def forward(self, x: Tensor) -> Tensor:
        return F.layer_norm(x, (self.ndim,), weight=1.0 + self.weight, bias=None, eps=1e-5)


class MultiHeadLayerNorm(LayerNorm):
    def forward(self, x: Tensor) -> Tensor:  # (B, NH, S, DH)
        b, nh, s, dh = x.shape
        gn_in = x.transpose(1, 2).reshape(b * s, nh * dh)
        out = F.group_norm(gn_in, num_groups=nh, weight=1.0 + self.weight, bias=None, eps=1e-5)
        return out.view(b, s, nh, dh).transpose(1, 2)


class LinearHeadwiseExpand(nn.Module):
    def __init__(self, in_features: int, num_heads: int, embedding_dim: int) -> None:
        super().__init__()
        self.num_heads = num_heads
        per_head = in_features // num_heads
        self.weight = nn.Parameter(torch.empty(num_heads, per_head, per_head))
        nn.init.normal_(self.weight, mean=0.0, std=math.sqrt(2 / (5 * embedding_dim)))

    def forward(self, x: Tensor) -> Tensor:
        shape = x.shape
        x = x.view(*shape[:-1], self.num_heads, -1)
        x = torch.einsum("...hd,hod->...ho", x, self.weight)
        return x.reshape(*shape[:-1], -1)


def recurrent_step_stabilized_simple(
    c_state: Tensor,
    n_state: Tensor,
    m_state: Tensor,
    q: Tensor,
    k: Tensor,
    v: Tensor,
    igate_preact: Tensor,
    fgate_preact: Tensor,
    eps: float = EPS,
) -> tuple[Tensor, tuple[Tensor, Tensor, Tensor]]:
    """One step of the mLSTM in recurrent form (NX-AI/xlstm ``backends.py``).

    c_state (B, NH, DH, DH), n_state (B, NH, DH, 1), m_state (B, NH, 1, 1); q, k, v (B, NH, 1, DH);
    igate_preact, fgate_preact (B, NH, 1, 1). Returns h (B, NH, 1, DH) and the new states."""
    dh = q.shape[-1]
    q, k, v = q.squeeze(2).unsqueeze(-1), k.squeeze(2).unsqueeze(-1), v.squeeze(2).unsqueeze(-1)
    log_fg_act = F.logsigmoid(fgate_preact)
    m_state_new = torch.max(log_fg_act + m_state, igate_preact)
    fg_act = torch.exp(log_fg_act + m_state - m_state_new)
    ig_act = torch.exp(igate_preact - m_state_new)
    k_scaled = k / math.sqrt(dh)
    c_state_new = fg_act * c_state + ig_act * (k_scaled @ v.transpose(-1, -2))
    n_state_new = fg_act * n_state + ig_act * k_scaled
    h_num = q.transpose(-1, -2) @ c_state_new  # (B, NH, 1, DH)
    qn_dotproduct = q.transpose(-1, -2) @ n_state_new  # (B, NH, 1, 1)
    max_val = torch.exp(-m_state_new)
    h_denom = torch.maximum(qn_dotproduct.abs(), max_val) + eps
    h = h_num / h_denom
    return h, (c_state_new, n_state_new, m_state_new)


class mLSTMCell(nn.Module):  # noqa: N801 - the reference's name
    def __init__(self, inner: int, num_heads: int) -> None:
        super().__init__()
        self.num_heads = num_heads
        self.igate = nn.Linear(3 * inner, num_heads)
        self.fgate = nn.Linear(3 * inner, num_heads)
        self.outnorm = MultiHeadLayerNorm(inner)
        nn.init.normal_(self.fgate.weight, std=GATE_STD)
        with torch.no_grad():
            self.fgate.bias.copy_(torch.linspace(3.0, 6.0, num_heads))
        nn.init.normal_(self.igate.weight, std=GATE_STD)
        nn.init.normal_(self.igate.bias, mean=0.0, std=0.1)

    def forward(
        self, q: Tensor, k: Tensor, v: Tensor, state: tuple[Tensor, Tensor, Tensor]
    ) -> tuple[Tensor, tuple[Tensor, Tensor, Tensor]]:
        b, s, _ = q.shape
        if_gate_input = torch.cat([q, k, v], dim=-1)
        q, k, v = (  # (B, NH, S, DH), head-major and contiguous once for the loop
            t.view(b, s, self.num_heads, -1).transpose(1, 2).contiguous() for t in (q, k, v)
        )
        igate_preact = self.igate(if_gate_input).transpose(-1, -2).unsqueeze(-1)  # (B, NH, S, 1)
        fgate_preact = self.fgate(if_gate_input).transpose(-1, -2).unsqueeze(-1)
        c_state, n_state, m_state = (t.to(dtype=q.dtype) for t in state)
        hs = []
        for t in range(s):
            h, (c_state, n_state, m_state) = recurrent_step_stabilized_simple(
                c_state,
                n_state,
                m_state,
                q[:, :, t : t + 1],
                k[:, :, t : t + 1],
                v[:, :, t : t + 1],
                igate_preact[:, :, t : t + 1],
                fgate_preact[:, :, t : t + 1],
            )
            hs.append(h)
        h_state = torch.cat(hs, dim=2)  # (B, NH, S, DH)
        h_state_norm = self.outnorm(h_state).transpose(1, 2).reshape(b, s, -1)
        return h_state_norm, (c_state, n_state, m_state)


class mLSTMLayer(nn.Module):  # noqa: N801 - the reference's name
    def __init__(self, embedding_dim: int, num_heads: int, num_blocks: int) -> None:
        super().__init__()
        self.inner = inner = PROJ_FACTOR * embedding_dim
        self.proj_up = nn.Linear(embedding_dim, 2 * inner, bias=False)
        self.q_proj = LinearHeadwiseExpand(inner, inner // BLOCKSIZE, embedding_dim)
        self.k_proj = LinearHeadwiseExpand(inner, inner // BLOCKSIZE, embedding_dim)
        self.v_proj = LinearHeadwiseExpand(inner, inner // BLOCKSIZE, embedding_dim)
        # CausalConv1d without its left padding: the carried state is prepended instead
        self.conv1d = nn.Conv1d(inner, inner, KERNEL, groups=inner, bias=True)
        self.mlstm_cell = mLSTMCell(inner, num_heads)
        self.learnable_skip = nn.Parameter(torch.ones(inner))
        self.proj_down = nn.Linear(inner, embedding_dim, bias=False)
        nn.init.normal_(self.proj_up.weight, std=math.sqrt(2 / (5 * embedding_dim)))
        nn.init.normal_(self.proj_down.weight, std=2 / num_blocks / math.sqrt(embedding_dim))

    def forward(
        self, x: Tensor, state: tuple[Tensor, Tensor, Tensor], conv_state: Tensor
    ) -> tuple[Tensor, tuple[Tensor, Tensor, Tensor], Tensor]:
        x_inner = self.proj_up(x)
        x_mlstm, z = torch.split(x_inner, self.inner, dim=-1)
        x_cat = torch.cat([conv_state.to(x_mlstm.dtype), x_mlstm], dim=1)  # (B, KS-1+S, inner)
        x_mlstm_conv = self.conv1d(x_cat.transpose(1, 2)).transpose(1, 2)  # (B, S, inner)
        x_mlstm_conv_act = F.silu(x_mlstm_conv)
        q = self.q_proj(x_mlstm_conv_act)
        k = self.k_proj(x_mlstm_conv_act)
        v = self.v_proj(x_mlstm)
        h_tilde_state, state = self.mlstm_cell(q, k, v, state)
        h_tilde_state_skip = h_tilde_state + (self.learnable_skip * x_mlstm_conv_act)
        h_state = h_tilde_state_skip * F.silu(z)
        return self.proj_down(h_state), state, x_cat[:, -(KERNEL - 1) :]


class mLSTMBlock(nn.Module):  # noqa: N801 - the reference's name
    def __init__(self, embedding_dim: int, num_heads: int, num_blocks: int) -> None:
        super().__init__()
        self.xlstm_norm = LayerNorm(embedding_dim)
        self.xlstm = mLSTMLayer(embedding_dim, num_heads, num_blocks)

    def forward(
        self, x: Tensor, state: tuple[Tensor, Tensor, Tensor], conv_state: Tensor
    ) -> tuple[Tensor, tuple[Tensor, Tensor, Tensor], Tensor]:
        y, state, conv_state = self.xlstm(self.xlstm_norm(x), state, conv_state)
        return x + y, state, conv_state


class xLSTMBlockStack(nn.Module):  # noqa: N801 - the reference's name
    def __init__(self, embedding_dim: int, num_heads: int, num_blocks: int) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(
            mLSTMBlock(embedding_dim, num_heads, num_blocks) for _ in range(num_blocks)
        )
        self.post_blocks_norm = LayerNorm(embedding_dim)

    def forward(
        self, x: Tensor, c: Tensor, n: Tensor, m: Tensor, conv: Tensor
    ) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
        new_c, new_n, new_m, new_conv = [], [], [], []
        for i, block in enumerate(self.blocks):
            x, (c_i, n_i, m_i), conv_i = block(x, (c[i], n[i], m[i]), conv[i])
            new_c.append(c_i)
            new_n.append(n_i)
            new_m.append(m_i)
            new_conv.append(conv_i)
        x = self.post_blocks_norm(x)
        states = (torch.stack(s) for s in (new_c, new_n, new_m, new_conv))
        return (x, *states)


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, steps, embedding, heads, blocks = 2, 5, 32, 2, BLOCKS
    else:
        batch, steps, embedding, heads, blocks = BATCH, STEPS, EMBEDDING, HEADS, BLOCKS
    cuda = device.type == "cuda"
    state_dtype = torch.bfloat16 if cuda else torch.float32
    model = xLSTMBlockStack(embedding, heads, blocks).to(device).eval()
    inner = PROJ_FACTOR * embedding
    dh = inner // heads

    @torch.no_grad()
    def step(
        x: Tensor, c: Tensor, n: Tensor, m: Tensor, conv: Tensor
    ) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=cuda):
            y, c, n, m, conv = model(x, c, n, m, conv)
        return y.float(), c, n, m, conv

    def chunk() -> tuple[Tensor, ...]:
        def zeros(*shape: int) -> Tensor:
            return torch.zeros(blocks, batch, *shape, device=device, dtype=state_dtype)

        warm = torch.randn(batch, steps, embedding, device=device)
        _, c, n, m, conv = step(
            warm,
            zeros(heads, dh, dh),
            zeros(heads, dh, 1),
            zeros(heads, 1, 1),
            zeros(KERNEL - 1, inner),
        )
        x = torch.randn(batch, steps, embedding, device=device)
        return x, c.to(state_dtype), n.to(state_dtype), m.to(state_dtype), conv.to(state_dtype)

    inputs = [chunk() for _ in range(2)]
    description = (
        f"xLSTM mLSTM stack: {blocks} blocks d{embedding}, {heads} heads of {dh}, proj x"
        f"{PROJ_FACTOR}, conv {KERNEL}, recurrent form over {steps} steps (Python loop, matrix "
        f"memory {dh}x{dh}), states in/out, {'autocast bf16' if cuda else 'fp32'}, one stream, "
        f"b{batch}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
