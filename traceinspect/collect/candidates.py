"""``traceinspect.graph_candidate``: offer a callable to be tried as a CUDA graph.

Under ``traceinspect profile`` the callable and its inputs are kept, and measured after the
script has finished and its trace is saved (so the measurements run without the script's
profiler, and the script's trace holds none of them). Anywhere else the call checks its
arguments and returns: nothing is kept, run or measured.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from traceinspect.collect.buckets import RequestMix, normalize_mix
from traceinspect.collect.session import active_session

InputFactory = Callable[[int], Sequence[Any]]


@dataclass(frozen=True)
class GraphCandidate:
    """A callable offered for graph capture, as registered (see :func:`graph_candidate`)."""

    name: str
    fn: Callable[..., Any]
    example_inputs: tuple[Any, ...] | None
    make_inputs: InputFactory | None
    buckets: tuple[int, ...] | None
    request_mix: dict[int, float] | None
    batch_dim: int


def graph_candidate(
    name: str,
    fn: Callable[..., Any],
    example_inputs: Sequence[Any] | InputFactory | Any,
    *,
    buckets: Sequence[int] | None = None,
    request_mix: RequestMix | None = None,
    batch_dim: int = 0,
) -> None:
    """Offer ``fn(*inputs)`` to ``traceinspect profile`` to be captured and replayed as a graph.

    ``example_inputs``: the arguments of one call (a tuple/list, or a single tensor), or a
    function ``make_inputs(batch_size) -> arguments``. With ``buckets`` (batch sizes, e.g.
    ``[1, 2, 4, 8]``) one graph is captured per bucket; given plain example inputs, each
    tensor argument is resized along ``batch_dim`` by repeating its rows. Without
    ``buckets`` the example inputs are captured as they are.

    ``request_mix``: the batch sizes requests arrive with, as ``{size: weight}`` or a list
    of observed sizes. Each request is served by the smallest bucket that holds it (padded)
    or runs eagerly when none does; the report gives the fallback share, the padding
    waste, and a recommended bucket set.

    Outside ``traceinspect profile`` this only validates its arguments.
    """
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"graph_candidate name must be a non-empty string, got {name!r}")
    if not callable(fn):
        raise TypeError(f"graph_candidate {name!r}: fn must be callable, got {type(fn).__name__}")
    if isinstance(batch_dim, bool) or not isinstance(batch_dim, int) or batch_dim < 0:
        raise ValueError(f"graph_candidate {name!r}: batch_dim must be an int >= 0")
    bucket_sizes = _check_buckets(name, buckets)
    mix = None if request_mix is None else normalize_mix(request_mix)
    example: tuple[Any, ...] | None
    factory: InputFactory | None
    if isinstance(example_inputs, tuple | list):
        example, factory = tuple(example_inputs), None
    elif callable(example_inputs):
        if bucket_sizes is None:
            raise ValueError(
                f"graph_candidate {name!r}: buckets are required when example_inputs is a "
                "function of the batch size"
            )
        example, factory = None, example_inputs
    else:
        example, factory = (example_inputs,), None
    session = active_session()
    if session is None:
        return
    if any(c.name == name for c in session.candidates):
        raise ValueError(f"graph_candidate {name!r} registered twice")
    session.candidates.append(
        GraphCandidate(name, fn, example, factory, bucket_sizes, mix, batch_dim)
    )


def _check_buckets(name: str, buckets: Sequence[int] | None) -> tuple[int, ...] | None:
    if buckets is None:
        return None
    sizes = tuple(buckets)
    if not sizes:
        raise ValueError(f"graph_candidate {name!r}: buckets is empty")
    for size in sizes:
        if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
            raise ValueError(
                f"graph_candidate {name!r}: buckets must be positive integers, got {size!r}"
            )
    if len(set(sizes)) != len(sizes):
        raise ValueError(f"graph_candidate {name!r}: duplicate buckets in {list(sizes)}")
    return tuple(sorted(sizes))
