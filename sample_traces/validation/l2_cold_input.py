"""Does a kernel that reads its input after other work has swept the L2 run slower?

``holdout34``'s depth head opens with the same bilinear upsampling as the segmentation head, of
the shared encoder's (4, 256, 16, 16) bf16 features (512 KiB). In eager the depth head's copy ran
after some 84 MB of the other head's activations and took 387-393 us; its twin, run first, and
both copies in replay took 212-217 us. The fork-twin rule (traceinspect/analysis/estimate/twins.py)
charges such a later twin its earlier twin's time; this probe checks the explanation on the GPU:
it times the same upsampling with its input hot in the L2 and after writing 0-256 MB elsewhere.

    python sample_traces/validation/l2_cold_input.py OUT.json

Writes, per MB written between, the upsampling's median and range over 20 timings (CUDA events),
the GPU's name and L2 size.
"""

from __future__ import annotations

import json
import statistics
import sys

import torch
import torch.nn.functional as F  # noqa: N812 - the usual name


def main() -> None:
    out = sys.argv[1]
    device = torch.device("cuda")
    x = torch.randn(4, 256, 16, 16, device=device, dtype=torch.bfloat16)
    scratch = torch.empty(256 * 2**20, device=device, dtype=torch.uint8)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def upsample() -> torch.Tensor:
        return F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)

    for _ in range(5):
        upsample()
    rows = []
    for mb in (0, 8, 16, 32, 48, 64, 96, 128, 256):
        times = []
        for _ in range(20):
            upsample()  # the input hot
            if mb:
                scratch[: mb * 2**20].fill_(len(times) % 251)  # mb MB written elsewhere
            start.record()
            upsample()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) * 1000)
        rows.append(
            {
                "written_mb": mb,
                "median_us": round(statistics.median(times), 1),
                "min_us": round(min(times), 1),
                "max_us": round(max(times), 1),
            }
        )
        print(rows[-1], flush=True)
    props = torch.cuda.get_device_properties(device)
    result = {
        "gpu": props.name,
        "l2_mb": round(getattr(props, "L2_cache_size", 0) / 2**20, 1),
        "torch": torch.__version__,
        "input": "(4, 256, 16, 16) bf16, F.interpolate x2 bilinear align_corners=False",
        "rows": rows,
    }
    with open(out, "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
