"""The Deep Interest Evolution Network (DIEN, Zhou et al., 2019) scoring 512 candidate items, each
against its user's last 32 behaviours: the interest extractor GRU, the target attention and the
interest-evolving AUGRU loop, then the prediction MLP (fifty-seventh hold-out: one stream of some
520 kernels, almost all tiny: the cuDNN GRU over (512, 32, 36), then 32 AUGRU steps of some 15
kernels each, two fp32 GEMMs of 512 x 36 -> 108 and a dozen elementwise kernels over (512, 36) or
(512, 108), a masked select of the state; launch-bound throughout, a long serial chain). Laid out
as DeepCTR-Torch's ``DIEN`` (``deepctr_torch.models.dien``, ``gru_type="AUGRU"``) on Amazon-Books-
style features: embeddings of 18 for the user (192403 ids), the item (367983 ids) and the category
(1601 ids), the candidate's item and category and each behaviour's concatenated to 36; the
``InterestExtractor``, ``nn.GRU(36, 36, batch_first=True)`` run on the padded sequences (the
auxiliary loss and its negative sampling are training-only, off); the ``InterestEvolving`` layer:
DeepCTR's ``AttentionSequencePoolingLayer`` scores (``LocalActivationUnit``: the query, the keys,
their difference and product concatenated, 144 -> 64 -> 16 -> 1 with ReLU, ``weight_normalization``:
padded positions at -2^32 + 1, softmax over the 32 positions), then ``DynamicGRU`` with
``AUGRUCell`` (the input and hidden projections ``F.linear`` per step, reset and update gates, the
update gate scaled by the step's attention score, the new state) stepped over the 32 positions, a
padded position keeping the previous state (``torch.where``, in place of DeepCTR's packed
sequences, whose host-side lengths a graph cannot hold), the last state the evolved interest;
the DNN input: the user embedding, the candidate's 36, the evolved interest and the behaviours'
masked sum (126), ``DNN`` (256, 128) with ReLU, ``Linear(128, 1, bias=False)``, the bias and the
sigmoid of ``PredictionLayer``. fp32 with TF32 off for matrix multiplications
(``torch.backends.cuda.matmul.allow_tf32 = False``, torch's default, set in build), eval, no
gradients, random weights (embeddings N(0, 1e-4) as DeepCTR initializes them, the rest torch's
defaults). Inputs (two input sets), batch first: the behaviour item ids (512, 32) and category ids
(512, 32) int64 (zero past each sequence's length), the lengths (512,) int64 in [1, 32], the user
ids (512,), the candidate item ids (512,) and category ids (512,). Returns the click probabilities
(512, 1).

    traceinspect profile dien_augru_interest_evolution_b512.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn

USERS, ITEMS, CATES, EMBED, INIT_STD = 192403, 367983, 1601, 18, 1e-4


class DIEN(nn.Module):
    def __init__(self, users: int, items: int, cates: int, e: int, att: tuple[int, int]) -> None:
        super().__init__()
        h = 2 * e
        self.user, self.item, self.cate = (nn.Embedding(n, e) for n in (users, items, cates))
        for emb in (self.user, self.item, self.cate):
            nn.init.normal_(emb.weight, std=INIT_STD)
        self.extractor = nn.GRU(h, h, batch_first=True)
        self.att = nn.Sequential(
            nn.Linear(4 * h, att[0]), nn.ReLU(), nn.Linear(att[0], att[1]), nn.ReLU(),
            nn.Linear(att[1], 1),
        )  # fmt: skip
        self.weight_ih, self.weight_hh = (nn.Parameter(0.1 * torch.randn(3 * h, h)) for _ in "ih")
        self.bias_ih, self.bias_hh = (nn.Parameter(torch.zeros(3 * h)) for _ in "ih")
        self.dnn = nn.Sequential(
            nn.Linear(e + 3 * h, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
            nn.Linear(128, 1, bias=False),
        )  # fmt: skip
        self.out_bias = nn.Parameter(torch.zeros(1))

    def augru_cell(self, x: Tensor, hx: Tensor, score: Tensor) -> Tensor:
        gi = F.linear(x, self.weight_ih, self.bias_ih)
        gh = F.linear(hx, self.weight_hh, self.bias_hh)
        i_r, i_z, i_n = gi.chunk(3, 1)
        h_r, h_z, h_n = gh.chunk(3, 1)
        reset_gate = torch.sigmoid(i_r + h_r)
        update_gate = torch.sigmoid(i_z + h_z)
        new_state = torch.tanh(i_n + reset_gate * h_n)
        update_gate = score.view(-1, 1) * update_gate
        return (1.0 - update_gate) * hx + update_gate * new_state

    def forward(
        self, hist_items: Tensor, hist_cates: Tensor, lengths: Tensor, users: Tensor,
        items: Tensor, cates: Tensor,
    ) -> Tensor:  # fmt: skip
        steps = hist_items.shape[1]
        mask = torch.arange(steps, device=lengths.device)[None] < lengths[:, None]  # (B, T)
        keys = torch.cat((self.item(hist_items), self.cate(hist_cates)), dim=-1)  # (B, T, 36)
        query = torch.cat((self.item(items), self.cate(cates)), dim=-1)  # (B, 36)
        interests, _ = self.extractor(keys)
        q = query[:, None].expand_as(interests)
        scores = self.att(torch.cat((q, interests, q - interests, q * interests), dim=-1))
        scores = torch.where(
            mask, scores.squeeze(-1), torch.full_like(scores[..., 0], -(2**32) + 1)
        )
        scores = torch.softmax(scores, dim=-1)
        xs = interests.transpose(0, 1).contiguous()  # (T, B, 36)
        ss = scores.t().contiguous()
        ms = mask.t().unsqueeze(-1).contiguous()
        hx = interests.new_zeros(interests.shape[0], interests.shape[2])
        for t in range(steps):
            hx = torch.where(ms[t], self.augru_cell(xs[t], hx, ss[t]), hx)
        pooled = (keys * mask[..., None]).sum(dim=1)
        dnn_in = torch.cat((self.user(users), query, hx, pooled), dim=-1)
        return torch.sigmoid(self.dnn(dnn_in) + self.out_bias)


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, steps, users, items, cates = 8, 4, 100, 200, 20
    else:
        batch, steps, users, items, cates = 512, 32, USERS, ITEMS, CATES
    torch.backends.cuda.matmul.allow_tf32 = False  # full fp32 GEMMs
    model = DIEN(users, items, cates, EMBED, (64, 16)).to(device).eval()

    @torch.no_grad()
    def step(
        hist_items: Tensor, hist_cates: Tensor, lengths: Tensor, users_: Tensor,
        items_: Tensor, cates_: Tensor,
    ) -> Tensor:  # fmt: skip
        return model(hist_items, hist_cates, lengths, users_, items_, cates_)

    def make() -> tuple[Tensor, ...]:
        lengths = torch.randint(1, steps + 1, (batch,))
        valid = torch.arange(steps)[None] < lengths[:, None]
        hist_items = torch.randint(1, items, (batch, steps)) * valid
        hist_cates = torch.randint(1, cates, (batch, steps)) * valid
        rest = [torch.randint(1, n, (batch,)) for n in (users, items, cates)]
        return tuple(t.to(device) for t in (hist_items, hist_cates, lengths, *rest))

    inputs = [make() for _ in range(2)]
    description = (
        f"DIEN: GRU interest extractor + target attention + {steps}-step AUGRU loop + MLP "
        f"(256, 128), {batch} candidates x {steps} behaviours, fp32 (TF32 off)"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
