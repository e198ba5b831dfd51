"""nvprof GPU-trace reader: real magus and gpuperfpredict traces, and hand-written unit variants."""

from __future__ import annotations

import csv
import io
import lzma
from pathlib import Path

import numpy as np
import pytest

from simsample.errors import FormatError, UserError
from simsample.reading import detect_format, load_workload
from tests.helpers import shared_path

HEADER = (
    '"Start","Duration","Grid X","Grid Y","Grid Z","Block X","Block Y","Block Z","Registers Per Thread","Static SMem",'
    '"Dynamic SMem","Size","Throughput","Device","Context","Stream","Name"'
)
PREAMBLE = (
    "==42== NVPROF is profiling process 42, command: ./app 1\n==42== Profiling application: ./app 1\n"
    "==42== Profiling result:\n"
)


def _trace(tmp_path: Path, units: str, rows: list[str], name: str = "t.csv", header: str = HEADER) -> Path:
    p = tmp_path / name
    p.write_text(PREAMBLE + header + "\n" + units + "\n" + "\n".join(rows) + "\n")
    return p


def _independent_counts(path: Path) -> tuple[int, int]:
    """Kernel and memcpy rows counted with the csv module (a second implementation)."""
    raw = path.read_bytes()
    text = (lzma.decompress(raw) if raw[:6] == b"\xfd7zXZ\x00" else raw).decode()
    lines = [ln for ln in text.splitlines() if not ln.startswith("==")]
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    header, data = rows[0], rows[2:]
    gx = header.index("Grid X")
    kernels = sum(1 for r in data if r[gx] != "")
    return kernels, len(data) - kernels


MAGUS_SUITES = {"devid_cudasdk80": 9511, "devid_rodinia": 575, "devid_poly": 1775, "devid_lonestar": 3647}


def test_magus_totals():
    root = shared_path("profiles", "nvprof", "magus")
    total = memcpy = 0
    for suite, expected in MAGUS_SUITES.items():
        n = 0
        for f in sorted((root / suite / "traces").glob("traces_*.csv")):
            assert detect_format(f) == "nvprof"
            wl = load_workload([f])
            assert wl.format == "nvprof" and wl.source == str(f)
            n += len(wl)
            memcpy += wl.memcpy_count
        assert n == expected, suite
        total += n
    assert total == 15508
    assert memcpy == 6736


def test_magus_vectoradd_values():
    f = shared_path("profiles", "nvprof", "magus", "devid_cudasdk80", "traces", "traces_cudasdk_vectorAdd.csv")
    wl = load_workload([f])
    k = wl.kernels
    assert len(wl) == 1 and wl.memcpy_count == 3
    # ms start, us duration: 613.055684 ms and 2.208 us
    assert k["start_ns"].tolist() == [613055684]
    assert k["duration_ns"].tolist() == [2208]
    assert k["name"].astype(str).tolist() == ["vectorAdd(float const *, float const *, float*, int)"]
    assert k["correlation"].tolist() == [1168]
    assert (k["grid_x"].tolist(), k["block_x"].tolist(), k["regs"].tolist()) == ([196], [256], [8])
    assert wl.meta["gpu"] == "GeForce GTX 1080 Ti"
    assert wl.meta["units"]["Start"] == "ms"


def test_magus_seconds_units_and_kb_shared_memory():
    f = shared_path("profiles", "nvprof", "magus", "devid_rodinia", "traces", "traces_rodinia_backprop.csv")
    wl = load_workload([f])
    k = wl.kernels
    first = k.iloc[0]
    assert str(first["name"]).startswith("bpnn_layerforward_CUDA")
    assert first["start_ns"] == 614845415  # 614.845415 ms
    assert first["duration_ns"] == 72547  # 0.072547 ms
    assert first["shmem"] == 1088  # 1.0625 KB, binary
    assert (k["start_ns"].diff().dropna() >= 0).all()


@pytest.mark.parametrize("name", ["lud-1024-run9", "backprop-8192-run3", "hotspot-64_256-run10", "lavaMD-12-run7"])
def test_gpuperfpredict_counts(name):
    f = shared_path("profiles", "nvprof", "gpuperfpredict-k40c", f"{name}.csv.xz")
    wl = load_workload([f])
    kernels, memcpy = _independent_counts(f)
    assert (len(wl), wl.memcpy_count) == (kernels, memcpy)
    assert wl.meta["gpu"] == "Tesla K40c"
    assert wl.meta["units"]["Start"] == "ns"
    assert "[" not in "".join(map(str, wl.kernels["name"].cat.categories))  # suffixes stripped


def test_gpuperfpredict_every_twentieth_file():
    root = shared_path("profiles", "nvprof", "gpuperfpredict-k40c")
    for f in sorted(root.glob("*.csv.xz"))[::20]:
        wl = load_workload([f])
        assert (len(wl), wl.memcpy_count) == _independent_counts(f), f.name


@pytest.mark.slow
def test_gpuperfpredict_all_files(request):
    if "slow" not in (request.config.getoption("markexpr") or ""):
        pytest.skip("reads 2,050 files; run with -m slow")
    root = shared_path("profiles", "nvprof", "gpuperfpredict-k40c")
    n = m = 0
    for f in sorted(root.glob("*.csv.xz")):
        wl = load_workload([f])
        n += len(wl)
        m += wl.memcpy_count
    assert (n, m) == (318900, 10600)


def test_newer_layout_with_correlation_column():
    f = shared_path("profiles", "ncu", "microgpusim", "nvprof_vectoradd_100_32_commands.txt")
    wl = load_workload([f])
    assert len(wl) == 1 and wl.memcpy_count == 4
    k = wl.kernels.iloc[0]
    assert k["name"] == "_Z6vecAddIfEvPT_S1_S1_i"
    assert k["correlation"] == 123
    assert k["start_ns"] == 245767824 and k["duration_ns"] == 3264  # us units
    assert (k["grid_x"], k["block_x"]) == (1, 1024)


@pytest.mark.parametrize(
    "tu,du,start,dur,want_start,want_dur",
    [
        ("s", "s", "1.500000", "0.000002", 1_500_000_000, 2_000),
        ("ms", "us", "611.996748", "2.208000", 611_996_748, 2_208),
        ("us", "us", "245767.824000", "3.264000", 245_767_824, 3_264),
        ("ns", "ns", "131544660.000000", "876907.000000", 131_544_660, 876_907),
        ("s", "ms", "12.000001", "0.001500", 12_000_001_000, 1_500),
    ],
)
def test_time_units(tmp_path, tu, du, start, dur, want_start, want_dur):
    units = f"{tu},{du},,,,,,,,KB,B,KB,MB/s,,,,"
    rows = [
        f'{start},{dur},2,3,1,64,2,1,20,1.500000,256,,,"GPU X (0)","1","7","k(int) [55]"',
        f'{start},{dur},,,,,,,,,,1.000000,2.0,"GPU X (0)","1","7","[CUDA memset]"',
    ]
    wl = load_workload([_trace(tmp_path, units, rows)])
    k = wl.kernels.iloc[0]
    assert (k["start_ns"], k["duration_ns"]) == (want_start, want_dur)
    assert (k["grid_x"], k["grid_y"], k["block_x"], k["block_y"]) == (2, 3, 64, 2)
    assert k["shmem"] == 1536 + 256
    assert k["name"] == "k(int)" and k["correlation"] == 55
    assert wl.memcpy_count == 1


def test_launch_order_and_ids(tmp_path):
    units = "ns,ns,,,,,,,,B,B,B,B/s,,,,"
    rows = [
        '300,5,1,1,1,32,1,1,8,0,0,,,"G (0)","1","7","b [3]"',
        '100,5,1,1,1,32,1,1,8,0,0,,,"G (0)","1","7","a [1]"',
        '100,5,1,1,1,32,1,1,8,0,0,,,"G (0)","1","8","c [2]"',
    ]
    wl = load_workload([_trace(tmp_path, units, rows)])
    k = wl.kernels
    assert k["name"].astype(str).tolist() == ["a", "c", "b"]  # by start, ties by correlation id
    assert k["kernel_id"].tolist() == [0, 1, 2]
    assert k["stream"].tolist() == [7, 8, 7]


def test_unknown_unit_names_file_line_column_and_unit(tmp_path):
    p = _trace(tmp_path, "ms,fortnights,,,,,,,,B,B,B,B/s,,,,", ['1,1,1,1,1,1,1,1,1,0,0,,,"G","1","7","k"'])
    with pytest.raises(FormatError) as err:
        load_workload([p])
    msg = str(err.value)
    assert str(p) in msg and "line 5" in msg and "'Duration'" in msg and "'fortnights'" in msg


def test_unknown_size_unit_is_refused(tmp_path):
    p = _trace(tmp_path, "ms,ms,,,,,,,,B,XB,B,B/s,,,,", ['1,1,1,1,1,1,1,1,1,0,0,,,"G","1","7","k"'])
    with pytest.raises(FormatError, match="'Dynamic SMem' has unknown unit 'XB'"):
        load_workload([p])


def test_bad_row_names_its_line(tmp_path):
    rows = ['1,1,1,1,1,1,1,1,1,0,0,,,"G","1","7","k"', '2,1,1,1,1"']
    p = _trace(tmp_path, "ms,ms,,,,,,,,B,B,B,B/s,,,,", rows)
    with pytest.raises(FormatError) as err:
        load_workload([p])
    assert "line 7" in str(err.value) and "expected 17" in str(err.value)


def test_non_numeric_grid_names_its_line(tmp_path):
    rows = ['1,1,1,1,1,1,1,1,1,0,0,,,"G","1","7","k"', '2,1,x,1,1,1,1,1,1,0,0,,,"G","1","7","k"']
    p = _trace(tmp_path, "ms,ms,,,,,,,,B,B,B,B/s,,,,", rows)
    with pytest.raises(FormatError) as err:
        load_workload([p])
    assert "line 7" in str(err.value) and "'Grid X'" in str(err.value)


def test_missing_units_row(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text(PREAMBLE + HEADER + '\n1,1,1,1,1,1,1,1,1,0,0,,,"G","1","7","k"\n')
    with pytest.raises(FormatError, match="units row"):
        load_workload([p])


def test_trailing_profiler_lines_are_skipped(tmp_path):
    rows = ['1,1,1,1,1,1,1,1,1,0,0,,,"G","1","7","k"', "==42== Generated result file: /tmp/x.nvvp"]
    wl = load_workload([_trace(tmp_path, "ms,ms,,,,,,,,B,B,B,B/s,,,,", rows)])
    assert len(wl) == 1


def test_metrics_files_are_recognised_and_refused():
    summary = shared_path("profiles", "nvprof", "magus", "devid_rodinia", "metrics", "metrics_rodinia_backprop.csv")
    assert detect_format(summary) == "nvprof"
    with pytest.raises(UserError, match="metrics summary"):
        load_workload([summary])
    per_launch = shared_path("profiles", "ncu", "microgpusim", "nvprof_vectoradd_100_32_metrics_all.txt")
    with pytest.raises(UserError, match="per-launch metrics"):
        load_workload([per_launch])


def test_fingerprint_is_stable():
    f = shared_path("profiles", "nvprof", "magus", "devid_poly", "traces", "traces_poly_3dconv.csv")
    a, b = load_workload([f]), load_workload([f])
    assert a.fingerprint == b.fingerprint
    assert np.array_equal(a.kernels["start_ns"].to_numpy(), b.kernels["start_ns"].to_numpy())
