"""Helpers shared by the profile readers: units, kernel-name suffixes, CSV preambles, launch order.

Every reader ends the same way: columns as numpy arrays, launches sorted by start time (ties by
correlation id, when the source has one), ``kernel_id`` = the 0-based position in that order, names
categorical, and small integers in the narrowest type. :func:`launch_table` does that, so that the
readers agree on what "launch order" means.

Time conversion is exact: profilers print decimals such as ``611.996748`` ms, and a launch's
``start_ns`` must be the integer 611996748, not ``611996747.99999``. :func:`to_ns` multiplies in
float64 and rounds to the nearest integer, which is exact whenever the printed value is a whole
number of nanoseconds and below 2**51 ns (26 days), because the float error is then far below half
a nanosecond; :func:`decimal_to_ns` is the exact reference it is tested against.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from simsample.errors import FormatError

#: nanoseconds per unit, for the unit spellings of nvprof, nsys, ncu and Kineto
TIME_SCALE: dict[str, int] = {
    "ns": 1,
    "nsec": 1,
    "nsecond": 1,
    "us": 1_000,
    "usec": 1_000,
    "usecond": 1_000,
    "\u00b5s": 1_000,
    "ms": 1_000_000,
    "msec": 1_000_000,
    "msecond": 1_000_000,
    "s": 1_000_000_000,
    "sec": 1_000_000_000,
    "second": 1_000_000_000,
}

#: bytes per unit in nvprof's output (binary multiples: nvprof's 1.0625 KB of shared memory is 1088 B)
BINARY_BYTE_SCALE: dict[str, int] = {"B": 1, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40}

#: above this many nanoseconds a float64 product may be off by one nanosecond
_EXACT_LIMIT = float(2**51)


def to_ns(values: np.ndarray | Sequence[float], scale: int) -> np.ndarray:
    """``values`` (in a unit worth ``scale`` ns) as int64 nanoseconds, rounded to nearest.

    Missing values (NaN) are not allowed here; callers drop or report them first.
    """
    v = np.asarray(values, dtype=np.float64)
    out = np.rint(v * float(scale))
    if out.size and float(np.max(np.abs(out))) >= _EXACT_LIMIT:
        # Too large for float64 to hold every nanosecond: redo through the decimal text.
        return np.array([decimal_to_ns(repr(float(x)), scale) for x in v], dtype=np.int64)
    return out.astype(np.int64)


def decimal_to_ns(text: str, scale: int) -> int:
    """Exact nanoseconds of a decimal string in a unit worth ``scale`` ns (half-even rounding)."""
    try:
        d = Decimal(text.strip().replace(",", ""))
    except InvalidOperation:
        raise ValueError(f"not a number: {text!r}") from None
    return int((d * scale).to_integral_value(rounding=ROUND_HALF_EVEN))


# --- kernel names ------------------------------------------------------------------------------
_CORR_SUFFIX = re.compile(r" \[(\d+)\]$")


def strip_corr_suffix(name: str) -> str:
    """``"vectorAdd(float*, int) [1168]"`` → ``"vectorAdd(float*, int)"`` (nvprof's correlation id)."""
    return _CORR_SUFFIX.sub("", name)


def strip_corr_suffixes(names: Any) -> tuple[Any, np.ndarray | None]:
    """Vectorised :func:`strip_corr_suffix` over a pyarrow string array.

    Returns the stripped names and the correlation ids (int64, -1 where a name had none), or
    ``None`` for the ids when no name carries the suffix. Splits once at the last ``" ["`` (a
    plain substring search) and checks only the short tails with a regular expression.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    arr = names if isinstance(names, (pa.Array, pa.ChunkedArray)) else pa.array(names, type=pa.string())
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks else pa.array([], type=pa.string())
    if len(arr) == 0 or not pc.any(pc.ends_with(arr, "]")).as_py():
        return arr, None
    parts = pc.split_pattern(arr, " [", max_splits=1, reverse=True)
    lens = pc.list_value_length(parts).to_numpy(zero_copy_only=False)
    flat = pc.list_flatten(parts)
    starts = np.asarray(parts.offsets)[:-1]
    has = lens == 2
    tails = flat.take(pa.array(np.where(has, starts + 1, starts)))
    ok = pc.and_(pa.array(has), pc.match_substring_regex(tails, r"^\d+\]$"))
    if not pc.any(ok).as_py():
        return arr, None
    heads = flat.take(pa.array(starts))
    stripped = pc.if_else(ok, heads, arr)
    digits = pc.if_else(ok, pc.utf8_slice_codeunits(tails, 0, -1), pa.scalar(None, pa.string()))
    corr = pc.cast(digits, pa.int64()).fill_null(-1).to_numpy(zero_copy_only=False)
    return stripped, corr


def categorical(values: Any) -> pd.Categorical:
    """A pandas categorical from a pyarrow string array or any sequence (fast for repeats)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        enc = values if pa.types.is_dictionary(values.type) else pc.dictionary_encode(values)
        if isinstance(enc, pa.ChunkedArray):
            if enc.num_chunks == 0:
                return pd.Categorical([])
            enc = enc.unify_dictionaries().combine_chunks() if enc.num_chunks > 1 else enc.chunk(0)
        cats = enc.dictionary.to_pylist()
        codes = enc.indices.to_numpy(zero_copy_only=False)
        if len(set(cats)) != len(cats):  # dictionary_encode per chunk may repeat a value
            return pd.Categorical(np.asarray(cats, dtype=object)[codes])
        return pd.Categorical.from_codes(codes.astype(np.int32), categories=pd.Index(cats, dtype=object))
    codes, uniques = pd.factorize(np.asarray(values, dtype=object))
    return pd.Categorical.from_codes(codes.astype(np.int32), categories=pd.Index(uniques, dtype=object))


def parse_triples(values: Any, *, path: str | Path, column: str, first_line: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Split ``"(x, y, z)"``, ``"x y z"`` or ``"[x, y, z]"`` strings into three int64 arrays.

    Parses each distinct string once (launch shapes repeat). A string that is not three whole
    numbers is a :class:`FormatError` naming its line (``first_line`` is the line of the first
    value).
    """
    import pyarrow as pa

    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        cat = categorical(values)
        codes, uniques = np.asarray(cat.codes), list(cat.categories)
    else:
        codes, uniques = pd.factorize(pd.Series(values, dtype=object), use_na_sentinel=True)
    parsed = np.empty((len(uniques), 3), dtype=np.int64)
    for i, u in enumerate(uniques):
        nums = re.findall(r"-?\d+", str(u))
        if len(nums) != 3 or re.search(r"[^\d\s,()\[\]xX-]", str(u)):
            row = int(np.flatnonzero(codes == i)[0])
            raise FormatError(path, f"column {column!r}: expected three numbers such as '(256, 1, 1)', got {u!r}", line=first_line + row)
        parsed[i] = [int(n) for n in nums]
    if (codes < 0).any():
        row = int(np.flatnonzero(codes < 0)[0])
        raise FormatError(path, f"column {column!r} is empty", line=first_line + row)
    out = parsed[codes]
    return out[:, 0], out[:, 1], out[:, 2]


def narrow(values: np.ndarray) -> np.ndarray:
    """Integers in the smallest of uint8/uint16/uint32/int32/int64 that holds them."""
    a = np.asarray(values)
    if a.size == 0:
        return a.astype(np.uint16)
    lo, hi = int(a.min()), int(a.max())
    for dt in (np.uint8, np.uint16, np.uint32) if lo >= 0 else (np.int32,):
        info = np.iinfo(dt)
        if info.min <= lo and hi <= info.max:
            return a.astype(dt)
    return a.astype(np.int64)


def launch_table(columns: Mapping[str, Any], *, tie_break: Sequence[str] = ("correlation",)) -> pd.DataFrame:
    """The launch table in launch order: sorted by ``start_ns`` (stable; ties by ``tie_break``
    columns when present), ``kernel_id`` = 0-based position. ``name`` becomes categorical and a
    missing ``stream`` is 0."""
    n = len(columns["start_ns"])
    start = np.asarray(columns["start_ns"], dtype=np.int64)
    keys = [np.asarray(columns[c]) for c in reversed(tie_break) if c in columns and columns[c] is not None]
    order = None
    if n > 1:
        step = np.diff(start)
        if (step > 0).all() or (not keys and (step >= 0).all()):
            order = None  # already in launch order (the usual case): no sort
        else:
            order = np.lexsort((*keys, start)) if keys else np.argsort(start, kind="stable")
            if np.array_equal(order, np.arange(n)):
                order = None
    out: dict[str, Any] = {"kernel_id": np.arange(n, dtype=np.int32 if n < 2**31 else np.int64)}
    for key, val in columns.items():
        if val is None:
            continue
        if key == "name":
            cat = val if isinstance(val, pd.Categorical) else categorical(val)
            if order is not None:
                cat = pd.Categorical.from_codes(cat.codes[order], dtype=cat.dtype)
            out[key] = cat
            continue
        arr = np.asarray(val) if not isinstance(val, (pd.Series, pd.api.extensions.ExtensionArray)) else val
        if order is not None:
            arr = arr[order] if isinstance(arr, np.ndarray) else arr.take(order)
        out[key] = arr
    if "stream" not in out:
        out["stream"] = np.zeros(n, dtype=np.uint8)
    return pd.DataFrame(out, copy=False)


# --- text files --------------------------------------------------------------------------------
def head_lines(head: bytes, limit: int = 200) -> list[str]:
    """The complete lines of a detection head (the last, possibly cut, line is dropped)."""
    text = head.decode("utf-8", errors="replace")
    lines = text.splitlines()
    if lines and not text.endswith(("\n", "\r")) and len(head) >= 65536:
        lines = lines[:-1]
    return lines[:limit]


def looks_binary(head: bytes) -> bool:
    return b"\x00" in head[:4096]


def detect_text(head: bytes, recognise: Callable[[list[str]], bool], *, limit: int) -> bool:
    """Whether a text reader recognises a detection head from its first ``limit`` complete lines.

    Binary data is never text, and ``recognise`` failing (csv.Error and the like) means "not this
    format": detection asks every reader, so it must answer, not raise.
    """
    if looks_binary(head):
        return False
    try:
        return bool(recognise(head_lines(head, limit=limit)))
    except Exception:  # csv.Error and the like: not this format
        return False


def csv_source(path: Path) -> Path | bytes:
    """What :func:`read_csv_table` reads: the file itself when it is not compressed (pyarrow then
    streams it, so its bytes are never all in memory), else the decompressed bytes."""
    from simsample.fileio import compression_of, read_all

    return Path(path) if compression_of(path) is None else read_all(path)


def read_csv_table(
    data: bytes | Path,
    path: str | Path,
    *,
    skip_rows: int,
    skip_after_header: int = 0,
    string_columns: Iterable[str] = (),
    dictionary_columns: Iterable[str] = (),
    skip_row: Callable[[str], bool] | None = None,
    include_columns: Sequence[str] | None = None,
) -> Any:
    """Parse CSV ``data`` (bytes, or an uncompressed file; header at line ``skip_rows + 1``) with
    pyarrow's multi-threaded reader.

    ``dictionary_columns`` are read dictionary-encoded (kernel names repeat: one copy each).
    Rows with the wrong number of fields are skipped when ``skip_row(text)`` says so (profiler
    chatter such as ``==PID== ...`` lines) and are a :class:`FormatError` naming the line otherwise.
    ``include_columns`` (names from the header) limits conversion to the columns the caller uses:
    every row is still split and counted, but the others are never converted.
    """
    import pyarrow as pa
    import pyarrow.csv as pacsv

    bad: list[tuple[int | None, int, int, str]] = []

    def handler(row: Any) -> str:
        if skip_row is not None and skip_row(row.text):
            return "skip"
        bad.append((row.number, row.expected_columns, row.actual_columns, row.text))
        return "skip"

    types = {c: pa.string() for c in string_columns}
    types.update({c: pa.dictionary(pa.int32(), pa.string()) for c in dictionary_columns})
    read = pacsv.ReadOptions(skip_rows=skip_rows, skip_rows_after_names=skip_after_header, block_size=1 << 24)
    parse = pacsv.ParseOptions(invalid_row_handler=handler, newlines_in_values=False)
    conv = pacsv.ConvertOptions(
        column_types=types,
        strings_can_be_null=False,
        quoted_strings_can_be_null=False,
        include_columns=list(include_columns) if include_columns is not None else None,
    )
    source = str(data) if isinstance(data, Path) else io.BytesIO(data)
    try:
        table = pacsv.read_csv(source, read_options=read, parse_options=parse, convert_options=conv)
    except pa.ArrowInvalid as exc:
        msg = str(exc).split("\n")[0]
        line = None
        m = re.search(r"[Rr]ow #?(\d+)", msg)
        if m:
            line = int(m.group(1))
        raise FormatError(path, f"not a readable CSV table ({msg})", line=line) from None
    if bad:
        number, expected, actual, text = bad[0]
        line = number if number is not None and number > 0 else None
        if line is None:  # multi-threaded parsing does not number rows: find the text
            raw = data.read_bytes() if isinstance(data, Path) else data
            pos = raw.find(text.encode("utf-8", errors="replace"))
            line = raw.count(b"\n", 0, pos) + 1 if pos >= 0 else None
        more = f" (and {len(bad) - 1} more such rows)" if len(bad) > 1 else ""
        raise FormatError(path, f"expected {expected} comma-separated fields, got {actual}: {text[:80]!r}{more}", line=line)
    return table


def numeric_column(table: Any, column: str, *, path: str | Path, first_line: int, allow_null: bool = True) -> np.ndarray:
    """A pyarrow table column as float64 (NaN for empty cells); text that is not a number is a
    :class:`FormatError` naming the line. Thousands separators (``1,024.00``) are accepted."""
    import pyarrow as pa
    import pyarrow.compute as pc

    col = table.column(column)
    if pa.types.is_integer(col.type) or pa.types.is_floating(col.type):
        out = col.to_numpy().astype(np.float64, copy=False) if col.null_count == 0 else pc.cast(col, pa.float64()).to_numpy(zero_copy_only=False)
    elif pa.types.is_null(col.type):
        out = np.full(len(col), np.nan)
    else:
        s = pc.utf8_trim_whitespace(pc.cast(col, pa.string()))
        s = pc.replace_substring(s, ",", "")
        empty = pc.equal(s, "")
        s = pc.if_else(empty, pa.scalar(None, pa.string()), s)
        try:
            out = pc.cast(s, pa.float64()).to_numpy(zero_copy_only=False)
        except pa.ArrowInvalid:
            vals = s.to_pylist()
            for i, v in enumerate(vals):
                if v is None:
                    continue
                try:
                    float(v)
                except ValueError:
                    raise FormatError(path, f"column {column!r}: expected a number, got {v!r}", line=first_line + i) from None
            raise
    if not allow_null and np.isnan(out).any():
        i = int(np.flatnonzero(np.isnan(out))[0])
        raise FormatError(path, f"column {column!r} is empty", line=first_line + i)
    return out


def device_names(devices: Any) -> tuple[list[str], np.ndarray | None]:
    """GPU names from a column of ``"NVIDIA A100 (0)"`` strings (the index in parentheses
    removed), and the per-row device index when there is more than one device (else None)."""
    cat = categorical(devices)
    labels = [str(c) for c in cat.categories]
    gpus = sorted({re.sub(r"\s*\(\d+\)$", "", c) for c in labels if c})
    found = [re.search(r"\((\d+)\)\s*$", c) for c in labels]
    if len(labels) > 1 and all(found):
        idx = np.array([int(m.group(1)) for m in found], dtype=np.int64)  # type: ignore[union-attr]
        per_row = idx[np.asarray(cat.codes)]
        if per_row.size and per_row.min() != per_row.max():
            return gpus, per_row
    return gpus, None


def add_devices(devices: Any, columns: dict[str, Any], meta: dict[str, Any]) -> None:
    """Record the launches' GPUs (a column of ``"NVIDIA A100 (0)"`` strings): their name(s) as
    ``meta["gpu"]`` and, when the launches ran on more than one device, a ``device`` column."""
    gpus, index = device_names(devices)
    if gpus:
        meta["gpu"] = gpus[0] if len(gpus) == 1 else gpus
    if index is not None:
        columns["device"] = narrow(index)


def string_column(table: Any, column: str) -> Any:
    """A pyarrow table column as one pyarrow string array (nulls as empty strings)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    col = table.column(column)
    if pa.types.is_dictionary(col.type):
        col = pc.cast(col, pa.string())
    if not pa.types.is_string(col.type) and not pa.types.is_large_string(col.type):
        col = pc.cast(col, pa.string())
    col = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    return col.fill_null("")


def make_workload(df: pd.DataFrame, *, source: str, format: str, memcpy_count: int = 0, meta: dict[str, Any] | None = None) -> Any:
    """``Workload(df, ...)``, keeping categorical extra columns (such as ``mangled``) categorical
    and without pandas' fragmentation warnings for tables with hundreds of metric columns."""
    import warnings

    from simsample.workload import OPTIONAL_COLUMNS, REQUIRED_COLUMNS, Workload

    known = set(REQUIRED_COLUMNS) | set(OPTIONAL_COLUMNS)
    cats = {c: df[c] for c in df.columns if c not in known and isinstance(df[c].dtype, pd.CategoricalDtype)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pd.errors.PerformanceWarning)
        wl = Workload(df, source=source, format=format, memcpy_count=memcpy_count, meta=meta or {})
        if len(wl.kernels.columns) > 50:
            wl.kernels = wl.kernels.copy()  # one block per dtype instead of one per column
    for c, v in cats.items():
        wl.kernels[c] = pd.Categorical(v.reset_index(drop=True))
    return wl


def source_label(paths: Sequence[Path]) -> str:
    """How a workload names where it came from: the path as given, or all paths of a multi-file run."""
    return str(paths[0]) if len(paths) == 1 else ", ".join(str(p) for p in paths)


def whole(values: np.ndarray, *, path: str | Path, column: str, first_line: int) -> np.ndarray:
    """Float values that must be whole numbers, as int64 (a fraction is a FormatError)."""
    if values.size and np.any(values != np.floor(values)):
        i = int(np.flatnonzero(values != np.floor(values))[0])
        raise FormatError(path, f"column {column!r}: expected a whole number, got {values[i]!r}", line=first_line + i)
    return values.astype(np.int64)
