"""What this machine's host charges for the calls a graphed step makes besides replay():
the ``copy_`` of each static input, timed in the process that times the candidates.

A small ``copy_`` issued from Python took 5.6-5.8 µs of host on the H200 machine of the
built-in calibration and 6.5 to 10.8 µs on later machines of the same type
(``sample_traces/validation/copy_cost.json``, ``copy_cost.lease2.json``,
``replay_parts.holdout15.json``, ``replay_parts.holdout16.json``): on a step fed six small
inputs that difference alone is 30 µs, and the built-in constant of the time read such
steps 18-28 % short. It moves within one process too (6.5 µs before a candidate's timing,
9.8 µs after it, ``sample_traces/validation/holdout17``). ``traceinspect profile`` measures
it here, around every timing round of a graphed step, and predicts with it
(:meth:`traceinspect.calibration.Calibration.with_host_costs`); ``analyze`` of a bare trace
cannot know it and charges the built-in median of these probes (9.2 µs) with a wider range
(``COPY_HOST_LOW_FACTOR``, ``COPY_HOST_HIGH_FACTOR`` in the estimator).

The probe is small: ``copies`` pairs of 4 KB device tensors, each round a synchronize and
then the copies one after another, the host time of each call taken apart (the first after
a synchronize is the cold one), ``rounds`` rounds: 400 copies, a few milliseconds, before
each timing round of a graphed step and once before and after the candidates.
"""

from __future__ import annotations

import statistics
import time
from typing import Any, Final

#: Copies per round and rounds per probe.
PROBE_COPIES: Final = 8
PROBE_ROUNDS: Final = 50
PROBE_BYTES: Final = 4096
#: Untimed rounds first (the allocator, the copy kernel's first launch).
PROBE_WARMUP_ROUNDS: Final = 10


def measure_copy_host(
    torch: Any,
    *,
    device: str = "cuda",
    copies: int = PROBE_COPIES,
    rounds: int = PROBE_ROUNDS,
) -> dict[str, Any]:
    """Host time of a small device-to-device ``copy_`` issued from Python (ns): ``first``,
    the p50 of the first call after a synchronize, and ``warm``, the median over the later
    positions of each position's p50; with ``per_position_ns`` as evidence."""
    numel = PROBE_BYTES // 4
    pairs = [
        (
            torch.empty(numel, dtype=torch.float32, device=device),
            torch.ones(numel, dtype=torch.float32, device=device),
        )
        for _ in range(copies)
    ]
    per: list[list[int]] = [[] for _ in pairs]
    for number in range(PROBE_WARMUP_ROUNDS + rounds):
        torch.cuda.synchronize()
        t = time.perf_counter_ns()
        for i, (dst, src) in enumerate(pairs):
            dst.copy_(src)
            now = time.perf_counter_ns()
            if number >= PROBE_WARMUP_ROUNDS:
                per[i].append(now - t)
            t = now
    torch.cuda.synchronize()
    p50 = [int(statistics.median(times)) for times in per]
    return {
        "copy_first_host_ns": p50[0],
        "copy_warm_host_ns": int(statistics.median(p50[1:])) if len(p50) > 1 else p50[0],
        "per_position_ns": p50,
        "copy_bytes": PROBE_BYTES,
        "rounds": rounds,
    }


def combine(probes: list[dict[str, Any]]) -> dict[str, Any] | None:
    """One machine reading from the probes taken around the candidates' timing rounds: the
    mean of their ``first`` and ``warm`` costs, each probe kept under ``probes``."""
    if not probes:
        return None
    return {
        "copy_first_host_ns": round(statistics.mean(p["copy_first_host_ns"] for p in probes)),
        "copy_warm_host_ns": round(statistics.mean(p["copy_warm_host_ns"] for p in probes)),
        "probes": probes,
    }


def valid_host_costs(data: Any) -> tuple[int, int] | None:
    """``(first, warm)`` copy host ns from a ``results.json``'s ``host_costs`` where they are
    present and plausible (positive, under 1 ms), else None."""
    if not isinstance(data, dict):
        return None
    first, warm = data.get("copy_first_host_ns"), data.get("copy_warm_host_ns")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (first, warm)):
        return None
    assert isinstance(first, int) and isinstance(warm, int)
    if not (0 < first < 1_000_000 and 0 < warm < 1_000_000):
        return None
    return first, warm
