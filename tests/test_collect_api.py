"""The public API a user's script calls: `traceinspect.region`, `traceinspect.graph_candidate`."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

import traceinspect
from traceinspect.collect.session import Session, activate, active_session
from traceinspect.parse import load_trace


def test_import_needs_neither_torch_nor_pandas() -> None:
    code = (
        "import sys, traceinspect\n"
        "with traceinspect.region('r'):\n"
        "    pass\n"
        "traceinspect.graph_candidate('c', print, (1,), buckets=[1, 2])\n"
        "print(sorted(m for m in ('torch', 'pandas', 'numpy', 'rich') if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"


def test_region_is_a_no_op_without_a_profiler() -> None:
    assert not traceinspect.is_recording()
    with traceinspect.region("idle") as r:
        assert r.name == "idle"
    assert r._open == []

    @traceinspect.region("decorated")
    def add(a: int, b: int) -> int:
        """Adds."""
        return a + b

    assert add(2, 3) == 5
    assert add.__name__ == "add"
    assert add.__doc__ == "Adds."


def test_region_rejects_empty_names() -> None:
    with pytest.raises(ValueError, match="non-empty"):
        traceinspect.region("")


def _per_call_ns(fn: object, calls: int) -> float:
    start = time.perf_counter_ns()
    for _ in range(calls):
        fn()  # type: ignore[operator]
    return (time.perf_counter_ns() - start) / calls


def test_region_no_op_overhead_is_small() -> None:
    region = traceinspect.region("hot")

    def enter_exit() -> None:
        with region:
            pass

    per_call = min(_per_call_ns(enter_exit, 20_000) for _ in range(3))
    # Measured ~0.3 µs per enter+exit on a 2-core CI VM; 5 µs leaves room for noise while
    # still failing if the no-op path ever imports or calls into torch.
    assert per_call < 5_000, f"{per_call:.0f} ns per no-op region"


def test_region_under_a_users_own_profiler_lands_in_the_trace(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")

    @traceinspect.region("decorated_step")
    def step(x: object) -> object:
        return torch.relu(x)  # type: ignore[arg-type]

    trace = tmp_path / "t.json"
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        assert traceinspect.is_recording()
        for _ in range(3):
            with traceinspect.region("outer"):
                step(torch.ones(8))
    assert not traceinspect.is_recording()
    prof.export_chrome_trace(str(trace))
    ann = load_trace(trace).annotations
    names = ann.loc[ann["source"] == "record_function", "name"].tolist()
    assert names.count("outer") == 3
    assert names.count("decorated_step") == 3
    inner = ann[ann["name"] == "decorated_step"]
    assert set(inner["depth"]) == {1}  # nested inside "outer"


def test_graph_candidate_outside_profile_keeps_nothing() -> None:
    assert active_session() is None
    assert traceinspect.graph_candidate("c", abs, (1,), buckets=[1, 2]) is None
    assert active_session() is None


def test_graph_candidate_registers_into_the_active_session() -> None:
    def make(batch: int) -> tuple[int]:
        return (batch,)

    with activate(Session()) as session:
        traceinspect.graph_candidate("a", abs, [1.0])
        traceinspect.graph_candidate(
            "b", abs, make, buckets=[8, 1, 4], request_mix=[1, 1, 3], batch_dim=1
        )
        traceinspect.graph_candidate("c", abs, 5.0)
        with pytest.raises(ValueError, match="registered twice"):
            traceinspect.graph_candidate("a", abs, (1.0,))
    assert active_session() is None
    a, b, c = session.candidates
    assert (a.example_inputs, a.make_inputs, a.buckets, a.request_mix) == ((1.0,), None, None, None)
    assert (b.example_inputs, b.make_inputs, b.buckets) == (None, make, (1, 4, 8))
    assert b.request_mix == {1: 2.0, 3: 1.0}
    assert b.batch_dim == 1
    assert c.example_inputs == (5.0,)  # a single input becomes a one-argument call


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"name": ""}, "non-empty"),
        ({"fn": 3}, "callable"),
        ({"buckets": []}, "empty"),
        ({"buckets": [1, 0]}, "positive"),
        ({"buckets": [2, 2]}, "duplicate"),
        ({"buckets": [True]}, "positive"),
        ({"example_inputs": lambda b: (b,)}, "buckets are required"),
        ({"request_mix": {2: -1}}, "> 0"),
        ({"batch_dim": -1}, "batch_dim"),
    ],
)
def test_graph_candidate_validates_even_outside_profile(
    kwargs: dict[str, object], message: str
) -> None:
    args: dict[str, object] = {"name": "c", "fn": abs, "example_inputs": (1,), **kwargs}
    with pytest.raises((ValueError, TypeError), match=message):
        traceinspect.graph_candidate(**args)  # type: ignore[arg-type]
