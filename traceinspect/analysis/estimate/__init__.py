"""Predict a region's time if its GPU work were captured once as a CUDA graph and replayed.

The model, per occurrence of a region (all times integer ns):

1. **Graphs.** The GPU activities the occurrence launched become graph nodes. A blocking
   host call while it launched them (a ``*Synchronize``, a synchronous copy) cannot be
   captured: it splits the work into one graph per stretch between syncs
   (:func:`_segments`), and the device-to-host copies the sync waits for (``.item()``)
   stay eager *readbacks*. Host-to-device copies before the first kernel are *input
   copies*: a static-input graph cannot take fresh inputs, the caller copies them into the
   static buffers before ``replay()`` (see 4).
2. **Replay on the GPU.** Nodes keep the order of their stream and run back to back: each
   costs its traced duration plus a per-node overhead that depends on the kernel's
   duration (:meth:`Calibration.node_overhead_for`, interpolated from the calibration's
   ``node_overhead_table``: 0.43 µs for 0.8 µs kernels on the H200, 0.64 µs at 13 µs,
   0.85 µs at 98 µs). A node waits for the nodes it depends on
   (:func:`infer_dependencies`; a stream's first ``wait_stream`` before its first launch
   is a fork from the stream the work returns to). On one stream the replayed GPU time is
   the chain's length. Nodes of several streams share the device: each starts once it is
   ready and the device has room for it, the device shares (:func:`device_share`) of the
   nodes running at once adding up to at most 1, and runs to its end
   (:func:`scheduled_path_ns`); a kernel that shared an over-full device in the trace is
   charged its time alone (:func:`solo_durations`).
3. **Host.** ``replay()`` costs ``graph_launch_host_for(nodes)`` on the host; its first node
   starts :attr:`Calibration.replay_latency_ns` after the call begins; the synchronizing
   caller sees completion ``sync_ns`` after the later of the host and the GPU finishing.
   Between graphs, the host launches the readbacks (``copy_launch_host_ns`` each), waits
   for the GPU, pays ``sync_ns`` and launches the next graph.
4. **Input copies.** Each input copy costs the host one eager ``copy_`` launch
   (``copy_launch_host_ns``) and the GPU its traced duration, before the graph on the same
   stream. When the trace shows none and the caller knows the copies into the static
   inputs (``traceinspect profile`` records each input's bytes), each costs its size at the
   calibrated device-to-device bandwidth (:meth:`Calibration.copy_device_ns`); otherwise one
   small copy is assumed (``copy_gpu_ns``) unless the caller says the graph takes no
   inputs, and the range then spans no input copy to two.
5. **One cold start per synchronize.** The first CUDA call after a synchronize takes
   longer than the same call made warm (:attr:`Calibration.cold_call_ns`: in the H200
   sample traces the first launch of a synchronized step takes 1.1–19.4 µs longer than the
   median launch, 4.55 µs over the 8). ``copy_launch_host_ns`` and the replay costs were
   each calibrated as such a first call, so each holds one cold start, but a request pays
   it once: the call that opens the request (or follows a host sync) costs the host as
   calibrated, every later one (a replay after the input copies, a readback, a further
   copy) that much less. The replay's first node still reaches the GPU
   :attr:`Calibration.replay_latency_ns` after the call begins: the input copies do not
   hide its latency. On the H200, a one-kernel graph fed 1, 2, 4 or 8 inputs took the
   copies' host time plus the replay's own synchronized wall plus 0–2.6 µs on two leases
   (``sample_traces/validation/copy_cost.json``, ``copy_cost.lease2.json``); letting the
   copies hide the latency charged seven multi-stream steps' copies 2–7.5 µs where they
   took 10–28 µs (``replay_parts.holdout15.json``).

The result is the wall time a synchronized, unprofiled request would see. Kernel
durations in a profiled trace are close to unprofiled ones, so they are used as traced;
host costs come from the calibration, never from the trace (the profiler inflates them).

Range: ``low``/``high`` scale every calibrated overhead by ``1 ∓ spread_frac`` and every
duration by the 10th/90th percentile of the same work's duration ratio across occurrences
(:func:`duration_spread`) widened by :data:`REPLAY_DURATION_DRIFT_FRAC`; the region's
range spans the 10th–90th percentile of its occurrences' ranges.

Eager time, for savings: the unprofiled eager time when the caller measured it
(``eager_source="measured"``); else the profiled trace replayed with its host work sped
up by the calibrated profiler inflation (:func:`deflated_eager_ns`, ``"trace-deflated"``;
``"trace"`` for Nsight Systems traces, which are not deflated, or when the calibration
shows no inflation). The profiler's inflation varies from
one workload to the next (1.3× to 4.5× on the H200 samples), so this estimate is rough:
pass the measured eager time when you have it.
"""

from traceinspect.analysis.estimate.columns import (
    EVENT_RECORD_APIS,
    LAUNCH_KINDS,
    STREAM_WAIT_APIS,
    FloatArray,
    IntArray,
    TimelineColumns,
    device_share,
)
from traceinspect.analysis.estimate.critical_path import critical_path_ns
from traceinspect.analysis.estimate.dependencies import (
    CLOCK_SLACK_NS,
    DEPENDENCY_WINDOW_NS,
    infer_dependencies,
)
from traceinspect.analysis.estimate.eager import EagerRun, simulate_eager
from traceinspect.analysis.estimate.occurrence import OccurrenceEstimate, estimate_occurrence
from traceinspect.analysis.estimate.region import (
    MAX_ESTIMATED_OCCURRENCES,
    RANGE_PERCENTILES,
    REPLAY_DURATION_DRIFT_FRAC,
    EagerSource,
    RegionEstimate,
    RegionPlan,
    UnprofiledShape,
    duration_spread,
    estimate_region,
    plan_region,
)
from traceinspect.analysis.estimate.schedule import scheduled_path_ns, solo_durations

__all__ = [
    "CLOCK_SLACK_NS",
    "DEPENDENCY_WINDOW_NS",
    "EVENT_RECORD_APIS",
    "LAUNCH_KINDS",
    "MAX_ESTIMATED_OCCURRENCES",
    "RANGE_PERCENTILES",
    "REPLAY_DURATION_DRIFT_FRAC",
    "STREAM_WAIT_APIS",
    "EagerSource",
    "FloatArray",
    "IntArray",
    "OccurrenceEstimate",
    "RegionEstimate",
    "RegionPlan",
    "TimelineColumns",
    "critical_path_ns",
    "simulate_eager",
    "device_share",
    "duration_spread",
    "estimate_occurrence",
    "estimate_region",
    "plan_region",
    "EagerRun",
    "UnprofiledShape",
    "infer_dependencies",
    "scheduled_path_ns",
    "solo_durations",
]
