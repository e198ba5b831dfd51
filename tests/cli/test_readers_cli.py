"""Bad profile inputs through the command line: one line on stderr, exit code 1, no traceback;
and ``--format`` overriding detection."""

from __future__ import annotations

import gzip
import json
import sqlite3

import pytest

from simsample.cli import run
from tests.helpers import shared_path

NVPROF = (
    "==1== NVPROF is profiling process 1, command: ./a\n==1== Profiling result:\n"
    '"Start","Duration","Grid X","Grid Y","Grid Z","Block X","Block Y","Block Z","Registers Per Thread","Static '
    'SMem","Dynamic SMem","Size","Throughput","Device","Context","Stream","Name"\n'
    "{units}\n"
    '1.0,2.0,1,1,1,32,1,1,8,0,0,,,"G (0)","1","7","k(int) [4]"\n'
)


def _one_line_error(capsys, *needles):
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.startswith("error: "), err
    assert err.count("\n") == 1, err
    for n in needles:
        assert n in err, err
    return err


@pytest.mark.parametrize("command", [["profile", "info"], ["plan", "--sampler", "random", "-o", "PLAN"]])
def test_bad_inputs(tmp_path, capsys, command):
    cmd = [c if c != "PLAN" else str(tmp_path / "plan.json") for c in command]

    empty = tmp_path / "empty.json"
    empty.write_bytes(b"")
    assert run([*cmd, str(empty)]) == 1
    _one_line_error(capsys, str(empty), "empty")

    events = [
        {
            "ph": "X",
            "cat": "kernel",
            "name": f"k{i % 7}",
            "ts": i,
            "dur": 1,
            "args": {"grid": [1, 1, 1], "block": [32, 1, 1]},
        }
        for i in range(20000)
    ]
    whole = gzip.compress(json.dumps({"traceEvents": events}).encode())
    cut = tmp_path / "trace.json.gz"
    cut.write_bytes(whole[: len(whole) // 2])
    assert run([*cmd, str(cut)]) == 1
    _one_line_error(capsys, str(cut), "truncated or corrupt")

    # a damaged deflate stream (not a cut one) fails inside the inflater, not in gzip's checks
    damaged = tmp_path / "damaged.json.gz"
    damaged.write_bytes(whole[:10] + bytes(50) + whole[60:])
    assert run([*cmd, str(damaged)]) == 1
    _one_line_error(capsys, str(damaged), "cannot decompress")

    db = tmp_path / "nokernels.sqlite"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT)")
    con.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER)")
    con.commit()
    con.close()
    assert run([*cmd, str(db)]) == 1
    _one_line_error(capsys, str(db), "no CUPTI_ACTIVITY_KIND_KERNEL table", "nsys export --type sqlite")

    bad = tmp_path / "trace.csv"
    bad.write_text(NVPROF.format(units="ms,parsecs,,,,,,,,B,B,B,B/s,,,,"))
    assert run([*cmd, str(bad)]) == 1
    _one_line_error(capsys, str(bad), "line 4", "'Duration'", "'parsecs'")

    folder = tmp_path / "folder"
    folder.mkdir()
    assert run([*cmd, str(folder)]) == 1
    _one_line_error(capsys, str(folder), "is a directory")
    assert run([*cmd, "--format", "nvprof", str(folder)]) == 1
    _one_line_error(capsys, str(folder), "is a directory, expected a file")


def test_format_overrides_detection(tmp_path, capsys):
    good = tmp_path / "t.csv"
    good.write_text(NVPROF.format(units="ms,us,,,,,,,,B,B,B,B/s,,,,"))
    assert run(["profile", "info", "--format", "nvprof", "--json", str(good)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["format"] == "nvprof" and doc["launches"] == 1 and doc["total_time_ns"] == 2000
    # a Kineto trace forced through the nvprof reader fails with a message, not a traceback
    f = shared_path("profiles", "kineto", "hta", "trace_filter", "sampled_rank-0.json.gz")
    assert run(["profile", "info", "--format", "nvprof", str(f)]) == 1
    _one_line_error(capsys, str(f))
    assert run(["profile", "info", "--format", "no_such_reader", str(good)]) == 1
    _one_line_error(capsys, "no_such_reader")


def test_every_real_format_through_the_cli(capsys):
    files = [
        (
            shared_path("profiles", "nsys-sqlite", "pipit-cloverleaf", "perlmutter-cloverleaf-cuda.sqlite.xz"),
            "nsys_sqlite",
            1312,
        ),
        (shared_path("profiles", "nvprof", "gpuperfpredict-k40c", "lud-1024-run9.csv.xz"), "nvprof", None),
        (
            shared_path(
                "profiles",
                "kineto",
                "hta",
                "critical_path",
                "alexnet",
                "benchmark_result_2869224_1695835535_trace.json.gz",
            ),
            "kineto",
            79,
        ),
        (shared_path("profiles", "ncu", "microgpusim", "nsight_vectoradd_100_32_metrics_all.csv"), "ncu", 3),
    ]
    for f, fmt, n in files:
        assert run(["profile", "info", "--json", str(f)]) == 0, f
        doc = json.loads(capsys.readouterr().out)
        assert doc["format"] == fmt
        if n is not None:
            assert doc["launches"] == n


def test_each_real_file_is_claimed_by_its_reader_only():
    from simsample.io.files import read_head
    from simsample.manager import get_host

    samples = {
        "nsys_sqlite": shared_path(
            "profiles", "nsys-sqlite", "pipit-cloverleaf", "perlmutter-cloverleaf-cuda.sqlite.xz"
        ),
        "nvprof": shared_path(
            "profiles", "nvprof", "magus", "devid_cudasdk80", "traces", "traces_cudasdk_vectorAdd.csv"
        ),
        "kineto": shared_path(
            "profiles", "kineto", "kineto-resnet50", "resnet50_num_workers_0", "worker0.1623143089861.pt.trace.json.gz"
        ),
        "ncu": shared_path("profiles", "ncu", "microgpusim", "nsight_vectoradd_100_32_metrics_all.csv"),
    }
    readers = {
        n: r for n, r in get_host().readers().items() if n in {"nsys_sqlite", "nsys_csv", "nvprof", "kineto", "ncu"}
    }
    assert len(readers) == 5
    for fmt, path in samples.items():
        head = read_head(path)
        assert {n for n, r in readers.items() if r.detect(path, head)} == {fmt}, path
    # pipit's own CSV dump is not an nsys report; binary garbage is nobody's
    pipit = shared_path("profiles", "nsys-sqlite", "pipit-cloverleaf", "cloverleaf_gpu_trace.csv")
    for head in (read_head(pipit), b"\x00\x01\x02" * 100, b'"a\x00b","c"\n', b""):
        assert not any(r.detect(pipit, head) for r in readers.values())
