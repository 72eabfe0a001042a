"""Per-rank jobs on a ``dask.distributed`` cluster (``analyze DIR --cluster ADDRESS``).

The scheduler gets one task per trace *path*: workers read the traces from storage they
share with this machine and send back only the small per-rank result, so the client's
memory does not grow with the traces. ``--cluster local`` starts a :class:`LocalCluster`
here, one single-threaded worker process per trace that memory holds (each worker gets
an equal share of the available memory as its dask memory limit). On a remote cluster,
start workers with ``--nthreads 1 --memory-limit`` sized for one trace: dask pauses a
worker near its limit and restarts it past it, and that rank is then reported as failed.

``distributed`` is an optional dependency (``pip install 'traceinspect[cluster]'``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

from traceinspect.errors import UsageError

#: ``--cluster`` value that starts a LocalCluster instead of connecting to a scheduler.
LOCAL: Final = "local"
#: Seconds to wait for a remote scheduler before giving up with a usage error.
CONNECT_TIMEOUT_S: Final = 20
#: Attempts per rank before dask gives up on a task that keeps killing workers (OOM): the
#: default (3) would take three workers down for one oversized trace.
ALLOWED_FAILURES: Final = 1

#: Called after each rank with (ranks done, ranks in all, ranks failed so far).
Progress = Callable[[int, int, int], None]


def _distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise UsageError(
            "--cluster needs dask.distributed: pip install 'traceinspect[cluster]'"
        ) from None
    return distributed


@contextlib.contextmanager
def connect(address: str, *, local_workers: int, memory_per_worker: int | None) -> Any:
    """A dask ``Client``: to the scheduler at ``address``, or to a new LocalCluster."""
    distributed = _distributed()
    import dask

    with contextlib.ExitStack() as stack:
        stack.enter_context(
            dask.config.set({"distributed.scheduler.allowed-failures": ALLOWED_FAILURES})
        )
        if address == LOCAL:
            cluster = stack.enter_context(
                distributed.LocalCluster(
                    n_workers=local_workers,
                    threads_per_worker=1,
                    processes=True,
                    memory_limit=memory_per_worker if memory_per_worker else "auto",
                    dashboard_address=None,
                    silence_logs=logging.ERROR,
                )
            )
            client = stack.enter_context(distributed.Client(cluster))
        else:
            try:
                client = stack.enter_context(
                    distributed.Client(address, timeout=f"{CONNECT_TIMEOUT_S}s")
                )
            except (OSError, TimeoutError, ValueError) as exc:
                raise UsageError(
                    f"--cluster {address}: cannot reach the scheduler ({exc})"
                ) from None
        yield client


def map_on_cluster(
    job: Callable[[Any], dict[str, Any]],
    paths: Sequence[Path],
    *,
    client: Any,
    progress: Progress | None = None,
    tasks: Sequence[Any] | None = None,
) -> list[dict[str, Any]]:
    """``job(str(path))`` for every path on the cluster (or ``job(task)`` for each of
    ``tasks``, one per path); results in ``paths`` order.

    A task that fails on the cluster (its worker died, or the job raised) becomes
    ``{"failure": {"file": name, "error": ...}}``, like a trace the job could not read.
    """
    distributed = _distributed()
    run = uuid.uuid4().hex[:8]
    # Absolute, but links kept: the rank's file name is the link's, as in a local run.
    inputs = list(tasks) if tasks is not None else [os.path.abspath(p) for p in paths]
    keys = [f"traceinspect-rank-{run}-{i}" for i in range(len(paths))]
    futures = client.map(job, inputs, key=keys, pure=False)
    position = {future.key: i for i, future in enumerate(futures)}
    results: list[dict[str, Any] | None] = [None] * len(paths)
    failed = 0
    for done, future in enumerate(distributed.as_completed(futures), start=1):
        i = position[future.key]
        try:
            results[i] = future.result()
        except Exception as exc:  # noqa: BLE001 - one rank's failure is reported, not fatal
            results[i] = {"failure": {"file": Path(paths[i]).name, "error": _why(exc)}}
        finally:
            future.release()
        failed += "failure" in (results[i] or {})
        if progress is not None:
            progress(done, len(paths), failed)
    return [r if r is not None else {"failure": {"file": "?", "error": "lost"}} for r in results]


def _why(exc: BaseException) -> str:
    if type(exc).__name__ == "KilledWorker":
        return "the cluster worker died while reading it (killed for memory?)"
    line = str(exc).splitlines()[0] if str(exc) else ""
    return f"failed on the cluster: {type(exc).__name__}: {line}"[:300]
