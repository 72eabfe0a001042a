"""Exceptions raised by traceinspect; the CLI maps them to one stderr line and an exit code."""

from __future__ import annotations


class TraceinspectError(Exception):
    """Base class. ``exit_code`` is what the CLI returns when this reaches it."""

    exit_code = 1

    def __init__(self, message: str, *, exit_code: int | None = None) -> None:
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


class TraceFormatError(TraceinspectError):
    """The input file is missing, unreadable, truncated, or not a trace we understand."""

    exit_code = 2

    def __init__(self, path: object, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


class UsageError(TraceinspectError):
    """The user asked for something impossible (existing output without --force, bad option)."""

    exit_code = 2
