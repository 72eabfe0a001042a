"""Where the detected step is in the user's script: from a trace's Python stacks
(``python_function`` events, ``with_stack=True``), the loop that runs every step and the
function whose one call is one step, and the step boundaries at those calls.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import numpy as np
import pandas as pd

from traceinspect.analysis.intervals import IntArray
from traceinspect.model import Timeline

if TYPE_CHECKING:
    from traceinspect.analysis.steps import _Items

#: The body function's calls hold at least this share of the steps' launches.
BODY_SHARE: Final = 0.8


@dataclass(frozen=True)
class LoopSource:
    """Where the step's loop is in the script, from the trace's Python stacks."""

    #: ``file(line): function`` of the innermost Python frame that runs every repeat.
    loop: str
    #: ``file(line): function`` whose one call is one step ("" when the loop body is
    #: written inline in ``loop``).
    body: str
    #: Median share of a step's launches (on the loop's thread) inside one call of ``body``.
    body_share: float

    def describe(self) -> str:
        if self.body:
            return f"each step is one call of {self.body}, looped in {self.loop}"
        return f"the step is the body of a loop in {self.loop}"


def loop_source(
    timeline: Timeline, items: _Items, anchors: IntArray, last_end: int, *, period_slack: float
) -> tuple[LoopSource, IntArray | None] | None:
    """The Python function that runs the step loop, the function whose one call is one step,
    and the first call of each of its calls, from the trace's ``python`` frames on the
    thread issuing the steps (``None`` without stacks).

    The body is the function called about once per step whose calls hold the most of the
    steps' launches (at least :data:`BODY_SHARE`), the script's own code before a library's
    wrapper around it (``torch.no_grad``'s ``decorate_context``), the outermost on a tie;
    "about once" is within ``period_slack`` of the number of steps (the detector's own slack).
    """
    python = timeline.python
    if len(python) == 0:
        return None
    span = slice(int(anchors[0]), last_end)
    tids, counts = np.unique(items.tid[span], return_counts=True)
    tid = int(tids[int(np.argmax(counts))])
    mine = (python["pid"].to_numpy(np.int64) == items.pid) & (
        python["tid"].to_numpy(np.int64) == tid
    )
    names = python["name"].to_numpy()[mine]
    if len(names) == 0:
        return None
    start = python["start_ns"].to_numpy(np.int64)[mine]
    end = python["end_ns"].to_numpy(np.int64)[mine]
    frame = ~pd.Series(names, dtype=object).str.startswith("<built-in").to_numpy(bool)
    on_thread = items.tid == tid
    steady = np.zeros(len(items.tid), bool)
    steady[span] = True
    t = items.start[on_thread & steady]
    if len(t) == 0:
        return None
    holds_all = np.flatnonzero(frame & (start <= t[0]) & (end >= t[-1]))
    if len(holds_all) == 0:
        return None
    loop = int(holds_all[int(np.argmax(start[holds_all]))])  # the innermost
    n_steps = len(anchors)
    inside = np.searchsorted(t, end, side="right") - np.searchsorted(t, start, side="left")
    nested = frame & (inside > 0) & (start >= start[loop]) & (end <= end[loop])
    nested[loop] = False
    source = LoopSource(loop=str(names[loop]), body="", body_share=0.0)
    if not nested.any():
        return source, None
    which = np.flatnonzero(nested)
    calls = pd.DataFrame(
        {"name": names[which], "inside": inside[which], "length": end[which] - start[which]}
    )
    by_name = calls.groupby("name", sort=False).agg(
        calls=("inside", "size"), inside=("inside", "sum"), length=("length", "sum")
    )
    once = (by_name["calls"] >= (1 - period_slack) * n_steps) & (
        by_name["calls"] <= (1 + period_slack) * n_steps + 1
    )
    by_name = by_name[once & (by_name["inside"] >= BODY_SHARE * len(t))]
    if len(by_name) == 0:
        return source, None
    by_name = by_name.assign(
        share=(by_name["inside"] / len(t)).round(2),
        own=[_user_frame(str(n)) for n in by_name.index],
    ).sort_values(["share", "own", "length"], ascending=False)
    body = str(by_name.index[0])
    source = LoopSource(source.loop, body, float(min(by_name["share"].iloc[0], 1.0)))
    # Every call of the body that launched work, warm-up calls before the steady state too.
    all_t = items.start[on_thread]
    body_calls = np.flatnonzero(frame & (names == body))
    has_work = np.searchsorted(all_t, end[body_calls], side="right") > np.searchsorted(
        all_t, start[body_calls], side="left"
    )
    return source, np.stack([start[body_calls[has_work]], end[body_calls[has_work]]], axis=1)


def _user_frame(name: str) -> bool:
    """Whether a ``file(line): function`` frame is the script's own code, not torch's or the
    standard library's."""
    path = name.split("(", 1)[0]
    if name.startswith(("<", "nn.Module:", "torch/", "torch_")) or "-packages/" in path:
        return False
    top = path.split("/", 1)[0].removesuffix(".py")
    return top not in sys.stdlib_module_names


def anchors_from_calls(
    items: _Items, calls: IntArray
) -> tuple[IntArray, int, IntArray] | None:
    """First call of each body call (``calls``: rows of ``[start_ns, end_ns]``), one past
    the calls made inside the last one, and the body calls kept.

    A step is one outermost body call that launched something: calls nested in a kept one
    (a recursive body, such as ``Module._apply``) and calls that launched nothing are not
    steps of their own. None when no call launched anything."""
    calls = calls[np.argsort(calls[:, 0], kind="stable")]
    outer = np.ones(len(calls), bool)
    reach = np.iinfo(np.int64).min
    for k, (start, end) in enumerate(calls.tolist()):
        outer[k] = start >= reach
        if outer[k]:
            reach = end
    calls = calls[outer]
    first = np.searchsorted(items.start, calls[:, 0], side="left")
    stop = np.searchsorted(items.start, calls[:, 1], side="right")
    held = stop - first
    usual = np.median(held)
    keep = np.flatnonzero((held >= 0.5 * usual) & (held > 0))
    if not len(keep):
        return None
    if len(keep) > 1 and held[keep[-1]] < usual:
        keep = keep[:-1]  # the trace stopped inside the last call
    return first[keep].astype(np.int64), int(stop[keep][-1]), calls[keep]
