"""Reader of Nsight Compute CSV exports: the raw page (``ncu --csv --page raw``) and the long form.

- Raw page: one row per profiled launch; a header of metric names, a units row, then ``ID``,
  ``Kernel Name``, ``Block Size`` ``"(x, y, z)"``, ``Grid Size``, ... and one column per metric.
- Long form (``--page details`` and ``--metrics`` output): one row per (launch, metric) with
  ``ID``, ``Kernel Name``, ..., ``Metric Name``, ``Metric Unit``, ``Metric Value``.

Either becomes one row per launch whose metric columns carry the exact ncu metric names
(``smsp__inst_executed.sum``, ``launch__grid_size``, ...) as float64, converted to base units
(time in nanoseconds, sizes in bytes, rates per second; ncu's ``Kbyte``/``Mbyte`` are decimal)
because ncu scales units per value (``usecond`` in one row, ``msecond`` in the next). Numbers may
carry thousands separators (``1,024.00``). Metrics that are not numbers (instanced lists such as
``32.00; 32.00; ...``, names) are dropped; ``device__attribute_*`` values describe the GPU, not the
launch, and go to ``meta["device_attributes"]``.

ncu has no timeline: ``duration_ns`` comes from ``gpu__time_duration.sum`` (``gpu__time_duration``
in old versions) when present, else the workload is untimed; ``start_ns`` is 0. Kernel ids are
ncu's ``ID``. Old versions give no ``Block Size``/``Grid Size`` columns; then ``launch__grid_size``
and ``launch__block_size`` (totals) stand in as ``grid_x``/``block_x`` with y = z = 1, and
``meta["launch_shape"]`` says ``"totals"``. Such a workload can be planned on directly (PKA) or
joined onto a timeline with ``--join`` (:mod:`simsample.io.join`).
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import lazy_loader as lazy
import numpy as np

from simsample.sdk import (
    FormatError,
    Reader,
    UserError,
    Workload,
    csv_source,
    detect_text,
    hookimpl,
    make_workload,
    narrow,
    parse_triples,
    read_all,
    read_csv_table,
    read_head,
    task,
)

pd = lazy.load("pandas")

#: columns that describe the launch or the run, not metrics
_ATTRS = {
    "ID",
    "Process ID",
    "Process Name",
    "Host Name",
    "Kernel Name",
    "Kernel Time",
    "Context",
    "Stream",
    "Block Size",
    "Grid Size",
    "Device",
    "CC",
    "Section Name",
    "Metric Name",
    "Metric Unit",
    "Metric Value",
    "Function Name",
    "Demangled Name",
}
_DURATION = ("gpu__time_duration.sum", "gpu__time_duration")
_PREFIX = {"n": 1e-9, "u": 1e-6, "m": 1e-3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
_BASES = {"second", "byte", "hz", "cycle", "inst", "sector", "request", "warp", "thread", "block", "transaction", "bit"}
_NA = {"", "n/a", "N/A", "nan", "NaN", "-"}


def _split_unit(unit: str) -> tuple[float, str]:
    if unit in _BASES:
        return 1.0, unit
    if len(unit) > 1 and unit[0] in _PREFIX and unit[1:] in _BASES:
        return _PREFIX[unit[0]], unit[1:]
    return 1.0, unit


def unit_factor(unit: str) -> tuple[float, str]:
    """Factor to multiply a value in ``unit`` by, and the base unit it then is in.

    ``"usecond"`` → (1000, "nsecond"); ``"Mbyte/second"`` → (1e6, "byte/second");
    ``"Kbyte/usecond"`` → (1e9, "byte/second"); unknown units (``%``, ``register/thread``) → (1, unit).
    """
    unit = unit.strip()
    num, slash, den = unit.partition("/")
    fn, bn = _split_unit(num)
    fd, bd = _split_unit(den) if slash else (1.0, "")
    if bn == "second":
        fn, bn = fn * 1e9, "nsecond"
    return fn / fd, bn + (f"/{bd}" if slash else "")


def _number(text: str) -> float | None:
    """A cell as a float (``1,024.00`` accepted); None when not a number; NaN when empty/n/a."""
    s = text.strip()
    if s in _NA:
        return math.nan
    try:
        return float(s.replace(",", ""))
    except ValueError:
        return None


def _rows(data: bytes) -> tuple[list[list[str]], list[int]]:
    """CSV rows after dropping ``==PROF==`` chatter and blank lines, with their line numbers."""
    text = data.decode("utf-8", errors="replace")
    lines, numbers = [], []
    for i, line in enumerate(text.splitlines(), start=1):
        s = line.strip()
        if not s or s.startswith("=="):
            continue
        lines.append(line)
        numbers.append(i)
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    if len(rows) != len(lines):  # a quoted field spanning lines: line numbers are approximate
        numbers = list(range(1, len(rows) + 1))
    return rows, numbers


def _header(lines: Sequence[str]) -> list[str] | None:
    for line in lines:
        s = line.strip()
        if not s or s.startswith("=="):
            continue
        fields = next(csv.reader([s]), [])
        return [f.strip() for f in fields]
    return None


def _recognise(lines: list[str]) -> bool:
    header = _header(lines)
    return bool(header) and "Kernel Name" in header and ("ID" in header or "Metric Name" in header)


class NcuReader(Reader):
    name = "ncu"
    description = "Nsight Compute CSV (--csv --page raw, or the long Metric Name/Unit/Value form)"

    def detect(self, path: Path, head: bytes) -> bool:
        return detect_text(head, _recognise, limit=64)

    def read(self, paths: Sequence[Path], options: Mapping[str, Any]) -> Workload:
        path = paths[0]
        with task(f"reading {path.name}", None):
            head = read_head(path, 1 << 20).decode("utf-8", errors="replace").splitlines()
            h = next((i for i, ln in enumerate(head) if ln.strip() and not ln.strip().startswith("==")), None)
            if h is None:
                raise UserError(f"{path}: no CSV rows after the ==PROF== lines")
            header = [c.strip() for c in next(csv.reader([head[h]]))]
            if "ID" not in header:
                raise FormatError(path, "expected an 'ID' column (ncu's launch number)", line=h + 1)
            if {"Metric Name", "Metric Value"} <= set(header):
                rows, lines = _rows(read_all(path))
                parsed = _long(path, header, rows[1:], lines[1:])
                form = "long"
            else:
                parsed = _raw(path, header, h)
                form = "raw"
            return _workload(path, *parsed, form)


_Parsed = (
    "tuple[pd.DataFrame, dict[str, np.ndarray], dict[str, str], dict[str, str]]"  # a string: pandas loads on first use
)


def _raw(path: Path, header: list[str], h: int) -> _Parsed:
    """The raw page, parsed by pyarrow with every column as text (hundreds of metric columns)."""
    table = read_csv_table(
        csv_source(path), path, skip_rows=h, string_columns=header, skip_row=lambda t: t.lstrip().startswith("==")
    )
    if len(set(table.column_names)) != len(table.column_names):
        raise FormatError(path, "repeated column names in the header", line=h + 1)
    cols = {name: table.column(name).combine_chunks() for name in table.column_names}
    n = table.num_rows
    first = h + 2
    units_row: dict[str, str] | None = None
    if n and cols["ID"][0].as_py().strip() == "":
        units_row = {name: vals[0].as_py() for name, vals in cols.items()}
        cols = {name: vals.slice(1) for name, vals in cols.items()}
        n -= 1
        first += 1
    launches = pd.DataFrame({name: vals.to_pylist() for name, vals in cols.items() if name in _ATTRS})
    launches["_line"] = np.arange(first, first + n)
    metrics: dict[str, np.ndarray] = {}
    units: dict[str, str] = {}
    texts: dict[str, str] = {}
    for name, vals in cols.items():
        if name in _ATTRS:
            continue
        unit = units_row[name].strip() if units_row is not None else ""
        nums = _numbers(vals)
        if nums is None:
            if name.startswith("device__attribute_") and len(vals):
                texts[name] = vals[0].as_py().strip()
            continue  # not a numeric metric
        factor, base = unit_factor(unit)
        metrics[name] = nums * factor
        units[name] = base
    return launches, metrics, units, texts


def _numbers(cells: Any) -> np.ndarray | None:
    """A column of cells as float64 (``1,024.00`` accepted, empty/n/a → NaN), or None when a cell
    is not a number; vectorised with pyarrow because raw pages have hundreds of columns."""
    import pyarrow as pa
    import pyarrow.compute as pc

    arr = cells if isinstance(cells, pa.Array) else pa.array(cells, type=pa.string())
    arr = pc.replace_substring(pc.utf8_trim_whitespace(arr), ",", "")
    arr = pc.if_else(pc.is_in(arr, value_set=pa.array(sorted(_NA))), pa.scalar(None, pa.string()), arr)
    try:
        return pc.cast(arr, pa.float64()).to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None


def _long(path: Path, header: list[str], rows: list[list[str]], lines: list[int]) -> _Parsed:
    idx = {h: i for i, h in enumerate(header)}
    for r, ln in zip(rows, lines):
        if len(r) != len(header):
            raise FormatError(path, f"expected {len(header)} fields, got {len(r)}", line=ln)
    i_id, i_name, i_unit, i_val = idx["ID"], idx["Metric Name"], idx.get("Metric Unit"), idx["Metric Value"]
    order: dict[str, int] = {}
    first_row: dict[str, int] = {}
    values: dict[str, dict[str, float]] = {}
    units: dict[str, str] = {}
    bad: set[str] = set()
    texts: dict[str, str] = {}
    for k, r in enumerate(rows):
        lid = r[i_id].strip()
        if lid not in order:
            order[lid] = len(order)
            first_row[lid] = k
        metric = r[i_name].strip()
        if metric in bad:
            continue
        v = _number(r[i_val])
        if v is None:
            if metric.startswith("device__attribute_"):
                texts.setdefault(metric, r[i_val].strip())
            bad.add(metric)
            values.pop(metric, None)
            continue
        factor, base = unit_factor(r[i_unit] if i_unit is not None else "")
        prev = units.setdefault(metric, base)
        if prev != base:
            raise FormatError(path, f"metric {metric!r} is in {base} here but in {prev} elsewhere", line=lines[k])
        values.setdefault(metric, {}).setdefault(lid, v * factor)
    ids = list(order)
    attrs = {
        h: [rows[first_row[i]][j] for i in ids]
        for h, j in idx.items()
        if h in _ATTRS and h not in ("Metric Name", "Metric Unit", "Metric Value", "Section Name")
    }
    launches = pd.DataFrame(attrs)
    launches["_line"] = [lines[first_row[i]] for i in ids]
    metrics = {m: np.array([vals.get(i, math.nan) for i in ids], dtype=np.float64) for m, vals in values.items()}
    return launches, metrics, {m: u for m, u in units.items() if m in metrics}, texts


_LEGACY_SUFFIX = re.compile(r"^([a-z0-9]+__[a-z0-9_]+?)_(sum|avg|max|min)$")
_RATIO_METRICS = ("smsp__thread_inst_executed_per_inst_executed",)


def add_legacy_aliases(metrics: dict[str, np.ndarray]) -> dict[str, str]:
    """Give metrics of early Nsight Compute releases their current names, beside the old ones.

    Before the ``.sum``/``.avg``/``.ratio`` suffixes, ncu wrote ``smsp__inst_executed_sum`` and
    ``smsp__thread_inst_executed_per_inst_executed``; samplers ask for the current names
    (``smsp__inst_executed.sum``, ``...per_inst_executed.ratio``). Only names that are absent in
    their current form are added. Returns ``{current: legacy}``.
    """
    added: dict[str, str] = {}
    for name in list(metrics):
        m = _LEGACY_SUFFIX.match(name)
        current = f"{m.group(1)}.{m.group(2)}" if m else (f"{name}.ratio" if name in _RATIO_METRICS else None)
        if current and current not in metrics:
            metrics[current] = metrics[name]
            added[current] = name
    return added


def _workload(
    path: Path,
    launches: pd.DataFrame,
    metrics: dict[str, np.ndarray],
    units: dict[str, str],
    texts: dict[str, str],
    form: str,
) -> Workload:
    n = len(launches)
    lines = launches["_line"].to_numpy()
    ids = []
    for s, ln in zip(launches["ID"], lines):
        try:
            ids.append(int(str(s).replace(",", "").strip()))
        except ValueError:
            raise FormatError(path, f"column 'ID': expected a launch number, got {s!r}", line=int(ln)) from None
    ids_arr = np.asarray(ids, dtype=np.int64)
    meta: dict[str, Any] = {"profiler": "ncu", "ncu_form": form}
    aliases = add_legacy_aliases(metrics)
    if aliases:
        meta["legacy_metric_names"] = aliases
    device_attrs = {m: metrics.pop(m) for m in [m for m in metrics if m.startswith("device__attribute_")]}
    if device_attrs:
        meta["device_attributes"] = {m: (float(v[0]) if n else None) for m, v in device_attrs.items()}
    cols: dict[str, Any] = {"kernel_id": ids_arr, "name": launches["Kernel Name"].astype(str).to_numpy()}
    first_line = int(lines[0]) if n else 1
    if "Grid Size" in launches and "Block Size" in launches:
        for prefix, column in (("grid", "Grid Size"), ("block", "Block Size")):
            x, y, z = parse_triples(launches[column].tolist(), path=path, column=column, first_line=first_line)
            cols[f"{prefix}_x"], cols[f"{prefix}_y"], cols[f"{prefix}_z"] = x, y, z
        meta["launch_shape"] = "xyz"
    elif "launch__grid_size" in metrics and "launch__block_size" in metrics:
        for prefix, metric in (("grid", "launch__grid_size"), ("block", "launch__block_size")):
            vals = metrics[metric]
            if np.isnan(vals).any():
                raise FormatError(
                    path, f"metric {metric} is missing for launch {ids_arr[np.flatnonzero(np.isnan(vals))[0]]}"
                )
            cols[f"{prefix}_x"] = vals.astype(np.int64)
            cols[f"{prefix}_y"] = np.ones(n, dtype=np.int64)
            cols[f"{prefix}_z"] = np.ones(n, dtype=np.int64)
        meta["launch_shape"] = "totals"
    else:
        raise FormatError(
            path,
            "no launch shape: expected 'Block Size'/'Grid Size' columns or the launch__grid_size and "
            "launch__block_size metrics",
        )
    if "Stream" in launches:
        st = [_number(s) for s in launches["Stream"]]
        cols["stream"] = np.asarray([0 if (v is None or math.isnan(v)) else int(v) for v in st], dtype=np.int64)
    elif "launch__stream_id" in metrics:
        cols["stream"] = np.nan_to_num(metrics["launch__stream_id"]).astype(np.int64)
    else:
        cols["stream"] = np.zeros(n, dtype=np.int64)
    cols["start_ns"] = np.zeros(n, dtype=np.int64)
    dur_metric = next((m for m in _DURATION if m in metrics), None)
    if dur_metric is not None and not np.isnan(metrics[dur_metric]).any():
        cols["duration_ns"] = np.rint(metrics[dur_metric]).astype(np.int64)
    else:
        cols["duration_ns"] = pd.array([pd.NA] * n, dtype="Int64")
        if dur_metric is not None:
            meta["untimed_reason"] = f"{dur_metric} is missing for {int(np.isnan(metrics[dur_metric]).sum())} launches"
    if "launch__registers_per_thread" in metrics and not np.isnan(metrics["launch__registers_per_thread"]).any():
        cols["regs"] = metrics["launch__registers_per_thread"].astype(np.int64)
    shm = [m for m in ("launch__shared_mem_per_block_static", "launch__shared_mem_per_block_dynamic") if m in metrics]
    if shm and not any(np.isnan(metrics[m]).any() for m in shm):
        cols["shmem"] = np.rint(sum(metrics[m] for m in shm)).astype(np.int64)
    for k in ("grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z", "stream", "regs", "shmem"):
        if k in cols:
            cols[k] = narrow(cols[k])
    order = np.argsort(ids_arr, kind="stable")
    data = {k: (v[order] if isinstance(v, np.ndarray) else v.take(order)) for k, v in cols.items()}
    data.update({m: v[order] for m, v in metrics.items() if m not in data})
    data["name"] = pd.Categorical(data["name"])
    df = pd.DataFrame(data)
    for attr, key in (("Device", "gpu"), ("CC", "compute_capability"), ("Process Name", "process")):
        if attr in launches:
            vals = sorted({re.sub(r"\s*\(\d+\)$", "", str(v).strip()) for v in launches[attr] if str(v).strip()})
            if vals:
                meta[key] = vals[0] if len(vals) == 1 else vals
    if "gpu" not in meta and texts.get("device__attribute_display_name"):
        meta["gpu"] = texts["device__attribute_display_name"]
    meta["metric_units"] = units
    return make_workload(df, source=str(path), format="ncu", memcpy_count=0, meta=meta)


@hookimpl
def register_readers(register):
    register(NcuReader())
