"""Running a command under Nsight Systems and turning what it leaves into a SQLite export.

``nsys profile`` writes ``<name>.nsys-rep``; where its importer is broken (a missing library,
as on our H200 image) it leaves the raw ``<name>.qdstrm`` instead, which ``QdstrmImporter``
turns into the report. ``nsys export --type sqlite`` then writes what traceinspect reads.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from traceinspect.errors import UsageError

#: What ``profile --nsys`` records: CUDA API and GPU activity, NVTX ranges, each kernel of a
#: replayed graph; no CPU sampling or context switches (they grow the raw file to gigabytes).
PROFILE_OPTIONS: Final = (
    "--trace=cuda,nvtx",
    "--sample=none",
    "--cpuctxsw=none",
    "--cuda-graph-trace=node",
)
EXPORT_TIMEOUT_S: Final = 1800  # a large report exports in minutes; a hung nsys must not hang us
IMPORT_TIMEOUT_S: Final = 1800
IMPORTER: Final = "QdstrmImporter"


class NsysError(UsageError):
    """Nsight Systems is missing, or did not leave a report."""


@dataclass(frozen=True)
class NsysRun:
    """What one recording left, and how it was made."""

    exit_status: int  # nsys profile's own (the application's, for recent nsys)
    report: Path | None  # the .nsys-rep, None when neither nsys nor its importer made one
    command: tuple[str, ...]
    imported_qdstrm: bool = False


def find_nsys(nsys_path: Path | None = None) -> Path:
    """The ``nsys`` binary: ``nsys_path`` (a binary or the folder holding it), else PATH."""
    if nsys_path is not None:
        candidate = nsys_path / "nsys" if nsys_path.is_dir() else nsys_path
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
        raise NsysError(f"{nsys_path}: not an executable nsys")
    found = shutil.which("nsys")
    if found is None:
        raise NsysError(
            "nsys (Nsight Systems) is not on PATH: install it, or pass --nsys-path /path/to/nsys"
        )
    return Path(found)


def find_importer(nsys: Path) -> Path | None:
    """``QdstrmImporter``: on PATH, else beside ``nsys`` or in its installation's host folder."""
    found = shutil.which(IMPORTER)
    if found is not None:
        return Path(found)
    here = nsys.resolve().parent
    for folder in (here, *here.parent.glob("host-linux-*"), *here.parent.parent.glob("host-*")):
        candidate = folder / IMPORTER
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def profile_command(nsys: Path, output: Path, target: Sequence[str]) -> list[str]:
    """``nsys profile`` of ``target`` writing ``output``.nsys-rep (replacing an old one)."""
    return [
        str(nsys),
        "profile",
        *PROFILE_OPTIONS,
        "--force-overwrite=true",
        f"--output={output}",
        *target,
    ]


def record(nsys: Path, output: Path, target: Sequence[str]) -> NsysRun:
    """Run ``target`` under ``nsys profile``; stdout and stderr pass through.

    Where nsys left only ``output``.qdstrm, ``QdstrmImporter`` makes the report from it.
    """
    command = profile_command(nsys, output, target)
    try:
        status = subprocess.run(command, check=False).returncode
    except OSError as exc:
        raise NsysError(f"cannot run {nsys}: {exc.strerror or exc}") from None
    report = output.with_name(output.name + ".nsys-rep")
    raw = output.with_name(output.name + ".qdstrm")
    if report.is_file():
        return NsysRun(status, report, tuple(command))
    if not raw.is_file():
        return NsysRun(status, None, tuple(command))
    importer = find_importer(nsys)
    if importer is None:
        raise NsysError(
            f"nsys left only {raw} and {IMPORTER} was not found on PATH or beside {nsys}: "
            f"run `{IMPORTER} -i {raw}` to make the report"
        )
    done = subprocess.run(
        [str(importer), "-i", str(raw)],
        capture_output=True,
        text=True,
        check=False,
        timeout=IMPORT_TIMEOUT_S,
    )
    if done.returncode != 0 or not report.is_file():
        raise NsysError(f"{IMPORTER} could not import {raw}: {_last_line(done)}")
    raw.unlink()
    return NsysRun(status, report, tuple(command), imported_qdstrm=True)


def export_sqlite(nsys: Path, report: Path, sqlite: Path) -> None:
    """``nsys export --type sqlite`` of ``report`` into ``sqlite`` (replacing it)."""
    command = [str(nsys), "export", "--type=sqlite", "--force-overwrite=true"]
    command += [f"--output={sqlite}", str(report)]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, check=False, timeout=EXPORT_TIMEOUT_S
        )
    except subprocess.TimeoutExpired:
        raise NsysError(f"nsys export of {report} took over {EXPORT_TIMEOUT_S} s") from None
    if done.returncode != 0 or not sqlite.is_file():
        raise NsysError(f"nsys export of {report} failed: {_last_line(done)}")


def _last_line(done: subprocess.CompletedProcess[str]) -> str:
    lines = (done.stderr or done.stdout or "").strip().splitlines()
    return lines[-1].strip() if lines else f"exit status {done.returncode}"
