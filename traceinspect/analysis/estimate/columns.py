"""The timeline's columns as numpy arrays for the replay estimate, each GPU activity's
device share, and the host-call lookups every part of the estimate shares."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from traceinspect.analysis.intervals import merge
from traceinspect.model import Timeline

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

#: Host API names that record an event / make a stream wait for one.
EVENT_RECORD_APIS: Final = frozenset(
    {
        "cudaEventRecord",
        "cudaEventRecordWithFlags",
        "cuEventRecord",
        "cuEventRecordWithFlags",
        "hipEventRecord",
    }
)
STREAM_WAIT_APIS: Final = frozenset(
    {"cudaStreamWaitEvent", "cuStreamWaitEvent", "hipStreamWaitEvent"}
)

#: Marks the asynchronous copy APIs (``cudaMemcpyAsync``); the others block the host.
_ASYNC: Final = "Async"

#: Kernel names of matrix-multiply and convolution kernels (cuBLAS, cuBLASLt's nvjet,
#: CUTLASS, cuDNN, flash attention, Triton's templated GEMMs): they keep the tensor cores and
#: most of the memory bandwidth busy, and a light kernel that runs beside one advances more
#: slowly (:data:`~traceinspect.analysis.estimate.schedule.LIGHT_SLOWDOWN`).
MATRIX_KERNEL: Final = re.compile(
    r"gemm|nvjet|cutlass|xmma|wgmma|hmma|\d+816|implicit|fprop|dgrad|wgrad|flash|fmha"
    r"|triton_tem_|cublas",
    re.IGNORECASE,
)

#: Matrix kernels that multiply on the FP32 pipes (FFMA), not on tensor cores: cuBLAS's
#: ``xmma`` FP32 GEMMs and convolutions name it (``..._ffma_...``).
FFMA_KERNEL: Final = re.compile(r"ffma", re.IGNORECASE)

#: Kernel names of light kernels that stream memory: PyTorch's own (elementwise,
#: reductions, normalization, copies, foreach updates), Triton's generated pointwise and
#: reduction kernels, cuFFT's, CUB's and cuBLAS's matrix-vector products. They share the memory
#: bandwidth when side by side
#: (:data:`~traceinspect.analysis.estimate.schedule.BANDWIDTH_LATENCY_NS`); library kernels
#: of other names (cuDNN's direct convolutions, RNN cells) may be bound by their arithmetic
#: instead, and gathers (:data:`GATHER_KERNEL`) by the latency of their scattered reads.
STREAMING_KERNEL: Final = re.compile(
    r"at::native::|triton_(?:poi|red|per)_|fft|cub::|gemv|elementwise|reduce",
    re.IGNORECASE,
)

#: Light kernels that gather scattered rows (embedding lookups, indexing, gather/scatter,
#: sorts and top-k): not :data:`STREAMING_KERNEL`. In ``holdout52``'s DLRM, three streams of
#: ``EmbeddingBag`` kernels side by side ran as if alone, where charging them the shared
#: bandwidth read the step −4.0 → +9.4 %. Matched on the kernels' own names, case and all:
#: PyTorch's template arguments name ``IndexType`` in batch-norm, depthwise-convolution and
#: upsampling kernels, which stream.
GATHER_KERNEL: Final = re.compile(
    r"[eE]mbedding|index_select|indexSelect|indexFunc|index_elementwise|index_put"
    r"|gather|scatter|[sS]ort|topk|TopK"
)

#: Host call kinds that put work on the GPU (each counts as one eager launch).
LAUNCH_KINDS: Final = frozenset({"launch", "memcpy", "memset", "graph_launch"})


class TimelineColumns:
    """The timeline's columns as numpy arrays, each extracted once, and every GPU
    activity's device share (:func:`device_share`). Build one per timeline and pass it to
    the functions here when calling them many times."""

    def __init__(self, timeline: Timeline) -> None:
        self.timeline = timeline
        self._gpu: dict[str, npt.NDArray[Any]] = {}
        self._host: dict[str, npt.NDArray[Any]] = {}
        self._ops: dict[str, npt.NDArray[Any]] = {}
        self._share: FloatArray | None = None
        self._occupancy: tuple[FloatArray, FloatArray, FloatArray] | None = None
        self._matrix: npt.NDArray[np.bool_] | None = None
        self._ffma: npt.NDArray[np.bool_] | None = None
        self._streaming: npt.NDArray[np.bool_] | None = None
        self._name_codes: tuple[npt.NDArray[np.intp], Any] | None = None
        self._shapes_recorded: bool | None = None
        self._device_blocks: dict[int, tuple[IntArray, IntArray]] = {}
        #: Per-timeline results computed once by the estimate's helpers, by name.
        self.memo: dict[str, Any] = {}

    @property
    def shapes_recorded(self) -> bool:
        """:func:`~traceinspect.analysis.estimate.eager.shapes_recorded`, computed once (it
        reads every CPU operator's shapes: 30 of 43 s of a 200 MB trace's diagnosis when it
        ran once per estimated occurrence)."""
        if self._shapes_recorded is None:
            from traceinspect.analysis.estimate.eager import shapes_recorded

            self._shapes_recorded = shapes_recorded(self.timeline)
        return self._shapes_recorded

    @property
    def median_launch_call_ns(self) -> float | None:
        """:func:`~traceinspect.analysis.estimate.eager.median_launch_call_ns` of the
        timeline, computed once."""
        if "median_launch_call_ns" not in self.memo:
            from traceinspect.analysis.estimate.eager import median_launch_call_ns

            self.memo["median_launch_call_ns"] = median_launch_call_ns(self.timeline)
        median: float | None = self.memo["median_launch_call_ns"]
        return median

    @property
    def host_speed(self) -> float:
        """:func:`~traceinspect.analysis.estimate.eager.host_speed` of the timeline's median
        launch call, computed once."""
        if "host_speed" not in self.memo:
            from traceinspect.analysis.estimate.eager import host_speed

            self.memo["host_speed"] = host_speed(self.median_launch_call_ns)
        speed: float = self.memo["host_speed"]
        return speed

    def preload(
        self,
        gpu: Mapping[str, npt.NDArray[Any]],
        host: Mapping[str, npt.NDArray[Any]],
        device_blocks: Mapping[int, tuple[IntArray, IntArray]] | None = None,
    ) -> None:
        """Take columns another index already extracted (the same arrays, not copies), so
        one timeline is read into numpy once per run; ``device_blocks``, each device's union
        of GPU activity, where it has them too (:meth:`device_blocks`)."""
        self._gpu.update(gpu)
        self._host.update(host)
        self._device_blocks.update(device_blocks or {})

    @property
    def host_rows(self) -> int:
        return len(self.timeline.host)

    def gpu(self, column: str) -> npt.NDArray[Any]:
        if column not in self._gpu:
            self._gpu[column] = self.timeline.gpu[column].to_numpy()
        return self._gpu[column]

    def host(self, column: str) -> npt.NDArray[Any]:
        if column not in self._host:
            self._host[column] = self.timeline.host[column].to_numpy()
        return self._host[column]

    def device_blocks(self, device: int) -> tuple[IntArray, IntArray]:
        """The union of every GPU activity on ``device`` (all streams and processes), as
        :func:`~traceinspect.analysis.intervals.merge` returns it; computed once per device
        (taken from :attr:`~traceinspect.analysis.arrays.TimelineArrays.device_busy` where
        that index built these columns)."""
        if device not in self._device_blocks:
            on = self.gpu("device") == device
            self._device_blocks[device] = merge(self.gpu("start_ns")[on], self.gpu("end_ns")[on])
        return self._device_blocks[device]

    def thread_event_starts(
        self, threads: npt.NDArray[np.int64], first_ns: int, last_ns: int
    ) -> tuple[IntArray, IntArray, IntArray]:
        """Sorted start times, in ``[first_ns, last_ns]``, of the CPU operators, of the
        CUDA API calls and of the recorded Python function calls made by the (pid, tid)
        keys ``threads`` (:attr:`host_thread`)."""
        for table in ("cpu_ops", "python"):
            if f"_{table}_thread" not in self._ops:
                frame = getattr(self.timeline, table)
                self._ops[f"_{table}_thread"] = (
                    frame["pid"].to_numpy().astype(np.int64) << 32
                ) ^ frame["tid"].to_numpy().astype(np.int64)
                self._ops[f"_{table}_start"] = frame["start_ns"].to_numpy()
        out = []
        for starts, thread in (
            (self._ops["_cpu_ops_start"], self._ops["_cpu_ops_thread"]),
            (self.host("start_ns"), self.host_thread),
            (self._ops["_python_start"], self._ops["_python_thread"]),
        ):
            lo = int(np.searchsorted(starts, first_ns, side="left"))
            hi = int(np.searchsorted(starts, last_ns, side="right"))
            window = thread[lo:hi]
            # One thread (the common case): a comparison, without isin's sort.
            mine = window == threads[0] if len(threads) == 1 else np.isin(window, threads)
            out.append(np.sort(starts[lo:hi][mine]).astype(np.int64))
        return out[0], out[1], out[2]

    @property
    def host_thread(self) -> IntArray:
        """One integer per host call naming its (pid, tid)."""
        if "_thread" not in self._host:
            self._host["_thread"] = (self.host("pid").astype(np.int64) << 32) ^ self.host(
                "tid"
            ).astype(np.int64)
        return self._host["_thread"]

    def host_flag(self, flag: Literal["blocking", "wait", "record"]) -> npt.NDArray[np.bool_]:
        """One boolean per host call, computed once over the whole table: ``blocking``
        (a ``sync`` call or a synchronous, non-``Async``, copy), ``wait`` (a
        :data:`STREAM_WAIT_APIS` call) or ``record`` (an :data:`EVENT_RECORD_APIS` call)."""
        column = f"_{flag}"
        if column not in self._host:
            host = self.timeline.host
            if flag == "blocking":
                values = host["kind"].eq("sync").to_numpy(bool, copy=True)
                copies = np.flatnonzero(host["kind"].eq("memcpy").to_numpy(bool))
                names = host["name"].to_numpy()[copies]
                synchronous = np.array([_ASYNC not in str(name) for name in names], bool)
                values[copies[synchronous]] = True
            else:
                apis = STREAM_WAIT_APIS if flag == "wait" else EVENT_RECORD_APIS
                values = host["name"].isin(apis).to_numpy(bool)
            self._host[column] = values
        return self._host[column]

    @property
    def share(self) -> FloatArray:
        if self._share is None:
            self._share, self._occupancy = _device_share_all(self)
        return self._share

    @property
    def occupancy(self) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Per GPU activity: its blocks, the blocks of it one SM holds at once and its
        device's SMs (0 where unknown)."""
        if self._occupancy is None:
            self._share, self._occupancy = _device_share_all(self)
        return self._occupancy

    @property
    def matrix(self) -> npt.NDArray[np.bool_]:
        """One boolean per GPU activity: a kernel whose name :data:`MATRIX_KERNEL` matches
        (each distinct name tested once)."""
        if self._matrix is None:
            self._matrix = (self.gpu("kind") == "kernel") & self._named(MATRIX_KERNEL.search)
        return self._matrix

    def _named(self, test: Callable[[str], object]) -> npt.NDArray[np.bool_]:
        """One boolean per GPU activity: whether ``test`` holds for its name, each distinct
        name tested once (the names factorized once per timeline)."""
        if self._name_codes is None:
            self._name_codes = pd.factorize(self.gpu("name"), use_na_sentinel=False)
        codes, names = self._name_codes
        out: npt.NDArray[np.bool_] = np.array([bool(test(str(n))) for n in names], bool)[codes]
        return out

    def room_share(self, rows: IntArray) -> FloatArray:
        """:attr:`share` of the GPU activities ``rows``, but 0 for a communication kernel:
        it mostly waits on other ranks on a few SMs, and is written to run beside compute,
        so it takes no room from the kernels it overlaps."""
        out: FloatArray = np.where(self.gpu("collective")[rows], 0.0, self.share[rows])
        return out

    @property
    def ffma(self) -> npt.NDArray[np.bool_]:
        """One boolean per GPU activity: a matrix kernel whose name :data:`FFMA_KERNEL`
        matches."""
        if self._ffma is None:
            self._ffma = self.matrix & self._named(FFMA_KERNEL.search)
        return self._ffma

    @property
    def streaming(self) -> npt.NDArray[np.bool_]:
        """One boolean per GPU activity: a kernel, not a matrix kernel, whose name
        :data:`STREAMING_KERNEL` matches and :data:`GATHER_KERNEL` does not."""
        if self._streaming is None:
            named = self._named(
                lambda n: STREAMING_KERNEL.search(n) and not GATHER_KERNEL.search(n)
            )
            self._streaming = (self.gpu("kind") == "kernel") & ~self.matrix & named
        return self._streaming


def device_share(
    timeline: Timeline, rows: IntArray, *, columns: TimelineColumns | None = None
) -> FloatArray:
    """Fraction of the device each activity occupies while it runs: its blocks over the
    blocks the device holds at once (:func:`resident_blocks_per_sm` × SMs), at most 1 —
    a kernel whose waves cover every SM fills it. Without registers or shared memory in the
    trace a block is taken to fill its SM (``blocks / SMs``). Copies and memsets run on
    copy engines: 0. Unknown grid or SM count: 1.
    """
    cols = columns or TimelineColumns(timeline)
    return cols.share[np.asarray(rows, np.int64)]


@dataclass(frozen=True)
class SmLimits:
    """What one SM of a device holds at once (the occupancy calculator's inputs)."""

    sms: int
    threads: int = 0
    registers: int = 0
    shared_mem: int = 0
    blocks: int = 0

    @classmethod
    def of(cls, properties: Mapping[str, Any]) -> SmLimits:
        """From Kineto's ``deviceProperties`` or Nsight Systems' ``TARGET_INFO_GPU``."""

        def first(*keys: str) -> int:
            for key in keys:
                value = properties.get(key)
                if isinstance(value, (int, float)) and value > 0:
                    return int(value)
            return 0

        warps = first("maxWarpsPerSm")
        threads = first("maxThreadsPerMultiprocessor") or warps * WARP_SIZE
        major, minor = first("computeMajor"), max(0, int(properties.get("computeMinor") or 0))
        return cls(
            sms=first("numSms", "multiProcessorCount", "smCount"),
            threads=threads,
            registers=first("regsPerMultiprocessor", "maxRegistersPerSm"),
            shared_mem=first("sharedMemPerMultiprocessor", "maxShmemPerSm"),
            blocks=first("maxBlocksPerSm") or _MAX_BLOCKS_PER_SM.get((major, minor), 0),
        )

    def resident_blocks(
        self, threads: FloatArray, registers: FloatArray, shared_mem: FloatArray
    ) -> FloatArray:
        """Blocks of each kernel one SM holds at once (0 where unknown): the least of the
        thread, register (allocated per warp in units of 256), shared-memory (plus the
        1 KiB the driver reserves per block) and block-count limits."""
        known = (threads > 0) & (registers > 0) & (shared_mem >= 0)
        if not (self.threads and self.registers and self.shared_mem and self.blocks):
            return np.zeros(len(threads))
        warps = np.ceil(np.maximum(threads, 1) / WARP_SIZE)
        regs_per_warp = np.ceil(np.maximum(registers, 1) * WARP_SIZE / 256) * 256
        by_threads = np.floor(self.threads / (warps * WARP_SIZE))
        by_regs = np.floor(self.registers / (regs_per_warp * warps))
        by_smem = np.floor(self.shared_mem / (np.maximum(shared_mem, 0) + _SMEM_RESERVED))
        limit = np.minimum(np.minimum(by_threads, by_regs), np.minimum(by_smem, self.blocks))
        return np.where(known, np.maximum(limit, 1.0), 0.0)


WARP_SIZE: Final = 32
#: Shared memory the driver reserves per resident block (compute capability ≥ 8.0).
_SMEM_RESERVED: Final = 1024
#: Resident blocks per SM by compute capability, where the trace does not say.
_MAX_BLOCKS_PER_SM: Final = {
    (7, 0): 32,
    (7, 5): 16,
    (8, 0): 32,
    (8, 6): 16,
    (8, 7): 16,
    (8, 9): 24,
    (9, 0): 32,
    (10, 0): 32,
    (12, 0): 32,
}


def _device_share_all(
    cols: TimelineColumns,
) -> tuple[FloatArray, tuple[FloatArray, FloatArray, FloatArray]]:
    kind = cols.gpu("kind")
    share = np.where((kind == "memcpy") | (kind == "memset"), 0.0, 1.0)
    # Each distinct grid parsed once; factorized, not turned into fixed-width strings.
    inverse, grids = pd.factorize(cols.gpu("grid"), use_na_sentinel=False)
    blocks = np.array([_blocks(str(g)) for g in grids], np.float64)[inverse]
    inverse, block_dims = pd.factorize(cols.gpu("block"), use_na_sentinel=False)
    threads = np.array([_blocks(str(b)) for b in block_dims], np.float64)[inverse]
    registers = cols.gpu("registers").astype(np.float64)
    shared_mem = cols.gpu("shared_mem").astype(np.float64)
    limits = {d.id: SmLimits.of(d.properties) for d in cols.timeline.meta.devices}
    devices, device_at = np.unique(cols.gpu("device"), return_inverse=True)
    sms = np.zeros(len(kind))
    resident = np.zeros(len(kind))
    for i, device in enumerate(devices.tolist()):
        on = device_at == i
        lim = limits.get(int(device))
        if lim is None or not lim.sms:
            continue
        sms[on] = lim.sms
        resident[on] = lim.resident_blocks(threads[on], registers[on], shared_mem[on])
    known = (kind == "kernel") & (blocks > 0) & (sms > 0)
    # One block per SM where the occupancy is unknown (a block is taken to fill its SM).
    capacity = sms * np.maximum(resident, 1.0)
    share[known] = np.minimum(1.0, blocks[known] / capacity[known])
    return share, (np.where(known, blocks, 0.0), np.where(known, resident, 0.0), sms)


def _blocks(grid: str) -> int:
    """Blocks in a ``"x,y,z"`` grid, threads in a block (0 when unknown)."""
    try:
        dims = [int(part) for part in grid.split(",")]
    except ValueError:
        return 0
    return int(np.prod(dims)) if dims and min(dims) > 0 else 0


def launch_times(cols: TimelineColumns, rows: IntArray) -> tuple[IntArray, IntArray]:
    """Host start of each activity's launch call (-1 unknown), and the launch rows."""
    launch_row = cols.gpu("launch_row")[rows]
    return host_column(cols, "start_ns", launch_row), launch_row


def host_column(cols: TimelineColumns, column: str, launch_row: IntArray) -> IntArray:
    """``timeline.host[column]`` at each launch row, -1 where the row is -1."""
    if not cols.host_rows:
        return np.full(len(launch_row), -1, np.int64)
    values = cols.host(column)
    return np.where(launch_row >= 0, values[np.maximum(launch_row, 0)], -1)


def sync_points(cols: TimelineColumns, rows: IntArray) -> IntArray:
    """Host start times of the blocking calls made while the occurrence launched its work:
    ``sync`` calls and synchronous (non-``Async``) copies, on the launching threads,
    after the first launch and before the last."""
    host_start = cols.host("start_ns")
    return np.sort(host_start[sync_rows(cols, rows)])


def sync_rows(cols: TimelineColumns, rows: IntArray) -> IntArray:
    """Rows of ``timeline.host`` of the blocking calls :func:`sync_points` describes."""
    launched_at, launch_row = launch_times(cols, rows)
    known = launch_row >= 0
    if not known.any() or not cols.host_rows:
        return np.empty(0, np.int64)
    first, last = int(launched_at[known].min()), int(launched_at[known].max())
    lo, hi = host_window(cols, first + 1, last - 1)
    candidates = lo + np.flatnonzero(cols.host_flag("blocking")[lo:hi])
    if not len(candidates):
        return candidates.astype(np.int64)
    thread = cols.host_thread
    return candidates[np.isin(thread[candidates], np.unique(thread[launch_row[known]]))]


def stream_keys(device: IntArray, stream: IntArray) -> IntArray:
    # Streams of different devices never share a queue: key on both.
    return (device.astype(np.int64) << 32) ^ stream.astype(np.int64)


def host_window(cols: TimelineColumns, first_ns: int, last_ns: int) -> tuple[int, int]:
    """Row range of ``timeline.host`` (sorted by start) whose calls start in
    ``[first_ns, last_ns]``."""
    host_start = cols.host("start_ns")
    lo = int(np.searchsorted(host_start, first_ns, side="left"))
    hi = int(np.searchsorted(host_start, last_ns, side="right"))
    return lo, hi
