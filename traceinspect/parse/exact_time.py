"""Kineto's ``ts``/``dur`` (µs, up to 3 decimals, up to 19 significant digits) to exact
integer nanoseconds: vectorized decimal parsing that never passes a value through float64.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from itertools import repeat
from operator import itemgetter
from typing import Any, Final, TypeVar

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from numpy.typing import NDArray

#: Kineto's ``ts``/``dur`` unit is the microsecond; the model's is the nanosecond.
NS_PER_US: Final = 1000

_T = TypeVar("_T")

_INT64_MIN: Final = -(2**63)
_UINT64_SPAN: Final = 2**64

def _pick(items: Sequence[_T], positions: NDArray[np.intp]) -> list[_T]:
    """``items`` at ``positions`` (C speed: itemgetter builds the tuple)."""
    if len(positions) == 1:
        return [items[int(positions[0])]]
    return list(itemgetter(*positions.tolist())(items))



_DIGITS_MAX_FAST: Final = 16  # integer digits of µs handled in uint64 (< 1e19 ns)
_FRACTION_DIGITS: Final = 3  # µs with 3 decimals is integer ns


def us_to_ns(values: Sequence[Any]) -> tuple[NDArray[np.int64], NDArray[np.bool_]]:
    """Exact integer ns from kineto ``ts``/``dur`` values in µs.

    Each value is an ``int`` (integer µs), a ``str`` holding the JSON text of a fractional
    number (the events decoder hands floats over as their text, never as float64), or
    ``None`` (field absent: ``present`` is False and the value 0). Raises ``ValueError``
    for anything else or for a time outside int64 ns.

    >>> us_to_ns([1712195495519695, "1712195495519695.8", None, "12.345"])[0].tolist()
    [1712195495519695000, 1712195495519695800, 0, 12345]
    """
    n = len(values)
    try:  # all integers: the common case of integer-µs traces
        micros = np.fromiter(values, dtype=np.int64, count=n)
    except (TypeError, ValueError, OverflowError):
        pass
    else:
        _check_us_range(micros)
        return micros * NS_PER_US, np.ones(n, dtype=bool)
    try:  # all texts: fractional-µs traces
        joined = "".join(values)
    except TypeError:
        pass
    else:
        return _decimal_texts_to_ns(values, joined), np.ones(n, dtype=bool)
    kinds = np.fromiter(
        map(_VALUE_KIND.get, map(type, values), repeat(_KIND_OTHER)), dtype=np.int8, count=n
    )
    if (kinds == _KIND_OTHER).any():
        bad = values[int(np.argmax(kinds == _KIND_OTHER))]
        raise ValueError(f"not a number: {str(bad)[:40]!r}")
    result = np.zeros(n, dtype=np.int64)
    text_at = np.flatnonzero(kinds == _KIND_TEXT)
    if text_at.size:
        texts = _pick(values, text_at)
        result[text_at] = _decimal_texts_to_ns(texts, "".join(texts))
    int_at = np.flatnonzero(kinds == _KIND_INT)
    if int_at.size:
        try:
            micros = np.fromiter(_pick(values, int_at), dtype=np.int64, count=int_at.size)
        except OverflowError:
            raise ValueError("time out of range of int64 ns") from None
        _check_us_range(micros)
        result[int_at] = micros * NS_PER_US
    return result, kinds != _KIND_ABSENT


_KIND_ABSENT, _KIND_INT, _KIND_TEXT, _KIND_OTHER = 0, 1, 2, 3
_VALUE_KIND: Final[Mapping[type, int]] = {type(None): _KIND_ABSENT, int: _KIND_INT, str: _KIND_TEXT}


def _check_us_range(micros: NDArray[np.int64]) -> None:
    if micros.size and (int(micros.max()) > _MAX_US or int(micros.min()) < -_MAX_US):
        raise ValueError("time out of range of int64 ns")


def _decimal_texts_to_ns(texts: Sequence[str], joined: str) -> NDArray[np.int64]:
    """Exact ns of decimal µs texts (``"4458676522690.655"``), vectorized.

    Texts of one length and dot position form a digit matrix whose product with powers of
    ten is the value in ns. Anything else (exponent, sign, more than 3 decimals) goes
    through :class:`decimal.Decimal`, rounding to the nearest ns.
    """
    n = len(texts)
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=n)
    try:
        text = np.frombuffer(joined.encode("ascii"), dtype=np.uint8)
    except UnicodeEncodeError:
        raise ValueError("not a number: non-ASCII text") from None
    starts = np.cumsum(lengths) - lengths
    result = np.zeros(n, dtype=np.int64)
    slow = lengths == 0
    order = np.argsort(lengths, kind="stable")
    sorted_lengths = lengths[order]
    bounds = np.flatnonzero(np.diff(sorted_lengths)) + 1
    for rows in np.split(order, bounds):
        length = int(lengths[rows[0]])
        if length == 0 or length > _DIGITS_MAX_FAST + 1 + _FRACTION_DIGITS:
            slow[rows] = True
            continue
        chars = sliding_window_view(text, length)[starts[rows]]
        digits = chars - np.uint8(_ZERO)  # "." wraps to 254
        non_digit = digits > 9
        non_digits = non_digit.sum(axis=1)
        dot_column = np.where(non_digits > 0, non_digit.argmax(axis=1), length)
        at_dot = chars[np.arange(len(rows)), np.minimum(dot_column, length - 1)] == _DOT
        plain = (non_digits == 0) | ((non_digits == 1) & at_dot)
        slow[rows[~plain]] = True
        dots_seen = np.bincount(dot_column[plain], minlength=length + 1)
        for dot in np.flatnonzero(dots_seen).tolist():
            in_group = plain & (dot_column == dot)
            fraction_digits = max(0, length - dot - 1)
            if dot == 0 or dot > _DIGITS_MAX_FAST or fraction_digits > _FRACTION_DIGITS:
                slow[rows[in_group]] = True
                continue
            values = np.zeros(int(dots_seen[dot]), dtype=np.uint64)
            group_digits = digits[in_group]
            for column, weight in enumerate(_weights(length, dot).tolist()):
                if weight:
                    values += group_digits[:, column] * np.uint64(weight)
            too_big = values > np.uint64(2**63 - 1)
            group = rows[in_group]
            slow[group[too_big]] = True
            result[group[~too_big]] = values[~too_big].astype(np.int64)
    for i in np.flatnonzero(slow).tolist():
        result[i] = _decimal_us_to_ns(texts[i])
    return result


#: Largest |µs| whose ns fits int64.
_MAX_US: Final = (2**63 - 1) // NS_PER_US
_DOT: Final = ord(".")
_MAX_US_EXPONENT: Final = 16  # 1e16 µs = 1e19 ns is past int64 already
_ZERO: Final = ord("0")


@lru_cache(maxsize=512)
def _weights(length: int, dot: int) -> NDArray[np.uint64]:
    """ns per unit of each character of a ``length``-char µs decimal with its dot at
    ``dot`` (``dot == length``: no dot). The dot itself weighs 0."""
    weights = np.zeros(length, dtype=np.uint64)
    for column in range(length):
        if column < dot:
            weights[column] = 10 ** (dot - column - 1 + _FRACTION_DIGITS)
        elif column > dot:
            weights[column] = 10 ** (_FRACTION_DIGITS - (column - dot))
    return weights


def _decimal_us_to_ns(text: str) -> int:
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise ValueError(f"not a number: {text[:40]!r}") from None
    if not value.is_finite():
        raise ValueError(f"not a finite number: {text[:40]!r}")
    if value and value.adjusted() > _MAX_US_EXPONENT:  # before int(): 1e999999 is huge
        raise ValueError(f"time out of range: {text[:40]!r}")
    ns = int((value * NS_PER_US).to_integral_value())
    if not _INT64_MIN <= ns < 2**63:
        raise ValueError(f"time out of range: {text[:40]!r}")
    return ns


# --------------------------------------------------------------------------------------
# Integer columns from Python values (ids above int64 wrap, strings are parsed).


def _wrap_int64(value: int) -> int:
    """An integer of any size as the int64 with the same low 64 bits (ids stay distinct)."""
    return (value - _INT64_MIN) % _UINT64_SPAN + _INT64_MIN


_TRAILING_INT: Final = re.compile(r"(-?\d+)\s*$")


@lru_cache(maxsize=4096)
def _str_to_id(text: str) -> int:
    """``"25738"`` -> 25738, ``"stream 7"`` -> 7, ``"0x1f"`` -> 31, others -> -1."""
    stripped = text.strip()
    if stripped.lower().startswith("0x"):
        try:
            return _wrap_int64(int(stripped, 16))
        except ValueError:
            return -1
    match = _TRAILING_INT.search(stripped)
    return _wrap_int64(int(match.group(1))) if match else -1


def _to_int64(values: Sequence[int | str | None]) -> NDArray[np.int64]:
    try:
        return np.fromiter(values, dtype=np.int64, count=len(values))
    except (OverflowError, TypeError, ValueError):
        pass
    return np.fromiter(
        (
            _wrap_int64(v) if type(v) is int else (_str_to_id(v) if isinstance(v, str) else -1)
            for v in values
        ),
        dtype=np.int64,
        count=len(values),
    )
