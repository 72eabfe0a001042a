"""DCN-V2 click-through prediction (Wang et al., 2021, the parallel structure: a cross
network beside a deep network) on 1024 samples of 26 categorical and 13 dense features,
bf16, with the deep network on a side stream (fifteenth hold-out), inference. The 26 fields
share one concatenated table of 26 x 40,000 rows of 16, as the thirteenth hold-out's DeepFM
does (a field offset added to each id, the rows gathered with ``F.embedding``); the 416
flattened embeddings and the 13 dense features make x0 (1024 x 429, one ``cat``). One side
stream, forked from the current stream with ``wait_stream`` after x0 is made, runs the deep
network, an MLP 429->512->512->512 with ReLU (three GEMMs), and ends by recording an event;
between the fork and the join the current stream itself runs three full-rank cross layers,
x_{l+1} = x0 * (W_l x_l + b_l) + x_l (a Linear 429->429, a product and a sum each), so two
streams run at once; it then waits on the event (``wait_event``), concatenates the cross
output and the deep output (1024 x 941) and applies a Linear 941->1 and, in fp32, a sigmoid.
Outside graph capture the side stream's output is marked with ``record_stream`` for the
current stream. On a CPU everything runs in order on the default stream. Inputs: the
categorical ids (1024 x 26, int64) and the dense features (1024 x 13). Returns the click
probabilities (1024, fp32).

    traceinspect profile dcn_v2_streams_b1024.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

FIELDS, DENSE, CROSS_LAYERS = 26, 13, 3


def build(device: torch.device, smoke: bool) -> Built:
    batch, vocab, k, width = (8, 50, 4, 16) if smoke else (1024, 40_000, 16, 512)
    dtype = low_precision(device)
    cuda = device.type == "cuda"
    d = FIELDS * k + DENSE
    table = (0.01 * torch.randn(FIELDS * vocab, k, device=device)).to(dtype)
    offsets = torch.arange(FIELDS, device=device) * vocab
    cross = nn.ModuleList(nn.Linear(d, d) for _ in range(CROSS_LAYERS))
    cross = cross.to(device=device, dtype=dtype).eval()
    deep = nn.Sequential(
        nn.Linear(d, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(),
        nn.Linear(width, width), nn.ReLU(),
    ).to(device=device, dtype=dtype).eval()  # fmt: skip
    head = nn.Linear(d + width, 1).to(device=device, dtype=dtype).eval()
    side = torch.cuda.Stream(device) if cuda else None

    def cross_net(x0: Tensor) -> Tensor:
        x = x0
        for layer in cross:
            x = x0 * layer(x) + x
        return x

    @torch.no_grad()
    def step(ids: Tensor, dense: Tensor) -> Tensor:
        emb = F.embedding(ids + offsets, table)  # (B, 26, k)
        x0 = torch.cat((emb.flatten(1), dense), dim=1)  # (B, 429)
        if side is None:
            y_deep, y_cross = deep(x0), cross_net(x0)
        else:
            current = torch.cuda.current_stream(device)
            side.wait_stream(current)
            with torch.cuda.stream(side):
                y_deep = deep(x0)
                done = torch.cuda.Event()
                done.record(side)
            y_cross = cross_net(x0)
            current.wait_event(done)
            if not torch.cuda.is_current_stream_capturing():
                y_deep.record_stream(current)
        logit = head(torch.cat((y_cross, y_deep), dim=1)).squeeze(1).float()
        return torch.sigmoid(logit)

    inputs = [
        (
            torch.randint(0, vocab, (batch, FIELDS), device=device),
            torch.randn(batch, DENSE, device=device, dtype=dtype),
        )
        for _ in range(2)
    ]
    description = (
        f"DCN-V2, {FIELDS} fields x {k} + {DENSE} dense, {CROSS_LAYERS} cross layers on the "
        f"current stream, deep MLP {width} x 3 on a side stream, batch {batch}"
    )
    return Built(step, inputs, description, [table, offsets, cross, deep, head])


if __name__ == "__main__":
    main(build, __doc__)
