"""Extraction of GPU kernel events from Kineto trace text, without parsing every event.

A PyTorch-profiler trace holds about ten CPU-side events (operators, runtime calls, flow arrows)
per GPU kernel, and ``json.loads`` spends most of its time building dicts for those. Kineto writes
every event of one kind with the same keys in the same order, so the kernel events of a file are
matched by one regular expression built from the layout of its first kernel event (key order,
which values to capture) and extracted in bulk with ``re.findall``; numbers are then converted by
numpy in one pass per column.

Nothing is assumed blindly: every ``"cat": "kernel"`` in the text is counted, and a kernel event
that no learned layout matches (other key order, escaped quotes in the name, nested objects, a
number in exponent notation) is decoded on its own with the json module. If an event's start
cannot be located reliably, :func:`scan` returns ``None`` and the caller parses the whole file
with ``json.loads`` (the reference path, equally correct, slower).
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

import numpy as np

ANCHOR = re.compile(r'"cat"\s*:\s*"[kK]ernel"')
#: kernel and memory-copy categories, counted in one pass
CATEGORIES = re.compile(r'"cat"\s*:\s*"(kernel|Kernel|gpu_memcpy|gpu_memset|Memcpy|Memset)"')
MEMCPY_CATS = {"gpu_memcpy", "gpu_memset", "Memcpy", "Memset"}


class FloatText(str):
    """A JSON float kept as its decimal text (times convert to nanoseconds exactly), told apart
    from JSON strings by its type."""


_DECODER = json.JSONDecoder(parse_float=FloatText)

#: args fields read from each kernel event (JSON key → column)
ARG_FIELDS = {
    "device": "device",
    "stream": "stream",
    "correlation": "correlation",
    "registers per thread": "regs",
    "shared memory": "shmem",
}
_MAX_LAYOUTS = 6

# Strings are matched up to their first quote: one that is escaped (\") makes the rest of the
# layout fail to match at that point (inside a string every quote is escaped, and the layout
# continues with structural quotes), so such an event is decoded on its own instead.
_STR = r'"[^"]*"'
_NUM = r"-?[\d.eE+-]+"
_LIST = r"\[[^\[\]{}]*\]"
_SEP = r"\s*,\s*"
# The pattern after each value is a separator or a closing brace, so a number written with an
# exponent or a value of another type simply does not match (and is decoded on its own).
_TIME = r"(-?\d+)(?:\.(\d+))?"  # decimal µs: integer and fraction captured apart, exactly
_INT = r"(-?\d+)"
_TRIPLE = r"\[\s*(-?\d+\s*,\s*-?\d+\s*,\s*-?\d+)\s*\]"  # one group: "864, 1, 1"


def _value_pattern(value: Any) -> str | None:
    """A tight pattern for a value of this JSON type (the regex engine's cost is per character
    and per alternative, so one alternative per value)."""
    if isinstance(value, bool) or value is None:
        return "(?:true|false|null)"
    if isinstance(value, (int, float)):
        return _NUM
    if isinstance(value, FloatText):
        return _NUM
    if isinstance(value, str):
        return _STR
    if isinstance(value, list):
        return _LIST
    return None


@dataclass
class KernelColumns:
    """Raw per-kernel values as collected from one file (strings until :meth:`finish`)."""

    names: list[str] = field(default_factory=list)
    ts_int: list[Any] = field(default_factory=list)  # integer parts of ts (µs), as text
    ts_frac: list[str] = field(default_factory=list)  # fraction digits of ts ("" if none)
    dur_int: list[Any] = field(default_factory=list)
    dur_frac: list[str] = field(default_factory=list)
    grid: list[Any] = field(default_factory=list)  # text "x, y, z" per kernel
    block: list[Any] = field(default_factory=list)
    args: dict[str, list[Any]] = field(default_factory=lambda: {c: [] for c in ARG_FIELDS.values()})
    layouts: int = 0
    decoded_alone: int = 0
    memcpy: int = 0

    def __len__(self) -> int:
        return len(self.names)


@dataclass
class Layout:
    #: the layout with the whitespace of the event it was learned from
    pattern: re.Pattern[str]
    #: per captured group: (column, part) with part in {"name", "int", "frac", "xyz", "v"}
    groups: list[tuple[str, str]]
    #: the same layout with any whitespace between tokens
    loose: re.Pattern[str] | None = None


_WS = "\x00"  # a whitespace slot in a layout template


def _kv(key: str, value: str) -> str:
    return re.escape(json.dumps(key)) + _WS + ":" + _WS + value


def build_layout(event: dict[str, Any], text: str | None = None, cat_pos: int = 0) -> Layout | None:
    """A regex matching kernel events with exactly this event's keys, in this order, from its
    ``"cat"`` key on (keys before ``cat`` are not needed; ``name`` must come after it).

    With the event's ``text`` (and the position of its ``"cat"`` key), the whitespace between
    tokens is learned and matched literally, which the regex engine does faster than ``\\s*``;
    :attr:`Layout.loose` keeps the whitespace-tolerant form.
    """
    keys = list(event)
    if "cat" not in keys or not isinstance(event.get("args"), dict):
        return None
    at = keys.index("cat")
    if any(k in keys[:at] for k in ("name", "ts", "dur", "args")):
        return None
    sep = _WS + "," + _WS
    parts: list[str] = []
    groups: list[tuple[str, str]] = []
    for key in keys[at:]:
        if key == "cat":
            parts.append('"cat"' + _WS + ":" + _WS + '"[kK]ernel"')
        elif key == "name":
            parts.append(_kv("name", r'"([^"]*)"'))  # escapes (\\, \u00e9) are decoded later
            groups.append(("name", "name"))
        elif key in ("ts", "dur"):
            parts.append(_kv(key, _TIME))
            groups += [(key, "int"), (key, "frac")]
        elif key == "args":
            inner: list[str] = []
            for akey, aval in event["args"].items():
                if akey in ("grid", "block") and isinstance(aval, list) and len(aval) == 3:
                    inner.append(_kv(akey, _TRIPLE))
                    groups.append((akey, "xyz"))
                elif akey in ARG_FIELDS and isinstance(aval, int) and not isinstance(aval, bool):
                    inner.append(_kv(akey, _INT))
                    groups.append((ARG_FIELDS[akey], "v"))
                else:
                    vp = _value_pattern(aval)
                    if vp is None:
                        return None
                    inner.append(_kv(akey, vp))
            parts.append(_kv("args", r"\{" + _WS + sep.join(inner) + _WS + r"\}"))
        else:
            vp = _value_pattern(event[key])
            if vp is None:
                return None
            parts.append(_kv(key, vp))
    if not {"name", "ts", "dur"} <= {g[0] for g in groups} or not {"grid", "block"} <= {g[0] for g in groups}:
        return None
    template = sep.join(parts) + _WS + r"\}"
    pieces = template.split(_WS)
    loose = re.compile(r"\s*".join(pieces))
    literal = loose
    if text is not None:
        probe = re.compile(
            "".join(p + (f"(?P<w{i}>\\s*)" if i < len(pieces) - 1 else "") for i, p in enumerate(pieces))
        )
        m = probe.match(text, cat_pos)
        if m is not None:
            ws = [re.escape(m.group(f"w{i}")) for i in range(len(pieces) - 1)]
            literal = re.compile("".join(p + (ws[i] if i < len(ws) else "") for i, p in enumerate(pieces)))
    return Layout(literal, groups, loose)


def event_at(text: str, cat_pos: int, floor: int = 0, tries: int = 32) -> tuple[dict[str, Any], int] | None:
    """Decode the event whose ``"cat"`` key is at ``cat_pos``: the nearest ``{`` before it that is
    outside a string (quote parity) and opens an object reaching past ``cat_pos`` (an ``args``
    object written before ``cat`` closes before it), decoded by the json module."""
    start = text.rfind("{", floor, cat_pos)
    while start >= 0 and tries > 0:
        tries -= 1
        between = text[start:cat_pos]
        if (between.count('"') - between.count('\\"')) % 2 == 0:
            try:
                obj, end = _DECODER.raw_decode(text, start)
            except json.JSONDecodeError:
                obj, end = None, start
            if end > cat_pos:
                if isinstance(obj, dict) and str(obj.get("cat", "")).lower() == "kernel":
                    return obj, end
                return None
        start = text.rfind("{", floor, start)
    return None


def scan(text: str) -> KernelColumns | None:
    """All kernel events of a trace text, or ``None`` when the text defeats the scanner."""
    out = KernelColumns()
    cats = CATEGORIES.findall(text)
    count = cats.count("kernel") + cats.count("Kernel")
    out.memcpy = len(cats) - count
    if not count:
        return out
    first = ANCHOR.search(text)
    found = event_at(text, first.start()) if first else None
    layout = build_layout(found[0], text, first.start()) if found else None
    if layout is not None:
        # the common case: one layout (and one way of spacing it) for all kernel events
        for pattern in (layout.pattern, layout.loose):
            rows = pattern.findall(text) if pattern is not None else []
            if len(rows) == count:
                _append(layout, rows, out, escapes="\\" in text)
                out.layouts = 1
                return out
    remaining = {m.start() for m in ANCHOR.finditer(text)}
    layouts: list[Layout] = []
    while remaining and len(layouts) < _MAX_LAYOUTS:
        first = min(remaining)
        found = event_at(text, first)
        if found is None:
            return None
        layout = build_layout(found[0])
        if layout is None:
            break
        layouts.append(layout)
        matched = _collect(layout, text, out, remaining)
        if matched == 0:
            break
    out.layouts = len(layouts)
    for pos in sorted(remaining):
        found = event_at(text, pos)
        if found is None:
            return None
        add_event(out, found[0])
        out.decoded_alone += 1
    return out


def _collect(layout: Layout, text: str, out: KernelColumns, remaining: set[int]) -> int:
    """Append every event matching ``layout`` whose anchor is still unclaimed."""
    rows: list[tuple[str, ...]] = []
    starts: list[int] = []
    for m in (layout.loose or layout.pattern).finditer(text):
        if m.start() in remaining:
            starts.append(m.start())
            rows.append(m.groups())
    for s in starts:
        remaining.discard(s)
    _append(layout, rows, out)
    return len(rows)


def _append(layout: Layout, rows: list[tuple[str, ...]], out: KernelColumns, *, escapes: bool = True) -> None:
    """Add matched rows (tuples of captured groups) column by column; ``escapes=False`` when the
    text has no backslash at all, so no name needs unescaping."""
    if not rows:
        return
    idx = {g: i for i, g in enumerate(layout.groups)}
    columns = {i: list(map(itemgetter(i), rows)) for i in idx.values()}
    names = columns[idx[("name", "name")]]
    if escapes and any("\\" in n for n in names):
        names = [_unescape(n) if "\\" in n else n for n in names]
    out.names += names
    for k in ("ts", "dur"):
        getattr(out, f"{k}_int").extend(columns[idx[(k, "int")]])
        fracs = columns[idx[(k, "frac")]]
        getattr(out, f"{k}_frac").extend(fracs if None not in fracs else ("" if f is None else f for f in fracs))
    for k in ("grid", "block"):
        getattr(out, k).extend(columns[idx[(k, "xyz")]])
    for c in out.args:
        if (c, "v") in idx:
            out.args[c] += columns[idx[(c, "v")]]
        else:
            out.args[c] += [None] * len(rows)


def _unescape(raw: str) -> str:
    """A JSON string's content as captured raw (``\\n``, ``\\u00e9``) → its value."""
    try:
        return json.loads(f'"{raw}"')
    except json.JSONDecodeError:
        return raw


def _time_parts(v: Any) -> tuple[str, str]:
    """Integer and fraction digits of a JSON number: an int, a float, or (from decoders with
    ``parse_float=FloatText``) the decimal text, which keeps every digit."""
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        raise ValueError(f"expected a number, got {v!r}")
    if isinstance(v, int):
        return str(v), ""
    text = v if isinstance(v, str) else repr(v)
    if not re.fullmatch(r"-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?", text.strip()):
        raise ValueError(f"expected a number, got {v!r}")
    text = text.strip()
    if "e" in text or "E" in text:
        from decimal import Decimal

        text = format(Decimal(text), "f")
    ip, _, fp = text.partition(".")
    if len(ip.lstrip("-")) > 15 and abs(int(ip)) * 1000 >= 2**63:  # µs → ns must fit an int64
        raise ValueError(f"{v!r} µs is out of range (at most about 9.2e15 µs)")
    return ip, fp.rstrip("0") if fp.strip("0") else ""


def add_event(out: KernelColumns, ev: dict[str, Any]) -> None:
    """Append one decoded kernel event (the json-module path); nothing is appended when a
    required field is missing (KeyError) or not a number (ValueError)."""
    args = ev.get("args") or {}
    times = []
    for key in ("ts", "dur"):
        if key not in ev:
            raise KeyError(key)
        try:
            times.append(_time_parts(ev[key]))
        except (ValueError, TypeError, OverflowError) as exc:
            raise ValueError(f"field {key!r} = {str(ev[key])[:40]!r}: {exc}") from None
    shapes = []
    for key in ("grid", "block"):
        val = args.get(key)
        if not (isinstance(val, list) and len(val) == 3):
            raise KeyError(f"args.{key}")
        try:
            nums = [int(x) for x in val]
        except (ValueError, TypeError, OverflowError):
            raise ValueError(f"field 'args.{key}' = {str(val)[:40]!r}: expected three whole numbers") from None
        shapes.append(", ".join(str(x) for x in nums))
    values = {}
    for akey, c in ARG_FIELDS.items():
        v = args.get(akey)
        if isinstance(v, FloatText):  # a float kept as text by the decoder
            v = float(v)
        try:
            values[c] = str(int(v)) if isinstance(v, (int, float)) and not isinstance(v, bool) else None
        except (ValueError, OverflowError):
            raise ValueError(f"field 'args.{akey}' = {v!r}: expected a whole number") from None
    for key, (ip, fp) in zip(("ts", "dur"), times):
        getattr(out, f"{key}_int").append(ip)
        getattr(out, f"{key}_frac").append(fp)
    out.grid.append(shapes[0])
    out.block.append(shapes[1])
    out.names.append(str(ev.get("name", "")))
    for c, v in values.items():
        out.args[c].append(v)


def iter_kernel_events(doc: Any) -> Iterator[dict[str, Any]]:
    """Kernel events of a fully parsed trace document (the reference path)."""
    events = doc.get("traceEvents") if isinstance(doc, dict) else doc
    for ev in events or ():
        if isinstance(ev, dict) and str(ev.get("cat", "")).lower() == "kernel" and ev.get("ph", "X") == "X":
            yield ev


# --- numeric conversion ------------------------------------------------------------------------
def _parse_ints(text: str, expected: int, what: str, sep: str = " ") -> np.ndarray:
    """Decimal integers separated by ``sep`` (and blanks) → int64 in one numpy parse (C speed)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numpy warns, then stops, at the first non-integer
        try:
            arr = np.fromstring(text, dtype=np.int64, sep=sep)
        except ValueError:
            arr = np.zeros(0, dtype=np.int64)
    if arr.size != expected:
        raise ValueError(f"not all {what} are integers")
    return arr


def ints(values: list[Any]) -> np.ndarray:
    """Decimal integer strings (or ints) → int64."""
    if not values:
        return np.zeros(0, dtype=np.int64)
    return _parse_ints(" ".join(map(str, values)), len(values), "values")


def triples(values: list[str]) -> np.ndarray:
    """``"x, y, z"`` strings → (n, 3) int64."""
    if not values:
        return np.zeros((0, 3), dtype=np.int64)
    return _parse_ints(",".join(values), 3 * len(values), "launch shapes", sep=",").reshape(-1, 3)


def micros_to_ns(int_parts: list[Any], frac_parts: list[str]) -> np.ndarray:
    """Exact ns from decimal µs given as integer and fraction digit strings (rounded half-up
    beyond the nanosecond)."""
    whole = ints(int_parts)
    ns = whole * 1000
    if not any(frac_parts):
        return ns
    neg = np.fromiter((str(s).startswith("-") for s in int_parts), dtype=bool, count=len(int_parts))
    digits = [(f + "0000")[:4] for f in frac_parts]
    four = ints(digits)
    frac_ns = (four + 5) // 10  # four digits = 0.1 ns steps; round half up
    return np.where(neg, ns - frac_ns, ns + frac_ns)


def arg_column(values: list[Any], default: int) -> np.ndarray:
    """An optional args field (None where absent) → int64 with ``default`` for missing values."""
    if None not in values:
        return ints(values)
    if all(v is None for v in values):
        return np.full(len(values), default, dtype=np.int64)
    return ints([default if v is None else v for v in values])


__all__ = [
    "ANCHOR",
    "KernelColumns",
    "add_event",
    "arg_column",
    "build_layout",
    "event_at",
    "ints",
    "iter_kernel_events",
    "micros_to_ns",
    "scan",
    "triples",
]
