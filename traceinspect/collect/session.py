"""The one piece of process state the public API needs: the collector run in progress.

``traceinspect profile`` activates a :class:`Session` while the user's script runs;
:func:`traceinspect.graph_candidate` registers into it, and does nothing without one.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from traceinspect.collect.candidates import GraphCandidate


@dataclass
class Session:
    """What the user's script handed to the collector while it ran."""

    candidates: list[GraphCandidate] = field(default_factory=list)


_active: Session | None = None


def active_session() -> Session | None:
    """The session of the ``traceinspect profile`` run in progress, if any."""
    return _active


@contextmanager
def activate(session: Session) -> Iterator[Session]:
    """Make ``session`` the active one for the duration of the block (not re-entrant)."""
    global _active
    if _active is not None:
        raise RuntimeError("a traceinspect collector session is already active")
    _active = session
    try:
        yield session
    finally:
        _active = None
