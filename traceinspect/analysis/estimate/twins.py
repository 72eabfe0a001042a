"""Branches of a program's fork that open with the same kernel read its input warm in replay.

A program forks work onto side streams by making them wait on an event recorded after a
producer kernel (``stream.wait_stream``). Where two branches open with the same kernel
(same name, grid, block, registers and shared memory), both read the producer's output. In
the eager trace they often did not run side by side: the host issued one branch whole before
the other, so the second opening kernel read the producer's output after the first branch's
work had gone through the L2 cache, from device memory. A kernel of a few blocks bound by
load latency then runs up to twice its twin's time (a one-block bilinear upsample of a
512 KiB input: 390 µs against its twin's 214 µs, on an H200). In the replay every branch
opens as the producer ends, and each opening kernel reads the input warm: the later twin
takes its earlier twin's time (measured: 213 µs).

Only a program's fork counts: the producer and the twins launched by CPU operators of their
own. Inside one library call (cuDNN's multi-layer RNNs hand work from stream to stream)
kernels of one signature on two streams are different work. Equal signatures do not prove
equal inputs (traces carry no shapes at this level), so a twin is charged its earlier twin's
time only where it ran after that twin had ended and more than :data:`WARM_TWIN_RATIO`
times its time; anything closer is left as traced.
"""

from __future__ import annotations

from typing import Final

import numpy as np

from traceinspect.analysis.estimate.columns import FloatArray, IntArray, TimelineColumns
from traceinspect.analysis.estimate.critical_path import stream_order
from traceinspect.analysis.estimate.dependencies import launching_operators

#: A later twin slower than this many times its earlier twin read its input cold. Two
#: recordings of one workload settle the same for any ratio from 1.1 to 1.5; within ~1.2
#: twins differ by clock and neighbour alone.
WARM_TWIN_RATIO: Final = 1.25


def warm_fork_twins(
    cols: TimelineColumns,
    rows: IntArray,
    duration: FloatArray,
    deps: list[tuple[int, int]],
    keys: IntArray,
) -> FloatArray:
    """``duration`` of the activities at ``rows`` (sorted by start, on the streams ``keys``)
    with each later twin among the branches opening at a program's fork charged its earlier
    twin's time (module docstring); the array itself where nothing changes."""
    if not deps or len(np.unique(keys)) < 2:
        return duration
    # each stream's first node, and each node's next on its own stream
    previous = stream_order(keys)[1]
    first = previous < 0
    following = np.full(len(rows), -1, np.int64)
    following[previous[~first]] = np.flatnonzero(~first)
    # fork edges: a producer to the first node of another stream
    branches: dict[int, set[int]] = {}
    for src, dst in deps:
        if first[dst] and keys[src] != keys[dst]:
            branches.setdefault(src, set()).add(dst)
    if not branches:
        return duration
    kind = cols.gpu("kind")[rows]
    start = cols.gpu("start_ns")[rows]
    end = cols.gpu("end_ns")[rows]
    columns = [cols.gpu(c) for c in ("name", "grid", "block", "registers", "shared_mem")]

    def signature(node: int) -> tuple[object, ...]:
        return tuple(c[rows[node]] for c in columns)

    operator = launching_operators(cols, cols.gpu("launch_row")[rows])
    out = duration
    for producer, opening in branches.items():
        # the producer's own stream goes on with a branch of its own
        if following[producer] >= 0:
            opening = opening | {int(following[producer])}
        twins: dict[tuple[object, ...], list[int]] = {}
        for node in opening:
            if kind[node] == "kernel":
                twins.setdefault(signature(node), []).append(node)
        for group in twins.values():
            if len(group) < 2:
                continue
            earliest, *later = sorted(group, key=lambda i: start[i])
            for node in later:
                program = (
                    operator[node] >= 0
                    and operator[earliest] >= 0
                    and operator[node] != operator[earliest]
                    and operator[producer] not in (operator[node], operator[earliest])
                )
                if (
                    program
                    and start[node] >= end[earliest]
                    and out[node] > WARM_TWIN_RATIO * duration[earliest]
                ):
                    if out is duration:
                        out = duration.copy()
                    out[node] = duration[earliest]
    return out
