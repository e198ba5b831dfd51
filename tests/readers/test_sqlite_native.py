"""The column paths of the Nsight Systems SQLite reader: the compiled reader
(``simsample._sqlite_scan``), the ADBC Arrow scan and the ``group_concat`` text path must give the
same arrays, in table order, on the real export and on random tables; threads split the rowid
range only where the rowids are dense, and anything the compiled reader cannot take (a value that
is not an integer, a row count that changed) goes to the paths that name the offending row."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from urllib.request import pathname2url

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simsample.errors import FormatError
from simsample.plugins.readers._nsys_sqlite import columns as sc
from simsample.reading import load_workload
from tests.helpers import shared_path

NATIVE, REASON = sc.native_reader()
native = pytest.mark.skipif(NATIVE is None, reason=f"compiled SQLite reader unavailable: {REASON}")
_SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
_INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)


def _uri(path: Path) -> str:
    return f"file:{pathname2url(str(path.resolve()))}?mode=ro"


def _table(path: Path, rows: list[tuple], *, ddl: str = "CREATE TABLE t (a INTEGER, b INTEGER, c)") -> str:
    con = sqlite3.connect(path)
    con.execute(ddl)
    con.executemany("INSERT INTO t VALUES (?, ?, ?)", rows)
    con.commit()
    con.close()
    return _uri(path)


def test_extension_present_when_required():
    """CI sets SIMSAMPLE_REQUIRE_NATIVE=1: the compiled reader must be built and used there."""
    if os.environ.get("SIMSAMPLE_REQUIRE_NATIVE", "") in ("", "0"):
        pytest.skip("SIMSAMPLE_REQUIRE_NATIVE is not set")
    from simsample import _sqlite_scan  # noqa: F401  (ImportError here: the extension was not built)

    if not os.environ.get("SIMSAMPLE_PURE_PYTHON"):
        assert NATIVE is not None, REASON


def test_all_column_paths_agree_on_the_real_export(monkeypatch):
    """Compiled reader, Arrow scan and text path: the same workload from the CloverLeaf export."""
    f = shared_path("profiles", "nsys-sqlite", "pipit-cloverleaf", "perlmutter-cloverleaf-cuda.sqlite.xz")
    first = load_workload([f]).kernels
    monkeypatch.setattr(sc, "fetch_native", lambda *a: None)
    arrow = load_workload([f]).kernels
    monkeypatch.setattr(sc, "fetch_arrow", lambda *a: None)
    text = load_workload([f]).kernels
    pd.testing.assert_frame_equal(first, arrow)
    pd.testing.assert_frame_equal(first, text)
    assert len(first) == 1312


@native
@_SETTINGS
@given(
    rows=st.lists(st.tuples(_INT64, st.one_of(st.none(), _INT64), st.integers(0, 2**40)), max_size=60),
    threads=st.integers(1, 4),
)
def test_native_matches_the_text_path(tmp_path_factory, rows, threads):
    """Any int64 values (extremes included), NULLs made -1 in SQL, on any number of threads."""
    uri = _table(tmp_path_factory.mktemp("db") / "t.sqlite", rows)
    exprs = ["a", "ifnull(b, -1)", "c - a % 7", "0"]
    got = NATIVE.read_int_columns(uri, "t", exprs, len(rows), threads)
    for expr, arr in zip(exprs, got):
        want = sc.fetch_text_ints(uri, "t", expr, len(rows))
        if want is None:  # c - a % 7 overflowed into a REAL in SQLite: both paths refuse it
            assert arr is None
        else:
            assert arr.dtype == np.int64 and np.array_equal(arr, want)


@native
def test_threads_keep_table_order(tmp_path):
    rows = [(i * 3, -i, i % 5) for i in range(1001)]
    uri = _table(tmp_path / "t.sqlite", rows)
    for threads in (1, 2, 3, 8):
        a, b, c = NATIVE.read_int_columns(uri, "t", ["a", "b", "c"], len(rows), threads)
        assert (
            a.tolist() == [r[0] for r in rows]
            and b.tolist() == [r[1] for r in rows]
            and c.tolist() == [r[2] for r in rows]
        )


@native
def test_rowid_gaps_fall_back_to_one_scan(tmp_path):
    """Rowids with holes cannot be split by position: the result is still every row, in order."""
    path = tmp_path / "t.sqlite"
    uri = _table(path, [(i, i, i) for i in range(100)])
    con = sqlite3.connect(path)
    con.execute("DELETE FROM t WHERE a % 3 = 0")
    con.commit()
    con.close()
    (a,) = NATIVE.read_int_columns(uri, "t", ["a"], 66, 4)
    assert a.tolist() == [i for i in range(100) if i % 3]


@native
def test_tables_without_rowid_and_views(tmp_path):
    path = tmp_path / "t.sqlite"
    uri = _table(
        path,
        [(i, 2 * i, 0) for i in range(20)],
        ddl="CREATE TABLE t (a INTEGER PRIMARY KEY, b INTEGER, c) WITHOUT ROWID",
    )
    con = sqlite3.connect(path)
    con.execute("CREATE VIEW v AS SELECT a, b FROM t WHERE a < 10")
    con.commit()
    con.close()
    (b,) = NATIVE.read_int_columns(uri, "t", ["b"], 20, 2)
    assert b.tolist() == [2 * i for i in range(20)]
    (a,) = NATIVE.read_int_columns(uri, "v", ["a"], 10, 2)
    assert a.tolist() == list(range(10))


@native
def test_non_integers_and_wrong_counts(tmp_path):
    uri = _table(tmp_path / "t.sqlite", [(1, 2, "x"), (3, None, 4.5), (5, 6, 7)])
    a, b, c = NATIVE.read_int_columns(uri, "t", ["a", "b", "c"], 3, 1)
    assert a.tolist() == [1, 3, 5] and b is None and c is None
    assert NATIVE.read_int_columns(uri, "t", ["a"], 2, 1) is None
    assert NATIVE.read_int_columns(uri, "t", ["a"], 4, 1) is None
    assert NATIVE.read_int_columns(uri, "t", ["a"], 0, 1) is None
    with pytest.raises(ValueError, match="no expressions"):
        NATIVE.read_int_columns(uri, "t", [], 3, 1)


@native
def test_unreadable_inputs_go_to_the_other_paths(tmp_path):
    uri = _table(tmp_path / "t.sqlite", [(1, 2, 3)])
    with pytest.raises(RuntimeError, match="no such column"):
        NATIVE.read_int_columns(uri, "t", ["nope"], 1, 1)
    with pytest.raises(RuntimeError, match="cannot open"):
        NATIVE.read_int_columns(_uri(tmp_path / "absent.sqlite"), "t", ["a"], 1, 1)
    assert sc.fetch_native(_uri(tmp_path / "absent.sqlite"), "t", ["a"], 1) is None


def test_non_integer_value_is_named_on_every_path(tmp_path, monkeypatch):
    """A REAL grid size deep in the table: whichever path reads it, the error names the row."""
    from tests.readers.test_readers_nsys import _FULL, STRINGS, _export, _row

    rows = [_row(i, 1, i) for i in range(50)]
    rows[37]["gridX"] = 2.5
    p = _export(tmp_path / "r.sqlite", _FULL, rows, STRINGS)
    for disable in ((), ("fetch_native",), ("fetch_native", "fetch_arrow")):
        for name in disable:
            monkeypatch.setattr(sc, name, lambda *a: None)
        with pytest.raises(FormatError, match=r"row 38: gridX: expected an integer, got 2.5"):
            load_workload([p])
