"""End-To-End Memory Network (MemN2N, Sukhbaatar, Szlam, Weston and Fergus, 2015) as a language
model on Penn Treebank: the next word's cross-entropy for 512 positions, each reading a memory of
the 100 words before it over 6 hops (sixty-first hold-out: one stream, fp32 with TF32 off: four
embedding gathers of (512, 100, 150) (the memory's input and output embeddings and their temporal
encodings) and two adds; per hop a batched matrix-vector product of the controller state against the
100 input memories, a softmax, a second against the output memories, the linear map H of the state,
an add, a ReLU on half of the units and a concatenation; the output GEMM to the 10,000-word
vocabulary and the cross-entropy; some 50 kernels, the gathers and the batched products memory-bound
on 31 MB each, some 0.2 to 0.5 ms of GPU time). Laid out as carpedm20/MemN2N-tensorflow's
``MemN2N``, the paper's language-model setting (section 5): each memory slot one word; layer-wise
weight tying, one input embedding A, one output embedding C and one H for every hop; temporal
encodings T_A and T_C added by slot; the query a constant 0.1 vector; u_{k+1} = H u_k + o_k with a
ReLU on the last ``lindim`` units; the prediction W u_K; at that repository's defaults (edim 150,
lindim 75, nhop 6, mem_size 100, 10,000 words, the weights Gaussian with std 0.05 as its
``init_std``) but for the batch, 512 instead of 128. fp32 weights and activations with
``torch.backends.cuda.matmul.allow_tf32`` and ``torch.backends.cudnn.allow_tf32`` both off (set at
build), eval, no gradients. Inputs (two input sets): the memory words (512, 100) int64 and the next
words (512,) int64, uniform in [0, 10000). Returns the mean cross-entropy (a 0-d fp32 tensor).

    traceinspect profile memn2n_ptb_lm_6hops_fp32_one_stream_b512.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn

N_WORDS, EDIM, LINDIM, NHOP, MEM_SIZE, INIT_HID, INIT_STD = 10000, 150, 75, 6, 100, 0.1, 0.05


class MemN2N(nn.Module):
    def __init__(self, n_words: int, edim: int, lindim: int, nhop: int, mem_size: int) -> None:
        super().__init__()
        self.a = nn.Embedding(n_words, edim)
        self.c = nn.Embedding(n_words, edim)
        self.t_a = nn.Embedding(mem_size, edim)
        self.t_c = nn.Embedding(mem_size, edim)
        self.h = nn.Linear(edim, edim, bias=False)
        self.w = nn.Linear(edim, n_words, bias=False)
        for p in self.parameters():
            nn.init.normal_(p, std=INIT_STD)
        self.lindim, self.nhop = lindim, nhop

    def forward(self, context: Tensor, time: Tensor, query: Tensor) -> Tensor:
        m_in = self.a(context) + self.t_a(time)  # (b, mem, edim)
        m_out = self.c(context) + self.t_c(time)
        hid = query
        for _ in range(self.nhop):
            scores = torch.bmm(hid.unsqueeze(1), m_in.transpose(1, 2))  # (b, 1, mem)
            probs = torch.softmax(scores, dim=-1)
            o = torch.bmm(probs, m_out).squeeze(1)  # (b, edim)
            d = self.h(hid) + o
            hid = torch.cat((d[:, : self.lindim], torch.relu(d[:, self.lindim :])), dim=1)
        return self.w(hid)


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, n_words, edim, lindim, nhop, mem = 4, 50, 8, 4, 2, 6
    else:
        batch, n_words, edim, lindim, nhop, mem = 512, N_WORDS, EDIM, LINDIM, NHOP, MEM_SIZE
    torch.backends.cuda.matmul.allow_tf32 = False  # full fp32 GEMMs (torch's default)
    torch.backends.cudnn.allow_tf32 = False
    model = MemN2N(n_words, edim, lindim, nhop, mem).to(device).eval()
    time = torch.arange(mem, device=device).expand(batch, mem).contiguous()
    query = torch.full((batch, edim), INIT_HID, device=device)

    @torch.no_grad()
    def step(context: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(model(context, time, query), target)

    inputs = [
        (
            torch.randint(0, n_words, (batch, mem), device=device),
            torch.randint(0, n_words, (batch,), device=device),
        )
        for _ in range(2)
    ]
    description = (
        f"MemN2N LM: {nhop} hops over {mem} words, edim {edim} (lindim {lindim}), "
        f"{n_words} words, fp32 TF32 off, one stream, b{batch}"
    )
    return Built(step, inputs, description, [model, time, query])


if __name__ == "__main__":
    main(build, __doc__)
