"""Checks for numbers read from a file, the environment or the command line, before they are used.

Launch numbers, kernel ids, times and counts end up in numpy ``int64`` columns, in ranges that are
iterated, and in sums. A value beyond ``int64`` (a trace header that says ``-kernel id =
100000000000000000000``, ``--first-launch 10^21``) fails deep inside with an ``OverflowError``, or
worse wraps to a negative number without a word (``9223372036854775807 + 1``); a ``ts`` of
``"abc"``, ``null`` or ``1e300`` in a profile is a ``ValueError`` or an infinite time. Every
boundary checks the number's type and range here instead, and refuses in one line that names
where the number came from and what would be accepted.
"""

from __future__ import annotations

import math
import re
from typing import Any

from simsample.errors import UserError

#: The largest value of a signed 64-bit integer: the columns launch numbers and times are kept in.
INT64_MAX = (1 << 63) - 1
INT64_MIN = -(1 << 63)

#: an integer as int() reads it: ASCII white space around (\s would also take the separators
#: U+001C-U+001F, which str.isspace() counts and int() refuses: "0\x1f" passed the check and
#: then raised ValueError instead of the one-line refusal)
_INT_TEXT = re.compile(r"[ \t\n\r\f\v]*[+-]?\d+[ \t\n\r\f\v]*")


def fits_int64(value: int) -> bool:
    """Whether ``value`` is held by an ``int64`` column."""
    return INT64_MIN <= value <= INT64_MAX


def _bounds(lo: int | None, hi: int | None) -> str:
    if lo is not None and hi is not None:
        return f"an integer from {lo:,} to {hi:,}"
    if lo is not None:
        return f"an integer of at least {lo:,}"
    if hi is not None:
        return f"an integer of at most {hi:,}"
    return "an integer"


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def check_int(value: Any, what: str, *, lo: int | None = 0, hi: int | None = INT64_MAX) -> int:
    """``value`` as an ``int`` within ``[lo, hi]`` (and always within ``int64``), else a one-line
    :class:`UserError` naming ``what``. ``True``, ``9.5`` and ``"9"`` are refused: a hand-edited
    file whose launch number reads as text or a fraction is not silently taken for another number."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise UserError(f"{what}: {_shown(value)} is not {_bounds(lo, hi)}")
    lo = INT64_MIN if lo is None else max(lo, INT64_MIN)
    hi = INT64_MAX if hi is None else min(hi, INT64_MAX)
    if not lo <= value <= hi:
        raise UserError(f"{what}: {_shown(value)} is out of range (expected {_bounds(lo, hi)})")
    return int(value)


def parse_int(text: str, what: str, *, lo: int | None = 0, hi: int | None = INT64_MAX) -> int:
    """An integer written as text (an option, a header field), checked as :func:`check_int` checks it.
    Only decimal digits with an optional sign are read: a 400-digit value is refused by its
    length before it is converted (Python limits the digits it converts)."""
    s = str(text)
    if len(s) > 40 or not _INT_TEXT.fullmatch(s):
        raise UserError(f"{what}: {_shown(s)} is not {_bounds(lo, hi)}")
    return check_int(int(s), what, lo=lo, hi=hi)


def check_time(value: Any, what: str, *, lo: float = 0.0, hi: float = float(INT64_MAX)) -> float:
    """A time (or any measured quantity) that must be a finite number within ``[lo, hi]``: ``NaN``,
    infinities, ``1e300`` (beyond any ``int64`` nanosecond count), text and ``null`` are refused."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise UserError(f"{what}: {_shown(value)} is not a number")
    if isinstance(value, int):
        if not lo <= value <= hi:
            raise UserError(f"{what}: {_shown(value)} is out of range ({lo:g} to {hi:g})")
        return float(value)
    if not math.isfinite(value) or not lo <= value <= hi:
        raise UserError(f"{what}: {_shown(value)} is not a finite number from {lo:g} to {hi:g}")
    return float(value)


def check_count(value: Any, what: str, *, hi: int = INT64_MAX) -> int:
    """A count (launches, samples, runs): an integer from 0 to ``hi``."""
    return check_int(value, what, lo=0, hi=hi)
