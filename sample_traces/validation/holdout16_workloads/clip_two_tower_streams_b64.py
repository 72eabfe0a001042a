"""A CLIP-style contrastive scorer (Radford et al., 2021) on a batch of 64 image-text pairs,
bf16, with the two towers on two side streams (sixteenth hold-out), inference. The image
tower is an MLP on 64 x 768 image features, Linear 768->1024, GELU, Linear 1024->1024, GELU,
Linear 1024->512; the text tower the same on 64 x 512 text features (512->1024->1024->512).
Two side streams, each forked from the current stream with ``wait_stream``, run the towers
(side stream A the image tower, side stream B the text tower) and each ends by recording an
event; the current stream waits on the two events (``wait_event``), with nothing on it
between the fork and the join. Outside graph capture the side streams' outputs are marked
with ``record_stream`` for the current stream. Then, in fp32 on the current stream: both
embeddings L2-normalized (``F.normalize``), the 64 x 64 logits image @ text^T scaled by the
temperature exp(t) (t a fixed parameter, log(1 / 0.07), the scale clamped at 100 as CLIP
does), and the symmetric cross-entropy loss, the mean of ``F.cross_entropy`` over the rows
and over the columns (the logits' transpose) against the labels 0..63 (a device tensor made
at build). On a CPU everything runs in order on the default stream. Three GEMMs and two
GELUs per tower over at most 64 x 1024 activations, then some 20 small kernels (the fp32
conversions, the norms, the logits GEMM, the two cross-entropies), 30 in all: launch-bound.
Inputs: the image features (64 x 768) and the text features (64 x 512). Returns the loss (a
0-d fp32 tensor) and the logits (64 x 64, fp32).

    traceinspect profile clip_two_tower_streams_b64.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

MAX_SCALE = 100.0


def tower(cin: int, hidden: int, embed: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Linear(cin, hidden), nn.GELU(), nn.Linear(hidden, hidden), nn.GELU(),
        nn.Linear(hidden, embed),
    )  # fmt: skip


def build(device: torch.device, smoke: bool) -> Built:
    sizes = (4, 48, 32, 64, 32) if smoke else (64, 768, 512, 1024, 512)
    batch, d_image, d_text, hidden, embed = sizes
    dtype = low_precision(device)
    cuda = device.type == "cuda"
    image_tower = tower(d_image, hidden, embed).to(device=device, dtype=dtype).eval()
    text_tower = tower(d_text, hidden, embed).to(device=device, dtype=dtype).eval()
    log_scale = torch.tensor(math.log(1 / 0.07), device=device)
    labels = torch.arange(batch, device=device)
    streams = [torch.cuda.Stream(device) for _ in range(2)] if cuda else []

    def towers(image: Tensor, text: Tensor) -> list[Tensor]:
        parts = ((image_tower, image), (text_tower, text))
        if not cuda:
            return [module(x) for module, x in parts]
        current = torch.cuda.current_stream(device)
        outs, done = [], []
        for s, (module, x) in zip(streams, parts, strict=True):
            s.wait_stream(current)
            with torch.cuda.stream(s):
                outs.append(module(x))
                event = torch.cuda.Event()
                event.record(s)
            done.append(event)
        for event, out in zip(done, outs, strict=True):
            current.wait_event(event)
            if not torch.cuda.is_current_stream_capturing():
                out.record_stream(current)
        return outs

    @torch.no_grad()
    def step(image: Tensor, text: Tensor) -> tuple[Tensor, Tensor]:
        z_image, z_text = towers(image, text)
        z_image = F.normalize(z_image.float(), dim=-1)
        z_text = F.normalize(z_text.float(), dim=-1)
        logits = log_scale.exp().clamp(max=MAX_SCALE) * z_image @ z_text.t()
        loss = 0.5 * (F.cross_entropy(logits, labels) + F.cross_entropy(logits.t(), labels))
        return loss, logits

    inputs = [
        (
            torch.randn(batch, d_image, device=device, dtype=dtype),
            torch.randn(batch, d_text, device=device, dtype=dtype),
        )
        for _ in range(2)
    ]
    description = (
        f"CLIP two-tower scorer, image MLP {d_image}-{hidden}-{hidden}-{embed} on side stream A, "
        f"text MLP {d_text}-{hidden}-{hidden}-{embed} on side stream B, {batch} x {batch} "
        f"logits + symmetric cross-entropy, batch {batch}"
    )
    return Built(step, inputs, description, [image_tower, text_tower, log_scale, labels])


if __name__ == "__main__":
    main(build, __doc__)
