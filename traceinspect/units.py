"""The one converter between the model's integer nanoseconds and the µs of reports.

Inside the model and the analysis every time is ns (``*_ns``); reports and the Python API's
DataFrames give µs (``*_us``) rounded to the ns they came from (three decimals).
"""

from __future__ import annotations

from typing import Final, overload

NS_PER_US: Final = 1_000


@overload
def ns_to_us(ns: float) -> float: ...
@overload
def ns_to_us(ns: None) -> None: ...
def ns_to_us(ns: float | None) -> float | None:
    """``ns`` as µs with ns precision (``1234`` -> ``1.234``); ``None`` stays ``None``."""
    return None if ns is None else round(ns / NS_PER_US, 3)


def us_to_ns(us: float) -> int:
    """µs given by a user (``--eager-us``) as integer ns."""
    return round(us * NS_PER_US)
