"""``traceinspect calibrate``: measure this GPU's launch and replay costs into a profile."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from traceinspect.calibration import parse_calibration
from traceinspect.errors import TraceinspectError, UsageError
from traceinspect.files import stdout_is_terminal
from traceinspect.report.output import check_writable, write_text
from traceinspect.sanitize import make_console


def run_calibrate(
    out: Path, *, device: int = 0, quick: bool = False, force: bool = False
) -> dict[str, Any]:
    """Measure on CUDA device ``device`` and write the profile to ``out``; returns it."""
    check_writable(out, force=force)
    if device < 0:
        raise UsageError(f"--device must be a GPU index (0, 1, ...), got {device}")
    try:
        import torch  # noqa: F401  (the collector's optional dependency)
    except ImportError:
        raise TraceinspectError(
            "calibrate needs PyTorch with CUDA (pip install 'traceinspect[collect]')",
            exit_code=2,
        ) from None
    from traceinspect.collect.calibrate import measure

    try:
        result = measure(device, quick)
    except RuntimeError as exc:  # no CUDA, bad device index, CUDA errors
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise TraceinspectError(f"calibrate: {first_line}", exit_code=2) from None
    # Never write a profile that analyze could not read back.
    try:
        profile = parse_calibration(result, name=out.stem, source=str(out))
    except ValueError as exc:
        raise TraceinspectError(f"calibrate: measured profile is unusable ({exc})") from None
    write_text(out, json.dumps(result, indent=1), force=force)
    console = make_console(width=None if stdout_is_terminal() else 120)
    console.print(
        f"{profile.device_name}: eager launch {profile.eager_launch_host_ns / 1000:.2f} µs "
        f"({profile.eager_launch_host_ns_profiled / 1000:.2f} µs profiled), replay() "
        f"{profile.graph_launch_host_for(1) / 1000:.2f} µs host, "
        f"{profile.replay_fixed_ns / 1000:.2f} µs fixed per synchronized replay, "
        f"{profile.graph_node_overhead_ns / 1000:.2f} µs per tiny node; wrote {out}"
    )
    return result
