"""The compiled CSV column scanner (``simsample._csv_columns``) against pyarrow's reader.

:func:`simsample.io.tables.read_csv_table` takes the compiled path when the scanner is built
and takes the input, and pyarrow's otherwise (``SIMSAMPLE_PURE_PYTHON=1`` forces the latter). Both
must give the same columns, as the readers read them, and the same errors: on the real nvprof and
nsys CSVs, on generated CSV bodies (quotes, doubled quotes, empty cells, CRLF, chatter lines, bad
rows), and on the inputs the scanner refuses (it then says why and pyarrow reads them). The body is
split between threads at arbitrary byte offsets; tiny pieces check that every cut gives the same.
"""

from __future__ import annotations

import contextlib
import lzma
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from simsample.errors import FormatError
from simsample.io import tables as ru
from simsample.native import PURE_PYTHON_VARIABLE
from simsample.reading import load_workload
from tests.helpers import shared_path

SCANNER, REASON = ru.csv_scanner()
native = pytest.mark.skipif(SCANNER is None, reason=f"compiled CSV scanner unavailable: {REASON}")
_SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@contextlib.contextmanager
def _pure_python() -> Iterator[None]:
    old = os.environ.get(PURE_PYTHON_VARIABLE)
    os.environ[PURE_PYTHON_VARIABLE] = "1"
    try:
        yield
    finally:
        if old is None:
            del os.environ[PURE_PYTHON_VARIABLE]
        else:
            os.environ[PURE_PYTHON_VARIABLE] = old


@contextlib.contextmanager
def _recording_scans() -> Iterator[list[bool]]:
    """Records, read by read, whether the compiled scanner took the input."""
    taken: list[bool] = []
    real = ru._scan_csv

    def spy(*args: Any, **kwargs: Any) -> Any:
        got = real(*args, **kwargs)
        taken.append(got is not None)
        return got

    ru._scan_csv = spy
    try:
        yield taken
    finally:
        ru._scan_csv = real


@pytest.fixture
def scans() -> Iterator[list[bool]]:
    with _recording_scans() as taken:
        yield taken


def test_extension_present_when_required():
    """CI sets SIMSAMPLE_REQUIRE_NATIVE=1: the compiled scanner must be built and used there."""
    if os.environ.get("SIMSAMPLE_REQUIRE_NATIVE", "") in ("", "0"):
        pytest.skip("SIMSAMPLE_REQUIRE_NATIVE is not set")
    from simsample import _csv_columns  # noqa: F401  (ImportError here: the extension was not built)

    if not os.environ.get(PURE_PYTHON_VARIABLE):
        assert SCANNER is not None, REASON


def test_pure_python_switch_disables_the_scanner():
    with _pure_python():
        module, reason = ru.csv_scanner()
    assert module is None and PURE_PYTHON_VARIABLE in (reason or "")


# --- real profiles ----------------------------------------------------------------------------
def _both_workloads(path: Path) -> tuple[Any, Any]:
    fast = load_workload([path])
    with _pure_python():
        slow = load_workload([path])
    return fast, slow


def _assert_same_workload(fast: Any, slow: Any) -> None:
    pd.testing.assert_frame_equal(fast.kernels, slow.kernels)
    assert (fast.memcpy_count, fast.meta, fast.format) == (slow.memcpy_count, slow.meta, slow.format)


def _real_csvs() -> list[Path]:
    root = shared_path("profiles")
    files = sorted((root / "nvprof" / "magus").glob("*/traces/*.csv"))
    files += sorted((root / "nvprof" / "gpuperfpredict-k40c").glob("*.csv.xz"))[::25]
    files.append(root / "ncu" / "microgpusim" / "nvprof_vectoradd_100_32_commands.txt")
    return [f for f in files if f.exists()]


def _cloverleaf_gpu_trace(out: Path) -> Path:
    """The CloverLeaf export's kernels and memcpys as ``nsys stats --report cuda_gpu_trace`` writes
    them (the development data has no nsys CSV report of its own)."""
    src = shared_path("profiles", "nsys-sqlite", "pipit-cloverleaf", "perlmutter-cloverleaf-cuda.sqlite.xz")
    db = out.with_suffix(".sqlite")
    db.write_bytes(lzma.decompress(src.read_bytes()))
    con = sqlite3.connect(db)
    kernels = con.execute(
        "SELECT k.start, k.end - k.start, k.correlationId, k.gridX, k.gridY, k.gridZ, k.blockX, k.blockY, k.blockZ, "
        "k.registersPerThread, k.staticSharedMemory, k.dynamicSharedMemory, k.deviceId, k.streamId, s.value "
        "FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName"
    ).fetchall()
    copies = con.execute(
        "SELECT start, end - start, correlationId, bytes, deviceId, streamId FROM CUPTI_ACTIVITY_KIND_MEMCPY"
    ).fetchall()
    con.close()
    rows = []
    for s, d, c, gx, gy, gz, bx, by, bz, reg, st_, dy, dev, strm, name in kernels:
        quoted = '"' + name.replace('"', '""') + '"'
        shape = f"{gx},{gy},{gz},{bx},{by},{bz},{reg},{st_ / 1e6:.3f},{dy / 1e6:.3f}"
        rows.append((s, f"{s},{d},{c},{shape},,,,,NVIDIA A100-SXM4-80GB ({dev}),1,,{strm},{quoted}"))
    for s, d, c, b, dev, strm in copies:
        size = f"{b / 1e6:.3f},{b / d * 1e3:.3f},Pageable,Device"
        rows.append(
            (s, f"{s},{d},{c},,,,,,,,,,{size},NVIDIA A100-SXM4-80GB ({dev}),1,,{strm},[CUDA memcpy Host-to-Device]")
        )
    rows.sort()
    out.write_text(
        "Processing [x.sqlite] with [cuda_gpu_trace.py]... \n"
        "Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),DymSMem (MB),"
        "Bytes (MB),Throughput (MB/s),SrcMemKd,DstMemKd,Device,Ctx,GreenCtx,Strm,Name\n"
        + "\n".join(r for _, r in rows)
        + "\n"
    )
    return out


@native
def test_cloverleaf_cuda_gpu_trace_reads_the_same(tmp_path, scans):
    fast, slow = _both_workloads(_cloverleaf_gpu_trace(tmp_path / "gpu_trace.csv"))
    assert scans == [True]
    _assert_same_workload(fast, slow)
    assert len(fast) == 1312 and fast.memcpy_count == 279


@native
def test_cloverleaf_cuda_kern_exec_trace_reads_the_same(tmp_path, scans):
    """The other nsys report: grid and block as "x y z" text (dictionary columns)."""
    gpu = _cloverleaf_gpu_trace(tmp_path / "gpu_trace.csv").read_text().splitlines()[2:]
    rows = []
    for line in gpu:
        start, dur, corr, gx, gy, gz, bx, by, bz, rest = line.split(",", 9)
        if gx:
            name = rest.split(",", 11)[-1]  # after Reg/Trd ... Strm
            times = f"{int(start) - 9000},4000,,,{start},{dur},{int(dur) + 9000}"
            rows.append(f"{times},7,8,0,cudaLaunchKernel,{gx:>5}{gy:>5}{gz:>5},{bx:>5}{by:>5}{bz:>5},{name}")
    p = tmp_path / "kern_exec.csv"
    p.write_text(
        "API Start (ns),API Dur (ns),Queue Start (ns),Queue Dur (ns),Kernel Start (ns),Kernel Dur (ns),"
        "Total Dur (ns),PID,TID,DevId,API Function,GridXYZ,BlockXYZ,Kernel Name\n" + "\n".join(rows) + "\n"
    )
    fast, slow = _both_workloads(p)
    assert scans == [True]
    _assert_same_workload(fast, slow)
    assert len(fast) == 1312 and fast.meta["report"] == "cuda_kern_exec_trace"


@native
def test_real_profiles_read_the_same(scans):
    """Every magus trace, a sample of the gpuperfpredict traces (compressed: the bytes path) and a
    newer nvprof layout: identical workloads both ways."""
    files = _real_csvs()
    assert len(files) > 100
    for f in files:
        scans.clear()
        fast, slow = _both_workloads(f)
        assert scans == [True], f  # the scanner took the file (the second read was pure Python)
        _assert_same_workload(fast, slow)


@native
@pytest.mark.slow
def test_all_gpuperfpredict_traces_read_the_same(request):
    if "slow" not in (request.config.getoption("markexpr") or ""):
        pytest.skip("reads 2,050 files twice; run with -m slow")
    for f in sorted(shared_path("profiles", "nvprof", "gpuperfpredict-k40c").glob("*.csv.xz")):
        _assert_same_workload(*_both_workloads(f))


# --- read_csv_table both ways -----------------------------------------------------------------
def _read(data: bytes | Path, native_path: bool, **kwargs: Any) -> Any:
    """read_csv_table's table, or the FormatError it raised (as text)."""
    kwargs.setdefault("path", "t.csv")
    path = kwargs.pop("path")
    try:
        if native_path:
            return ru.read_csv_table(data, path, **kwargs)
        with _pure_python():
            return ru.read_csv_table(data, path, **kwargs)
    except FormatError as exc:
        return f"FormatError: {exc}"


def _columns(table: Any, *, numbers: list[str], dictionaries: list[str], strings: list[str], corr: list[str]) -> dict:
    """The columns as the readers read them (numbers through numeric_column: errors included)."""
    out: dict[str, Any] = {}
    for c in numbers:
        try:
            out[c] = ru.numeric_column(table, c, path="t.csv", first_line=2)
        except FormatError as exc:
            out[c] = f"FormatError: {exc}"
    for c in dictionaries:
        cat = ru.categorical(table.column(c))
        out[c] = (list(cat.categories), np.asarray(cat.codes).tolist())
    for c in strings:
        out[c] = ru.string_column(table, c).to_pylist()
    for c in corr:
        cat, ids = ru.split_corr_names(table, c, np.arange(table.num_rows))
        out[c] = (list(cat.categories), np.asarray(cat.codes).tolist(), None if ids is None else ids.tolist())
    return out


def _assert_same_columns(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for c in a:
        if isinstance(a[c], np.ndarray) and isinstance(b[c], np.ndarray):
            assert np.array_equal(a[c], b[c], equal_nan=True), c
        else:
            assert a[c] == b[c], c


def _compare(
    data: bytes, *, header: list[str], numbers: list[str], dictionaries=(), strings=(), corr=(), **kwargs: Any
) -> bool:
    """Read ``data`` both ways and check that the results agree; returns whether the scanner took it."""
    kwargs = dict(
        kwargs,
        dictionary_columns=list(dictionaries),
        string_columns=list(strings),
        corr_suffix_columns=list(corr),
        include_columns=[c for c in header if c in {*numbers, *dictionaries, *strings, *corr}],
    )
    with _recording_scans() as taken:
        fast = _read(data, True, **kwargs)
    slow = _read(data, False, **kwargs)
    if isinstance(fast, str) or isinstance(slow, str):
        assert fast == slow
    else:
        spec = dict(numbers=list(numbers), dictionaries=list(dictionaries), strings=list(strings), corr=list(corr))
        _assert_same_columns(_columns(fast, **spec), _columns(slow, **spec))
    return bool(taken and taken[0])


# --- generated CSV bodies ---------------------------------------------------------------------
_DIGITS = st.text(alphabet="0123456789", min_size=1, max_size=22)


@st.composite
def _number_text(draw: Any) -> str:
    """Numbers as profilers print them, and in the other forms the scanner parses exactly."""
    kind = draw(st.sampled_from(["int", "decimal", "exp", "float", "empty", "space"]))
    if kind == "empty":
        return ""
    if kind == "space":
        return draw(st.sampled_from([" ", "\t", "  "]))
    if kind == "float":
        return repr(draw(st.floats(allow_nan=False, allow_infinity=False, width=64)))
    sign = draw(st.sampled_from(["", "", "-"]))
    text = sign + draw(_DIGITS)
    if kind in ("decimal", "exp"):
        text += "." + draw(st.text(alphabet="0123456789", max_size=22))
    if kind == "exp":
        exponent = draw(st.sampled_from(["", "+", "-"])) + draw(st.text(alphabet="0123456789", min_size=1, max_size=3))
        text += draw(st.sampled_from(["e", "E"])) + exponent
    pad = draw(st.sampled_from(["", "", " ", "\t"]))
    return pad + text + pad


_STRING = st.text(alphabet=st.sampled_from(list('ab ,"[]01(*)é')), max_size=12)
_NAME = st.tuples(_STRING, st.one_of(st.none(), st.integers(0, 2**40))).map(
    lambda t: t[0] if t[1] is None else f"{t[0]} [{t[1]}]"
)


def _quote(text: str, always: bool) -> str:
    if always or any(c in text for c in ',"') or text[:1] == '"':
        return '"' + text.replace('"', '""') + '"'
    return text


@st.composite
def _body(draw: Any) -> bytes:
    """A CSV body under the header ``n,s,d,x`` (number, name, dictionary, unused column), with
    chatter lines, empty lines and rows with the wrong number of fields mixed in."""
    lines = []
    for _ in range(draw(st.integers(0, 25))):
        what = draw(st.sampled_from(["row"] * 6 + ["chatter", "empty", "bad"]))
        if what == "chatter":
            lines.append(f"==7== {draw(st.text(alphabet='ab [01:/', max_size=12))}")
        elif what == "empty":
            lines.append("")
        elif what == "bad":
            lines.append(",".join(["1"] * draw(st.sampled_from([1, 2, 3, 5]))))
        else:
            number = draw(_number_text())
            quoted = draw(st.booleans())
            cells = [
                _quote(number, quoted) if number.strip() else number,
                _quote(draw(_NAME), draw(st.booleans())),
                _quote(draw(st.sampled_from(["GPU (0)", "GPU (1)", "", "x,y", 'q"t'])), draw(st.booleans())),
                _quote(draw(_STRING), draw(st.booleans())),
            ]
            lines.append(",".join(cells))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    text = newline.join(lines) + draw(st.sampled_from([newline, ""]))
    return text.encode("utf-8")


_HEADER = ["n", "s", "d", "x"]


@native
@_SETTINGS
@given(body=_body(), preamble=st.sampled_from(["", "NOTICE: x\n", "\nProcessing [x.sqlite]...\n"]))
def test_generated_bodies_read_the_same(body, preamble):
    text = preamble.encode() + b"n,s,d,x\n" + body
    skip = preamble.count("\n")
    for skip_row in (None, lambda t: t.startswith("==")):
        taken = _compare(
            text, header=_HEADER, numbers=["n"], dictionaries=["d"], corr=["s"], skip_rows=skip, skip_row=skip_row
        )
        event(f"taken by the scanner: {taken}")
        _compare(text, header=_HEADER, numbers=["n"], strings=["s", "d"], skip_rows=skip, skip_row=skip_row)


@native
@_SETTINGS
@given(body=_body())
def test_generated_bodies_from_a_file(tmp_path, body):
    """The file path (read in blocks) and the bytes path give the same."""
    data = b"n,s,d,x\nunits,,,\n" + body
    f = tmp_path / "t.csv"
    f.write_bytes(data)
    kw = dict(
        skip_rows=0,
        skip_after_header=1,
        dictionary_columns=["d"],
        corr_suffix_columns=["s"],
        skip_row=lambda t: t.startswith("=="),
    )
    kw["include_columns"] = ["n", "s", "d"]
    a, b = _read(f, True, **kw), _read(data, True, **kw)
    if isinstance(a, str) or isinstance(b, str):
        assert a == b
    else:
        spec = dict(numbers=["n"], dictionaries=["d"], strings=[], corr=["s"])
        _assert_same_columns(_columns(a, **spec), _columns(b, **spec))


def _scan_all(data: bytes, start: int, specs: list[tuple[int, str]], piece_bytes: int, threads: int) -> Any:
    got = SCANNER.scan_buffer(data, start, 4, specs, threads, piece_bytes)
    if isinstance(got, str):
        return got
    cols = []
    for col in got["columns"]:
        cols.append(
            [c.tolist() if isinstance(c, np.ndarray) else c for c in col] if isinstance(col, tuple) else col.tolist()
        )
    return got["rows"], repr(cols), got["bad_rows"]


@native
@_SETTINGS
@given(body=_body(), piece=st.integers(1, 40), threads=st.integers(1, 4))
def test_any_cut_into_pieces_gives_the_same(body, piece, threads):
    """Pieces cut anywhere (mid-line, at a CR, in quotes) and taken by any thread: same columns,
    dictionaries in order of first appearance in the file, bad rows in file order."""
    data = b"n,s,d,x\n" + body
    specs = [(0, "number"), (1, "corr_name"), (2, "dictionary"), (3, "dictionary")]
    whole = _scan_all(data, 8, specs, 0, 1)
    cut = _scan_all(data, 8, specs, piece, threads)
    if isinstance(whole, str):  # not taken (the reason given may differ: the first one found)
        assert isinstance(cut, str)
    else:
        assert cut == whole


# --- edge cases -------------------------------------------------------------------------------
def _simple(body: str, **kwargs: Any) -> bool:
    return _compare(
        ("a,b,c\n" + body).encode(),
        header=["a", "b", "c"],
        numbers=["a", "c"],
        dictionaries=["b"],
        skip_rows=0,
        **kwargs,
    )


@native
@pytest.mark.parametrize(
    "body",
    [
        '1,x,2\n"3",y,"4.5"\n',  # quoted numbers
        '" 5 ",x,\t6\t\n7,,\n',  # spaces and tabs around numbers, empty cells
        '1,"ab"c,2\n1,a"b,2\n1,"a""b",2\n',  # text after a closing quote; a quote inside a field
        "1,x,2\r\n3,y,4\r\n",  # CRLF
        "1,x,2\n\n\n3,y,4",  # empty lines, no final newline
        "",  # no rows
        "1,x,9007199254740993\n1,x,123456789012345678901234567890\n1,x,0.1e-5\n1,x,-0\n",  # rounding
        "1,x,368653757.000000\n1,x,12345678901.000000\n1,x,.5\n1,x,5.\n",
    ],
)
def test_taken_and_read_the_same(body):
    assert _simple(body)


@native
@pytest.mark.parametrize(
    "body",
    [
        "1,x,2\r3,y,4\n",  # a bare carriage return ends a row for pyarrow
        '1,"x\n2",3\n',  # a quoted value over two lines
        "1,x,0x10\n",  # hexadecimal: pyarrow reads 16
        "1,x,+5\n",
        "1,x,inf\n",
        "1,x,NA\n",  # a null spelling
        "1,x,1e400\n",  # out of range: pyarrow reads inf
        '1,x,"1,024.5"\n',  # thousands separator: numeric_column reads it
        "1,x,abc\n",  # not a number: numeric_column's error
        "1,\xff,2\n",  # not UTF-8
    ],
)
def test_refused_and_read_by_pyarrow(body):
    data = b"a,b,c\n" + body.encode("latin-1" if "\xff" in body else "utf-8")
    assert not _compare(data, header=["a", "b", "c"], numbers=["a", "c"], dictionaries=["b"], skip_rows=0)


@native
@pytest.mark.parametrize(
    "text,skip_rows",
    [
        ("\ufeffa,b,c\n1,x,2\n", 0),  # a byte-order mark
        ("pre\rx\na,b,c\n1,x,2\n", 2),  # a bare carriage return: a line end for pyarrow
        ("pre\n\na,b,c\n1,x,2\n", 1),  # an empty line where the header should be
        ("a,b,c", 0),  # no complete header line
        ('a,"b\n",c\n1,x,2\n', 0),  # a quoted header name over two lines
    ],
)
def test_refused_preambles(text, skip_rows):
    """Where finding the first row needs more of pyarrow's rules, pyarrow reads the file."""
    data = text.encode()
    got = ru._scan_csv(
        SCANNER,
        data,
        skip_rows=skip_rows,
        skip_after_header=0,
        include_columns=["a"],
        string_columns=[],
        dictionary_columns=[],
        corr_suffix_columns=[],
    )
    assert got is None
    assert not _compare(data, header=["a"], numbers=["a"], skip_rows=skip_rows)


@native
def test_bad_rows_give_the_same_error():
    for body in ["1,x,2\n1,2\n3,y,4\n", "1,x,2\n==1== chatter\n1,2,3,4\n1,2\n", "1,x\n"]:
        fast = _read(("a,b,c\n" + body).encode(), True, skip_rows=0, include_columns=["a", "c"])
        slow = _read(("a,b,c\n" + body).encode(), False, skip_rows=0, include_columns=["a", "c"])
        assert isinstance(fast, str) and fast == slow
        assert "expected 3 comma-separated fields" in fast


@native
def test_chatter_lines_are_skipped():
    data = b"a,b,c\n1,x,2\n==1== Generated result file: /tmp/x.nvvp\n"
    assert _simple("1,x,2\n==1== Generated result file: /tmp/x.nvvp\n", skip_row=lambda t: t.startswith("=="))
    table = ru.read_csv_table(data, "t.csv", skip_rows=0, include_columns=["a"], skip_row=lambda t: t.startswith("=="))
    assert table.num_rows == 1


@native
def test_non_numeric_number_names_its_line(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("==1== x\na,b,c\nunits,,\n1,x,2\n3,y,zz\n")
    table = ru.read_csv_table(p, p, skip_rows=1, skip_after_header=1, include_columns=["a", "c"])
    with pytest.raises(FormatError, match=r"line 5.*expected a number, got 'zz'"):
        ru.numeric_column(table, "c", path=p, first_line=4)


@native
def test_duplicate_names_and_missing_columns_go_to_pyarrow():
    assert not _compare(b"a,a,c\n1,2,3\n", header=["a", "c"], numbers=["c"], skip_rows=0)
    errors = []
    for native_path in (True, False):
        with pytest.raises(Exception, match="'zz'") as exc:
            _read(b"a,b\n1,2\n", native_path, skip_rows=0, include_columns=["a", "zz"])
        errors.append((type(exc.value), str(exc.value)))
    assert errors[0] == errors[1]


@native
def test_corr_id_beyond_int64_goes_to_pyarrow():
    data = b"a,s\n1,k [99999999999999999999]\n"
    assert (
        ru._scan_csv(
            SCANNER,
            data,
            skip_rows=0,
            skip_after_header=0,
            include_columns=["a", "s"],
            string_columns=[],
            dictionary_columns=[],
            corr_suffix_columns=["s"],
        )
        is None
    )


@native
def test_long_lines_and_many_pieces(tmp_path):
    """Lines longer than the read window, and a body in many pieces across threads."""
    long_name = "k" * (3 << 20)
    rows = [f"{i},{long_name if i == 3 else f'n{i % 7}'},{i / 8}" for i in range(200)]
    rows += [f"{i},n{i % 11},{i}.5" for i in range(200, 140_000)]
    rows += [f"{i},late{i % 3},{i}" for i in range(140_000, 150_000)]  # new values in the last piece only
    p = tmp_path / "big.csv"
    p.write_text("a,b,c\n" + "\n".join(rows) + "\n")
    table = ru.read_csv_table(p, p, skip_rows=0, dictionary_columns=["b"], include_columns=["a", "b", "c"])
    with _pure_python():
        ref = ru.read_csv_table(p, p, skip_rows=0, dictionary_columns=["b"], include_columns=["a", "b", "c"])
    spec = dict(numbers=["a", "c"], dictionaries=["b"], strings=[], corr=[])
    _assert_same_columns(_columns(table, **spec), _columns(ref, **spec))


@native
def test_split_line_matches_the_body_rules():
    assert SCANNER.split_line(b'a,"b""c",d"e,"f"g,') == [b"a", b'b"c', b'd"e', b"fg", b""]
    assert SCANNER.split_line(b'a,"open') is None
    assert SCANNER.split_line(b"a\rb") is None


@native
@_SETTINGS
@given(names=st.lists(_NAME, max_size=30), data=st.data())
def test_split_corr_names_on_row_subsets(names, data):
    """Names without their " [id]" suffix at the launch rows only: categories in order of first
    appearance among those rows, ids None when none has one; both table forms alike."""
    text = "a,s\n" + "".join(f"{i},{_quote(n, False)}\n" for i, n in enumerate(names))
    rows = np.array(
        sorted(data.draw(st.sets(st.integers(0, max(len(names) - 1, 0)), max_size=len(names)))) if names else [],
        dtype=np.int64,
    )
    kw = dict(skip_rows=0, include_columns=["a", "s"], corr_suffix_columns=["s"])
    tables = [_read(text.encode(), native_path, **kw) for native_path in (True, False)]
    assert ru.corr_column("s") in tables[0].column_names and ru.corr_column("s") not in tables[1].column_names
    (cat_a, ids_a), (cat_b, ids_b) = (ru.split_corr_names(t, "s", rows) for t in tables)
    assert list(cat_a.categories) == list(cat_b.categories)
    assert np.array_equal(cat_a.codes, cat_b.codes)
    assert (ids_a is None and ids_b is None) or np.array_equal(ids_a, ids_b)


@native
@settings(max_examples=300, deadline=None)
@given(st.lists(_number_text().filter(lambda t: t.strip() != ""), min_size=1, max_size=50))
def test_numbers_are_correctly_rounded(texts):
    """Every number form the scanner takes reads as Python's float() (correctly rounded) does;
    long digit strings and many decimals take the slow path, the rest the fast one."""
    data = ("a\n" + "\n".join(texts) + "\n").encode()
    got = SCANNER.scan_buffer(data, 2, 1, [(0, "number")], 2)
    expected = [float(t) for t in texts]
    if isinstance(got, str):  # only beyond the double range (pyarrow: inf, or 0 below the least subnormal)
        assert any(
            abs(x) == float("inf") or (x == 0 and any(c in "123456789" for c in t.lower().split("e")[0]))
            for t, x in zip(texts, expected)
        )
    else:
        assert got["columns"][0].tolist() == expected
