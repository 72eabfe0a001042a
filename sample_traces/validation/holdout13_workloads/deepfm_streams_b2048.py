"""DeepFM click-through prediction on 2048 samples of 26 categorical and 13 dense features,
bf16, with the FM and the deep part on two side streams while the current stream runs the
linear part (thirteenth hold-out). The 26 fields share one concatenated table of 26 x
40,000 rows of 16 (a field offset is added to each id, then the rows are gathered with
``F.embedding``: dense embeddings, no ``embedding_bag``) and a 26 x 40,000-row first-order
weight table gathered the same way. Two side streams, each forked from the current stream
with ``wait_stream`` after the gathers, each ending by recording an event: side stream A
runs the deep part, an MLP on the 416 flattened embeddings and the 13 dense features (429
->400->400->400->1, ReLU; four GEMMs); side stream B runs the factorization machine's
second-order term without a GEMM, 0.5 x sum over the 16 factors of ((sum of the field
embeddings)^2 - sum of their squares), in fp32 (reductions and elementwise kernels only).
Between the fork and the join the current stream itself runs the linear part (the sum of
the 26 first-order weights plus a Linear 13->1 on the dense features), so three streams
run at once; it then waits on the two events (``wait_event``) and adds the three logits
and a sigmoid. Outside graph capture the side streams' outputs are marked with
``record_stream`` for the current stream. On a CPU everything runs in order on the default
stream. Returns the click probabilities (2048) and the three logits (3 x 2048, fp32).

    traceinspect profile deepfm_streams_b2048.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

FIELDS, DENSE = 26, 13


def build(device: torch.device, smoke: bool) -> Built:
    batch, vocab, k, width = (8, 50, 4, 16) if smoke else (2048, 40_000, 16, 400)
    dtype = low_precision(device)
    cuda = device.type == "cuda"
    table = (0.01 * torch.randn(FIELDS * vocab, k, device=device)).to(dtype)
    first = (0.01 * torch.randn(FIELDS * vocab, 1, device=device)).to(dtype)
    offsets = torch.arange(FIELDS, device=device) * vocab
    deep = nn.Sequential(
        nn.Linear(FIELDS * k + DENSE, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(),
        nn.Linear(width, width), nn.ReLU(), nn.Linear(width, 1),
    ).to(device=device, dtype=dtype).eval()  # fmt: skip
    dense_linear = nn.Linear(DENSE, 1).to(device=device, dtype=dtype).eval()
    streams = [torch.cuda.Stream(device) for _ in range(2)] if cuda else []

    def deep_part(emb: Tensor, dense: Tensor) -> Tensor:
        return deep(torch.cat((emb.flatten(1), dense), dim=1)).squeeze(1).float()

    def fm_part(emb: Tensor) -> Tensor:
        e = emb.float()
        square_of_sum = e.sum(1).pow(2)
        sum_of_square = e.pow(2).sum(1)
        return 0.5 * (square_of_sum - sum_of_square).sum(1)

    def linear_part(w: Tensor, dense: Tensor) -> Tensor:
        return w.float().sum((1, 2)) + dense_linear(dense).squeeze(1).float()

    @torch.no_grad()
    def step(ids: Tensor, dense: Tensor) -> tuple[Tensor, Tensor]:
        idx = ids + offsets
        emb = F.embedding(idx, table)  # (B, 26, k)
        w = F.embedding(idx, first)  # (B, 26, 1)
        if not cuda:
            logits = torch.stack((deep_part(emb, dense), fm_part(emb), linear_part(w, dense)))
            return torch.sigmoid(logits.sum(0)), logits
        current = torch.cuda.current_stream(device)
        outs, done = [], []
        parts = ((deep_part, (emb, dense)), (fm_part, (emb,)))
        for s, (part, args) in zip(streams, parts, strict=True):
            s.wait_stream(current)
            with torch.cuda.stream(s):
                outs.append(part(*args))
                event = torch.cuda.Event()
                event.record(s)
            done.append(event)
        lin = linear_part(w, dense)
        for event, out in zip(done, outs, strict=True):
            current.wait_event(event)
            if not torch.cuda.is_current_stream_capturing():
                out.record_stream(current)
        logits = torch.stack((outs[0], outs[1], lin))
        return torch.sigmoid(logits.sum(0)), logits

    inputs = [
        (
            torch.randint(0, vocab, (batch, FIELDS), device=device),
            torch.randn(batch, DENSE, device=device, dtype=dtype),
        )
        for _ in range(2)
    ]
    description = (
        f"DeepFM, {FIELDS} fields x {k} + {DENSE} dense, deep MLP {width} x 3 on side stream A, "
        f"FM on side stream B, linear part on the current stream, batch {batch}"
    )
    return Built(step, inputs, description, [table, first, offsets, deep, dense_linear])


if __name__ == "__main__":
    main(build, __doc__)
