"""Whole integer columns of an SQLite table, fast (used by the Nsight Systems reader).

The sqlite3 module turns every value into a Python object (about 0.3 µs each), so a row-by-row
read of a 14-column table cannot approach a million rows per second. Instead each column comes
back as one ``group_concat`` text built inside SQLite and is parsed by numpy in one call. SQLite
then spends its time formatting numbers; that work runs without Python's lock but behind
SQLite's own memory mutex, so columns are fetched in parallel by worker *processes* (one
connection each) when the table is large and the machine has several cores.

This module imports only numpy and sqlite3, so that worker processes start quickly.
"""

from __future__ import annotations

import os
import sqlite3
import warnings
from collections.abc import Sequence

import numpy as np

#: below this many rows, worker processes cost more than they save
PARALLEL_MIN_ROWS = 1_000_000


def connect(uri: str) -> sqlite3.Connection:
    return sqlite3.connect(uri, uri=True)


def fetch_text_ints(uri: str, table: str, expr: str, n: int) -> np.ndarray | None:
    """``expr`` over every row (table order) as int64, or None when the values are not all
    integers (NULL, REAL, TEXT): the caller then reads that column row by row."""
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    conn = connect(uri)
    try:
        text = conn.execute(f'SELECT group_concat({expr}, \' \') FROM "{table}" NOT INDEXED').fetchone()[0]
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


def can_spawn() -> bool:
    """Whether worker processes can be started: a spawned child re-imports the main script, which
    fails for programs read from standard input (``python - < script``)."""
    import sys

    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    return path is None or os.path.exists(path)


def fetch_many(uri: str, table: str, exprs: Sequence[str], n: int) -> list[np.ndarray | None]:
    """:func:`fetch_text_ints` for several expressions, in parallel processes for large tables."""
    workers = min(len(exprs), os.cpu_count() or 1, 8)
    if n >= PARALLEL_MIN_ROWS and workers > 1 and can_spawn():
        try:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            ctx = multiprocessing.get_context("spawn")
            with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
                return list(pool.map(fetch_text_ints, [uri] * len(exprs), [table] * len(exprs), exprs, [n] * len(exprs)))
        except (OSError, RuntimeError, ImportError):
            pass  # no worker processes here (sandbox, frozen app): read in this process
    return [fetch_text_ints(uri, table, e, n) for e in exprs]
