"""Chunked decoding of a Chrome-trace JSON file's ``traceEvents`` array.

The file is streamed (gunzipped block by block) and the array decoded in chunks of about
``chunk_bytes``, so the decoded events held at once do not grow with the file. msgspec
decodes only the fields the Kineto reader uses (unknown keys are skipped in C); ``ts`` and
``dur`` arrive as ``int`` or, for fractional values, as their exact JSON text
(``float_hook=str``), never as float64.

Chunk boundaries are found without a JSON scanner: a candidate cut after ``}`` followed by
``,`` is accepted only if ``[`` + prefix + ``]`` decodes. A cut inside a string or a nested
value leaves an unterminated string or unbalanced brackets, so a successful decode proves
the cut sits between two top-level events. When no cut in a chunk's window decodes (one
event longer than the window, or strings full of ``},``), the window is doubled: the text
is never decoded whole unless the file ends first.

Memory is bounded by the events kept, never by the bytes read (hostile files included):

* a block read that is whitespace only (a gzip bomb of blanks between events) is kept as
  one blank, so whitespace never accumulates;
* the window never grows beyond :data:`MAX_EVENT_BYTES`: an event, the keys before
  ``traceEvents`` or any stretch of text without an event boundary larger than that is
  refused with one line;
* before the window grows (and every :data:`CHECK_EVERY_BYTES` of squeezed input) the text
  held is checked for syntax, so invalid bytes (a NUL, junk before ``traceEvents``) fail at
  their position instead of being read to the end of the file.

Python frame names that PyTorch's profiler wrote unescaped (``with_stack=True``: source text
with quotes, Windows paths, inductor's generated code, bad UTF-8; pytorch/pytorch#113001,
#98432, #130622, #136180) are repaired where a syntax or UTF-8 error falls inside one: the
name runs from its opening quote to the ``", "pid":`` Kineto writes after every frame name,
and is escaped again (:meth:`EventChunks._repair_frame`). :attr:`EventChunks.repaired`
counts them; any other invalid text still fails at its position.
"""

from __future__ import annotations

import gzip
import re
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any, Final

import msgspec

from traceinspect.errors import TraceFormatError
from traceinspect.parse import sniff

#: Decodes tried per chunk, latest ``},`` first, before the chunk is widened (a ``},``
#: inside a string, e.g. a kernel name with ``{lambda()#1},``, fails to decode).
MAX_CUT_TRIES: Final = 8
MiB: Final = 1 << 20
#: Longest stretch of text held at once without an event boundary (one event, the keys
#: before traceEvents): real events are below 1 MiB; beyond this the file is refused.
MAX_EVENT_BYTES: Final = 64 * MiB
#: Longest Python frame name repaired (see the module docstring).
MAX_NAME_BYTES: Final = 64 * 1024
#: Whitespace read (and dropped) between two syntax checks of the text held.
CHECK_EVERY_BYTES: Final = 16 * MiB

# --------------------------------------------------------------------------------------
# What is decoded. Every field has a default: absent keys are fine, wrong types are not.


class EventArgs(msgspec.Struct, gc=False):
    # Ids and numbers may also be null (read as unknown, -1); str where exporters write one.
    external_id: int | None = msgspec.field(name="External id", default=-1)
    external_id_2021: int | None = msgspec.field(name="external id", default=-1)
    correlation: int | None = -1
    device: int | str | None = -1
    stream: int | str | None = -1
    bytes: int | str | None = -1  # ROCm runtime calls write it as a string
    grid: msgspec.Raw = msgspec.Raw()
    block: msgspec.Raw = msgspec.Raw()
    registers: int | None = msgspec.field(name="registers per thread", default=-1)
    shared_memory: int | None = msgspec.field(name="shared memory", default=-1)
    graph_id: int | None = msgspec.field(name="graph id", default=-1)
    graph_node_id: int | None = msgspec.field(name="graph node id", default=-1)
    cuda_sync_kind: str | None = ""
    wait_on_stream: int | None = -1
    event_id: int | None = msgspec.field(name="wait_on_cuda_event_id", default=-1)
    record_correlation: int | None = msgspec.field(
        name="wait_on_cuda_event_record_corr_id", default=-1
    )
    input_dims: msgspec.Raw = msgspec.field(name="Input Dims", default=msgspec.Raw())
    input_dims_lower: msgspec.Raw = msgspec.field(name="Input dims", default=msgspec.Raw())


class Event(msgspec.Struct, gc=False):
    ph: str | None = ""
    cat: str | None = ""
    name: str | None = ""
    pid: int | str | None = -1
    tid: int | str | None = -1
    # int, or a float's JSON text (the events decoders' float_hook=str): see exact_time.us_to_ns.
    ts: Any = None
    dur: Any = None
    id: int | str | None = -1
    args: EventArgs | None = None


class TopLevel(msgspec.Struct):
    """Top-level keys (before and after ``traceEvents``); loosely typed, checked later."""

    traceEvents: list[Event] | None = None  # noqa: N815 - the JSON key
    schemaVersion: Any = None  # noqa: N815
    deviceProperties: Any = None  # noqa: N815
    distributedInfo: Any = None  # noqa: N815
    baseTimeNanoseconds: Any = None  # noqa: N815
    displayTimeUnit: Any = None  # noqa: N815
    traceName: Any = None  # noqa: N815
    trace_id: Any = None
    cupti_version: Any = None
    cuda_runtime_version: Any = None
    cuda_driver_version: Any = None
    hip_runtime_version: Any = None
    hip_driver_version: Any = None
    roctracer_version: Any = None


# float_hook=str: untyped floats (``ts``, ``dur``) arrive as their exact JSON text. The keys
# before traceEvents are decoded without it; the few after it (traceName, ...) with it.
_EVENTS_DECODER: Final = msgspec.json.Decoder(list[Event], float_hook=str)
_TAIL_DECODER: Final = msgspec.json.Decoder(TopLevel, float_hook=str)
_META_DECODER: Final = msgspec.json.Decoder(TopLevel)
# Syntax-only checks of a prefix (values skipped, not built): truncation is fine, the
# first invalid byte is reported.
_EVENTS_SYNTAX: Final = msgspec.json.Decoder(list[msgspec.Raw])
_OBJECT_SYNTAX: Final = msgspec.json.Decoder(dict[str, msgspec.Raw])


# --------------------------------------------------------------------------------------
# Streaming the traceEvents array in chunks.

#: msgspec reports bad UTF-8 inside strings as UnicodeDecodeError, the rest as DecodeError.
_DECODE_ERRORS: Final = (msgspec.DecodeError, UnicodeDecodeError)
_EVENTS_KEY: Final = re.compile(rb'"traceEvents"\s*:\s*\[')
_WHITESPACE: Final = b" \t\r\n"
_OPEN, _CLOSE, _COMMA = ord("["), ord("]"), ord(",")
_UTF8_BOM: Final = b"\xef\xbb\xbf"
_BYTE_POSITION: Final = re.compile(r"\(byte (\d+)\)")
#: Said after a syntax error inside a Python frame event: the profiler writes some frame
#: names (source text, inductor's generated code) without escaping their quotes or control
#: characters (pytorch/pytorch#113001, #130622, #136180).
_PYTHON_FRAME_HINT: Final = (
    ", inside a python_function event: PyTorch's profiler writes some Python frame names "
    "unescaped (pytorch/pytorch#113001); record without with_stack "
    "(`traceinspect profile --no-stacks`)"
)
_PYTHON_FRAME_CAT: Final = re.compile(rb'"cat":\s*"python_function"')
#: How far before an error its event's start is looked for.
_HINT_LOOKBACK: Final = 64 * 1024
_EVENT_INDEX: Final = re.compile(r"\$(?:\.traceEvents)?\[(\d+)\]")
#: A Python frame's name: after its key, up to the ``", "pid":`` Kineto writes next.
_NAME_KEY: Final = re.compile(rb'"name":\s*"')
_NAME_END: Final = re.compile(rb'"\s*,\s*"pid"\s*:')
_STRING_SYNTAX: Final = msgspec.json.Decoder(str)
_NOT_BLANK: Final = re.compile(rb"[^ \t\r\n]")


class Source:
    """The trace's JSON text, read block by block (gunzipped on the fly)."""

    def __init__(self, path: Path, read_bytes: int) -> None:
        self.path = path
        self.read_bytes = read_bytes  # asked of the (possibly gunzipping) file per read
        kind = sniff(path)
        if kind not in ("json", "json.gz"):
            raise TraceFormatError(path, f"not a PyTorch-profiler JSON trace ({kind} file)")
        self._file: gzip.GzipFile | IO[bytes]
        if kind == "json.gz":
            self._file = gzip.GzipFile(path, "rb")
        else:
            self._file = open(path, "rb")  # noqa: SIM115 - closed by close()
        self.eof = False

    def read(self) -> bytes:
        try:
            block = self._file.read(self.read_bytes)
        except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
            raise TraceFormatError(self.path, f"truncated or corrupt gzip ({exc})") from None
        except OSError as exc:
            raise TraceFormatError(self.path, f"cannot read ({exc})") from None
        if not block:
            self.eof = True
        return block

    def close(self) -> None:
        self._file.close()


def _bad_utf8(text: bytes | bytearray) -> int | None:
    """Index of the first byte of ``text`` that is not UTF-8, short of a character cut at
    its end; None where there is none."""
    try:
        str(text, "utf-8")
    except UnicodeDecodeError as exc:
        return None if exc.reason == "unexpected end of data" else exc.start
    return None


def _is_blank(block: bytes) -> bool:
    """Only JSON whitespace (``isspace`` also takes \\v and \\f, which JSON does not)."""
    return block.isspace() and b"\x0b" not in block and b"\x0c" not in block


class _Buffer:
    """Unconsumed text plus its offset in the file, for error positions.

    ``data`` is a bytearray so a chunk can be decoded in place (its first and last bytes
    swapped for ``[`` and ``]``) without copying. Decoded :class:`msgspec.Raw` values point
    into it, so it is never resized after a decode: :meth:`consume` starts a new one.
    """

    def __init__(self, source: Source) -> None:
        self.source = source
        self.data = bytearray()
        self.offset = 0  # file offset of data[0]
        self.check: Callable[[], None] = lambda: None  # syntax check of the text held
        self.squeezed = 0  # blank bytes dropped since the last check
        #: (index in data, bytes added) per text replaced: file offsets stay exact
        self.replaced: list[tuple[int, int]] = []

    def fill(self, size: int) -> None:
        """Read until ``data`` holds ``size`` bytes or the file ends. A block that is all
        blank (the bulk of a whitespace bomb) is kept as one blank."""
        source = self.source
        while len(self.data) < size and not source.eof:
            block = source.read()
            if len(block) > 1 and _is_blank(block):
                self.data += b" "
                self.squeezed += len(block) - 1
                if self.squeezed >= CHECK_EVERY_BYTES:
                    self.squeezed = 0
                    self.check()
            else:
                self.data += block

    def fill_all(self) -> None:
        self.fill(2**62)

    def consume(self, count: int) -> None:
        self.data = self.data[count:]
        self.offset += count
        if self.replaced:
            self.offset -= sum(added for at, added in self.replaced if at < count)
            self.replaced = [(at - count, added) for at, added in self.replaced if at >= count]

    def file_byte(self, byte: int) -> int:
        """The file offset of what sits at ``byte`` (``offset`` + index in ``data``) once the
        text replaced before it is taken back out."""
        index = byte - self.offset
        return byte - sum(added for at, added in self.replaced if at < index)

    def replace(self, start: int, end: int, text: bytes) -> None:
        """Put ``text`` in place of ``data[start:end]`` (never while a decode's values point
        into ``data``)."""
        self.data[start:end] = text
        self.replaced.append((start, len(text) - (end - start)))


class EventChunks:
    """Iterate over decoded ``traceEvents`` chunks; :attr:`meta` holds the top-level keys
    (complete once iteration ends)."""

    def __init__(self, source: Source, chunk_bytes: int) -> None:
        self.path = source.path
        self.chunk_bytes = chunk_bytes  # JSON bytes decoded per step, at least
        self.buffer = _Buffer(source)
        self.meta = TopLevel()
        self.events_before = 0  # events yielded so far, for error messages
        self.repaired = 0  # Python frame names escaped again (see the module docstring)
        self._top_level_array = False

    def _fail(self, exc: Exception, byte_shift: int) -> TraceFormatError:
        """A one-line problem with positions made absolute in the file / event array."""
        if isinstance(exc, UnicodeDecodeError):
            return TraceFormatError(self.path, f"text is not valid UTF-8 ({exc.reason})")
        message = str(exc)

        def _byte(m: re.Match[str]) -> str:
            return f"(byte {max(0, self.buffer.file_byte(int(m.group(1)) + byte_shift))})"

        def _index(m: re.Match[str]) -> str:
            return f"traceEvents[{int(m.group(1)) + self.events_before}]"

        position = _BYTE_POSITION.search(message)
        message = _EVENT_INDEX.sub(_index, _BYTE_POSITION.sub(_byte, message))
        if "truncated" in message.lower():
            message = f"truncated JSON ({message})"
        message = message.splitlines()[0]
        if position is not None and self._in_python_frame(int(position.group(1)) + byte_shift):
            message += _PYTHON_FRAME_HINT
        return TraceFormatError(self.path, message)

    def _in_python_frame(self, byte: int) -> bool:
        """Whether file byte ``byte`` lies in a Kineto ``python_function`` event (one of
        the Python frames ``with_stack`` records), as far as the text still held shows."""
        at = byte - self.buffer.offset
        return 0 <= at <= len(self.buffer.data) and self._python_frame_start(at) >= 0

    def _python_frame_start(self, at: int) -> int:
        """Index in the buffer of the ``"ph":`` that opens the ``python_function`` event
        holding ``data[at]``; -1 where the event there is another kind or none is found."""
        data = self.buffer.data
        event = data.rfind(b'"ph":', max(0, at - _HINT_LOOKBACK), at)  # Kineto starts
        if event < 0 or _PYTHON_FRAME_CAT.search(data, event, at) is None:  # with the phase
            return -1
        return event

    def _decode_meta(self, text: bytes | bytearray, byte_shift: int) -> TopLevel:
        try:
            return _TAIL_DECODER.decode(text)
        except _DECODE_ERRORS as exc:
            raise self._fail(exc, byte_shift) from None

    def _start(self) -> None:
        """Position the buffer at the first event; decode the keys before ``traceEvents``."""
        buf = self.buffer
        buf.fill(self.chunk_bytes)
        if buf.data.startswith(_UTF8_BOM):
            buf.consume(len(_UTF8_BOM))
        head = buf.data.lstrip(_WHITESPACE)
        if head.startswith(b"["):  # the bare-array flavour of the Chrome trace format
            self._top_level_array = True
            buf.consume(len(buf.data) - len(head))
            buf.check = self._check_events
            return
        if not head.startswith(b"{"):
            raise TraceFormatError(self.path, "not a JSON object: expected a Chrome trace")
        buf.check = self._check_head
        searched = 0
        while True:
            for match in _EVENTS_KEY.finditer(buf.data, searched):
                prefix = buf.data[: match.end() - 1]
                try:
                    self.meta = _META_DECODER.decode(prefix + b"null}")
                except msgspec.ValidationError as exc:
                    raise self._fail(exc, 0) from None
                except _DECODE_ERRORS:
                    continue  # the key text sat inside a string or a nested object
                buf.consume(match.end() - 1)  # keep the "[": data[0] opens the array
                buf.check = self._check_events
                return
            if buf.source.eof:
                break
            self._check_head()
            if len(buf.data) > MAX_EVENT_BYTES:
                raise TraceFormatError(
                    self.path,
                    f"no traceEvents array in the first {MAX_EVENT_BYTES // MiB} MiB "
                    "(a value before it is larger than this reader holds)",
                )
            searched = max(0, len(buf.data) - 64)
            grown = max(len(buf.data) + self.chunk_bytes, 2 * len(buf.data))
            buf.fill(min(grown, MAX_EVENT_BYTES + 1))
        meta = self._decode_meta(buf.data, 0)  # raises the real syntax error, if any
        if meta.traceEvents is None:
            raise TraceFormatError(self.path, "JSON object without a traceEvents array")
        self.meta = meta
        buf.consume(len(buf.data))
        self._pending_tail: list[Event] | None = meta.traceEvents

    def _syntax_error(
        self, decoder: msgspec.json.Decoder[Any], text: bytes | bytearray | memoryview
    ) -> msgspec.DecodeError | None:
        """The first syntax error in ``text`` (a prefix: truncation is fine), if any."""
        try:
            decoder.decode(text)
        except msgspec.DecodeError as exc:
            message = str(exc)
            if "truncated" in message:
                return None
            position = _BYTE_POSITION.search(message)
            if position is not None and int(position.group(1)) >= len(text) - 4:
                return None  # a multi-byte character cut at the end of the prefix
            return exc.with_traceback(None)  # its frames would hold views of the text
        except (msgspec.ValidationError, UnicodeDecodeError):
            return None  # types and text are checked by the real decode
        return None

    def _check_syntax(
        self, decoder: msgspec.json.Decoder[Any], text: bytes | bytearray | memoryview, shift: int
    ) -> None:
        """Raise the first syntax error in ``text`` (a prefix: truncation is fine)."""
        exc = self._syntax_error(decoder, text)
        if exc is not None:
            raise self._fail(exc, shift)

    def _check_head(self) -> None:
        """The keys before traceEvents: junk fails here, not after reading the whole file."""
        self._check_syntax(_OBJECT_SYNTAX, self.buffer.data, 0)

    def _check_events(self) -> None:
        """The events held: the first syntax error, or bad UTF-8 short of the end, fails at
        its position, unless it lies in a Python frame's name, which is repaired."""
        buf = self.buffer
        while buf.data:
            data = buf.data
            saved = data[0]
            data[0] = _OPEN  # the "[" or "," before the next event
            with memoryview(data) as view, view[:MAX_EVENT_BYTES] as head:
                try:
                    exc = self._syntax_error(_EVENTS_SYNTAX, head)
                finally:
                    data[0] = saved
            if exc is not None:
                if not self._repair_error(exc):
                    raise self._fail(exc, buf.offset)
                continue
            bad = _bad_utf8(data[:MAX_EVENT_BYTES])
            if bad is None:
                return
            if not self._repair_frame(bad):
                raise TraceFormatError(
                    self.path, f"text is not valid UTF-8 (byte {buf.offset + bad})"
                )

    def _repair_error(self, exc: Exception, lead: int = 0) -> bool:
        """Repair the Python frame name a decode error of ``lead`` bytes + the buffer's text
        falls in (:meth:`_repair_frame`): at the error's byte, or for bad UTF-8, which
        msgspec reports without one, at the first byte that is not UTF-8."""
        position = _BYTE_POSITION.search(str(exc))
        at = int(position.group(1)) - lead if position else _bad_utf8(self.buffer.data)
        return at is not None and self._repair_frame(at)

    def _repair_frame(self, at: int) -> bool:
        """Escape again the name of the Python frame event holding ``data[at]`` (where a
        decode failed); False, changing nothing, where ``at`` is not inside such a name or
        the name is valid JSON text as it stands.

        Kineto writes a frame as ``"ph": "X", "cat": "python_function", "name": "…",
        "pid": …``: the name's text is what lies between its opening quote and the first
        ``", "pid":`` after it. Its bytes are read as the raw name (bad UTF-8 replaced by
        U+FFFD) and written back as a JSON string's content."""
        buf = self.buffer
        data = buf.data
        event = self._python_frame_start(at)
        if event < 0:
            return False
        key = _NAME_KEY.search(data, event, at)
        if key is None:
            return False
        start = key.end()
        end = _NAME_END.search(data, start, start + MAX_NAME_BYTES)
        if end is None and not buf.source.eof:
            buf.fill(start + MAX_NAME_BYTES)
            data = buf.data
            end = _NAME_END.search(data, start, start + MAX_NAME_BYTES)
        # The error may surface past the name's end (a trailing backslash escapes the
        # closing quote), but not before its start: then it is not the name's.
        if end is None or at < start:
            return False
        raw = bytes(data[start : end.start()])
        try:
            _STRING_SYNTAX.decode(b'"' + raw + b'"')
        except (msgspec.DecodeError, UnicodeDecodeError):
            pass
        else:
            return False  # valid as it stands: the error is not the name's
        name = raw.decode("utf-8", errors="replace")
        buf.replace(start, end.start(), msgspec.json.encode(name)[1:-1])
        self.repaired += 1
        return True

    def _cut_and_decode(self, window: int) -> list[Event] | None:
        """Decode a prefix of whole events from the first ``window`` buffered bytes, or
        None if no cut there worked.

        ``data[0]`` is the ``[`` or ``,`` before the next event. A candidate cut is a ``}``
        whose next non-blank byte is ``,``; the span ``data[0 : brace + 2]`` is decoded in
        place with its ends set to ``[`` and ``]``. Braces followed by anything else (kernel
        names are full of ``{lambda()#1}``) are skipped without a decode.
        """
        data = self.buffer.data
        end = min(len(data), window)
        data[0] = _OPEN
        view = memoryview(data)
        try:
            tries = 0
            while tries < MAX_CUT_TRIES:
                brace = data.rfind(b"}", 1, end)
                if brace < 0:
                    return None
                next_text = _NOT_BLANK.search(data, brace + 1)
                after = len(data) if next_text is None else next_text.start()
                end = brace
                if after >= len(data) or data[after] != _COMMA:
                    continue
                tries += 1
                saved = data[brace + 1]
                data[brace + 1] = _CLOSE
                try:
                    events = _EVENTS_DECODER.decode(view[: brace + 2])
                except msgspec.ValidationError as exc:
                    raise self._fail(exc, self.buffer.offset) from None
                except _DECODE_ERRORS:
                    data[brace + 1] = saved
                    continue  # not a top-level boundary (or bad text: the tail decode says)
                self.buffer.consume(after)  # data[0] is now the "," before the next event
                return events
            return None
        finally:
            view.release()

    def _decode_tail(self) -> list[Event]:
        buf = self.buffer
        buf.fill_all()
        buf.data[0] = _OPEN  # was the "[" or the "," before the first remaining event
        opening = b"" if self._top_level_array else b'{"traceEvents":'
        while True:
            text = opening + buf.data
            try:
                if self._top_level_array:
                    return _EVENTS_DECODER.decode(text)
                tail = _TAIL_DECODER.decode(text)
                break
            except _DECODE_ERRORS as exc:
                if not self._repair_error(exc, len(opening)):
                    raise self._fail(exc, buf.offset - len(opening)) from None
        for name in TopLevel.__struct_fields__:
            value = getattr(tail, name)
            if value is not None and name != "traceEvents":
                setattr(self.meta, name, value)
        return tail.traceEvents or []

    def __iter__(self) -> Iterator[list[Event]]:
        self._pending_tail = None
        self._start()
        if self._pending_tail is not None:
            yield self._pending_tail
            return
        buf = self.buffer
        window = self.chunk_bytes
        while True:
            buf.fill(window + 1)
            if buf.source.eof and len(buf.data) <= window:
                break
            events = self._cut_and_decode(window)
            if events is None:  # no event ends in the window: widen it, never decode all
                self._check_events()
                window *= 2
                if window > MAX_EVENT_BYTES:
                    raise TraceFormatError(
                        self.path,
                        f"no event ends within {MAX_EVENT_BYTES // MiB} MiB after byte "
                        f"{buf.offset} (an event larger than this reader holds)",
                    )
                continue
            window = self.chunk_bytes
            yield events
            self.events_before += len(events)
            del events  # the consumer is done with the chunk: free it before the next
        yield self._decode_tail()
