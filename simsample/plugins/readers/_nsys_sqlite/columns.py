"""Whole integer columns of an SQLite table, fast (used by the Nsight Systems reader).

The sqlite3 module turns every value into a Python object (about 0.3 µs each), so a row-by-row
read of a 14-column table cannot approach a million rows per second. Instead each column comes
back as one ``group_concat`` text built inside SQLite and is parsed by numpy in one call. SQLite
then spends its time formatting numbers; that work runs without Python's lock but behind
SQLite's own memory mutex, so columns are fetched in parallel by worker *processes* (one
connection each) when the table is large and the machine has several cores.

Faster, where the optional ``adbc-driver-sqlite`` package is installed, :func:`fetch_arrow`
reads all columns in one scan straight into Arrow buffers (several times faster per value than
formatting and parsing text). Fastest, the compiled module ``simsample._sqlite_scan``
(:func:`fetch_native`, built where SQLite's headers were found at install time) copies each value
from SQLite's C API into a numpy array, in rowid ranges on several threads for large tables;
the other paths remain for installs without it.

This module imports only numpy, sqlite3, :mod:`simsample.native` and :mod:`simsample.io.workers` at
the top, so that worker processes start quickly.
"""

from __future__ import annotations

import sqlite3
import warnings
from collections.abc import Sequence
from types import ModuleType

import numpy as np

from simsample.sdk import can_spawn, import_beside, import_optional, usable_cpus

#: below this many rows, worker processes cost more than they save
PARALLEL_MIN_ROWS = 1_000_000
#: rows per thread of the compiled reader (threads cost a connection and its schema parse each)
NATIVE_ROWS_PER_THREAD = 500_000


def connect(uri: str) -> sqlite3.Connection:
    return sqlite3.connect(uri, uri=True)


def fetch_text_ints(uri: str, table: str, expr: str, n: int) -> np.ndarray | None:
    """``expr`` over every row (table order) as int64, or None when the values are not all
    integers (NULL, REAL, TEXT): the caller then reads that column row by row."""
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    conn = connect(uri)
    try:
        text = conn.execute(f"SELECT group_concat({expr}, ' ') FROM \"{table}\" NOT INDEXED").fetchone()[0]
    finally:
        conn.close()
    if not isinstance(text, str):
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numpy warns, then stops, at a value that is not an integer
        try:
            arr = np.fromstring(text, dtype=np.int64, sep=" ")
        except ValueError:
            return None
    return arr if arr.size == n else None


def fetch_arrow(uri: str, table: str, exprs: Sequence[str], n: int) -> list[np.ndarray | None] | None:
    """All expressions in one table scan through the Arrow-native ADBC SQLite driver (values go
    from SQLite into Arrow buffers without Python objects or text), or ``None`` when the driver
    is not installed or the scan fails (a value whose type differs from the column's first rows
    stops the driver). An expression whose result is not all non-null integers comes back as
    ``None``: the caller reads it on the slower paths, which name the offending row."""
    try:
        import adbc_driver_sqlite.dbapi as adbc
    except ImportError:
        return None
    sql = f'SELECT {", ".join(exprs)} FROM "{table}" NOT INDEXED'
    try:
        with adbc.connect(uri) as conn, conn.cursor() as cur:
            cur.execute(sql)
            result = cur.fetch_arrow_table()
    except Exception:  # the driver's errors (type mismatch, unreadable file) have no common base
        return None
    if result.num_rows != n or result.num_columns != len(exprs):
        return None
    out: list[np.ndarray | None] = []
    for col in result.columns:
        if n == 0:
            out.append(np.zeros(0, dtype=np.int64))
        elif str(col.type) == "int64" and col.null_count == 0:
            out.append(col.to_numpy())
        else:
            out.append(None)
    return out


def native_reader() -> tuple[ModuleType | None, str | None]:
    """The compiled reader :mod:`simsample._sqlite_scan`, or ``None`` and why it cannot be used."""
    return import_optional("_sqlite_scan", unavailable="the C++ extension simsample._sqlite_scan is not available")


def fetch_native(uri: str, table: str, exprs: Sequence[str], n: int) -> list[np.ndarray | None] | None:
    """All expressions through the compiled reader (:mod:`simsample._sqlite_scan`), or ``None``
    when it is not built or cannot read the table; the same contract as :func:`fetch_arrow`."""
    native, _ = native_reader()
    if native is None:
        return None
    threads = max(1, min(usable_cpus(), 8, n // NATIVE_ROWS_PER_THREAD))
    wait = import_beside("pandas")  # the reader builds its table once the columns are read
    try:
        return native.read_int_columns(uri, table, list(exprs), n, threads)
    except RuntimeError:  # SqliteError: the other paths report what is wrong with the file
        return None
    finally:
        wait()


def fetch_many(uri: str, table: str, exprs: Sequence[str], n: int) -> list[np.ndarray | None]:
    """:func:`fetch_text_ints` for several expressions: in one scan by the compiled reader
    (:func:`fetch_native`) or the ADBC driver (:func:`fetch_arrow`) when either is installed,
    else in parallel processes for large tables."""
    got = fetch_native(uri, table, exprs, n)
    if got is None:
        got = fetch_arrow(uri, table, exprs, n)
    if got is not None:
        return got
    workers = min(len(exprs), usable_cpus(), 8)
    if n >= PARALLEL_MIN_ROWS and workers > 1 and can_spawn():
        try:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            ctx = multiprocessing.get_context("spawn")
            with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
                return list(
                    pool.map(fetch_text_ints, [uri] * len(exprs), [table] * len(exprs), exprs, [n] * len(exprs))
                )
        except (OSError, RuntimeError, ImportError):
            pass  # no worker processes here (sandbox, frozen app): read in this process
    return [fetch_text_ints(uri, table, e, n) for e in exprs]
