"""Wide & Deep click-through prediction (Cheng et al., 2016) on 256 samples with four inputs,
bf16, with the wide part on a side stream (sixteenth hold-out), inference. The inputs: 13
dense features, two multi-hot sparse fields of 8 ids each (int64, in range, one per table)
and 64 cross-product features (already crossed, as 0/1 indicators and counts would be). The
deep part, on the current stream: each sparse field pooled by its own
``nn.EmbeddingBag(50,000, 32, mode="sum")`` (2-D ids, 8 per bag, no offsets), the two bags
and the dense features concatenated (256 x 77) and an MLP 77->512->256->1 with ReLU (three
GEMMs). The wide part, on one side stream forked from the current stream with
``wait_stream`` at the start and ending by recording an event: a linear model over the
cross-product features and the dense features (``torch.cat`` to 256 x 77, then Linear
77->1). The current stream runs the deep part between the fork and the join, so two streams
run at once; it then waits on the event (``wait_event``), adds the two logits and applies,
in fp32, a sigmoid. Outside graph capture the side stream's output is marked with
``record_stream`` for the current stream. On a CPU everything runs in order on the default
stream. 17 kernels (each bag's offsets made by an ``arange`` among them), small (the tables
are 2 x 3.2 MB, a step reads 4,096 of their rows): launch-bound. Inputs: the dense
features (256 x 13), the two id tensors (256 x 8 each, int64) and the cross features (256 x
64). Returns the click probabilities (256, fp32).

    traceinspect profile wide_deep_4in_streams_b256.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn

DENSE, BAG, CROSS, DIM = 13, 8, 64, 32


def build(device: torch.device, smoke: bool) -> Built:
    batch, vocab, w1, w2 = (8, 100, 32, 16) if smoke else (256, 50_000, 512, 256)
    dtype = low_precision(device)
    cuda = device.type == "cuda"
    bags = nn.ModuleList(nn.EmbeddingBag(vocab, DIM, mode="sum") for _ in range(2))
    with torch.no_grad():
        for bag in bags:
            bag.weight.mul_(0.05)
    bags = bags.to(device=device, dtype=dtype).eval()
    deep = nn.Sequential(
        nn.Linear(2 * DIM + DENSE, w1), nn.ReLU(), nn.Linear(w1, w2), nn.ReLU(), nn.Linear(w2, 1)
    ).to(device=device, dtype=dtype).eval()  # fmt: skip
    wide = nn.Linear(CROSS + DENSE, 1).to(device=device, dtype=dtype).eval()
    side = torch.cuda.Stream(device) if cuda else None

    def deep_part(dense: Tensor, ids_a: Tensor, ids_b: Tensor) -> Tensor:
        pooled = [bag(ids) for bag, ids in zip(bags, (ids_a, ids_b), strict=True)]
        return deep(torch.cat((*pooled, dense), dim=1))

    def wide_part(dense: Tensor, cross: Tensor) -> Tensor:
        return wide(torch.cat((cross, dense), dim=1))

    @torch.no_grad()
    def step(dense: Tensor, ids_a: Tensor, ids_b: Tensor, cross: Tensor) -> Tensor:
        if side is None:
            y_wide, y_deep = wide_part(dense, cross), deep_part(dense, ids_a, ids_b)
        else:
            current = torch.cuda.current_stream(device)
            side.wait_stream(current)
            with torch.cuda.stream(side):
                y_wide = wide_part(dense, cross)
                done = torch.cuda.Event()
                done.record(side)
            y_deep = deep_part(dense, ids_a, ids_b)
            current.wait_event(done)
            if not torch.cuda.is_current_stream_capturing():
                y_wide.record_stream(current)
        return torch.sigmoid((y_wide + y_deep).squeeze(1).float())

    def make() -> tuple[Tensor, ...]:
        dense = torch.randn(batch, DENSE, device=device, dtype=dtype)
        ids_a = torch.randint(0, vocab, (batch, BAG), device=device)
        ids_b = torch.randint(0, vocab, (batch, BAG), device=device)
        cross = torch.randint(0, 3, (batch, CROSS), device=device).to(dtype)
        return dense, ids_a, ids_b, cross

    inputs = [make() for _ in range(2)]
    description = (
        f"Wide & Deep, 2 EmbeddingBag({vocab}, {DIM}, sum) x {BAG} ids + {DENSE} dense -> "
        f"{w1}-{w2}-1 on the current stream, wide Linear on {CROSS} cross + dense on a side "
        f"stream, batch {batch}"
    )
    return Built(step, inputs, description, [bags, deep, wide])


if __name__ == "__main__":
    main(build, __doc__)
