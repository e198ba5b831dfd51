"""Reader of nvprof GPU traces (``nvprof --print-gpu-trace --csv``).

Layout: ``==PID==`` preamble lines, a quoted header (``"Start","Duration","Grid X",...,"Name"``), a
units row (``ms,us,,,,,,,,B,B,KB,MB/s,,,,``) and one row per GPU activity. Units differ from file
to file (s/ms/us/ns for times, B/KB/MB for sizes) and are converted exactly: times to integer ns,
shared memory to bytes (nvprof's KB are 1024 bytes). Memcpy and memset rows (``[CUDA memcpy
HtoD]``, ``[CUDA memset]``: every row without a grid) are counted in ``memcpy_count`` and kept out
of the launches. Older nvprof appends the correlation id to kernel names (``vecAdd(float*) [1168]``);
the suffix is removed and kept as the ``correlation`` column, which newer layouts give directly
(``Correlation_ID``).

``nvprof --metrics`` CSVs are recognised but refused with a message: the summary form aggregates
per kernel name and the per-launch form has no launch shapes, so neither is a launch table.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from simsample.sdk import (
    BINARY_BYTE_SCALE,
    TIME_SCALE,
    FormatError,
    Reader,
    UserError,
    Workload,
    add_devices,
    check_int64,
    csv_source,
    detect_text,
    hookimpl,
    launch_table,
    nan_to_zero,
    narrow,
    narrow_whole,
    numeric_column,
    read_csv_table,
    read_head,
    split_corr_names,
    task,
    to_ns,
    whole,
)

_REQUIRED = ("Start", "Duration", "Grid X", "Grid Y", "Grid Z", "Block X", "Block Y", "Block Z", "Name")
#: the columns a launch table is built from (the others, such as Size and Throughput, are not converted)
_USED = frozenset(
    _REQUIRED + ("Stream", "Registers Per Thread", "Static SMem", "Dynamic SMem", "Correlation_ID", "Device")
)
_TIME_UNITS = ("s", "ms", "us", "ns")
_BYTE_UNITS = tuple(BINARY_BYTE_SCALE)
_RATE_UNITS = tuple(f"{u}/s" for u in _BYTE_UNITS)
#: which units each unit-bearing column may carry
_UNITS_OF = {
    "Start": _TIME_UNITS,
    "Duration": _TIME_UNITS,
    "Static SMem": _BYTE_UNITS,
    "Dynamic SMem": _BYTE_UNITS,
    "Size": _BYTE_UNITS,
    "Throughput": _RATE_UNITS,
}


def _split_csv_line(line: str) -> list[str]:
    return next(csv.reader([line]), [])


def _header_index(lines: Sequence[str]) -> int | None:
    """Index of the first line that is neither profiler chatter (``==PID==``) nor blank."""
    for i, line in enumerate(lines):
        s = line.strip()
        if not s or s.startswith("=="):
            continue
        return i
    return None


def _kind(header: Sequence[str]) -> str | None:
    cols = set(header)
    if {"Start", "Duration", "Name"} & cols and ("Grid X" in cols or "Block X" in cols):
        return "trace"  # a needed column missing is named by the reader, not "unrecognised"
    if {"Kernel", "Invocations", "Metric Name"} <= cols:
        return "metrics-summary"
    if {"Kernel", "Correlation_ID"} <= cols or (
        {"Device", "Context", "Stream", "Kernel"} <= cols and "Start" not in cols
    ):
        return "metrics-per-launch"
    return None


def _recognise(lines: list[str]) -> bool:
    i = _header_index(lines)
    if i is None or not lines[i].lstrip().startswith('"'):
        return False
    return _kind(_split_csv_line(lines[i])) is not None


class NvprofReader(Reader):
    name = "nvprof"
    description = "nvprof GPU trace CSV (--print-gpu-trace --csv): ==PID== preamble, header, units row"

    def detect(self, path: Path, head: bytes) -> bool:
        return detect_text(head, _recognise, limit=64)

    def read(self, paths: Sequence[Path], options: Mapping[str, Any]) -> Workload:
        path = paths[0]
        with task(f"reading {path.name}", None):
            return _read(path)


def _read(path: Path) -> Workload:
    first = read_head(path, 1 << 20).decode("utf-8", errors="replace").splitlines()[:200]
    h = _header_index(first)
    if h is None:
        raise UserError(f"{path}: no CSV header after the ==PID== preamble (an empty nvprof output?)")
    header = [c.strip() for c in _split_csv_line(first[h])]
    kind = _kind(header)
    if kind == "metrics-summary":
        raise UserError(
            f"{path}: is an nvprof --metrics summary (one row per kernel name and metric), not a per-launch "
            "trace; record one with `nvprof --print-gpu-trace --csv`"
        )
    if kind == "metrics-per-launch":
        raise UserError(
            f"{path}: is an nvprof per-launch metrics table, which has no start times or launch shapes; "
            "read the matching `nvprof --print-gpu-trace --csv` trace instead"
        )
    missing = [c for c in _REQUIRED if c not in header]
    if missing:
        raise FormatError(path, f"nvprof trace header lacks column(s) {', '.join(missing)}", line=h + 1)
    if h + 1 >= len(first):
        raise FormatError(path, "expected a units row after the header (such as 'ms,us,,,...')", line=h + 2)
    units_line = first[h + 1]
    units = [u.strip() for u in _split_csv_line(units_line)]
    if units and re.fullmatch(r"-?[\d.]+", units[0] or "x"):
        raise FormatError(
            path, "expected a units row after the header (such as 'ms,us,,,...'), found a data row", line=h + 2
        )
    unit_of: dict[str, str] = {}
    for col, unit in zip(header, units):
        allowed = _UNITS_OF.get(col)
        if allowed is None or unit == "":
            continue
        if unit not in allowed:
            raise FormatError(
                path,
                f"units row: column {col!r} has unknown unit {unit!r} (expected one of {', '.join(allowed)})",
                line=h + 2,
            )
        unit_of[col] = unit
    for col in ("Start", "Duration"):
        if col not in unit_of:
            raise FormatError(
                path,
                f"units row: column {col!r} has no time unit (expected one of {', '.join(_TIME_UNITS)})",
                line=h + 2,
            )

    table = read_csv_table(
        csv_source(path),
        path,
        skip_rows=h,
        skip_after_header=1,
        string_columns=[c for c in ("Context",) if c in header],
        dictionary_columns=[c for c in ("Device",) if c in header],
        corr_suffix_columns=["Name"],
        skip_row=lambda text: text.lstrip().startswith("=="),
        include_columns=[c for c in header if c in _USED] if len(set(header)) == len(header) else None,
    )
    first_data = h + 3
    gx = numeric_column(table, "Grid X", path=path, first_line=first_data)
    is_kernel = ~np.isnan(gx)
    rows = np.flatnonzero(is_kernel)
    n_activities = table.num_rows
    memcpy_count = int(n_activities - rows.size)

    def kcol(col: str) -> np.ndarray:
        return numeric_column(table, col, path=path, first_line=first_data)[rows]

    def shape(col: str) -> np.ndarray:
        vals = kcol(col)
        if (vals < 0).any():
            i = int(rows[np.flatnonzero(vals < 0)[0]])
            raise FormatError(
                path,
                f"column {col!r}: negative value {float(vals[np.flatnonzero(vals < 0)[0]]):g}",
                line=first_data + i,
            )
        fast = narrow_whole(vals)  # the usual case first: whole numbers, no gap
        if fast is not None:
            return fast
        if np.isnan(vals).any():
            i = int(rows[np.flatnonzero(np.isnan(vals))[0]])
            raise FormatError(path, f"kernel row has no {col!r}", line=first_data + i)
        check_int64(vals, path=path, column=col, first_line=first_data, rows=rows)
        return narrow(whole(vals, path=path, column=col, first_line=first_data))

    start = kcol("Start")
    dur = kcol("Duration")
    for col, vals in (("Start", start), ("Duration", dur)):
        if np.isnan(vals).any():
            i = int(rows[np.flatnonzero(np.isnan(vals))[0]])
            raise FormatError(path, f"kernel row has no {col!r}", line=first_data + i)
    for col, vals in (("Start", start), ("Duration", dur)):
        check_int64(vals, path=path, column=col, first_line=first_data, scale=TIME_SCALE[unit_of[col]], rows=rows)
    names, corr_from_name = split_corr_names(table, "Name", rows)
    columns: dict[str, Any] = {
        "name": names,
        "grid_x": shape("Grid X"),
        "grid_y": shape("Grid Y"),
        "grid_z": shape("Grid Z"),
        "block_x": shape("Block X"),
        "block_y": shape("Block Y"),
        "block_z": shape("Block Z"),
        "stream": shape("Stream") if "Stream" in header else None,
        "start_ns": to_ns(start, TIME_SCALE[unit_of["Start"]]),
        "duration_ns": to_ns(dur, TIME_SCALE[unit_of["Duration"]]),
    }
    if "Registers Per Thread" in header:
        columns["regs"] = shape("Registers Per Thread")
    if "Static SMem" in header or "Dynamic SMem" in header:
        shmem = np.zeros(rows.size)
        for col in ("Static SMem", "Dynamic SMem"):
            if col in header:
                vals = nan_to_zero(kcol(col))
                shmem += vals * BINARY_BYTE_SCALE[unit_of.get(col, "B")]
        columns["shmem"] = narrow(np.rint(shmem).astype(np.int64))
    if "Correlation_ID" in header:
        corr = kcol("Correlation_ID")
        fast = narrow_whole(corr)
        columns["correlation"] = fast if fast is not None else narrow(np.nan_to_num(corr, nan=-1).astype(np.int64))
    elif corr_from_name is not None:
        columns["correlation"] = narrow(corr_from_name)
    meta: dict[str, Any] = {"profiler": "nvprof", "units": dict(unit_of)}
    if "Device" in header:
        add_devices(table.column("Device").take(rows), columns, meta)
    df = launch_table(columns)
    for line in first[:h]:
        m = re.search(r"command: (.*)$", line)
        if m:
            meta["command"] = m.group(1).strip()
            break
    return Workload(df, source=str(path), format="nvprof", memcpy_count=memcpy_count, meta=meta)


@hookimpl
def register_readers(register):
    register(NvprofReader())
