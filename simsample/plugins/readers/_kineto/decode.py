"""Kernel events of a Kineto trace through a typed, schema-driven JSON decoder (msgspec).

A trace holds about ten CPU-side events per GPU kernel. ``json.loads`` builds a dict for each of
them; msgspec decodes every event into a small struct holding only ``cat``, ``ph`` and ``name``
and keeps ``ts``, ``dur`` and ``args`` as raw JSON text (:class:`msgspec.Raw`), skipping every
other key without building anything. The raw ``args`` of the kernel events alone are then
decoded into typed structs (launch shape, stream, correlation, registers, shared memory, device),
and ``ts``/``dur`` stay decimal text, parsed in bulk, so times convert to nanoseconds exactly as
on the other paths (:func:`simsample.plugins.readers._kineto.scan.micros_to_ns`).

Anything unusual (a value of an unexpected type, an event that is not an object, a kernel without
``args``, no kernel at all) makes :func:`decode` return ``None``; the caller then uses the regex
scanner or the json module, which name the offending event. msgspec is optional: without it
:data:`AVAILABLE` is False and the other paths are used.

The constants and helpers shared with the compiled extractor (:mod:`.native`), which
must give exactly the same arrays, live here: the optional args columns and their defaults, the
top-level metadata keys, and how metadata and the base time are applied.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from itertools import chain
from operator import attrgetter
from typing import Any

import numpy as np

from simsample.plugins.readers._kineto import scan as ks

try:
    import msgspec
    from msgspec import Raw, Struct

    AVAILABLE = True
except ImportError:  # pragma: no cover - optional dependency
    AVAILABLE = False

#: the optional args columns, in column order, and their value where a kernel lacks the field
ARG_DEFAULTS: dict[str, int] = {"stream": 0, "correlation": -1, "regs": 0, "shmem": 0, "device": 0}
#: optional columns left out of a file's arrays when none of its kernels has the field
SPARSE_COLUMNS = frozenset({"regs", "shmem"})
#: top-level keys kept (decoded) as the file's metadata
META_KEYS = ("deviceProperties", "distributedInfo", "baseTimeNanoseconds")
_NUMBER = re.compile(r"(-?\d+)(?:\.(\d+))?")
_NUMBERS = re.compile(r"-?\d+(?:\.\d+)?(?:,-?\d+(?:\.\d+)?)*")

if AVAILABLE:

    class _Args(Struct, rename={"regs": "registers per thread", "shmem": "shared memory"}):
        grid: tuple[int, int, int]
        block: tuple[int, int, int]
        stream: int | None = None
        correlation: int | None = None
        device: int | None = None
        regs: int | None = None
        shmem: int | None = None

    class _Event(Struct):
        cat: str = ""
        ph: str = "X"
        name: str = ""
        ts: Raw = Raw(b"")
        dur: Raw = Raw(b"")
        args: Raw = Raw(b"")

    class _Trace(Struct):
        traceEvents: list[_Event]
        deviceProperties: Raw = Raw(b"")
        distributedInfo: Raw = Raw(b"")
        baseTimeNanoseconds: Raw = Raw(b"")

    _TRACE = msgspec.json.Decoder(_Trace)
    _ARGS = msgspec.json.Decoder(_Args)
    _ERRORS: tuple[type[Exception], ...] = (
        msgspec.DecodeError,
        msgspec.ValidationError,
        ValueError,
        KeyError,
        TypeError,
        OverflowError,
    )


def _micros_to_ns(raws: list[Any]) -> np.ndarray:
    """Raw JSON numbers in µs → exact int64 ns, parsed in bulk: the integer part by numpy, the
    fraction from its first four digits, rounded half up beyond the nanosecond, as
    :func:`simsample.plugins.readers._kineto.scan.micros_to_ns` does (numbers in exponent notation go
    through the exact decimal conversion of the other paths)."""
    n = len(raws)
    text = b",".join(raws).decode("ascii")
    if "e" not in text and "E" not in text and _NUMBERS.fullmatch(text or "0"):
        if "." not in text:
            arr = np.fromstring(text, dtype=np.int64, sep=",") if n else np.zeros(0, dtype=np.int64)
            if arr.size == n:
                return arr * 1000
        else:
            pairs = _NUMBER.findall(text)
            if len(pairs) == n:
                whole = np.fromstring(" ".join([p[0] for p in pairs]), dtype=np.int64, sep=" ")
                four = np.fromstring(" ".join([(p[1] + "0000")[:4] for p in pairs]), dtype=np.int64, sep=" ")
                if whole.size == n and four.size == n:
                    frac_ns = (four + 5) // 10
                    if "-" not in text:
                        return whole * 1000 + frac_ns
                    neg = np.array([p[0].startswith("-") for p in pairs], dtype=bool)
                    return np.where(neg, whole * 1000 - frac_ns, whole * 1000 + frac_ns)
    parts = [ks._time_parts(bytes(r).decode("ascii")) for r in raws]
    return ks.micros_to_ns([p[0] for p in parts], [p[1] for p in parts])


def decode_meta(raws: dict[str, bytes | None]) -> dict[str, Any]:
    """The metadata values given as raw JSON text (absent ones empty or None), decoded."""
    loads = msgspec.json.decode if AVAILABLE else json.loads
    return {key: loads(raw) for key, raw in raws.items() if raw}


def add_base_time(start: np.ndarray, meta: dict[str, Any]) -> np.ndarray:
    """Kernel starts with the trace's integer ``baseTimeNanoseconds`` added, when it has one."""
    base = meta.get("baseTimeNanoseconds")
    if isinstance(base, int) and not isinstance(base, bool):
        return start + base
    return start


def decode(raw: bytes) -> tuple[dict[str, Any], dict[str, Any], int] | None:
    """``(arrays, meta, memcpy)`` of one trace, or ``None`` when this path cannot take it."""
    if not AVAILABLE:
        return None
    try:
        doc = _TRACE.decode(raw)
        events = doc.traceEvents
        counts = Counter(e.cat for e in events)
        kcats = {c for c in counts if c.lower() == "kernel"}
        memcpy = sum(counts[c] for c in ks.MEMCPY_CATS)
        kernels = [e for e in events if e.cat in kcats and e.ph == "X"]
        del events
        if not kernels:
            return None
        # a kernel without args or without a three-number grid and block fails validation here:
        # the other paths then name it
        args = list(map(_ARGS.decode, [e.args for e in kernels]))
        n = len(kernels)
        shape = {}
        for key in ("grid", "block"):
            shape[key] = np.fromiter(
                chain.from_iterable(map(attrgetter(key), args)), dtype=np.int64, count=3 * n
            ).reshape(n, 3)
        meta = decode_meta({key: bytes(getattr(doc, key)) for key in META_KEYS})
        start = add_base_time(_micros_to_ns([e.ts for e in kernels]), meta)
        import pyarrow as pa

        from simsample.sdk import categorical

        arrays: dict[str, Any] = {
            "name": categorical(pa.array([e.name for e in kernels], type=pa.string())),
            "grid_x": shape["grid"][:, 0],
            "grid_y": shape["grid"][:, 1],
            "grid_z": shape["grid"][:, 2],
            "block_x": shape["block"][:, 0],
            "block_y": shape["block"][:, 1],
            "block_z": shape["block"][:, 2],
            "start_ns": start,
            "duration_ns": _micros_to_ns([e.dur for e in kernels]),
        }
        for col, default in ARG_DEFAULTS.items():
            vals = list(map(attrgetter(col), args))
            if None in vals:  # absent (or null, which the json-module path also reads as absent)
                if col in SPARSE_COLUMNS and vals.count(None) == n:
                    continue
                vals = [default if v is None else v for v in vals]
            arrays[col] = np.array(vals, dtype=np.int64)
        return arrays, meta, memcpy
    except _ERRORS:
        return None
