"""Reader of Nsight Systems CSV reports (``nsys stats --report R --format csv``).

Two reports carry one row per kernel launch:

- ``cuda_gpu_trace``: ``Start (ns)``, ``Duration (ns)``, ``CorrId``, ``GrdX..Z``, ``BlkX..Z``,
  ``Reg/Trd``, ``StcSMem (MB)``, ``DymSMem (MB)`` (``DynSMem`` in some versions), ...,
  ``Strm``, ``Name``. Memcpy and memset rows have empty grid fields: counted, not launches.
- ``cuda_kern_exec_trace`` (what the STEM artifact reads): ``API Start (ns)``, ..., ``Kernel
  Start (ns)``, ``Kernel Dur (ns)``, ..., ``GridXYZ``, ``BlockXYZ``, ``Kernel Name``; grid and block
  are ``"x y z"`` strings (found by header name, else as the last-but-two and last-but-one fields).

Headers are matched loosely (case, spaces and the unit in parentheses are ignored) because their
spelling changed between nsys versions; the unit in parentheses (``ns``, ``us``, ``ms``, ``s`` for
``nsys stats --timeunit``; ``MB``/``KB``/``B`` for shared memory, taken as decimal multiples) is
honoured. Lines before the header (``NOTICE: ...``, ``Processing [...] with [...]...``) are skipped.
Shared memory printed in MB with three decimals is only known to the nearest kB.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from simsample.sdk import (
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
    parse_triples,
    read_csv_table,
    read_head,
    task,
    to_ns,
    whole,
)

#: header keys (see :func:`_key`) the two reports are read from; other columns are not converted
_USED_KEYS = frozenset(
    "start duration corrid grdx grdy grdz blkx blky blkz regtrd stcsmem dymsmem dynsmem device strm name "
    "apistart kernelstart kerneldur devid gridxyz blockxyz kernelname".split()
)
_DECIMAL_BYTES = {"b": 1, "kb": 1000, "mb": 1000**2, "gb": 1000**3, "kib": 1024, "mib": 1024**2}


def _key(col: str) -> tuple[str, str]:
    """``"Start (ns)"`` → ``("start", "ns")``; ``"Reg/Trd"`` → ``("regtrd", "")``."""
    m = re.match(r"^(.*?)\s*\(([^)]*)\)\s*$", col)
    base, unit = (m.group(1), m.group(2)) if m else (col, "")
    return re.sub(r"[^a-z0-9]", "", base.lower()), unit.strip()


def _report_of(keys: set[str]) -> str | None:
    if {"start", "duration", "grdx", "name"} <= keys:
        return "cuda_gpu_trace"
    if {"kernelstart", "kerneldur", "kernelname"} <= keys:
        return "cuda_kern_exec_trace"
    return None


def _find_header(lines: Sequence[str]) -> tuple[int, list[str], str] | None:
    for i, line in enumerate(lines):
        if "," not in line:
            continue
        fields = next(csv.reader([line]), [])
        report = _report_of({_key(f)[0] for f in fields})
        if report:
            return i, [f.strip() for f in fields], report
    return None


class NsysCsvReader(Reader):
    name = "nsys_csv"
    description = "Nsight Systems CSV report: cuda_gpu_trace or cuda_kern_exec_trace (nsys stats --format csv)"

    def detect(self, path: Path, head: bytes) -> bool:
        return detect_text(head, lambda lines: _find_header(lines) is not None, limit=100)

    def read(self, paths: Sequence[Path], options: Mapping[str, Any]) -> Workload:
        path = paths[0]
        with task(f"reading {path.name}", None):
            return _read(path)


def _read(path: Path) -> Workload:
    found = _find_header(read_head(path, 1 << 20).decode("utf-8", errors="replace").splitlines()[:100])
    if found is None:
        raise UserError(f"{path}: no cuda_gpu_trace or cuda_kern_exec_trace header in the first 100 lines")
    h, header, report = found
    by_key = {}
    for col in header:
        by_key.setdefault(_key(col)[0], col)
    name_col = by_key.get("name") or by_key.get("kernelname")
    strings = [c for c in header if _key(c)[0] in {"apifunction", "srcmemkd", "dstmemkd"}]
    names = [c for c in header if _key(c)[0] in {"name", "kernelname", "device", "gridxyz", "blockxyz"}]
    if report == "cuda_kern_exec_trace":
        names += [c for c in header[-3:-1] if c not in names]  # grid and block by position
    used = {c for c in header if _key(c)[0] in _USED_KEYS} | set(names)
    include = [c for c in header if c in used] if len(set(header)) == len(header) else None
    table = read_csv_table(
        csv_source(path), path, skip_rows=h, string_columns=strings, dictionary_columns=names, include_columns=include
    )
    first = h + 2
    if report == "cuda_gpu_trace":
        return _gpu_trace(path, table, by_key, name_col, first)
    # Handed over in a list that is emptied as it is read: no name here keeps the table alive,
    # so each column's memory goes as soon as it is converted.
    return _kern_exec(path, [table], header, by_key, name_col, first)


def _time_scale(col: str, path: Path) -> int:
    unit = _key(col)[1] or "ns"
    scale = TIME_SCALE.get(unit.lower())
    if scale is None:
        raise FormatError(path, f"column {col!r}: unknown time unit {unit!r} (expected ns, us, ms or s)", line=None)
    return scale


def _gpu_trace(path: Path, table: Any, by_key: dict[str, str], name_col: str, first: int) -> Workload:
    gx = numeric_column(table, by_key["grdx"], path=path, first_line=first)
    rows = np.flatnonzero(~np.isnan(gx))
    memcpy_count = int(table.num_rows - rows.size)

    def col(key: str, *, required: bool = True) -> np.ndarray | None:
        name = by_key.get(key)
        if name is None:
            if required:
                raise FormatError(path, f"cuda_gpu_trace header lacks a {key!r} column", line=first - 1)
            return None
        vals = numeric_column(table, name, path=path, first_line=first)[rows]
        if np.isnan(vals).any():
            i = int(rows[np.flatnonzero(np.isnan(vals))[0]])
            raise FormatError(path, f"kernel row has no {name!r}", line=first + i)
        return vals

    def shape(key: str, *, required: bool = True) -> np.ndarray | None:
        if key in by_key:  # the usual case first: whole numbers, no gap
            fast = narrow_whole(numeric_column(table, by_key[key], path=path, first_line=first)[rows])
            if fast is not None:
                return fast
        vals = col(key, required=required)
        return None if vals is None else narrow(whole(vals, path=path, column=by_key[key], first_line=first))

    columns: dict[str, Any] = {
        "name": table.column(name_col).take(rows),
        "grid_x": shape("grdx"),
        "grid_y": shape("grdy"),
        "grid_z": shape("grdz"),
        "block_x": shape("blkx"),
        "block_y": shape("blky"),
        "block_z": shape("blkz"),
        "stream": shape("strm", required=False),
        "start_ns": _ns(col("start"), by_key["start"], path, first, rows),
        "duration_ns": _ns(col("duration"), by_key["duration"], path, first, rows),
    }
    if "regtrd" in by_key:
        columns["regs"] = shape("regtrd")
    smem = [k for k in ("stcsmem", "dymsmem", "dynsmem") if k in by_key]
    if smem:
        total = np.zeros(rows.size)
        for k in smem:
            unit = (_key(by_key[k])[1] or "B").lower()
            if unit not in _DECIMAL_BYTES:
                raise FormatError(path, f"column {by_key[k]!r}: unknown size unit {unit!r}", line=first - 1)
            total += (
                nan_to_zero(numeric_column(table, by_key[k], path=path, first_line=first)[rows]) * _DECIMAL_BYTES[unit]
            )
        columns["shmem"] = narrow(np.rint(total).astype(np.int64))
    for key in ("corrid",):
        if key in by_key:
            vals = numeric_column(table, by_key[key], path=path, first_line=first)[rows]
            fast = narrow_whole(vals)
            columns["correlation"] = fast if fast is not None else narrow(np.nan_to_num(vals, nan=-1).astype(np.int64))
    meta: dict[str, Any] = {"profiler": "nsys", "report": "cuda_gpu_trace"}
    if "device" in by_key:
        add_devices(table.column(by_key["device"]).take(rows), columns, meta)
    df = launch_table(columns)
    return Workload(df, source=str(path), format="nsys_csv", memcpy_count=memcpy_count, meta=meta)


def _kern_exec(
    path: Path, holder: list[Any], header: list[str], by_key: dict[str, str], name_col: str, first: int
) -> Workload:
    """The launch table of a ``cuda_kern_exec_trace`` report; ``holder`` holds the scanned table,
    which is taken out of it and loses each column once converted (at 5*10^7 launches a float64
    column is 400 MB, and the converted ones are alive at the same time)."""
    table = holder.pop()
    grid_col = by_key.get("gridxyz") or header[-3]
    block_col = by_key.get("blockxyz") or header[-2]

    def num(key: str) -> np.ndarray:
        nonlocal table
        vals = numeric_column(table, by_key[key], path=path, first_line=first)
        table = table.drop_columns([by_key[key]])
        if np.isnan(vals).any():
            i = int(np.flatnonzero(np.isnan(vals))[0])
            raise FormatError(path, f"row has no {by_key[key]!r}", line=first + i)
        return vals

    gx, gy, gz = parse_triples(table.column(grid_col), path=path, column=grid_col, first_line=first)
    bx, by, bz = parse_triples(table.column(block_col), path=path, column=block_col, first_line=first)
    table = table.drop_columns([c for c in {grid_col, block_col} if c != name_col])
    columns: dict[str, Any] = {
        "name": table.column(name_col),
        "grid_x": narrow(gx),
        "grid_y": narrow(gy),
        "grid_z": narrow(gz),
        "block_x": narrow(bx),
        "block_y": narrow(by),
        "block_z": narrow(bz),
        "start_ns": _ns(num("kernelstart"), by_key["kernelstart"], path, first, None),
        "duration_ns": _ns(num("kerneldur"), by_key["kerneldur"], path, first, None),
    }
    tie = ()
    if "apistart" in by_key:
        columns["api_start_ns"] = _ns(num("apistart"), by_key["apistart"], path, first, None)
        tie = ("api_start_ns",)
    if "devid" in by_key:
        columns["device"] = narrow(whole(num("devid"), path=path, column=by_key["devid"], first_line=first))
    df = launch_table(columns, tie_break=tie)
    meta = {"profiler": "nsys", "report": "cuda_kern_exec_trace"}
    return Workload(df, source=str(path), format="nsys_csv", memcpy_count=0, meta=meta)


def _ns(values: np.ndarray, column: str, path: Path, first: int, rows: np.ndarray | None) -> np.ndarray:
    """A time column in nanoseconds, refused (file, line, column, value) where it overflows int64."""
    scale = _time_scale(column, path)
    check_int64(values, path=path, column=column, first_line=first, scale=scale, rows=rows)
    return to_ns(values, scale)


@hookimpl
def register_readers(register):
    register(NsysCsvReader())
