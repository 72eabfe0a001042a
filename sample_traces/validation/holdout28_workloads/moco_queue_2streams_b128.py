"""A MoCo contrastive step (He et al., 2020) with the key encoder on a side stream
(twenty-eighth hold-out): 128 pairs of 2,048-wide features, bf16 on a GPU. On one stream the
query encoder (Linear 2,048 -> 2,048, LayerNorm, ReLU, twice, then Linear -> 128 and an L2
normalize); on the other the key encoder's momentum update from the query encoder
(``_foreach_lerp_``, m 0.999, after restoring its weights from a snapshot with
``_foreach_copy_`` so a step depends only on its inputs), then the key encoder on the other
view. Joined back: the positive logits, the negatives against a 16,384-key queue (128 x 128
@ 128 x 16,384), temperature 0.2, the cross-entropy with target 0, and the next queue (the
new keys concatenated before the oldest dropped), returned with the loss.

    traceinspect profile moco_queue_2streams_b128.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

MOMENTUM, TEMPERATURE = 0.999, 0.2


def encoder(d: int, out: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Linear(d, d),
        nn.LayerNorm(d),
        nn.ReLU(),
        nn.Linear(d, d),
        nn.LayerNorm(d),
        nn.ReLU(),
        nn.Linear(d, out),
    )


def build(device: torch.device, smoke: bool) -> Built:
    batch, d, out, queue_len = (4, 32, 8, 64) if smoke else (128, 2048, 128, 16384)
    dtype = low_precision(device)
    query_enc = encoder(d, out).to(device, dtype).eval()
    key_enc = encoder(d, out).to(device, dtype).eval()
    q_params = [p.detach() for p in query_enc.parameters()]
    k_params = [p.detach() for p in key_enc.parameters()]
    k_start = [p.clone() for p in k_params]
    queue = F.normalize(torch.randn(queue_len, out, device=device), dim=1).to(dtype)
    streams = side_streams(device, 2)

    def keys(x: Tensor) -> Tensor:
        torch._foreach_copy_(k_params, k_start)
        torch._foreach_lerp_(k_params, q_params, 1 - MOMENTUM)
        return F.normalize(key_enc(x), dim=1)

    @torch.no_grad()
    def step(x_q: Tensor, x_k: Tensor) -> tuple[Tensor, Tensor]:
        q, k = fork_join(
            device, streams, [lambda: F.normalize(query_enc(x_q), dim=1), lambda: keys(x_k)]
        )
        positive = (q * k).sum(dim=1, keepdim=True)
        negative = q @ queue.T
        logits = torch.cat([positive, negative], dim=1).float() / TEMPERATURE
        target = torch.zeros(q.shape[0], dtype=torch.long, device=q.device)
        loss = F.cross_entropy(logits, target)
        return loss, torch.cat([k, queue[: -q.shape[0]]])

    inputs = [
        (
            torch.randn(batch, d, device=device, dtype=dtype),
            torch.randn(batch, d, device=device, dtype=dtype),
        )
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"MoCo step, encoders {d}->{out} on 2 streams, queue {queue_len}, b{batch}",
        [query_enc, key_enc, k_start, queue],
    )


if __name__ == "__main__":
    main(build, __doc__)
