"""Joining Nsight Compute metrics onto a timeline by launch order within (name, grid, block)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from simsample.cli import run
from simsample.errors import UserError
from simsample.io.join import join_metrics
from simsample.reading import load_workload
from simsample.workload import from_records
from tests.helpers import shared_path


def _timeline(names, grids, blocks=None):
    n = len(names)
    return from_records(
        {
            "name": names,
            "grid_x": grids,
            "block_x": blocks or [128] * n,
            "start_ns": np.arange(n) * 100,
            "duration_ns": np.arange(n) + 10,
        },
        source="timeline",
        format="nsys_sqlite",
    )


def _metrics(names, grids, values, ids=None, blocks=None, totals=False):
    n = len(names)
    wl = from_records(
        {
            "kernel_id": ids if ids is not None else list(range(n)),
            "name": names,
            "grid_x": grids,
            "block_x": blocks or [128] * n,
            "duration_ns": [1] * n,
            "smsp__inst_executed.sum": values,
        },
        source="metrics.csv",
        format="ncu",
        meta={"launch_shape": "totals" if totals else "xyz"},
    )
    return wl


def test_exact_join_by_order_within_name_and_shape():
    t = _timeline(
        ["void a<int>(int*)", "b(float)", "void a<int>(int*)", "a_other", "void a<int>(int*)"], [4, 8, 4, 4, 2]
    )
    # ncu prints base names and numbers its own launches; a(4) twice, then a(2), b, a_other
    m = _metrics(["a", "a", "a", "b", "a_other"], [4, 4, 2, 8, 4], [10.0, 11.0, 12.0, 20.0, 30.0], ids=[5, 7, 9, 6, 8])
    j, report = join_metrics(t, m)
    assert report.complete and report.matched == 5
    # rows of the metrics are taken in ncu-ID order: a(4)=id5 then id7
    assert j.kernels["smsp__inst_executed.sum"].tolist() == [10.0, 20.0, 11.0, 30.0, 12.0]
    assert j.kernels["ncu_id"].tolist() == [5, 6, 7, 8, 9]
    assert j.fingerprint == t.fingerprint  # launches unchanged, columns added
    assert j.meta["join_report"]["complete"] is True
    assert "duration_ns" in j.kernels and j.kernels["duration_ns"].tolist() == t.kernels["duration_ns"].tolist()


def test_partial_join_reports_what_differs():
    t = _timeline(["k", "k", "k", "only_t"], [4, 4, 4, 1])
    m = _metrics(["k", "k", "only_m"], [4, 4, 9], [1.0, 2.0, 3.0])
    j, report = join_metrics(t, m)
    assert report.matched == 2 and not report.complete
    assert report.count_mismatches == [
        {"name": "k", "grid": "(4, 1, 1)", "block": "(128, 1, 1)", "timeline": 3, "metrics": 2}
    ]
    assert [g["name"] for g in report.only_in_timeline] == ["only_t"]
    assert [g["name"] for g in report.only_in_metrics] == ["only_m"]
    vals = j.kernels["smsp__inst_executed.sum"].tolist()
    assert vals[:2] == [1.0, 2.0] and math.isnan(vals[2]) and math.isnan(vals[3])
    assert j.kernels["ncu_id"].tolist() == [0, 1, -1, -1]
    s = report.summary()
    assert "onto 2 of 4 timeline launches" in s and "only in the timeline" in s and "only in the metrics" in s
    assert j.meta["join_report"]["count_mismatch_groups"] == 1
    # a sampler needing the metric refuses a partly joined workload, naming the column
    with pytest.raises(UserError, match="smsp__inst_executed.sum"):
        j.require(["smsp__inst_executed.sum"], who="sampler pka")


def test_shape_distinguishes_groups():
    t = _timeline(["k", "k"], [4, 8])
    m = _metrics(["k", "k"], [8, 4], [80.0, 40.0])
    j, report = join_metrics(t, m)
    assert report.complete
    assert j.kernels["smsp__inst_executed.sum"].tolist() == [40.0, 80.0]


def test_totals_when_metrics_lack_dimensions():
    t = from_records(
        {"name": ["k", "k"], "grid_x": [2, 4], "grid_y": [2, 1], "block_x": [64, 64], "duration_ns": [1, 2]}
    )
    m = _metrics(["k", "k"], [4, 4], [1.0, 2.0], blocks=[64, 64], totals=True)
    j, report = join_metrics(t, m)
    assert report.key == "kernel name, grid size and block size"
    assert report.complete
    assert j.kernels["smsp__inst_executed.sum"].tolist() == [1.0, 2.0]


def test_nothing_matches_is_an_error():
    t = _timeline(["a", "b"], [1, 1])
    m = _metrics(["x"], [1], [1.0])
    with pytest.raises(UserError, match="no launch matches timeline") as err:
        join_metrics(t, m)
    assert "the metrics have x grid (1, 1, 1) block (128, 1, 1)" in str(err.value)
    assert "the timeline has a grid" in str(err.value)


def test_existing_columns_are_not_overwritten():
    t = _timeline(["k"], [1])
    m = _metrics(["k"], [1], [5.0])
    m.kernels["start_ns"] = [123]
    j, report = join_metrics(t, m)
    assert j.kernels["start_ns"].tolist() == [0]
    assert "kernel_id" not in report.columns_added


def test_real_nvprof_trace_with_ncu_metrics(tmp_path, capsys):
    trace = shared_path("profiles", "ncu", "microgpusim", "nvprof_vectoradd_100_32_commands.txt")
    metrics = shared_path("profiles", "ncu", "microgpusim", "nsight_vectoradd_100_32_metrics_all.csv")
    wl = load_workload([trace], join=metrics)
    # mangled _Z6vecAddIfEvPT_S1_S1_i in the trace, vecAdd in ncu; ncu profiled 3 launches, the trace has 1
    assert wl.kernels["smsp__inst_executed_sum"].tolist() == [344.0]
    rep = wl.meta["join_report"]
    assert rep["matched"] == 1 and rep["count_mismatches"][0]["metrics"] == 3
    err = capsys.readouterr().err
    assert err.startswith("warning: joined metrics from") and err.count("\n") == 1
    assert run(["profile", "info", str(trace), "--join", str(metrics), "--json"]) == 0
    out = capsys.readouterr()
    doc = json.loads(out.out)
    assert doc["meta"]["join_report"]["matched"] == 1
    assert "warning:" in out.err
    plan = tmp_path / "p.json"
    assert run(["plan", str(trace), "--join", str(metrics), "--sampler", "random", "-o", str(plan)]) == 0
    assert plan.exists()


def test_cli_join_nothing_matches(tmp_path, capsys):
    trace = shared_path("profiles", "nvprof", "magus", "devid_cudasdk80", "traces", "traces_cudasdk_vectorAdd.csv")
    metrics = shared_path("profiles", "ncu", "microgpusim", "nsight_vectoradd_100_32_metrics_all.csv")
    assert run(["profile", "info", str(trace), "--join", str(metrics)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "no launch matches" in err


def test_oversized_join_is_refused(monkeypatch):
    import simsample.io.join as join_mod

    t = _timeline(["k"] * 10, [1] * 10)
    m = _metrics(["k"], [1], [5.0])
    monkeypatch.setattr(join_mod, "_MAX_JOIN_BYTES", 16)
    with pytest.raises(UserError, match="would take .* GiB; collect only the metrics you need"):
        join_metrics(t, m)
