"""Longest path through a graph's nodes: each waits for its stream predecessor and for the
nodes it depends on."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

import numpy as np
import numpy.typing as npt

from traceinspect.analysis.estimate.columns import FloatArray, IntArray

#: A graph's longest path is summed per stretch of a stream between dependencies when the
#: stretches average at least this many nodes (numpy's per-call cost beats a Python walk).
PIECE_MIN_NODES: Final = 8


def critical_path_ns(
    stream_key: IntArray, cost_ns: npt.ArrayLike, deps: Sequence[tuple[int, int]]
) -> float:
    """Longest path through nodes (in start order) where each waits for its stream
    predecessor and for the sources of its dependencies ``(src, dst)``, as indices."""
    return PathLayout.of(np.asarray(stream_key), deps).longest(np.asarray(cost_ns, np.float64))


def stream_order(stream_key: IntArray) -> tuple[IntArray, IntArray]:
    """The nodes (in start order) sorted by stream, start order kept within each, and each
    node's predecessor on its stream (-1 for a stream's first): neighbours in that order."""
    by_stream = np.argsort(stream_key, kind="stable")
    same = stream_key[by_stream[1:]] == stream_key[by_stream[:-1]]
    before = np.full(len(stream_key), -1, np.int64)
    before[by_stream[1:][same]] = by_stream[:-1][same]
    return by_stream, before


@dataclass(frozen=True)
class PathLayout:
    """The structure :func:`critical_path_ns` walks, built once per graph and reused for
    every set of node costs (the estimate evaluates each graph six times)."""

    #: Without dependencies: each stream's nodes (independent chains that overlap).
    chains: list[IntArray]
    #: With dependencies: each node's predecessor on its stream (-1 for the first) and the
    #: sources of its dependencies; empty without dependencies.
    previous: list[int]
    sources: list[tuple[int, ...]]
    #: With dependencies: stretches of one stream that only the first node's dependencies
    #: (or the stream's start) interrupt, as node indices in order of their first node.
    pieces: list[IntArray] = field(default_factory=list)

    @classmethod
    def of(cls, stream_key: IntArray, deps: Sequence[tuple[int, int]]) -> PathLayout:
        if not deps:
            chains = [np.flatnonzero(stream_key == k) for k in np.unique(stream_key)]
            return cls(chains=chains, previous=[], sources=[])
        incoming: dict[int, list[int]] = {}
        for src, dst in deps:
            incoming.setdefault(dst, []).append(src)
        by_stream, before = stream_order(stream_key)
        previous = before.tolist()
        sources = [tuple(incoming.get(i, ())) for i in range(len(previous))]
        # A piece starts at a stream's first node and at every node with dependencies.
        starts = before < 0
        starts[list(incoming)] = True
        # Pieces pay off when they are long and every source precedes its destination.
        if int(starts.sum()) * PIECE_MIN_NODES <= len(previous) and all(
            src < dst for src, dst in deps
        ):
            pieces = np.split(by_stream, np.flatnonzero(starts[by_stream])[1:])
            pieces.sort(key=lambda piece: int(piece[0]))
            return cls([], previous, sources, pieces)
        return cls(chains=[], previous=previous, sources=sources)

    def longest(self, costs: FloatArray) -> float:
        """Longest path with node costs ``costs`` (ns)."""
        if len(costs) == 0:
            return 0.0
        if not self.previous:
            return float(max(costs[chain].sum() for chain in self.chains))
        return float(self.finishes(costs).max())

    def finishes(self, costs: FloatArray) -> FloatArray:
        """Each node's finish time on the longest-path schedule with node costs ``costs``
        (ns): it starts once its stream predecessor and its sources have finished."""
        if not self.previous:
            finish = np.zeros(len(costs))
            for chain in self.chains:
                finish[chain] = np.cumsum(costs[chain])
            return finish
        if self.pieces:
            return self._finishes_by_pieces(costs)
        # Plain Python floats: the same IEEE sums as numpy's, without per-element boxing.
        # A source not yet run (a later node) counts as finished at 0.
        done = [0.0] * len(costs)
        for i, (before, sources, cost) in enumerate(
            zip(self.previous, self.sources, costs.tolist(), strict=True)
        ):
            ready = done[before] if before >= 0 else 0.0
            for src in sources:
                ready = max(ready, done[src])
            done[i] = ready + cost
        return np.array(done)

    def _finishes_by_pieces(self, costs: FloatArray) -> FloatArray:
        """:meth:`finishes` one piece at a time: a piece's finish times are the running sum
        of its costs from its first node's ready time (``np.cumsum`` adds in order, the same
        IEEE sums as the node-by-node walk)."""
        finish = np.zeros(len(costs))
        for piece in self.pieces:
            first = int(piece[0])
            before = self.previous[first]
            ready = float(finish[before]) if before >= 0 else 0.0
            for src in self.sources[first]:
                ready = max(ready, float(finish[src]))
            running = np.empty(len(piece) + 1)
            running[0] = ready
            running[1:] = costs[piece]
            finish[piece] = np.cumsum(running)[1:]
        return finish
