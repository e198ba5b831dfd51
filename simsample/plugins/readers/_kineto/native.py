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
"""

from __future__ import annotations

import mmap
from pathlib import Path
from typing import Any

import lazy_loader as lazy

from simsample.plugins.readers._kineto import decode as kd
from simsample.plugins.readers._kineto import scan as ks
from simsample.sdk import import_optional

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


def extract(raw: bytes | bytearray | memoryview | mmap.mmap) -> tuple[dict[str, Any], dict[str, Any], int] | None:
    """``(arrays, meta, memcpy)`` of one trace (the whole decompressed file, any contiguous
    bytes-like object), or ``None`` when the compiled extractor is absent or does not take it."""
    if _native is None:
        return None
    got = _native.extract(raw, _FIELDS, list(kd.META_KEYS))
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


def extract_mapped(path: Path) -> tuple[dict[str, Any], dict[str, Any], int] | None:
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
        return extract(pages)


__all__ = ["AVAILABLE", "REASON", "extract", "extract_mapped"]
