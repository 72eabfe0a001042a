"""Cross-stream dependencies among a region occurrence's GPU activities (events and timing)."""

from __future__ import annotations

from typing import Any, Final

import numpy as np
import numpy.typing as npt

from traceinspect.analysis.estimate.columns import (
    LAUNCH_KINDS,
    IntArray,
    TimelineColumns,
    host_column,
    host_window,
    launch_times,
    stream_keys,
)
from traceinspect.model import Timeline

#: A node on another stream whose end precedes an activity's start by at most this much is
#: a dependency candidate, ns: a cross-stream event wait resolves on the GPU in ~1–3 µs.
DEPENDENCY_WINDOW_NS: Final = 4_000

#: Tolerance for the two timestamps of one GPU being compared across streams, ns.
CLOCK_SLACK_NS: Final = 500


def infer_dependencies(
    timeline: Timeline,
    rows: IntArray,
    *,
    columns: TimelineColumns | None = None,
    timing_beside_waits: bool = True,
    pipelined: bool = False,
) -> list[tuple[int, int]]:
    """Cross-stream dependencies among the activities at ``rows`` (sorted by start), as
    ``(src, dst)`` index pairs into ``rows``.

    Two sources, combined:

    * **Recorded waits.** Where the trace says which event record each stream wait waited
      on (Kineto's ``cuda_sync`` "Stream Wait Event" with ``wait_on_stream`` and the
      record's correlation, written when the profiler ran with ``enable_cuda_sync_events``;
      ``traceinspect profile`` turns it on), the first activity launched on the waiting
      stream after the wait depends on the last activity launched on the recorded stream
      before the record — exactly, with no guessing; the event rule below is then not used.
    * **Events.** Otherwise a ``cudaStreamWaitEvent`` call makes the next activity launched after it
      by the same thread (whose stream is the waiting stream) depend on the last activity of
      each other stream launched before the preceding ``cudaEventRecord`` of that thread
      (before the wait call when no record precedes it). A *fork* — a stream's first wait,
      made before its first launch, where the trace names the waiting stream — depends on
      the origin stream's work only (:func:`_forks`): the stream of the occurrence's last
      launch unless that stream was forked itself; then the stream that launched before it
      waited (a trunk), or else the stream the side-stream branches are joined on
      (:func:`_origin`).
    * **Timing.** Activity ``j`` on stream B depends on activity ``i`` on stream A when
      ``i`` ended at most :data:`DEPENDENCY_WINDOW_NS` before ``j`` started, B was idle
      when ``i`` ended (B's previous activity ended before), and ``j`` had been launched
      (its launch call had returned) by the time ``i`` ended — ``j`` could have run but
      waited. The latest-ending such ``i`` is taken.

    A kernel that waited in the eager run waited, whatever for (two GEMMs that cannot
    share the device wait for each other too), and the eager simulation keeps every such
    edge. A graph's replay keeps only the program's dependencies: with
    ``timing_beside_waits`` False the timing rule is used only where the waits give none
    (a trace without the program's stream waits). Beside the waits it adds coincidences:
    a bidirectional RNN's two directions, launched turn about on two of cuDNN's streams,
    started each kernel just after the other direction's in the eager trace and were read
    as one chain (76 such edges in one step of ``holdout41``'s OCR step, 4 more between its
    detector's and recognizer's branches; its replay read +11.7 and +14.0 %, +6.3 and
    +7.8 % without them; a BiLSTM tagger +4.9 -> +1.1 %).
    On the 537 fresh-process H200 recordings to ``holdout41`` the rule added edges beside
    the waits' in six replays, and no other prediction moves without it. Nor where the
    waits give no dependency at all, if the threads that launched the work made stream waits
    (:func:`_waited`): their streams' work was independent (forked at the start, joined at
    the end), and the timing rule only chained it by coincidence. ``h100_holdout57``'s SVD
    step, its VAE encoder beside CLIP's image tower, read −0.1 % on its first recording and
    +23.1 % on the rerun, where the two branches' kernels interleaved in the eager trace and
    four coincidences chained CLIP's tower after the VAE; now −0.1 and +0.3 %. Over the 637
    H200 recordings nothing moves; over the 236 H100 ones SimCLR's two views read +2.7 and
    +3.8 % (+7.4 and +8.5 %), and the AMP unscale beside an MLP forward −15.9 % on both
    recordings (−15.6 and +0.2 %: its replays ran the two streams side by side in some and
    one after the other in others, and the rerun's one coincidence happened to chain them).

    ``pipelined`` reads a library's layer hand-overs as handed a chunk earlier
    (:func:`_pipelined_records`): the dependencies cuDNN's multi-layer RNNs' replays ran by.
    The prediction does not use them. With them, over the 637 H200 recordings, the
    predictions of the cuDNN RNNs move both ways, 598 within ±10 % as without; over the 236
    H100 ones 210 (213): ``holdout45``'s fp32 GRU +27.9 → +18.7 %, ``holdout46``'s 3-layer
    LSTM +15.5 → −10.9 %, SV2TTS's 3-layer GE2E LSTM (``h100_holdout59``) +1.1 → −15.2 %.
    Their replays slow the layers' short kernels beside each other more than the schedule
    charges (the LSTM's 2.8 µs GEMMs ran 4-5.7 µs with three layers at once; three layers'
    chunk took 1.28x one layer's, the schedule 1.16x), which the later reading offsets.
    Charging short matrix kernels beside another stream's 700 ns, as light ones are, read
    the H200 596 within and sent the bidirectional RNNs long (``holdout7``'s BiLSTM tagger
    +9 → +17 %). The range's low end uses them
    (:func:`~traceinspect.analysis.estimate.occurrence.estimate_occurrence`).
    """
    cols = columns or TimelineColumns(timeline)
    n = len(rows)
    if n < 2:
        return []
    keys = stream_keys(cols.gpu("device")[rows], cols.gpu("stream")[rows])
    if (keys == keys[0]).all():  # one stream: nothing to wait for across streams
        return []
    start = cols.gpu("start_ns")[rows]
    end = cols.gpu("end_ns")[rows]
    launched_at, launch_row = launch_times(cols, rows)
    submitted_by = host_column(cols, "end_ns", launch_row)

    recorded = _recorded_wait_dependencies(cols, keys, launched_at)
    if recorded is None:
        deps = set(_event_dependencies(cols, keys, launch_row, launched_at, start, end, pipelined))
    else:
        deps = set(recorded)
    if timing_beside_waits or not (deps or _waited(cols, launch_row, launched_at)):
        deps.update(_timing_dependencies(keys, start, end, submitted_by))
    return sorted(deps, key=lambda d: (d[1], d[0]))


def _waited(cols: TimelineColumns, launch_row: IntArray, launched_at: IntArray) -> bool:
    """Whether a thread that launched the activities (``launch_row``: their launch calls'
    host rows, -1 where unknown; ``launched_at``: when) made a stream wait between its
    first launch's previous launch and its last launch: the trace holds the program's stream
    waits there, and where they give no dependency the streams' work was independent."""
    window = _launch_window(cols, launch_row, launched_at)
    if window is None:
        return False
    lo, hi = window
    waits = lo + np.flatnonzero(cols.host_flag("wait")[lo:hi])
    if not len(waits):
        return False
    launched = launch_row[launch_row >= 0]
    threads = _operator_keys(cols.host("pid")[launched], cols.host("tid")[launched])
    return bool(
        np.isin(_operator_keys(cols.host("pid")[waits], cols.host("tid")[waits]), threads).any()
    )


def _launch_window(
    cols: TimelineColumns, launch_row: IntArray, launched_at: IntArray
) -> tuple[int, int] | None:
    """The host rows ``[lo, hi)`` of the calls that belong to activities launched by the
    host rows ``launch_row`` (-1: unknown) at ``launched_at``: from just after the launch
    before their first (a fork records and waits just before the branch's first launch) to
    their last; None where no launch is known."""
    known = launch_row >= 0
    if not known.any():
        return None
    lo, hi = host_window(cols, int(launched_at[known].min()), int(launched_at[known].max()))
    return _after_previous_launch(cols, lo), hi


def _recorded_wait_dependencies(
    cols: TimelineColumns, keys: IntArray, launched_at: IntArray
) -> list[tuple[int, int]] | None:
    """The recorded-waits rule of :func:`infer_dependencies`; ``None`` when the trace does
    not record which event each stream wait waited on."""
    table = _recorded_waits(cols)
    if table is None:
        return None
    waiting, recorded, wait_at, record_at = table
    known = launched_at >= 0
    if not known.any():
        return []
    first, last = int(launched_at[known].min()), int(launched_at[known].max())
    inside = (wait_at >= first) & (wait_at <= last) & (record_at >= 0)
    k = np.flatnonzero(inside & (waiting != recorded))
    order = np.flatnonzero(known)[np.argsort(launched_at[known], kind="stable")]
    launch_keys, launch_times = keys[order], launched_at[order]
    src = _launched_on(recorded[k], record_at[k], launch_keys, launch_times, order, after=False)
    dst = _launched_on(waiting[k], wait_at[k], launch_keys, launch_times, order, after=True)
    keep = (src >= 0) & (dst >= 0) & (src < dst)
    return list(zip(src[keep].tolist(), dst[keep].tolist(), strict=True))


def _recorded_waits(
    cols: TimelineColumns,
) -> tuple[IntArray, IntArray, IntArray, IntArray] | None:
    """Per recorded stream wait of the trace: the waiting and the recorded stream keys, and
    the host start of the wait call and of the record call (computed once per timeline)."""
    if "recorded_waits" in cols.memo:
        return cols.memo["recorded_waits"]  # type: ignore[no-any-return]
    syncs = cols.timeline.syncs
    result = None
    if len(syncs) and "record_correlation" in syncs:
        record_corr = syncs["record_correlation"].to_numpy()
        waits = np.flatnonzero(
            (syncs["kind"].to_numpy() == "stream_wait_event")
            & (record_corr >= 0)
            & (syncs["wait_on_stream"].to_numpy() >= 0)
        )
        if len(waits):
            device = syncs["device"].to_numpy()[waits]
            pid = syncs["pid"].to_numpy()[waits]
            wait_rows = _host_rows(cols, pid, syncs["correlation"].to_numpy()[waits])
            record_rows = _host_rows(cols, pid, record_corr[waits])
            result = (
                stream_keys(device, syncs["stream"].to_numpy()[waits]),
                stream_keys(device, syncs["wait_on_stream"].to_numpy()[waits]),
                host_column(cols, "start_ns", wait_rows),
                host_column(cols, "start_ns", record_rows),
            )
    cols.memo["recorded_waits"] = result
    return result


def _host_rows(cols: TimelineColumns, pid: IntArray, correlation: IntArray) -> IntArray:
    """Row of ``timeline.host`` of the call with each (pid, correlation), -1 where none (a
    pid of -1 matches any process)."""
    out = np.full(len(correlation), -1, np.int64)
    if not cols.host_rows:
        return out
    host_corr = cols.host("correlation")
    host_pid = cols.host("pid")
    by_corr = np.argsort(host_corr, kind="stable")
    sorted_corr = host_corr[by_corr]
    lo = np.searchsorted(sorted_corr, correlation, side="left")
    hi = np.searchsorted(sorted_corr, correlation, side="right")
    for k in np.flatnonzero((hi > lo) & (correlation >= 0)):
        candidates = by_corr[lo[k] : hi[k]]
        mine = candidates[(host_pid[candidates] == pid[k]) | (pid[k] < 0)]
        if len(mine):
            out[k] = mine[0]
    return out


def _timing_dependencies(
    keys: IntArray, start: IntArray, end: IntArray, submitted_by: IntArray
) -> list[tuple[int, int]]:
    """The timing rule of :func:`infer_dependencies`, for every activity at once.

    For each ``j``, the candidates are the activities ending in
    ``[start_j - DEPENDENCY_WINDOW_NS, start_j + CLOCK_SLACK_NS]`` on another stream and
    started before ``j``; the latest-ending one (last in stable end order) is ``j``'s
    dependency when ``j``'s stream was idle when it ended and ``j`` had been launched."""
    n = len(keys)
    by_end = np.argsort(end, kind="stable")
    sorted_end = end[by_end]
    lo = np.searchsorted(sorted_end, start - DEPENDENCY_WINDOW_NS, side="left")
    hi = np.searchsorted(sorted_end, start + CLOCK_SLACK_NS, side="right")
    counts = np.maximum(hi - lo, 0)
    # Every (j, candidate) pair, candidates of one j in increasing end order.
    j_of = np.repeat(np.arange(n), counts)
    first_pair = np.cumsum(counts) - counts
    i_of = by_end[np.arange(int(counts.sum())) - np.repeat(first_pair - lo, counts)]
    valid = (i_of != j_of) & (keys[i_of] != keys[j_of]) & (start[i_of] < start[j_of])
    j_of, i_of = j_of[valid], i_of[valid]
    latest = np.r_[j_of[1:] != j_of[:-1], True] if len(j_of) else np.zeros(0, bool)
    j_of, i_of = j_of[latest], i_of[latest]
    # B was busy until after i ended, or j was not yet launched when i ended: no dependency.
    held = end[i_of] > _stream_idle_since(keys, end)[j_of]
    launched = (submitted_by[j_of] < 0) | (submitted_by[j_of] <= end[i_of] + CLOCK_SLACK_NS)
    keep = held & launched
    return list(zip(i_of[keep].tolist(), j_of[keep].tolist(), strict=True))


def _stream_idle_since(keys: IntArray, end: IntArray) -> IntArray:
    """Per activity, the latest end of the activities before it (in index order) on its
    stream; the smallest int64 for a stream's first activity."""
    idle_since = np.full(len(keys), np.iinfo(np.int64).min, np.int64)
    for key in np.unique(keys):
        on = np.flatnonzero(keys == key)
        idle_since[on[1:]] = np.maximum.accumulate(end[on])[:-1]
    return idle_since


def _event_dependencies(
    cols: TimelineColumns,
    keys: IntArray,
    launch_row: IntArray,
    launched_at: IntArray,
    start: IntArray,
    end: IntArray,
    pipelined: bool = False,
) -> list[tuple[int, int]]:
    """The event rule of :func:`infer_dependencies`, vectorized over the wait calls."""
    window = _launch_window(cols, launch_row, launched_at)
    if window is None:
        return []
    lo, hi = window
    known = np.flatnonzero(launch_row >= 0)
    waits = np.flatnonzero(cols.host_flag("wait")[lo:hi])
    if not len(waits):
        return []
    is_record = cols.host_flag("record")[lo:hi]
    pid = cols.host("pid")[lo:hi]
    tid = cols.host("tid")[lo:hi]
    call_start = cols.host("start_ns")[lo:hi]
    launch_pid = cols.host("pid")[launch_row[known]]
    launch_tid = cols.host("tid")[launch_row[known]]
    by_launch = known[np.argsort(launched_at[known], kind="stable")]
    launch_times = launched_at[by_launch]

    # The waits of threads that launched the occurrence's work, and the activity each
    # holds back: the next one launched after the call (on the waiting stream where the
    # trace names it: _held_on_waiting_stream, below).
    cut_at = waits.copy()
    launching = np.zeros(len(waits), bool)
    # per wait, the stream its record was made on where a library call made both (-1: not
    # known, every stream's last activity counts)
    recorded_on = np.full(len(waits), -1, np.int64)
    op = cols.host("external_id")[lo:hi]
    op_key = np.where(op >= 0, _operator_keys(pid, op), -1)
    # per wait, the key of the CPU operator that made it and its record (-1: none did)
    in_op = np.full(len(waits), -1, np.int64)
    launch_key = np.full(hi - lo, -1, np.int64)
    in_window = (launch_row[known] >= lo) & (launch_row[known] < hi)
    launch_key[launch_row[known][in_window] - lo] = keys[known][in_window]
    for p, t in set(zip(pid[waits].tolist(), tid[waits].tolist(), strict=True)):
        if not ((launch_pid == p) & (launch_tid == t)).any():
            continue
        mine = np.flatnonzero((pid[waits] == p) & (tid[waits] == t))
        launching[mine] = True
        records = np.flatnonzero(is_record & (pid == p) & (tid == t))
        thread_launches = np.sort(launch_row[known][(launch_pid == p) & (launch_tid == t)] - lo)
        # The thread's last record before the wait; the wait itself when none precedes it.
        # (Not the record before the first wait on the same event id: libraries re-record
        # one event object again and again. cuDNN's LSTM waits on the same two events
        # before each layer; tied to the first layer's record, the second layer was read
        # as independent of the first: a bidirectional LSTM predicted -46 %. The waits on
        # one forked event are forks, which _forks reads without it.)
        anchor = waits[mine]
        previous = _paired_records(records, anchor, thread_launches)
        if pipelined:
            previous = _pipelined_records(
                previous,
                records,
                anchor,
                _wait_event_ids(cols, lo, hi)[anchor],
                _waiting_streams(cols, lo, hi)[anchor],
                thread_launches,
                launch_key,
                op,
            )
        has_record = previous >= 0
        cut_at[mine[has_record]] = records[previous[has_record]]
        cut_at[mine[~has_record]] = anchor[~has_record]
        if len(records):
            on = _library_record_streams(records, thread_launches, launch_key)
            paired = records[np.maximum(previous, 0)]
            inside = has_record & (op[paired] >= 0) & (op[paired] == op[anchor])
            recorded_on[mine[inside]] = on[previous[inside]]
            in_op[mine[inside]] = op_key[anchor[inside]]
    after = np.searchsorted(launch_times, call_start[waits], side="right")
    used = launching & (after < len(by_launch))
    cutoff = call_start[cut_at]
    dst = by_launch[after[used]]
    before = np.searchsorted(launch_times, cutoff[used], side="left")
    launch_keys = keys[by_launch]
    # A fork's record is on the origin stream, where the occurrence's work returns to.
    waiting = _waiting_streams(cols, lo, hi)[waits[used]]
    wait_at = call_start[waits[used]]
    origin = _origin(cols, hi, launch_keys, launch_times, launch_pid, launch_tid, waiting, wait_at)
    fork = _forks(waiting, wait_at, launch_keys, launch_times, origin)
    dst, holds = _held_on_waiting_stream(
        dst, waiting, wait_at, launch_keys, launch_times, by_launch
    )
    library = recorded_on[used][holds]
    dst, before, fork = dst[holds], before[holds], fork[holds]
    # A library's join whose record's stream the trace does not tell waited on one of the
    # library's streams or of those its operator launched on (_operator_streams).
    wait_op = np.where(library == -1, in_op[used][holds], -1)
    library_keys = _library_streams(cols, keys, launch_row)[0] if (wait_op >= 0).any() else keys[:0]
    op_streams = _operator_streams(
        op_key,
        launch_key,
        _operator_keys(pid, tid),
        wait_op,
        keys[dst],
        np.unique(launch_keys),
        library_keys,
    )

    # Per other stream, its last activity launched before the cutoff; one still running
    # when dst started cannot be what dst waited for.
    deps: list[tuple[int, int]] = []
    for key in np.unique(launch_keys):
        on_stream = np.flatnonzero(launch_keys == key)
        last_pos = np.searchsorted(on_stream, before, side="left") - 1
        has = last_pos >= 0
        src = by_launch[on_stream[np.maximum(last_pos, 0)]]
        keep = has & (keys[dst] != key) & (end[src] <= start[dst] + CLOCK_SLACK_NS) & (src < dst)
        keep &= ~fork | (key == origin)
        keep &= fork | (library < 0) | (key == library)
        keep &= fork | op_streams[int(key)]
        deps.extend(zip(src[keep].tolist(), dst[keep].tolist(), strict=True))
    return deps


def _operator_streams(
    op_key: IntArray,
    launch_key: IntArray,
    thread: IntArray,
    wait_op: IntArray,
    held: IntArray,
    keys: IntArray,
    library_keys: IntArray,
) -> dict[int, npt.NDArray[np.bool_]]:
    """Per stream key of ``keys``, which waits may have waited on a record on that stream.

    ``wait_op`` is per wait the key of the CPU operator that made it and its record, where
    the trace does not tell the record's stream (-1 elsewhere); ``held`` the stream key of
    the activity it holds back. ``op_key``, ``launch_key`` and ``thread`` are per host
    position of the window: the operator key of the call (-1 for none), the stream key of
    the activity it launched (-1 for none) and its thread's key. ``library_keys``: the
    library's streams among ``keys`` (:func:`_library_streams`).

    Such a wait that holds back a program's stream (a library joining its streams back) may
    only have waited on a library's stream or on a stream its operator launched on, itself or
    through the operators it called (the thread's launches between its first and its last
    call); where the operator launched on none, on any. Every other wait may have waited on
    any stream.

    cuDNN joins its streams back one at a time — record on its first stream, wait; record
    on the next, wait; ... — with no launch between the records, so only the first one's
    stream is told by the launch before it (:func:`_library_record_streams`). Read as
    waiting on every stream's last activity, a grouped convolution's join on one side
    stream waited for the program's other side stream's whole branch: ``holdout56``'s
    HiFi-GAN discriminators, cuDNN's eight streams of grouped convolutions on the MPD
    stream beside the MSD stream, read +31.2 and +32.3 % (−2.0 and +0.1 % with this).
    Forks stay as they were: cuDNN's RNNs, on entry, record and fork twice in a row, and
    their replays waited on the other program stream's work (``holdout41``'s OCR step read
    −9 % when the second record was taken to be on the operator's streams; −1 % as it
    is). Over the 637 H200 recordings no prediction moves; over the 211 H100 ones only
    HiFi-GAN's two."""
    if not (wait_op >= 0).any():
        return {int(key): np.ones(len(wait_op), bool) for key in keys.tolist()}
    library = np.isin(keys, library_keys)
    ops, op_of = np.unique(wait_op, return_inverse=True)
    # per (operator of ops, stream of keys): whether the operator launched on the stream
    launched_on = np.zeros((len(ops), len(keys)), bool)
    for k, op in enumerate(ops.tolist()):
        if op < 0:
            continue
        calls = np.flatnonzero(op_key == op)
        span = slice(calls[0], calls[-1] + 1)
        launched_on[k] = np.isin(keys, launch_key[span][thread[span] == thread[calls[0]]])
    # a wait that forks the library's streams may wait on a record on any stream
    held_library = np.isin(held, keys[library])
    free = (wait_op < 0) | held_library | ~launched_on[op_of].any(axis=1)
    return {
        int(key): free | library[j] | launched_on[op_of, j] for j, key in enumerate(keys.tolist())
    }


def _library_record_streams(
    records: IntArray, launches: IntArray, launch_key: IntArray
) -> IntArray:
    """Per record of one thread (host positions, sorted), the stream it was made on, as a
    library records: right after launching the work the event marks, on that work's
    stream — the stream of the thread's last launch before it (``launches``: the thread's
    launch positions, sorted; ``launch_key``: the stream key of the activity each host
    position launched, -1 for none), where the thread launched anything since its previous
    record; -1 where it did not (two records in a row, on streams the trace does not tell).

    :func:`_event_dependencies` applies it to a wait whose record the same CPU operator
    made (a library's internal fork, join or hand-over: cuDNN's RNNs fork their layers and
    directions onto cuDNN's own streams, record each step's end there and make the next
    layer's stream wait on it). PyTorch's own ``wait_stream`` records outside any operator,
    often on a stream other than the last launched on (:func:`_forks`), and keeps the rule
    of every stream's last activity. Read as waiting on every stream, a second cuDNN LSTM
    forked beside a first one waited, step by step, for the first's kernels on the streams
    the two share (``holdout27``'s LSTM pair, +22.4 %; +5.7 % with this); over the 581
    fresh-process H200 recordings 12 move, all of them steps with cuDNN RNNs: 534 within
    ±10 % from the trace alone (533), 573 inside the range (571), 545 savings within 15
    points (545). The bidirectional LSTMs on side streams read shorter (−15.2 → −18.6 %,
    −9.5 → −12.0 %): their cell kernels ran 1.4-1.6x their eager time beside the other
    direction's in the replay, which the schedule does not charge light kernels."""
    last = np.searchsorted(launches, records, side="left") - 1
    since = last > np.r_[-1, last[:-1]]
    out: IntArray = np.where(since & (last >= 0), launch_key[launches[np.maximum(last, 0)]], -1)
    return out


def _held_on_waiting_stream(
    dst: IntArray,
    waiting: IntArray,
    wait_at: IntArray,
    launch_keys: IntArray,
    launch_times: IntArray,
    by_launch: IntArray,
) -> tuple[IntArray, npt.NDArray[np.bool_]]:
    """Per wait, the activity it holds back, and whether it holds one back: where the trace
    names the waiting stream (``waiting`` >= 0), the first activity launched on that stream
    after the wait (``by_launch`` order; ``launch_keys``/``launch_times`` in it), none where
    the stream launches nothing more; elsewhere ``dst``, the thread's next launch.

    A wait on a stream that launches nothing more holds back nothing directly: whatever
    waits on that stream later carries it. Taken as holding back the thread's next launch,
    it chained another stream to it: at the end of a cuDNN LSTM on a side stream, the waits
    that join cuDNN's internal streams back into that stream were read as holding back the
    next branch's first kernel, and a second LSTM forked beside the first had its first
    kernels wait for all of the first's work (``holdout27``'s LSTM pair). Over the 581
    fresh-process H200 recordings 13 predictions move, by 0.3 to 3.6 points: 533 within
    ±10 % from the trace alone (532 before), 571 inside the range (570), 545 savings within
    15 points (544)."""
    named = waiting >= 0
    nxt = _launched_on(waiting, wait_at, launch_keys, launch_times, by_launch, after=True)
    out: IntArray = np.where(named, nxt, dst)
    return out, ~named | (nxt >= 0)


def _launched_on(
    streams: IntArray,
    at: IntArray,
    launch_keys: IntArray,
    launch_times: IntArray,
    by_launch: IntArray,
    *,
    after: bool,
) -> IntArray:
    """Per (stream key, host time) of ``streams`` and ``at``: the activity (``by_launch``,
    in launch order; ``launch_keys``/``launch_times`` in it) launched on that stream first
    after the time (``after``), or last before it; -1 where none (or the key is -1)."""
    out = np.full(len(streams), -1, np.int64)
    for key in np.unique(streams[streams >= 0]).tolist():
        on_stream = np.flatnonzero(launch_keys == key)
        mine = np.flatnonzero(streams == key)
        pos = np.searchsorted(launch_times[on_stream], at[mine], side="right" if after else "left")
        pos = pos if after else pos - 1
        found = (pos >= 0) & (pos < len(on_stream))
        out[mine[found]] = by_launch[on_stream[pos[found]]]
    return out


def _paired_records(records: IntArray, waits: IntArray, launches: IntArray) -> IntArray:
    """Per wait of one thread (host positions, sorted), the index into ``records`` (its
    records' positions, sorted) of the record it waited on; -1 where none precedes it.
    ``launches``: the thread's launch positions, sorted.

    A wait is taken to wait on the thread's last record before it, except after a run of
    k ≥ 2 records with no wait between them that exactly k waits follow before the next
    record, each held back by its own launch (one launched between each two): the i-th of
    those waits pairs with the i-th record. That is a prefetch: a side
    stream copies or dequantizes each layer's weights ahead, recording an event after each
    layer's, and the main stream waits on layer i's event before layer i. Tied to the last
    record, every layer waited for the last layer's weights: a graph whose replay ran the
    four dequantizations beside the first GEMMs was scheduled serially (+22 to +32 %,
    ``dequant_prefetch_b16``). Waits with no launch between them hold back one activity
    together (a join of several streams): those keep the last record."""
    previous = np.searchsorted(records, waits, side="left") - 1
    if len(records) < 2 or len(waits) < 2:
        return previous
    # waits made before each record; records with as many before them form one run
    waits_before = np.searchsorted(waits, records, side="left")
    run_start = np.searchsorted(waits_before, waits_before, side="left")
    out = previous.copy()
    groups, first, counts = np.unique(previous, return_index=True, return_counts=True)
    for p, i, m in zip(groups.tolist(), first.tolist(), counts.tolist(), strict=True):
        if p < 0:
            continue
        k = p - int(run_start[p]) + 1
        held = np.searchsorted(launches, waits[i : i + m], side="left")
        if k >= 2 and m == k and bool((np.diff(held) > 0).all()):
            out[i : i + m] = np.arange(int(run_start[p]), p + 1)
    return out


def _forks(
    waiting: IntArray,
    wait_at: IntArray,
    launch_keys: IntArray,
    launch_times: IntArray,
    origin: int,
) -> npt.NDArray[np.bool_]:
    """Which waits are forks: a stream's first wait while it has no work of the occurrence
    that ``origin`` has not joined back (the stream of the occurrence's last launch, where
    ``wait_stream`` forks usually come from and joins return to) — before its first launch,
    or after ``origin`` waited once its last launch was made — on a stream that is not
    ``origin``.

    ``Y.wait_stream(current)`` records an event on the current stream, then makes Y wait on
    it; the trace does not say which stream the record was made on, and the stream launched
    last before it is often another branch (a second tower forked after the first was
    launched), not the origin. A fork is taken to wait on the origin only. A step that forks
    its branches again after joining them (one Inception module after another) forks the
    same streams a second time: those waits, read as waiting on every stream launched
    before them, chained the second module's branches one after another (+15 % on two
    Inception modules whose replay ran them side by side). ``waiting`` is each wait's
    stream key (-1 where the trace does not say: never a fork then)."""
    fork = np.zeros(len(waiting), bool)
    origin_waits = np.sort(wait_at[waiting == origin])
    for k in range(len(waiting)):
        key = int(waiting[k])
        if key == -1 or key == origin:
            continue
        at = int(wait_at[k])
        before = launch_times[(launch_keys == key) & (launch_times < at)]
        last = int(before.max()) if len(before) else np.iinfo(np.int64).min
        # not its first wait since its last launch (or since the start): no fork
        mine = wait_at[waiting == key]
        if ((mine > last) & (mine < at)).any():
            continue
        if len(before):
            # its work so far was joined: origin waited after its last launch
            i = int(np.searchsorted(origin_waits, last, side="right"))
            if not (i < len(origin_waits) and origin_waits[i] < at):
                continue
        fork[k] = True
    return fork


def _waiting_streams(cols: TimelineColumns, lo: int, hi: int) -> IntArray:
    """Per host row in ``[lo, hi)``, the stream key its stream wait made wait (from the
    ``syncs`` row with the call's correlation), -1 where unknown or not a wait."""
    return _wait_columns(cols)[0][lo:hi]


def _wait_event_ids(cols: TimelineColumns, lo: int, hi: int) -> IntArray:
    """Per host row in ``[lo, hi)``, the profiler's id of the CUDA event its stream wait
    waited on (from the ``syncs`` row with the call's correlation), -1 where unknown or not
    a wait."""
    return _wait_columns(cols)[1][lo:hi]


def _wait_columns(cols: TimelineColumns) -> tuple[IntArray, IntArray]:
    """Per host row, the waiting stream's key and the event id of its stream wait, -1
    where unknown or not a wait (computed once per timeline)."""
    if "wait_columns" not in cols.memo:
        syncs = cols.timeline.syncs
        streams = np.full(cols.host_rows, -1, np.int64)
        ids = np.full(cols.host_rows, -1, np.int64)
        if len(syncs) and cols.host_rows:
            stream = syncs["stream"].to_numpy()
            wait = (syncs["kind"].to_numpy() == "stream_wait_event") & (stream >= 0)
            if wait.any():
                rows = _host_rows(
                    cols, syncs["pid"].to_numpy()[wait], syncs["correlation"].to_numpy()[wait]
                )
                key = stream_keys(syncs["device"].to_numpy()[wait], stream[wait])
                event = syncs["event_id"].to_numpy()[wait] if "event_id" in syncs else None
                found = rows >= 0
                is_wait = cols.host_flag("wait")[rows[found]]
                streams[rows[found][is_wait]] = key[found][is_wait]
                if event is not None:
                    ids[rows[found][is_wait]] = event[found][is_wait]
        cols.memo["wait_columns"] = (streams, ids)
    out: tuple[IntArray, IntArray] = cols.memo["wait_columns"]
    return out


def _pipelined_records(
    previous: IntArray,
    records: IntArray,
    waits: IntArray,
    event_ids: IntArray,
    waiting: IntArray,
    launches: IntArray,
    launch_key: IntArray,
    op: IntArray,
) -> IntArray:
    """:func:`_paired_records`' pairing (``previous``) with a pipelined library's layer
    hand-overs re-read: per wait of one thread (host positions ``waits``, sorted), the index
    into ``records`` of the record it waited on. ``event_ids`` and ``waiting`` are per wait
    the event id and the waiting stream's key (-1 where unknown); ``launches`` the thread's
    launch positions (sorted), ``launch_key`` and ``op`` per host position of the window
    the stream key of what it launched (-1 for none) and its CPU operator (-1 for none).

    cuDNN runs a multi-layer RNN as a wavefront. It cuts the sequence into chunks; each
    (layer, chunk) block launches the chunk's input GEMM on the layer's input stream, then
    the chunk's recurrent steps on the layer's recurrent stream, whose first step waits on
    the GEMM's event. That event object is the chunk's: every layer's block of chunk ``c``
    waits on the same id (re-recorded per layer), so the id tells the chunk. The block's
    last record marks its last step. cuDNN launches layer ``l + 1``'s block of chunk ``c``
    after layer ``l``'s block of chunk ``c + 1``, and the wait before its input GEMM comes
    right after the record that ends layer ``l``'s chunk ``c + 1``: read as waiting on that
    record, layer ``l + 1`` runs a chunk late. It waited on the record that ended layer
    ``l``'s chunk ``c``.

    So a wait inside an operator, followed (after launches on its own stream) by the
    operator's next wait, on another stream, on an event id that an earlier wait of the
    operator on a third stream waited on, pairs with the last record of that earlier wait's
    block: the record made after the last launch on that third stream before the thread
    launched on any other."""
    out = previous.copy()
    # per (operator, event id): the latest wait before the one at hand
    latest: dict[tuple[int, int], int] = {}
    for i in range(len(waits) - 1):
        j = i + 1
        here, there, chunk = int(waiting[i]), int(waiting[j]), int(event_ids[j])
        mine = int(op[waits[i]])
        p = latest.get((mine, chunk), -1) if mine >= 0 and chunk >= 0 else -1
        if mine >= 0 and int(event_ids[i]) >= 0:
            latest[(mine, int(event_ids[i]))] = i
        if p < 0 or here < 0 or there < 0 or there == here or int(op[waits[j]]) != mine:
            continue
        earlier = int(waiting[p])
        if earlier < 0 or earlier in (here, there):
            continue
        lo, hi = np.searchsorted(launches, [waits[i], waits[j]])
        if not (launch_key[launches[lo:hi]] == here).any():
            continue  # it holds back no launch of its own stream before the next wait
        lo = int(np.searchsorted(launches, waits[p]))
        hi = int(np.searchsorted(launches, waits[i]))
        block = launches[lo:hi]
        leave = np.flatnonzero(launch_key[block] != earlier)
        if not len(leave):
            continue
        r = int(np.searchsorted(records, block[leave[0]])) - 1
        if r < 0 or records[r] < waits[p]:
            continue
        before = int(np.searchsorted(launches, records[r])) - 1
        if before < 0 or int(launch_key[launches[before]]) != earlier:
            continue
        out[i] = r
    return out


#: How far back before an occurrence's first launch its fork's record and wait are looked
#: for, in host calls.
FORK_LOOKBACK_CALLS: Final = 64


def _origin(
    cols: TimelineColumns,
    hi: int,
    launch_keys: IntArray,
    launch_times: IntArray,
    launch_pid: IntArray,
    launch_tid: IntArray,
    waiting: IntArray,
    wait_at: IntArray,
) -> int:
    """The stream an occurrence's forks come from and its joins return to: that of its last
    launch (``launch_keys``, in launch order) — unless that stream was forked itself (its
    first wait, on a stream the trace names, came before its first launch). Then forks come
    from the stream that launched before any wait of its own, the latest to launch where
    several did (a backbone on the current stream, then heads forked onto side streams with
    nothing after the join); where none did, from the stream that the first wait after the
    occurrence's last launch (before the next launch) is on, if it launched nothing in the
    occurrence: every branch ran on a side stream and the current stream joined them (-2
    where the trace does not name it). A prefill chunk and a decode batch forked onto two
    streams with nothing after the join (``holdout29``): read with the decode stream as the
    origin, its fork waited for the whole prefill and the step read +41 to +46 %."""
    origin = int(launch_keys[-1])
    # per stream: whether its first wait came before its first launch, and its last launch
    forked: dict[int, bool] = {}
    last_launch: dict[int, int] = {}
    for key in np.unique(launch_keys).tolist():
        times = launch_times[launch_keys == key]
        forked[key] = bool(((waiting == key) & (wait_at < int(times.min()))).any())
        last_launch[key] = int(times.max())
    if not forked[origin]:
        return origin
    unforked = [key for key, was_forked in forked.items() if not was_forked]
    if unforked:
        return max(unforked, key=last_launch.__getitem__)
    stop = _before_next_launch(cols, hi)
    trailing = np.flatnonzero(cols.host_flag("wait")[hi:stop])
    launching = set(zip(launch_pid.tolist(), launch_tid.tolist(), strict=True))
    pids = cols.host("pid")[hi:stop][trailing].tolist()
    tids = cols.host("tid")[hi:stop][trailing].tolist()
    mine = [
        row
        for row, pid, tid in zip(trailing.tolist(), pids, tids, strict=True)
        if (pid, tid) in launching
    ]
    if not mine:
        return origin
    joined = int(_waiting_streams(cols, hi, stop)[mine[0]])
    if joined in forked:
        return origin
    return joined if joined >= 0 else -2


def _before_next_launch(cols: TimelineColumns, hi: int) -> int:
    """The first launch call's host row from row ``hi`` on (at most
    :data:`FORK_LOOKBACK_CALLS` ahead; the end of that range where none is)."""
    kind = cols.host("kind")
    stop = min(len(kind), hi + FORK_LOOKBACK_CALLS)
    launches = np.flatnonzero(np.isin(kind[hi:stop], list(LAUNCH_KINDS)))
    return hi + int(launches[0]) if len(launches) else stop


def _after_previous_launch(cols: TimelineColumns, lo: int) -> int:
    """The first host row after the last launch call before row ``lo`` (at most
    :data:`FORK_LOOKBACK_CALLS` back)."""
    kind = cols.host("kind")
    start = max(0, lo - FORK_LOOKBACK_CALLS)
    launches = np.flatnonzero(np.isin(kind[start:lo], list(LAUNCH_KINDS)))
    return start + int(launches[-1]) + 1 if len(launches) else start


def forked_streams(cols: TimelineColumns, rows: IntArray) -> tuple[int, tuple[str, ...]]:
    """How many streams of the activities at ``rows`` an operator forked for itself, and
    the names of those operators (sorted): streams whose every activity was launched inside
    a CPU operator that itself made a stream wait on an event. A library's own streams:
    cuDNN's RNNs run their layers and directions on streams of their own, forked and joined
    inside ``aten::_cudnn_rnn`` (a one-stream GRU's step spans five streams, four of them
    cuDNN's); the streams a program opens with ``torch.cuda.stream`` and joins with
    ``wait_stream`` hold work of many operators and wait outside any."""
    if not cols.host_rows or len(rows) == 0:
        return 0, ()
    launch_row = cols.gpu("launch_row")[rows]
    keys = stream_keys(cols.gpu("device")[rows], cols.gpu("stream")[rows])
    forked, tag = _library_streams(cols, keys, launch_row)
    if not len(forked):
        return 0, ()
    _, named, names = _forking_operators(cols)
    found = names[np.isin(named, tag[np.isin(keys, forked)])]
    return len(forked), tuple(sorted({str(name) for name in found}))


def _library_streams(
    cols: TimelineColumns, keys: IntArray, launch_row: IntArray
) -> tuple[IntArray, IntArray]:
    """Of the activities with stream keys ``keys`` launched by the host rows ``launch_row``
    (-1: unknown), the streams whose every activity was launched inside a CPU operator that
    itself made a stream wait (a library's own streams; sorted), and per activity the key
    (:func:`_operator_keys`) of the operator that launched it."""
    tag = launching_operators(cols, launch_row)
    inside = (tag >= 0) & np.isin(tag, _forking_operators(cols)[0])
    streams, stream_of = np.unique(keys, return_inverse=True)
    outside = np.bincount(stream_of, weights=~inside, minlength=len(streams))
    out: IntArray = streams[outside == 0]
    return out, tag


def hands_over(cols: TimelineColumns, rows: IntArray) -> bool:
    """Whether any activity at ``rows`` was launched inside a CPU operator that made two
    streams wait on one event id: a library handing work from stream to stream (cuDNN's
    multi-layer RNNs, :func:`_pipelined_records`), which
    :func:`infer_dependencies` ``pipelined`` may read otherwise."""
    operators = _handing_operators(cols)
    if not len(operators):
        return False
    return bool(np.isin(launching_operators(cols, cols.gpu("launch_row")[rows]), operators).any())


def launching_operators(cols: TimelineColumns, launch_row: IntArray) -> IntArray:
    """Per host row of ``launch_row`` (-1: unknown), the key (:func:`_operator_keys`) of
    the CPU operator its call was made in; -1 where unknown or made in none."""
    op = host_column(cols, "external_id", launch_row)
    known = (launch_row >= 0) & (op >= 0)
    out: IntArray = np.where(known, _operator_keys(host_column(cols, "pid", launch_row), op), -1)
    return out


def _handing_operators(cols: TimelineColumns) -> IntArray:
    """The keys (:func:`_operator_keys`) of the CPU operators inside which stream waits on
    one event id held back two streams or more (computed once per timeline)."""
    if "handing_operators" not in cols.memo:
        waiting, ids = _wait_columns(cols)
        rows = np.flatnonzero((ids >= 0) & (waiting >= 0))
        op = cols.host("external_id")[rows]
        rows, op = rows[op >= 0], op[op >= 0]
        out = np.zeros(0, np.int64)
        if len(rows):
            key = _operator_keys(cols.host("pid")[rows], op)
            triples = np.unique(np.stack([key, ids[rows], waiting[rows]]), axis=1)
            pairs, count = np.unique(triples[:2], axis=1, return_counts=True)
            out = np.unique(pairs[0][count > 1])
        cols.memo["handing_operators"] = out
    found: IntArray = cols.memo["handing_operators"]
    return found


def _operator_keys(pid: IntArray, external_id: IntArray) -> IntArray:
    """One integer per (pid, external id): a CPU operator's key, unique across processes."""
    out: IntArray = (np.asarray(pid).astype(np.int64) << 32) ^ np.asarray(external_id)
    return out


def _forking_operators(cols: TimelineColumns) -> tuple[IntArray, IntArray, npt.NDArray[Any]]:
    """The keys (:func:`_operator_keys`) of the CPU operators inside which a stream wait was
    called, and every CPU operator's key and name (computed once per timeline)."""
    if "forking_operators" not in cols.memo:
        waits = np.flatnonzero(cols.host_flag("wait"))
        op = cols.host("external_id")[waits]
        forking = np.unique(_operator_keys(cols.host("pid")[waits], op)[op >= 0])
        ops = cols.timeline.cpu_ops
        external_id = ops["external_id"].to_numpy()
        known = external_id >= 0
        named = _operator_keys(ops["pid"].to_numpy()[known], external_id[known])
        cols.memo["forking_operators"] = (forking, named, ops["name"].to_numpy()[known])
    out: tuple[IntArray, IntArray, npt.NDArray[Any]] = cols.memo["forking_operators"]
    return out
