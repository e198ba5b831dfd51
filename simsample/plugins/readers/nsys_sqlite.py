"""Reader of Nsight Systems SQLite exports (``nsys export --type sqlite``).

Kernel launches are the rows of ``CUPTI_ACTIVITY_KIND_KERNEL``; names are ids into
``StringIds(id, value)``. Column sets differ between nsys versions, so the columns are looked up
with ``PRAGMA table_info``: the name is ``demangledName`` where it exists, else ``shortName``, else
``mangledName`` (the mangled name is kept as the categorical column ``mangled`` when both exist);
registers, shared memory, stream, device and correlation id are read when present. Memcpy and
memset activities (``CUPTI_ACTIVITY_KIND_MEMCPY`` / ``_MEMSET``) are counted.

Speed: columns are fetched whole (:mod:`simsample.plugins.readers._nsys_sqlite.columns`: by the compiled reader
 ``simsample._sqlite_scan`` where it was built, else in one scan into Arrow buffers through
the ADBC SQLite driver when it is installed, else one ``group_concat`` text per column, parsed by
numpy, several columns in parallel processes for large tables). Without the compiled reader the
small launch-shape fields are packed several to an integer in SQL, guarded by range checks (a
table whose values do not fit is read unpacked), since there the cost is per value fetched. A column holding something
other than integers is read row by row, and the error names the row.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import lazy_loader as lazy
import numpy as np

from simsample.plugins.readers._nsys_sqlite.columns import fetch_many, fetch_text_ints, native_reader
from simsample.sdk import (
    FormatError,
    Reader,
    Workload,
    categorical,
    hookimpl,
    launch_table,
    make_workload,
    narrow,
    open_sqlite,
    sqlite_table_columns,
    sqlite_tables,
    task,
)

pd = lazy.load("pandas")

KERNEL_TABLE = "CUPTI_ACTIVITY_KIND_KERNEL"
_NAME_COLUMNS = ("demangledName", "shortName", "mangledName", "name")

#: fields packed into one integer: (name, SQL expression, bits); the sum of bits stays below 63
_PACKS: tuple[tuple[tuple[str, str, int], ...], ...] = (
    (
        ("grid_y", "gridY", 16),
        ("grid_z", "gridZ", 16),
        ("block_y", "blockY", 11),
        ("block_z", "blockZ", 11),
        ("regs", "{regs}", 9),
    ),
    (("block_x", "blockX", 11), ("device", "{device}", 8), ("shmem", "{shmem}", 40)),
)


class NsysSqliteReader(Reader):
    name = "nsys_sqlite"
    description = "Nsight Systems SQLite export (nsys export --type sqlite; .xz/.gz accepted)"

    def detect(self, path: Path, head: bytes) -> bool:
        return head.startswith(b"SQLite format 3\x00")

    def read(self, paths: Sequence[Path], options: Mapping[str, Any]) -> Workload:
        path = paths[0]
        with open_sqlite(path) as (conn, uri):
            return _read(conn, uri, path)


def _read(conn: sqlite3.Connection, uri: str, path: Path) -> Workload:
    tables = sqlite_tables(conn)
    if KERNEL_TABLE not in tables:
        raise FormatError(
            path,
            f"has no {KERNEL_TABLE} table: export with `nsys export --type sqlite` from a report that traced CUDA "
            "(`nsys profile --trace=cuda ...`)",
        )
    cols = set(sqlite_table_columns(conn, KERNEL_TABLE))
    missing = [c for c in ("start", "end", "gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ") if c not in cols]
    if missing:
        raise FormatError(
            path, f"table {KERNEL_TABLE} lacks column(s) {', '.join(missing)} (an unsupported nsys export version?)"
        )
    name_col = next((c for c in _NAME_COLUMNS if c in cols), None)
    if name_col is None:
        raise FormatError(
            path, f"table {KERNEL_TABLE} has no kernel-name column (expected one of {', '.join(_NAME_COLUMNS)})"
        )
    n = conn.execute(f'SELECT count(*) FROM "{KERNEL_TABLE}"').fetchone()[0]
    shmem_parts = [c for c in ("staticSharedMemory", "dynamicSharedMemory") if c in cols]
    subst = {
        "regs": "registersPerThread" if "registersPerThread" in cols else "0",
        "device": "deviceId" if "deviceId" in cols else "0",
        "shmem": " + ".join(f"ifnull({c}, 0)" for c in shmem_parts) if shmem_parts else "0",
    }
    fetcher = _ColumnFetcher(conn, uri, KERNEL_TABLE, n, path)
    singles = {"start_ns": "start", "duration_ns": "end - start", "grid_x": "gridX"}
    if "streamId" in cols:
        singles["stream"] = "streamId"
    if "correlationId" in cols:
        singles["correlation"] = "ifnull(correlationId, -1)"
    packs = [[(k, e.format(**subst), b) for k, e, b in pack] for pack in _PACKS]
    if native_reader()[0] is not None:
        # the compiled reader copies values at a few ns each: packing would only add SQL work
        singles.update({k: e for pack in packs for k, e, _ in pack})
        packs = []
    mangled_col = "mangledName" if name_col != "mangledName" and "mangledName" in cols else None
    id_columns = [c for c in (name_col, mangled_col) if c is not None and "StringIds" in tables]
    exprs = list(singles.values()) + [_packed_expr(p) for p in packs] + [f"ifnull({c}, -1)" for c in id_columns]
    with task(f"reading {path.name}", None):
        fetched = dict(zip(exprs, fetcher.many(exprs)))
        values: dict[str, np.ndarray] = {key: fetched[expr] for key, expr in singles.items()}
        for pack in packs:
            values.update(fetcher.unpack(pack, fetched[_packed_expr(pack)]))
        names = _name_column(conn, fetcher, name_col, tables, path, fetched)
        mangled = _name_column(conn, fetcher, mangled_col, tables, path, fetched) if mangled_col else None
    columns: dict[str, Any] = {
        "name": names,
        "grid_x": narrow(values["grid_x"]),
        "grid_y": narrow(values["grid_y"]),
        "grid_z": narrow(values["grid_z"]),
        "block_x": narrow(values["block_x"]),
        "block_y": narrow(values["block_y"]),
        "block_z": narrow(values["block_z"]),
        "stream": narrow(values["stream"]) if "stream" in values else None,
        "start_ns": values["start_ns"],
        "duration_ns": values["duration_ns"],
    }
    if "registersPerThread" in cols:
        columns["regs"] = narrow(values["regs"])
    if shmem_parts:
        columns["shmem"] = narrow(values["shmem"])
    if "correlation" in values:
        columns["correlation"] = narrow(values["correlation"])
    if "deviceId" in cols and n and values["device"].min() != values["device"].max():
        columns["device"] = narrow(values["device"])
    if mangled is not None:
        columns["mangled"] = mangled
    if n and (columns["duration_ns"] < 0).any():
        i = int(np.flatnonzero(columns["duration_ns"] < 0)[0])
        raise FormatError(path, "kernel ends before it starts", record=f"{KERNEL_TABLE} row {i + 1}")
    df = launch_table(columns)
    memcpy = 0
    for t in ("CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"):
        if t in tables:
            memcpy += conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0]
    meta = _meta(conn, tables, name_col)
    return make_workload(df, source=str(path), format="nsys_sqlite", memcpy_count=int(memcpy), meta=meta)


def _packed_expr(fields: Sequence[tuple[str, str, int]]) -> str:
    """SQL packing several small non-negative fields into one integer, or -1 where one does not fit."""
    guard = " AND ".join(f"({e}) BETWEEN 0 AND {(1 << b) - 1}" for _, e, b in fields)
    parts, shift = [], 0
    for _, e, b in fields:
        parts.append(f"(({e}) << {shift})" if shift else f"({e})")
        shift += b
    return f"CASE WHEN {guard} THEN {' | '.join(parts)} ELSE -1 END"


class _ColumnFetcher:
    """Integer columns over all rows (see :mod:`simsample.plugins.readers._nsys_sqlite.columns`), with a
    row-by-row fallback that names the row holding a value that is not an integer."""

    def __init__(self, conn: sqlite3.Connection, uri: str, table: str, n: int, path: Path) -> None:
        self.conn, self.uri, self.table, self.n, self.path = conn, uri, table, n, path

    def many(self, exprs: Sequence[str]) -> list[np.ndarray]:
        got = fetch_many(self.uri, self.table, exprs, self.n)
        return [arr if arr is not None else self._slow(e) for e, arr in zip(exprs, got)]

    def ints(self, expr: str) -> np.ndarray:
        arr = fetch_text_ints(self.uri, self.table, expr, self.n)
        return arr if arr is not None else self._slow(expr)

    def _slow(self, expr: str) -> np.ndarray:
        rows = self.conn.execute(f'SELECT {expr} FROM "{self.table}" NOT INDEXED').fetchall()
        out = np.empty(len(rows), dtype=np.int64)
        for i, (v,) in enumerate(rows):
            if isinstance(v, float) and v.is_integer():
                v = int(v)
            if not isinstance(v, int):
                raise FormatError(
                    self.path, f"{expr}: expected an integer, got {v!r}", record=f"{self.table} row {i + 1}"
                )
            out[i] = v
        return out

    def unpack(self, fields: Sequence[tuple[str, str, int]], packed: np.ndarray) -> dict[str, np.ndarray]:
        """The fields of a packed column; fetched one by one when some row did not fit."""
        if self.n and packed.min() < 0:
            return {k: self.ints(e) for k, e, _ in fields}
        out, shift = {}, 0
        for k, _, b in fields:
            out[k] = (packed >> shift) & ((1 << b) - 1)
            shift += b
        return out


def _dense_codes(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct ids (sorted) and each row's index among them; a lookup table instead of a sort
    when the ids are small, as string ids are."""
    if ids.size and ids.min() >= 0 and ids.max() < max(4 * ids.size, 1 << 20):
        present = np.zeros(int(ids.max()) + 1, dtype=bool)
        present[ids] = True
        uniq = np.flatnonzero(present)
        lut = np.zeros(present.size, dtype=np.int64)
        lut[uniq] = np.arange(uniq.size)
        return uniq, lut[ids]
    uniq, codes = np.unique(ids, return_inverse=True)
    return uniq, codes


def _name_column(
    conn: sqlite3.Connection,
    fetcher: _ColumnFetcher,
    column: str,
    tables: set[str],
    path: Path,
    fetched: dict[str, np.ndarray],
) -> pd.Categorical:
    """Kernel names: ids resolved through ``StringIds`` (each distinct id looked up once), or the
    column's own text in exports without a string table."""
    if "StringIds" not in tables:
        rows = conn.execute(f'SELECT {column} FROM "{KERNEL_TABLE}" NOT INDEXED').fetchall()
        for i, (v,) in enumerate(rows):
            if isinstance(v, int):  # a string id with no table to resolve it: the names are gone
                raise FormatError(
                    path,
                    f"{column} holds string ids ({v}) but the export has no StringIds table; export the report again "
                    "with 'nsys export --type sqlite' (it writes StringIds)",
                    record=f"{KERNEL_TABLE} row {i + 1}",
                )
        return categorical(["" if v is None else str(v) for (v,) in rows])
    expr = f"ifnull({column}, -1)"
    ids = fetched[expr] if expr in fetched else fetcher.ints(expr)
    uniq, codes = _dense_codes(ids)
    values: dict[int, str] = {}
    for start in range(0, len(uniq), 500):
        chunk = [int(x) for x in uniq[start : start + 500]]
        q = f"SELECT id, value FROM StringIds WHERE id IN ({','.join('?' * len(chunk))})"
        values.update(conn.execute(q, chunk).fetchall())
    cats = []
    for u in uniq:
        v = values.get(int(u))
        if v is None:
            row = int(np.flatnonzero(ids == u)[0]) + 1
            raise FormatError(path, f"{column} id {int(u)} is not in StringIds", record=f"{KERNEL_TABLE} row {row}")
        cats.append(v)
    # distinct ids may carry the same string: merge them into one category
    merged, remap = np.unique(np.asarray(cats, dtype=object), return_inverse=True)
    return pd.Categorical.from_codes(remap[codes].astype(np.int32), categories=pd.Index(list(merged), dtype=object))


def _meta(conn: sqlite3.Connection, tables: set[str], name_col: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"profiler": "nsys", "name_column": name_col}
    if "META_DATA_EXPORT" in tables:
        rows = dict(conn.execute("SELECT name, value FROM META_DATA_EXPORT").fetchall())
        if "EXPORT_PRODUCT_VERSION" in rows:
            meta["nsys_version"] = rows["EXPORT_PRODUCT_VERSION"]
        if "EXPORT_SCHEMA_VERSION" in rows:
            meta["export_schema"] = rows["EXPORT_SCHEMA_VERSION"]
    if "TARGET_INFO_GPU" in tables and "name" in sqlite_table_columns(conn, "TARGET_INFO_GPU"):
        gpus = sorted({r[0] for r in conn.execute("SELECT name FROM TARGET_INFO_GPU") if r[0]})
        if gpus:
            meta["gpu"] = gpus[0] if len(gpus) == 1 else gpus
    return meta


@hookimpl
def register_readers(register):
    register(NsysSqliteReader())
