"""Why a CUDA graph capture failed, from the first error's text (pure; no torch needed).

A capture usually fails twice: the offending call raises (``operation not permitted when
stream is capturing``), then ending the capture raises again (``operation failed due to a
previous error during capture``). Only the first error says what went wrong, so callers
pass the first exception of the chain (:func:`first_error`) and the source lines of its
traceback, innermost last: ``.item()`` on the user's line is what separates a host sync from
an operation that is merely not capturable, since CUDA reports both with the same code.
"""

from __future__ import annotations

import re
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

CaptureFailureKind = Literal[
    "host_sync",
    "dynamic_shape",
    "unsupported_op",
    "rng",
    "multi_stream",
    "out_of_memory",
    "invalidated",
    "other",
]

#: Longest message kept in a report, characters (CUDA messages carry long debugging advice).
MESSAGE_CHARS: Final = 400

HINTS: Final[dict[str, str]] = {
    "host_sync": "the host waited for the GPU inside the capture (.item(), .tolist(), .cpu(), "
    "print/if on a CUDA tensor, a pageable copy, synchronize); move it out of the callable",
    "dynamic_shape": "an output's shape depends on tensor values (nonzero, masked_select, "
    "unique, boolean indexing); graphs need fixed shapes: pad, or use a fixed-size variant",
    "unsupported_op": "an operation that cannot be captured (an allocation outside the graph's "
    "pool, a library call that synchronizes or queries the stream)",
    "rng": "the RNG state was read or set during capture; register the generator with the "
    "graph or draw random numbers outside the callable",
    "multi_stream": "work forked to another stream was not joined back before the capture ended",
    "out_of_memory": "the GPU ran out of memory while capturing (the graph's private pool adds "
    "to the eager footprint)",
    "invalidated": "the capture was invalidated by an earlier error whose text was lost",
    "other": "not a recognized capture failure; see the error",
}

# Each rule: kind, pattern searched in the error's type and message.
_MESSAGE_RULES: Final[tuple[tuple[CaptureFailureKind, re.Pattern[str]], ...]] = (
    (
        "out_of_memory",
        re.compile(r"out of memory|OutOfMemoryError|CUBLAS_STATUS_ALLOC_FAILED", re.I),
    ),
    ("rng", re.compile(r"CUDAGeneratorImpl|set_state_index|rng state|philox", re.I)),
    (
        "dynamic_shape",
        re.compile(r"\bnonzero\b|masked_select|dynamic shape|data-dependent|unbacked", re.I),
    ),
    (
        "host_sync",
        re.compile(
            r"Cannot copy between CPU and CUDA tensors during CUDA graph capture"
            r"|legacy stream depend on a capturing|cudaErrorStreamCaptureImplicit"
            r"|synchroniz\w* .*captur|captur\w* .*synchroniz",
            re.I,
        ),
    ),
    (
        "multi_stream",
        re.compile(
            r"unjoined|cudaErrorStreamCaptureUnjoined|StreamCaptureIsolation"
            r"|StreamCaptureMerge|different capture sequence",
            re.I,
        ),
    ),
    (
        "invalidated",
        re.compile(r"previous error during capture|cudaErrorStreamCaptureInvalidated", re.I),
    ),
)

# CUDA error 900 covers both host syncs and other uncapturable calls.
_NOT_PERMITTED: Final = re.compile(
    r"not permitted when stream is capturing|cudaErrorStreamCaptureUnsupported"
    r"|not (?:supported|allowed|permitted) (?:during|while|when) .*captur"
    r"|captur\w* .*not (?:supported|allowed)",
    re.I,
)

# What the innermost user lines of the traceback reveal.
_DYNAMIC_SHAPE_SOURCE: Final = re.compile(
    r"\bnonzero\s*\(|masked_select\s*\(|\bunique(?:_consecutive)?\s*\(|masked_scatter\s*\("
    r"|repeat_interleave\s*\(|\bargwhere\s*\("
    r"|\[[^\]]*(?:[<>]=?|==|!=)[^\]]*\]"  # boolean-mask indexing: x[x > 0]
)
_HOST_SYNC_SOURCE: Final = re.compile(
    r"\.item\s*\(|\.tolist\s*\(|\.cpu\s*\(|\.numpy\s*\(|synchronize\s*\(|\bprint\s*\("
    r"|\b(?:float|int|bool)\s*\(|\bif\b|\bwhile\b|\.to\s*\(\s*['\"]cpu"
)


@dataclass(frozen=True)
class CaptureFailure:
    """A classified failure: ``kind``, and the first error's type and (trimmed) message."""

    kind: CaptureFailureKind
    error_type: str
    message: str
    hint: str

    def to_json(self) -> dict[str, str]:
        return {
            "kind": self.kind,
            "error_type": self.error_type,
            "message": self.message,
            "hint": self.hint,
        }


def classify_capture_failure(
    error_type: str, message: str, source_lines: Sequence[str] = ()
) -> CaptureFailure:
    """Classify the first error raised during a capture.

    ``source_lines`` are the traceback's source lines, innermost last; only the last few
    are consulted, and only when the message alone is ambiguous (CUDA error 900).
    """
    text = f"{error_type}: {message}"
    kind: CaptureFailureKind = "other"
    for rule_kind, pattern in _MESSAGE_RULES:
        if pattern.search(text):
            kind = rule_kind
            break
    else:
        if _NOT_PERMITTED.search(text):
            kind = _kind_from_source(source_lines)
    return CaptureFailure(kind, error_type, _trim(message), HINTS[kind])


def classify_exception(exc: BaseException) -> CaptureFailure:
    """Classify the first error of ``exc``'s chain (see :func:`first_error`)."""
    first = first_error(exc)
    frames = traceback.extract_tb(first.__traceback__)
    lines = [f.line or "" for f in frames]
    return classify_capture_failure(type(first).__name__, str(first), lines)


def first_error(exc: BaseException) -> BaseException:
    """The earliest exception of the ``__cause__``/``__context__`` chain that led to ``exc``."""
    seen = {id(exc)}
    current = exc
    while True:
        earlier = current.__cause__ or current.__context__
        if earlier is None or id(earlier) in seen:
            return current
        seen.add(id(earlier))
        current = earlier


#: How many innermost traceback lines can name the offending call.
_SOURCE_LINES_CONSULTED: Final = 3


def _kind_from_source(source_lines: Sequence[str]) -> CaptureFailureKind:
    recent = [line for line in source_lines if line][-_SOURCE_LINES_CONSULTED:]
    for line in reversed(recent):
        if _DYNAMIC_SHAPE_SOURCE.search(line):
            return "dynamic_shape"
        if _HOST_SYNC_SOURCE.search(line):
            return "host_sync"
    return "unsupported_op"


def _trim(message: str) -> str:
    # CUDA errors append advice ("CUDA kernel errors might be asynchronously reported...").
    first = message.strip().split("\n")[0].strip()
    return first if len(first) <= MESSAGE_CHARS else first[: MESSAGE_CHARS - 1] + "…"
