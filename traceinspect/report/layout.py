"""Fitting text to a terminal: the width to render at, and names shortened to fit a cell.

The full names are always in ``--json`` and ``--csv``; the terminal shows what fits.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, TextIO

#: Width when the output is not a terminal and ``COLUMNS`` is not set: wide enough for the
#: medium regions layout, narrow enough for a CI log viewer.
PIPED_WIDTH: Final = 100
#: The narrowest width rendered; below it rich would fold every cell.
MIN_WIDTH: Final = 40
ELLIPSIS: Final = "…"

#: Decoration around a name (``## forward ##``, ``[param|cuda]``), dropped when space is short:
#: these characters at either end, and brackets around the whole name (not a ``[pid 111]``
#: prefix, which names a rank's process).
_DECORATION = re.compile(r"^[\s#*=:|-]+|[\s#*=:|-]+$")
_RETURN_TYPE = re.compile(r"^(?:void|int|float|double|bool|auto|unsigned)\s+")


def render_width(stream: TextIO, environ: dict[str, str] | None = None) -> int | None:
    """Columns to render at: None (let rich ask the terminal) on a TTY; piped, ``COLUMNS``
    when it is a positive number, else :data:`PIPED_WIDTH`."""
    isatty = getattr(stream, "isatty", None)
    if isatty is not None and isatty():
        return None
    env = os.environ if environ is None else environ
    columns = env.get("COLUMNS", "").strip()
    if columns.isdigit() and int(columns) > 0:
        return max(MIN_WIDTH, int(columns))
    return PIPED_WIDTH


def device_groups(devices: Sequence[tuple[object, str | None]]) -> list[str]:
    """The trace's devices as ``(id, name)`` pairs, as text: consecutive ids of one name in
    one item (``0–7: NVIDIA A100-SXM4-80GB``), a device whose name the trace leaves out
    ``name not recorded`` — an eight-GPU node's list fits a line."""
    runs: list[tuple[object, object, str]] = []  # first id, last id, name
    for device_id, name in devices:
        text = name or ""
        if runs:
            first, last, prev = runs[-1]
            if (
                prev == text
                and isinstance(last, int)
                and isinstance(device_id, int)
                and device_id == last + 1
            ):
                runs[-1] = (first, device_id, text)
                continue
        runs.append((device_id, device_id, text))
    out = []
    for first, last, text in runs:
        ids = str(first) if first == last else f"{first}–{last}"
        unnamed = "name not recorded" if first == last else "names not recorded"
        out.append(f"{ids}: {text or unnamed}")
    return out


def abbreviate(name: str, width: int, head: int | None = None) -> str:
    """``name`` in at most ``width`` characters, keeping what tells names apart.

    Names lose decoration (``## forward ##`` -> ``forward``), C++ names their return type,
    then their call arguments, then their template arguments (shown as ``(…)`` and ``<…>``);
    what is still too long keeps its head and tail around a ``…``
    (``decoder.layers.31.attention`` stays recognisable). A parenthesis after a space is
    not a call's arguments but what names the range (``FSDP::pre_forward
    (encoder.block.14.layer.1)``, one per layer): it stays, and the tail keeps it.
    ``head`` moves that last cut: the characters kept before the ``…`` (half the width by
    default; :func:`abbreviate_apart` moves it where names would otherwise read the same).
    """
    if width <= 0:
        return ""
    if len(name) <= width:
        return name
    short = _bare(name)
    for open_, close in (("(", ")"), ("<", ">")):
        if len(short) > width:
            short = _collapse_brackets(short, open_, close)
    if len(short) <= width:
        return short
    if width == 1:
        return ELLIPSIS
    head = width // 2 if head is None else max(0, min(head, width - 1))
    tail = width - 1 - head
    return short[:head] + ELLIPSIS + (short[-tail:] if tail else "")


def abbreviate_apart(
    names: Sequence[tuple[str, int]],
    shorten: Callable[[str, int, int | None], str] | None = None,
) -> list[str]:
    """Each ``(name, width)`` shortened as ``shorten(name, width, None)`` (by default
    :func:`abbreviate`), except where names that differ would read the same: each such group
    gets the cut that tells most of its names apart (``shorten(name, width, head)`` for every
    ``head`` from none kept to all but one, the default's nearest first on a tie).
    ``FSDP::pre_forward (encoder.block.14.layer.1)``, one per layer, all read ``FSDP:…er.1)``
    in 11 characters; cut at the head they read ``…14.layer.1)``."""
    cut = shorten or abbreviate
    short = {item: cut(item[0], item[1], None) for item in names}
    groups: dict[str, set[tuple[str, int]]] = {}
    for item, text in short.items():
        groups.setdefault(text, set()).add(item)
    for text, members in groups.items():
        distinct = len({name for name, _ in members})
        if distinct < 2:
            continue
        default = len(text) // 2
        heads = sorted(range(len(text)), key=lambda h: abs(h - default))
        best = max(heads, key=lambda h: len({cut(n, w, h) for n, w in members}))
        chosen = {item: cut(item[0], item[1], best) for item in members}
        if len(set(chosen.values())) < distinct:
            hinted = _hinted(members, chosen)
            if len(set(hinted.values())) > len(set(chosen.values())):
                chosen = hinted
        if len(set(chosen.values())) < distinct and shorten is None:
            middle = _middle_cut(members, chosen)
            if len(set(middle.values())) > len(set(chosen.values())):
                chosen = middle
        short.update(chosen)
    return [short[item] for item in names]


_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: What names a kernel's operation among its template arguments, best first: PyTorch's
#: functors and reduction ops (``MulFunctor``, ``CUDAFunctor_add``, ``MeanOps``), then
#: kernels named in a lambda's scope (``direct_copy_kernel_cuda``).
_HINT_KINDS = (re.compile(r"(Functor|Ops?)(_\w+)?$"), re.compile(r"(_cuda|_kernel|Kernel)$"))
_LEADING_NAMESPACES = re.compile(r"^(?:[\w ()]+::)+(?=[^:<]*<)")
#: Template arguments' words, numbers included (``(int)128``, ``float2``).
_WORD = re.compile(r"[A-Za-z0-9_]+")
#: The fewest characters of a word cut to fit (its tail, where generated kernel names differ).
_HINT_TAIL_MIN: Final = 6
#: A field (between underscores) longer than this is cut where names differ, not at its start.
_FIELD_MAX: Final = 12


def _hinted(
    members: set[tuple[str, int]], chosen: dict[tuple[str, int], str]
) -> dict[tuple[str, int], str]:
    """``chosen`` with the word that tells each name's operation apart put into its
    collapsed template arguments: ``elementwise_kernel<…MulFunctor…>(…)`` beside
    ``elementwise_kernel<…direct_copy_kernel_cuda…>(…)``, its namespaces dropped where the
    width needs it. A name with no such word, or no room, keeps what it had."""
    tokens = {item: _TOKEN.findall(item[0]) for item in members}
    inside = {item: _template_arguments(item[0]).strip() for item in members}
    arguments = {item: _WORD.findall(inside[item]) for item in members}
    out = dict(chosen)
    for item, words in tokens.items():
        text = chosen[item]
        if "<…>" not in text:
            continue
        others = [set(tokens[o]) for o in members if o[0] != item[0]]
        hint = _operation_word(words, others)
        if hint is None:
            apart = [set(arguments[o]) for o in members if o[0] != item[0]]
            hint = _differing_word(arguments[item], apart)
        if hint is None:
            continue
        before = "" if inside[item].startswith(hint) else ELLIPSIS
        after = "" if inside[item].endswith(hint) else ELLIPSIS
        hinted = text.replace("<…>", f"<{before}{hint}{after}>", 1)
        if len(hinted) > item[1]:
            text = _LEADING_NAMESPACES.sub("", text, count=1)
            room = item[1] - len(text) + 1  # what may stand between the text's "<" and ">"
            if room >= len(before + hint + after):
                hinted = text.replace("<…>", f"<{before}{hint}{after}>", 1)
            elif room >= _HINT_TAIL_MIN + 1 + len(after):
                hinted = text.replace("<…>", f"<…{hint[-(room - 1 - len(after)) :]}{after}>", 1)
        if len(hinted) <= item[1]:
            out[item] = hinted
    return out


def _middle_cut(
    members: set[tuple[str, int]], chosen: dict[tuple[str, int], str]
) -> dict[tuple[str, int], str]:
    """``chosen`` with names that differ only inside (no brackets to hint in: generated GEMM
    names) cut at both ends around the field where each first differs from the name nearest
    it: ``Cijk_Alik_Blj…MT16x16x256_MI16x16x1_SN_…WS64_WG16_4_4``. A name with too little
    room, or whose difference lies within its head or tail, keeps what it had."""
    texts = {item: _bare(item[0]) for item in members}
    out = dict(chosen)
    for item in members:
        text, width = texts[item], item[1]
        if "<" in text or "(" in text:
            continue
        others = [texts[o] for o in members if o[0] != item[0]]
        at = max(len(os.path.commonprefix([text, o])) for o in others)
        start = text.rfind("_", 0, at) + 1
        if at - start > _FIELD_MAX:
            start = at
        head = tail = width // 4
        middle = width - head - tail - 2
        if middle < _HINT_TAIL_MIN or start <= head or start + middle >= len(text) - tail:
            continue
        out[item] = text[:head] + ELLIPSIS + text[start : start + middle] + ELLIPSIS + text[-tail:]
    return out


def _differing_word(words: list[str], others: list[set[str]]) -> str | None:
    """Where no word names an operation: the first of a name's template arguments that no
    other name has, else one that some other name lacks (``cutlass_80_tensorop_s1688gemm_
    256x64_16x4_nn_align4`` beside ``…_nt_align4``; ``32`` beside ``128``)."""
    for everywhere in (all, any):
        found = [w for w in words if everywhere(w not in o for o in others)]
        if found:
            return found[0]
    return None


def _template_arguments(name: str) -> str:
    """The text inside the first outermost ``<…>`` of ``name`` (after its return type), the
    span a short cell collapses; empty where there is none or it is unbalanced."""
    text = _RETURN_TYPE.sub("", name)
    start = text.find("<")
    if start < 0:
        return ""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "<":
            depth += 1
        elif text[i] == ">":
            depth -= 1
            if depth == 0:
                return text[start + 1 : i]
    return ""


def _operation_word(words: list[str], others: list[set[str]]) -> str | None:
    """The last word of ``words`` that names an operation (:data:`_HINT_KINDS`, in order)
    and that no other name has; else one that some other name lacks."""
    for everywhere in (all, any):
        for kind in _HINT_KINDS:
            found = [w for w in words if kind.search(w) and everywhere(w not in o for o in others)]
            if found:
                return found[-1]
    return None


def _bare(name: str) -> str:
    """``name`` as a cell shortens it: no return type, no decoration (itself if nothing is
    left)."""
    return _undecorated(_RETURN_TYPE.sub("", name)) or name


def _undecorated(name: str) -> str:
    """``name`` without :data:`_DECORATION` and without brackets enclosing all of it."""
    short = _DECORATION.sub("", name)
    while short.startswith("[") and short.find("]") == len(short) - 1:
        short = _DECORATION.sub("", short[1:-1])
    return short


def _collapse_brackets(text: str, open_: str, close: str) -> str:
    """Every outermost ``open_ … close`` span replaced by ``open_ + "…" + close``, except one
    that follows a space (words, not arguments: kept whole); text with unbalanced brackets
    is returned as it is."""
    out: list[str] = []
    depth = 0
    kept = False  # inside a span kept whole
    for i, char in enumerate(text):
        if char == open_:
            if depth == 0:
                kept = i > 0 and text[i - 1] == " "
                out.append(open_ if kept else open_ + ELLIPSIS)
            elif kept:
                out.append(char)
            depth += 1
        elif kept and depth > 0:
            out.append(char)
            if char == close:
                depth -= 1
        elif char == close and depth > 0:
            depth -= 1
            if depth == 0:
                out.append(close)
        elif depth == 0:
            out.append(char)
    return text if depth else "".join(out)


def region_label(region: Mapping[str, Any]) -> str:
    """A region's name (of the JSON report), with its process where the trace's regions span
    several: two processes' regions of one name read apart."""
    return process_prefix(region) + str(region["name"])


def process_prefix(region: Mapping[str, Any]) -> str:
    """``[pid N] `` where the trace's regions span several processes, else nothing."""
    process = region.get("process")
    return "" if process is None else f"[pid {process}] "
