"""Reader of any per-kernel CSV whose columns are named on the command line.

Research artifacts publish per-kernel tables in their own layout (``Name,...,Duration``), with
no profiler preamble to recognise. Rather than one reader per layout, ``--format csv --columns
name=Name,duration_ns=Duration`` says which column holds what: the key is the workload column
(the suffix of a time column is its unit: ``duration_us=Time`` reads microseconds), the value the
CSV header's name. Only ``name`` and a duration (or ``cycles``) are needed; missing launch shapes
read as 1 and a missing start as back-to-back launches in row order, so the row order is the
launch order. This reader is never picked by detection: a bare CSV says nothing about its units.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from simsample.sdk import (
    CSV_UNITS,
    FormatError,
    Reader,
    UserError,
    Workload,
    check_int64,
    csv_source,
    from_records,
    hookimpl,
    numeric_column,
    parse_columns,
    read_csv_table,
    read_head,
    string_column,
    to_ns,
)


class GenericCsvReader(Reader):
    name = "csv"
    description = "any per-kernel CSV, with --columns name=COL,duration_ns=COL,... (never detected)"

    def detect(self, path: Path, head: bytes) -> bool:
        return False

    def read(self, paths: Sequence[Path], options: Mapping[str, Any]) -> Workload:
        spec = options.get("columns")
        if not spec:
            raise UserError("--format csv needs --columns, such as --columns name=Name,duration_ns=Duration")
        return read_generic_csv(paths[0], parse_columns(spec) if isinstance(spec, str) else dict(spec))


def read_generic_csv(path: Path, mapping: Mapping[str, str]) -> Workload:
    head = read_head(path, 1 << 16).decode("utf-8", errors="replace").lstrip("\ufeff").splitlines()
    if not head:
        raise UserError(f"{path}: file is empty")
    import csv

    raw_header = next(csv.reader([head[0]]), [])
    header = [c.strip() for c in raw_header]
    shown = ", ".join(repr(c) for c in header[:12]) + (" ..." if len(header) > 12 else "")
    absent = [f"{col!r} (for {key})" for key, col in mapping.items() if col not in header]
    if absent:
        raise FormatError(
            path, f"no column {', '.join(absent)} in the header (columns: {shown}); fix --columns", line=1
        )
    twice = sorted({col for col in mapping.values() if header.count(col) > 1})
    if twice:
        raise FormatError(path, f"the header names column {twice[0]!r} twice (columns: {shown}); rename one", line=1)
    # the names as the file spells them: a header written "Kernel Name , Time (us)" is matched
    # after trimming, but the table's columns keep their spaces
    raw = {col: raw_header[header.index(col)] for col in mapping.values()}
    table = read_csv_table(
        csv_source(path),
        path,
        skip_rows=0,
        string_columns=[raw[mapping["name"]]],
        include_columns=sorted(set(raw.values())),
    )
    first = 2
    names = string_column(table, raw[mapping["name"]])
    names_list = names.to_pylist() if hasattr(names, "to_pylist") else list(names)
    for i, n in enumerate(names_list):
        if n is None or not str(n).strip():
            raise FormatError(path, f"column {mapping['name']!r} (name) is empty", line=first + i)
    records: dict[str, Any] = {"name": [str(n) for n in names_list]}
    n = len(names_list)
    for key, col in mapping.items():
        if key == "name":
            continue
        vals = numeric_column(
            table, raw[col], path=path, first_line=first, allow_null=False, thousands=False, label=col
        )
        if key.startswith(("duration_", "start_")):
            what, unit = key.split("_")
            scale = CSV_UNITS[unit]
            check_int64(vals, path=path, column=col, first_line=first, scale=scale)
            if what == "duration" and (vals < 0).any():
                i = int(np.flatnonzero(vals < 0)[0])
                raise FormatError(path, f"column {col!r}: negative duration {vals[i]!r}", line=first + i)
            records[f"{what}_ns"] = to_ns(vals, scale)
        else:
            check_int64(vals, path=path, column=col, first_line=first)
            if (vals != np.floor(vals)).any() or (vals < 0).any():
                i = int(np.flatnonzero((vals != np.floor(vals)) | (vals < 0))[0])
                raise FormatError(
                    path, f"column {col!r} ({key}): expected a whole number ≥ 0, got {vals[i]!r}", line=first + i
                )
            records[key] = vals.astype(np.int64)
    for key in ("grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z"):
        records.setdefault(key, np.ones(n, dtype=np.int64))
    if "duration_ns" not in records:
        records["duration_ns"] = np.full(n, np.nan)
    if "start_ns" not in records:
        dur = records["duration_ns"]
        records["start_ns"] = (
            np.concatenate([[0], np.cumsum(dur)[:-1]]).astype(np.int64)
            if n and not np.isnan(dur).any()
            else np.zeros(n, dtype=np.int64)
        )
    meta = {"profiler": "csv", "columns": dict(mapping)}
    return from_records(records, source=str(path), format="csv", meta=meta)


@hookimpl
def register_readers(register):
    register(GenericCsvReader())
