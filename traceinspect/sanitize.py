"""One sanitizer for every user-controlled string bound for a terminal.

Kernel and NVTX names, paths and error messages come from files anyone can write. Printed
raw, their control characters drive the terminal: ``ESC ] 52`` writes the clipboard,
``ESC ] 8`` plants hyperlinks, ``ESC [ 2 J`` clears the screen, C1 codes (``\\x9b`` is a
one-byte CSI) do the same on terminals that honour them, and bidirectional overrides reorder
what the eye reads. :func:`sanitize` shows each of them as a visible escape (``\\x1b``,
``\\x9b``, ``\\u202e``) and leaves everything else untouched.

:class:`SafeConsole` applies it at the rendering seam: every string a renderer hands to rich
(``console.print`` arguments, table cells, titles) passes :meth:`SafeConsole.render_str`
before layout, and every text segment rich emits passes :meth:`SafeConsole.render`, so a
renderer that builds its own :class:`rich.text.Text` is covered too. Rich's own styling
(control segments) is not touched. Make every terminal console with :func:`make_console`.
HTML output keeps its own escaping and content security policy; this module is only for
terminals.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import IO, Any, Final

from rich.console import Console, ConsoleOptions, RenderableType
from rich.segment import Segment
from rich.text import Text

#: Bidirectional formatting characters (Unicode 15, "Trojan Source", CVE-2021-42574).
_BIDI: Final = (*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C)


def _escape(code: int) -> str:
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _table(keep: str) -> dict[int, str]:
    codes = [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0), *_BIDI]
    return {code: _escape(code) for code in codes if chr(code) not in keep}


#: Lines and tabs are kept in messages; everything else in C0, DEL, C1 and bidi is escaped.
_MESSAGE: Final = _table("\n\t")
#: For one-line fields (a table cell, a name): line breaks are escaped too.
_ONE_LINE: Final = _table("")


def sanitize(text: str, *, one_line: bool = False) -> str:
    """``text`` with control characters shown as visible escapes (``ESC`` -> ``\\x1b``).

    ``one_line`` escapes line breaks and tabs as well (for names shown in one cell).
    """
    return text.translate(_ONE_LINE if one_line else _MESSAGE)


class SafeConsole(Console):
    """A :class:`rich.console.Console` that sanitizes every string it renders."""

    def render_str(self, text: str, *args: Any, **kwargs: Any) -> Text:
        return super().render_str(sanitize(text), *args, **kwargs)

    def render(
        self, renderable: RenderableType, options: ConsoleOptions | None = None
    ) -> Iterable[Segment]:
        for segment in super().render(renderable, options):
            if segment.control is None and not segment.text.isprintable():
                yield Segment(sanitize(segment.text), segment.style)
            else:
                yield segment


def make_console(
    *, stderr: bool = False, width: int | None = None, file: IO[str] | None = None
) -> SafeConsole:
    """The console every command renders through: sanitized, no automatic highlighting, and
    a failed write to stdout/stderr is one line (:class:`~traceinspect.files.GuardedStream`)."""
    from traceinspect.files import GuardedStream

    if file is None:
        file = GuardedStream("stderr" if stderr else "stdout")  # type: ignore[assignment]
    return SafeConsole(stderr=stderr, width=width, file=file, highlight=False)
