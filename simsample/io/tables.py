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
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import lazy_loader as lazy
import numpy as np

from simsample.errors import FormatError

pd = lazy.load("pandas")

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
    out = np.rint(v * float(scale)) if scale != 1 else np.rint(v)
    if out.size and max(float(out.max()), -float(out.min())) >= _EXACT_LIMIT:
        # Too large for float64 to hold every nanosecond: redo through the decimal text.
        return np.array([decimal_to_ns(repr(float(x)), scale) for x in v], dtype=np.int64)
    return out.astype(np.int64)


def decimal_to_ns(text: str, scale: int) -> int:
    """Exact nanoseconds of a decimal string in a unit worth ``scale`` ns (half-even rounding)."""
    from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation  # rarely needed: not at start-up

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


def parse_triples(
    values: Any, *, path: str | Path, column: str, first_line: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Split ``"(x, y, z)"``, ``"x y z"`` or ``"[x, y, z]"`` strings into three integer arrays
    (each in the narrowest type that holds it, as :func:`narrow` gives).

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
            raise FormatError(
                path,
                f"column {column!r}: expected three numbers such as '(256, 1, 1)', got {u!r}",
                line=first_line + row,
            )
        parsed[i] = [int(n) for n in nums]
    if (codes < 0).any():
        row = int(np.flatnonzero(codes < 0)[0])
        raise FormatError(path, f"column {column!r} is empty", line=first_line + row)
    # Narrow the few distinct values first, then gather: three small contiguous columns, never an
    # (n, 3) int64 block (24 bytes a launch at 5*10^7 launches is over a gigabyte).
    x, y, z = (narrow(parsed[:, j])[codes] for j in range(3))
    return x, y, z


def narrow(values: np.ndarray) -> np.ndarray:
    """Integers in the smallest of uint8/uint16/uint32/int32/int64 that holds them."""
    a = np.asarray(values)
    if a.size == 0:
        return a.astype(np.uint16)
    lo, hi = int(a.min()), int(a.max())
    for dt in (np.uint8, np.uint16, np.uint32) if lo >= 0 else (np.int32,):
        info = np.iinfo(dt)
        if info.min <= lo and hi <= info.max:
            return a.astype(dt, copy=False)
    return a.astype(np.int64, copy=False)


def narrow_whole(values: np.ndarray) -> np.ndarray | None:
    """``narrow(values.astype(np.int64))`` for float ``values`` that are all whole numbers in the
    int32 or uint32 range, without the int64 copy; ``None`` for anything else (NaN, a fraction, a
    larger value, no value), where the caller's own checks name the offending row."""
    if values.size == 0:
        return None
    lo, hi = float(values.min()), float(values.max())  # NaN fails every comparison below
    if lo >= 0 and hi <= np.iinfo(np.uint32).max:
        dt: type = (
            np.uint8 if hi <= np.iinfo(np.uint8).max else np.uint16 if hi <= np.iinfo(np.uint16).max else np.uint32
        )
    elif lo >= np.iinfo(np.int32).min and hi <= np.iinfo(np.int32).max:
        dt = np.int32
    else:
        return None
    out = values.astype(dt)
    return out if np.array_equal(out, values) else None


def nan_to_zero(values: np.ndarray) -> np.ndarray:
    """``np.nan_to_num(values)``, in one pass (and no copy) when every value is finite."""
    return values if np.isfinite(values).all() else np.nan_to_num(values)


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
    from simsample.io.files import compression_of, read_all
    from simsample.io.limits import check_size

    if compression_of(path) is None:
        check_size(path, "profile")  # pyarrow holds the whole table in memory
        return Path(path)
    return read_all(path)


#: bytes read from the start of a CSV to find its header and first data row (for the compiled
#: scanner; profiler preambles are a few short lines)
_CSV_HEAD_BYTES = 1 << 20
#: at most this many threads scan one CSV
_CSV_MAX_THREADS = 8


def corr_column(column: str) -> str:
    """The name of the column of correlation ids that :func:`read_csv_table` split off ``column``."""
    return f"{column} [corr]"


def csv_scanner() -> tuple[Any, str | None]:
    """The compiled CSV column scanner (:mod:`simsample._csv_columns`) and ``None``, or ``None`` and
    why it cannot be used (not built, or ``SIMSAMPLE_PURE_PYTHON`` set: checked at each call)."""
    from simsample.native import import_optional

    return import_optional("_csv_columns", unavailable="the C++ extension simsample._csv_columns is not available")


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
    corr_suffix_columns: Iterable[str] = (),
) -> Any:
    """Parse CSV ``data`` (bytes, or an uncompressed file; header at line ``skip_rows + 1``) into a
    pyarrow table: with the compiled scanner when it is built and takes the input, else with
    pyarrow's multi-threaded reader.

    ``dictionary_columns`` are read dictionary-encoded (kernel names repeat: one copy each).
    Rows with the wrong number of fields are skipped when ``skip_row(text)`` says so (profiler
    chatter such as ``==PID== ...`` lines) and are a :class:`FormatError` naming the line otherwise.
    ``include_columns`` (names from the header) limits conversion to the columns the caller uses:
    every row is still split and counted, but the others are never converted.

    The compiled scanner needs ``include_columns``. Its numeric columns are float64 with NaN for
    empty cells where pyarrow infers int64, float64 or null columns (:func:`numeric_column` reads
    every form alike); its ``corr_suffix_columns`` (string columns of nvprof's ``"name [corrId]"``
    names) come as a dictionary of the names without the suffix plus an int64 column
    :func:`corr_column` of the ids (-1: none), where pyarrow gives the strings as they are
    (:func:`split_corr_names` reads both forms). Input it does not take exactly as pyarrow would
    (a bare carriage return, a quoted value running past its line, a number in another form) goes
    to pyarrow, which then gives its usual result or error.
    """
    string_columns = list(string_columns)
    dictionary_columns = list(dictionary_columns)
    corr_suffix_columns = list(corr_suffix_columns)
    scanner, _ = csv_scanner()
    if scanner is not None and include_columns is not None:
        scanned = _scan_csv(
            scanner,
            data,
            skip_rows=skip_rows,
            skip_after_header=skip_after_header,
            include_columns=list(include_columns),
            string_columns=string_columns,
            dictionary_columns=dictionary_columns,
            corr_suffix_columns=corr_suffix_columns,
        )
        if scanned is not None:
            table, bad_rows = scanned
            bad = [
                (None, expected, fields, text)
                for expected, fields, text in bad_rows
                if skip_row is None or not skip_row(text)
            ]
            if bad:
                _raise_bad_rows(data, path, bad)
            return table
    return _read_csv_arrow(
        data,
        path,
        skip_rows=skip_rows,
        skip_after_header=skip_after_header,
        string_columns=string_columns + corr_suffix_columns,
        dictionary_columns=dictionary_columns,
        skip_row=skip_row,
        include_columns=include_columns,
    )


def _read_csv_arrow(
    data: bytes | Path,
    path: str | Path,
    *,
    skip_rows: int,
    skip_after_header: int,
    string_columns: Sequence[str],
    dictionary_columns: Sequence[str],
    skip_row: Callable[[str], bool] | None,
    include_columns: Sequence[str] | None,
) -> Any:
    """:func:`read_csv_table` with pyarrow's reader."""
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
        _raise_bad_rows(data, path, bad)
    return table


def _raise_bad_rows(data: bytes | Path, path: str | Path, bad: Sequence[tuple[int | None, int, int, str]]) -> None:
    """The :class:`FormatError` for rows with the wrong number of fields: ``(row number or None,
    expected fields, actual fields, text)`` each, the first one named."""
    number, expected, actual, text = bad[0]
    line = number if number is not None and number > 0 else None
    if line is None:  # multi-threaded parsing does not number rows: find the text
        raw = data.read_bytes() if isinstance(data, Path) else data
        pos = raw.find(text.encode("utf-8", errors="replace"))
        line = raw.count(b"\n", 0, pos) + 1 if pos >= 0 else None
    more = f" (and {len(bad) - 1} more such rows)" if len(bad) > 1 else ""
    raise FormatError(path, f"expected {expected} comma-separated fields, got {actual}: {text[:80]!r}{more}", line=line)


def _scan_csv(
    scanner: Any,
    data: bytes | Path,
    *,
    skip_rows: int,
    skip_after_header: int,
    include_columns: list[str],
    string_columns: list[str],
    dictionary_columns: list[str],
    corr_suffix_columns: list[str],
) -> tuple[Any, list[tuple[int, int, str]]] | None:
    """:func:`read_csv_table` with the compiled scanner: the table and the rows with the wrong
    number of fields (expected, actual, text), or ``None`` when the scanner does not take the input."""
    import pyarrow as pa

    if isinstance(data, Path):
        with open(data, "rb") as fh:
            head = fh.read(_CSV_HEAD_BYTES)
    else:
        head = bytes(memoryview(data)[:_CSV_HEAD_BYTES])
    found = _locate_csv_body(scanner, head, skip_rows, skip_after_header)
    if found is None:
        return None
    names, start = found
    index = {n: i for i, n in enumerate(names)}
    extra = [corr_column(c) for c in include_columns if c in corr_suffix_columns]
    if len(index) != len(names) or any(c not in index for c in include_columns) or any(c in index for c in extra):
        return None  # duplicate or missing names: pyarrow's rules (and errors) apply
    kinds = [
        "corr_name"
        if c in corr_suffix_columns
        else "dictionary"
        if c in dictionary_columns or c in string_columns
        else "number"
        for c in include_columns
    ]
    specs = [(index[c], k) for c, k in zip(include_columns, kinds)]
    from simsample.io.workers import usable_cpus

    threads = min(_CSV_MAX_THREADS, max(2, usable_cpus()))
    if isinstance(data, Path):
        result = scanner.scan_file(os.fsencode(data), start, len(names), specs, threads)
    else:
        result = scanner.scan_buffer(data, start, len(names), specs, threads)
    if isinstance(result, str):  # why the scanner does not take this input
        return None
    arrays: list[Any] = []
    ids: list[Any] = []
    for c, kind, col in zip(include_columns, kinds, result["columns"]):
        if kind == "number":
            arrays.append(pa.array(col))
            continue
        dictionary = pa.DictionaryArray.from_arrays(pa.array(col[0]), pa.array(col[1], type=pa.string()))
        if kind == "corr_name":
            ids.append(pa.array(col[2]))
        elif c not in dictionary_columns:  # a string column: the strings themselves
            dictionary = dictionary.dictionary.take(dictionary.indices)
        arrays.append(dictionary)
    table = pa.Table.from_arrays(arrays + ids, names=include_columns + extra)
    return table, [(len(names), fields, text) for fields, text in result["bad_rows"]]


def _locate_csv_body(scanner: Any, head: bytes, skip_rows: int, skip_after_header: int) -> tuple[list[str], int] | None:
    """The header's names and the byte offset of the first data row, as pyarrow finds them: after
    ``skip_rows`` lines (empty ones count), the header, then ``skip_after_header`` rows. ``None``
    where pyarrow's rules would need more care than the scanner takes: a byte-order mark, a bare
    carriage return, an empty line at the header or after it, a skipped row with another number
    of fields than the header, a header that is not UTF-8 or not in ``head``."""
    if head.startswith(b"\xef\xbb\xbf"):
        return None
    pos = 0
    for _ in range(skip_rows):
        nl = head.find(b"\n", pos)
        if nl < 0:
            return None
        pos = nl + 1
    rows: list[list[bytes]] = []
    for _ in range(1 + skip_after_header):
        nl = head.find(b"\n", pos)
        if nl < 0:
            return None
        line = head[pos:nl].removesuffix(b"\r")
        fields = scanner.split_line(line) if line else None
        if fields is None or len(fields) != len(rows[0] if rows else fields):
            return None
        rows.append(fields)
        pos = nl + 1
    if b"\r" in head[:pos].replace(b"\r\n", b""):
        return None
    try:
        return [f.decode("utf-8") for f in rows[0]], pos
    except UnicodeDecodeError:
        return None


def split_corr_names(table: Any, column: str, rows: np.ndarray) -> tuple[pd.Categorical, np.ndarray | None]:
    """The names of ``column`` (read as a ``corr_suffix_columns`` column) at ``rows``, without
    nvprof's ``" [corrId]"`` suffix, as a categorical whose categories come in order of first
    appearance among those rows; and the ids (int64, -1 where a name had none), or ``None`` when no
    name has one. Reads both forms :func:`read_csv_table` gives (see there)."""
    import pyarrow as pa

    ids_column = corr_column(column)
    if ids_column not in table.column_names:  # pyarrow's strings: split them here
        names, ids = strip_corr_suffixes(string_column(table, column).take(pa.array(rows)))
        return categorical(names), ids
    col = table.column(column).combine_chunks()
    codes, first = pd.factorize(col.indices.to_numpy(zero_copy_only=False)[rows])
    categories = np.asarray(col.dictionary.to_pylist(), dtype=object)[first]
    cat = pd.Categorical.from_codes(codes.astype(np.int32), categories=pd.Index(categories, dtype=object))
    ids = table.column(ids_column).to_numpy()[rows]
    return cat, ids if (ids >= 0).any() else None


#: a number written with thousands separators, as profilers do (``1,024``, ``12,345,678.5``)
_GROUPED = r"^[+-]?[0-9]{1,3}(,[0-9]{3})+(\.[0-9]*)?([eE][+-]?[0-9]+)?$"


def numeric_column(
    table: Any,
    column: str,
    *,
    path: str | Path,
    first_line: int,
    allow_null: bool = True,
    thousands: bool = True,
    label: str | None = None,
) -> np.ndarray:
    """A pyarrow table column as float64 (NaN for empty cells); text that is not a number is a
    :class:`FormatError` naming the line.

    Thousands separators are accepted only where they group digits by three (``1,024.00``, as
    Nsight Compute writes them), and not at all with ``thousands=False`` (a user's own table,
    where ``1,500`` may be a decimal comma): a comma anywhere else (``"1,5"``) would silently read
    as 15, so it is refused naming the cell. ``label`` names the column in messages (default
    ``column``)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    col = table.column(column)
    name = column if label is None else label
    if pa.types.is_integer(col.type) or pa.types.is_floating(col.type):
        out = (
            col.to_numpy().astype(np.float64, copy=False)
            if col.null_count == 0
            else pc.cast(col, pa.float64()).to_numpy(zero_copy_only=False)
        )
    elif pa.types.is_null(col.type):
        out = np.full(len(col), np.nan)
    else:
        s = pc.utf8_trim_whitespace(pc.cast(col, pa.string()))
        comma = pc.fill_null(pc.match_substring(s, ","), False)
        if pc.any(comma).as_py():
            ok = (
                pc.fill_null(pc.match_substring_regex(s, _GROUPED), False)
                if thousands
                else pc.fill_null(pc.equal(s, ""), True)
            )
            bad = np.flatnonzero(np.asarray(pc.and_(comma, pc.invert(ok)).to_numpy(zero_copy_only=False)))
            if bad.size:
                i = int(bad[0])
                why = (
                    "a comma that does not separate thousands (a decimal comma?)"
                    if thousands
                    else "a comma (thousands separators and decimal commas are ambiguous here)"
                )
                raise FormatError(
                    path,
                    f"column {name!r}: {s[i].as_py()!r} is not a number: {why}; write plain numbers with a decimal "
                    "point, such as 1500 or 1.5",
                    line=first_line + i,
                )
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
                    raise FormatError(
                        path, f"column {name!r}: expected a number, got {v!r}", line=first_line + i
                    ) from None
            raise
    if not allow_null and np.isnan(out).any():
        i = int(np.flatnonzero(np.isnan(out))[0])
        raise FormatError(path, f"column {name!r} is empty", line=first_line + i)
    if np.isinf(out).any():
        # NaN stands for an empty cell (the compiled scanner gives NaN there); infinity, written
        # as such or as a number too large for a float (1e400), is a damaged value: refused here
        bad = np.isinf(out)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise FormatError(
                path,
                f"column {name!r}: value {col[i].as_py()} is out of range (not a finite number)",
                line=first_line + i,
            )
    return out


#: the largest magnitude an int64 column can hold (2**63 - 1); floats at or beyond 2**63 wrap
INT64_LIMIT = float(2**63)


def check_int64(
    values: np.ndarray,
    *,
    path: str | Path,
    column: str,
    first_line: int,
    scale: float = 1.0,
    rows: np.ndarray | None = None,
) -> None:
    """Refuse values that do not fit an int64 after multiplying by ``scale`` (say, a grid of
    1e26 or a duration of 1e308 s), naming file, line, column and value: numpy would silently
    wrap them to -9223372036854775808."""
    v = np.asarray(values, dtype=np.float64)
    if not v.size:
        return
    with np.errstate(over="ignore", invalid="ignore"):
        scaled = np.abs(v * scale)
    bad = ~(scaled < INT64_LIMIT) & ~np.isnan(v)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        line = first_line + int(rows[i] if rows is not None else i)
        raise FormatError(
            path,
            f"column {column!r}: value {float(v[i]):g} is out of range (a whole number of at most {2**63 - 1:,} "
            "after conversion to ns or to an integer)",
            line=line,
        )


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


def make_workload(
    df: pd.DataFrame, *, source: str, format: str, memcpy_count: int = 0, meta: dict[str, Any] | None = None
) -> Any:
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
    """Float values that must be whole numbers, as int64 (a fraction or a value beyond int64 is a FormatError)."""
    check_int64(values, path=path, column=column, first_line=first_line)
    if values.size and np.any(values != np.floor(values)):
        i = int(np.flatnonzero(values != np.floor(values))[0])
        raise FormatError(path, f"column {column!r}: expected a whole number, got {values[i]!r}", line=first_line + i)
    return values.astype(np.int64)
