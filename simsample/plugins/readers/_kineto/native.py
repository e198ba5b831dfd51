"""Kernel events of a Kineto trace through the compiled extractor ``simsample._kineto_events``.

The C++ code (``cpp/kineto_events/`` in the simsample source tree) walks the whole JSON text once,
with the GIL released, reading only each event's ``cat``, ``ph``, ``name``, ``ts``, ``dur`` and
``args``: no Python object is built per event, nor per kernel (names come back dictionary-encoded,
times as exact integer nanoseconds). Here its columns become the same ``(arrays, meta, memcpy)``
as :func:`simsample.plugins.readers._kineto.decode.decode` returns, value for value.

Anything the extractor does not take exactly as the Python paths would (malformed JSON, a value of
an unexpected type, a number with an exponent, a kernel without a usable grid, no kernel at all)
makes :func:`extract` return ``None``, and the caller goes on with the typed decoder and the other
Python paths, which read the file or name what is wrong with it. The module is optional: a source
install without a C++ compiler has none, and ``SIMSAMPLE_PURE_PYTHON=1`` disables it.

A large trace (at least ``MIN_PART_BYTES`` per thread) is scanned by several threads at once, each
from what looks like the start of a ``traceEvents`` element; the parts are merged into exactly the
result of one scan (a part counts only once the part before has stopped exactly where it began).
:func:`threads` says how many: the usable cores shared among the files read at the same time, or
``SIMSAMPLE_KINETO_THREADS`` where it is set (``1``: one scan, as a benchmark compares).
"""

from __future__ import annotations

import mmap
import os
from pathlib import Path
from typing import Any

import lazy_loader as lazy

from simsample.plugins.readers._kineto import decode as kd
from simsample.plugins.readers._kineto import scan as ks
from simsample.sdk import import_beside, import_optional, parse_int, usable_cpus

pd = lazy.load("pandas")

_native: Any
_native, REASON = import_optional(
    "_kineto_events", unavailable="the C++ extension simsample._kineto_events is not available"
)
#: whether the compiled extractor can be used here (:data:`REASON` says why not)
AVAILABLE = _native is not None

_KEY_OF_COLUMN = {col: key for key, col in ks.ARG_FIELDS.items()}
#: (args key, value when absent) per optional column, in the order of ``kd.ARG_DEFAULTS``
_FIELDS = [(_KEY_OF_COLUMN[col], default) for col, default in kd.ARG_DEFAULTS.items()]
_SHAPES = ("grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z")
#: the environment variable that fixes the threads of one scan (unset or empty: :func:`threads` decides)
THREADS_VARIABLE = "SIMSAMPLE_KINETO_THREADS"
#: bytes of text per thread below which a trace is scanned by fewer threads (a thread's start and
#: the merge of its columns cost more than its share of a smaller scan saves)
MIN_PART_BYTES = 16 << 20


def threads(files_at_once: int = 1) -> int:
    """Threads for the scan of one trace while ``files_at_once`` traces are read at the same time:
    the usable cores shared among them (more threads than cores only take turns), at most 8; or
    the value of ``SIMSAMPLE_KINETO_THREADS``, a positive integer, where it is set."""
    fixed = os.environ.get(THREADS_VARIABLE, "").strip()
    if fixed:
        return parse_int(fixed, THREADS_VARIABLE, lo=1, hi=256)
    return max(1, min(8, usable_cpus() // max(files_at_once, 1)))


def extract(
    raw: bytes | bytearray | memoryview | mmap.mmap, *, threads: int = 1, min_part: int | None = None
) -> tuple[dict[str, Any], dict[str, Any], int] | None:
    """``(arrays, meta, memcpy)`` of one trace (the whole decompressed file, any contiguous
    bytes-like object), or ``None`` when the compiled extractor is absent or does not take it.

    ``threads``: how many threads may scan parts of the text, given at least ``min_part`` bytes
    each (default :data:`MIN_PART_BYTES`, which tests lower to split small texts); the result
    does not depend on either."""
    if _native is None:
        return None
    part = MIN_PART_BYTES if min_part is None else min_part
    wait = import_beside("pandas")  # used once the scan is done: imported beside it
    try:
        got = _native.extract(raw, _FIELDS, list(kd.META_KEYS), threads, part)
    finally:
        wait()
    if got is None or len(got["start_ns"]) == 0:
        return None  # as the typed decoder: with no kernel found, the json module confirms it
    try:
        names = [name.decode("utf-8") for name in got["names"]]
        meta = kd.decode_meta(dict(zip(kd.META_KEYS, got["meta"])))
    except ValueError:  # a name that is not UTF-8, metadata msgspec refuses: as the decoder does
        return None
    arrays: dict[str, Any] = {
        "name": pd.Categorical.from_codes(got["name_codes"], categories=pd.Index(names, dtype=object))
    }
    arrays.update((col, got[col]) for col in _SHAPES)
    arrays["start_ns"] = kd.add_base_time(got["start_ns"], meta)
    arrays["duration_ns"] = got["duration_ns"]
    for col, (values, present) in zip(kd.ARG_DEFAULTS, got["fields"]):
        if present or col not in kd.SPARSE_COLUMNS:
            arrays[col] = values
    return arrays, meta, int(got["memcpy"])


def extract_mapped(path: Path, *, threads: int = 1) -> tuple[dict[str, Any], dict[str, Any], int] | None:
    """:func:`extract` over the pages of a plain (uncompressed) regular file, mapped into memory
    instead of read into a copy (which costs a third of the time of the scan itself). As with any
    mapped file, another process truncating it during the scan would end this one (SIGBUS); a
    trace is not rewritten while it is being read."""
    if _native is None:
        return None
    with open(path, "rb") as fh:
        try:
            pages = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):  # an empty file, or one that cannot be mapped: read it as usual
            return None
    with pages:
        return extract(pages, threads=threads)


__all__ = ["AVAILABLE", "MIN_PART_BYTES", "REASON", "THREADS_VARIABLE", "extract", "extract_mapped", "threads"]
