"""The steps all simulator adapters share: plan matching, the output folder of apply, the weights
file, and the results table of collect / estimate."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simsample.adapter_support import (
    PLAN_FILE,
    WEIGHTS_FILE,
    check_output_folder,
    format_number,
    link_or_copy,
    match_plan,
    plan_ids,
    results_for_estimate,
    staged_folder,
    weights_table,
    write_plan_records,
)
from simsample.adapter_support import folders as folders_mod
from simsample.cli.results import emit_results
from simsample.errors import PlanMismatchError, UserError
from simsample.planfile import Cluster, Plan
from simsample.plugin_base import Sampler
from simsample.workload import from_records


class _Fixed(Sampler):
    name = "fixed"

    def plan(self, workload, params, seed):  # pragma: no cover - plans are built directly
        raise NotImplementedError


def traces_workload():
    """Six launches as a simulator's traces would show them: 1-based ids, mangled names."""
    return from_records(
        {
            "kernel_id": [1, 2, 3, 4, 5, 6],
            "name": ["_Z4axpyPf", "_Z4reluPf", "_Z4axpyPf", "_Z4gemmPf", "_Z4reluPf", "_Z4axpyPf"],
            "grid_x": [2, 3, 2, 4, 3, 2],
            "block_x": [64] * 6,
            "duration_ns": pd.array([pd.NA] * 6, dtype="Int64"),  # traces carry no time
        },
        source="traces/",
        format="sim",
    )


def profile_workload():
    """The same launch sequence from a profile: 0-based ids of its own, demangled names, times."""
    t = traces_workload().kernels
    return from_records(
        {
            "kernel_id": [100, 101, 102, 103, 104, 105],
            "name": ["axpy(float*)", "relu(float*)", "axpy(float*)", "gemm(float*)", "relu(float*)", "axpy(float*)"],
            "grid_x": t["grid_x"].to_numpy(),
            "block_x": t["block_x"].to_numpy(),
            "duration_ns": [5, 6, 5, 9, 6, 5],
        },
        source="profile.sqlite",
        format="nsys",
    )


def make_plan(wl, rows, weights, clusters) -> Plan:
    reps: dict[int, list[int]] = {}
    for r, c in zip(rows, clusters):
        reps.setdefault(c, []).append(int(wl.kernels["kernel_id"].iloc[r]))
    cl = [Cluster(c, f"c{c}", 1, len(ids), {}, sorted(set(ids))) for c, ids in sorted(reps.items())]
    return Plan.build(
        wl,
        _Fixed(),
        {},
        0,
        metric="none",
        rows=rows,
        weights=weights,
        cluster_of_row=clusters,
        clusters=cl,
        kind="representative",
    )


# --- plan matching ------------------------------------------------------------------------------
def test_plan_of_the_same_inputs_matches_by_fingerprint_with_repeats(capsys):
    wl = traces_workload()
    plan = make_plan(wl, [3, 1, 3], [1.5, 2.0, 1.5], [1, 0, 1])  # launch 3 drawn twice
    m = match_plan(plan, wl, what="traces")
    assert not m.by_position
    assert m.rows.tolist() == plan.samples["launch"].tolist() == [1, 3, 3]
    assert wl.kernels["kernel_id"].to_numpy()[m.rows].tolist() == plan.samples["kernel_id"].tolist()
    assert capsys.readouterr().err == ""


def test_plan_of_a_profile_is_applied_by_launch_position_with_one_note(capsys):
    traces, prof = traces_workload(), profile_workload()
    assert traces.shape_fingerprint == prof.shape_fingerprint and traces.fingerprint != prof.fingerprint
    plan = make_plan(prof, [4, 0], [2.0, 4.0], [0, 1])
    m = match_plan(plan, traces, what="trace folder")
    assert m.by_position and sorted(m.rows.tolist()) == [0, 4]
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("note: the plan was made from profile.sqlite (nsys)")
    assert "matches trace folder traces/" in err[0] and err[0].endswith("applied by launch position")


def test_plan_for_other_launches_is_refused():
    other = from_records({"name": ["x", "y"], "grid_x": [1, 2], "block_x": [32, 32], "duration_ns": [1, 1]})
    with pytest.raises(PlanMismatchError, match="make a plan for these inputs"):
        match_plan(make_plan(other, [0], [2.0], [0]), traces_workload(), what="traces")
    # a longer run whose first launches have the same shapes is not the same launch sequence
    longer = from_records(
        {
            "name": [str(n) for n in traces_workload().kernels["name"]] * 2,
            "grid_x": [2, 3, 2, 4, 3, 2] * 2,
            "block_x": [64] * 12,
            "duration_ns": [1] * 12,
        }
    )
    with pytest.raises(PlanMismatchError):
        match_plan(make_plan(longer, [10], [12.0], [0]), traces_workload())


def test_an_edited_plan_whose_ids_and_positions_disagree_is_refused():
    wl = traces_workload()
    plan = make_plan(wl, [0, 2], [3.0, 3.0], [0, 1])
    plan.samples.loc[0, "launch"] = 5  # kernel 1 is at row 0, not 5
    with pytest.raises(PlanMismatchError, match="inconsistent"):
        match_plan(plan, wl)


def test_plan_ids_native_or_by_launch_position():
    traces, prof = traces_workload(), profile_workload()
    own = make_plan(traces, [1, 3], [3.0, 3.0], [0, 1])
    assert plan_ids(own, native=[2, 3, 4], positions=[1, 2, 3], native_format="sim") == [2, None, 4]
    assert plan_ids(None, native=[7, 9], positions=[0, 1], native_format="sim") == [7, 9]
    other = make_plan(prof, [1, 3], [3.0, 3.0], [0, 1])
    assert plan_ids(other, native=[2, 3, 4], positions=[1, 2, 3], native_format="sim") == [101, None, 103]


# --- output folders -----------------------------------------------------------------------------
def _hidden(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_staging_moves_a_complete_folder_into_place_with_ordinary_permissions(tmp_path):
    out = tmp_path / "a" / "out"
    with staged_folder(out, force=False) as tmp:
        assert tmp.parent == out.parent and tmp.name.startswith(".out.") and not out.exists()
        (tmp / "sub").mkdir()
        from simsample.io.files import atomic_write_text

        atomic_write_text(tmp / "sub" / "f.txt", "x\n")  # created private by the atomic writer
    assert (out / "sub" / "f.txt").read_text() == "x\n"
    assert stat.S_IMODE((out / "sub" / "f.txt").stat().st_mode) & 0o444 == 0o444
    assert _hidden(out.parent) == []


def test_staging_leaves_nothing_behind_on_failure(tmp_path):
    out = tmp_path / "out"
    with pytest.raises(RuntimeError, match="disk full"):
        with staged_folder(out, force=False) as tmp:
            (tmp / "half.txt").write_text("x")
            raise RuntimeError("disk full")
    assert list(tmp_path.iterdir()) == []
    # with --force over an existing folder: a failure keeps the old content
    out.mkdir()
    (out / "old.txt").write_text("keep")
    with pytest.raises(KeyboardInterrupt):
        with staged_folder(out, force=True) as tmp:
            (tmp / "new.txt").write_text("x")
            raise KeyboardInterrupt
    assert [p.name for p in out.iterdir()] == ["old.txt"] and _hidden(tmp_path) == []


def test_staging_puts_the_old_folder_back_when_the_final_rename_fails(tmp_path, monkeypatch):
    out = tmp_path / "out"
    out.mkdir()
    (out / "old.txt").write_text("keep")
    real = os.rename

    def rename(src, dst):
        if Path(src).name.endswith(".partial"):
            raise OSError("cross-device link")
        return real(src, dst)

    monkeypatch.setattr(folders_mod.os, "rename", rename)
    with pytest.raises(OSError, match="cross-device"):
        with staged_folder(out, force=True) as tmp:
            (tmp / "new.txt").write_text("x")
    assert [p.name for p in out.iterdir()] == ["old.txt"] and _hidden(tmp_path) == []


def test_force_replaces_a_non_empty_folder(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "stray").write_text("x")
    with pytest.raises(UserError, match="not empty.*--force"):
        with staged_folder(out, force=False):
            raise AssertionError("not reached")  # pragma: no cover
    assert (out / "stray").exists()
    with staged_folder(out, force=True) as tmp:
        (tmp / "new").write_text("y")
    assert sorted(p.name for p in out.iterdir()) == ["new"] and _hidden(tmp_path) == []
    # an empty folder is fine without --force
    empty = tmp_path / "empty"
    empty.mkdir()
    with staged_folder(empty, force=False) as tmp:
        (tmp / "f").write_text("z")
    assert (empty / "f").read_text() == "z"


def test_refuses_a_file_or_a_link_as_out(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(UserError, match="not a folder"):
        check_output_folder(f, force=True)
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    with pytest.raises(UserError, match="not a folder"):
        check_output_folder(tmp_path / "link", force=True)


@pytest.mark.parametrize("where", ["same", "inside", "holds", "dotdot"])
def test_output_overlapping_an_input_is_refused(tmp_path, where):
    inp = tmp_path / "traces"
    (inp / "deep").mkdir(parents=True)
    (inp / "kernel-1.traceg").write_text("x")
    out = {"same": inp, "inside": inp / "deep" / "sampled", "holds": tmp_path, "dotdot": inp / "deep" / ".." / "s"}[
        where
    ]
    with pytest.raises(UserError, match="overlaps the input"):
        with staged_folder(out, force=True, inputs=[inp]):
            raise AssertionError("not reached")  # pragma: no cover
    assert sorted(p.name for p in inp.rglob("*")) == ["deep", "kernel-1.traceg"]
    check_output_folder(
        tmp_path / "traces-sampled", force=False, inputs=[inp]
    )  # a sibling whose name starts alike is fine


def test_link_or_copy(tmp_path):
    src = tmp_path / "src"
    (src / "d").mkdir(parents=True)
    (src / "d" / "t.txt").write_text("trace")
    link_or_copy(src / "d", tmp_path / "o" / "a" / "d", copy=False)
    assert (tmp_path / "o" / "a" / "d").is_symlink() and os.readlink(tmp_path / "o" / "a" / "d") == str(
        (src / "d").resolve()
    )
    link_or_copy(src / "d", tmp_path / "o" / "copy", copy=True)
    assert not (tmp_path / "o" / "copy").is_symlink() and (tmp_path / "o" / "copy" / "t.txt").read_text() == "trace"
    link_or_copy(src / "d" / "t.txt", tmp_path / "o" / "f.txt", copy=True)
    assert (tmp_path / "o" / "f.txt").read_text() == "trace" and not (tmp_path / "o" / "f.txt").is_symlink()


# --- weights ------------------------------------------------------------------------------------
def test_weights_table_has_one_row_per_distinct_id_in_launch_order(tmp_path):
    wl = traces_workload()
    plan = make_plan(wl, [5, 1, 5, 3], [0.75, 2.0, 0.75, 2.5], [0, 1, 0, 2])  # launch 5 drawn twice
    table = weights_table(plan, {"trace": {6: "kernel-6.traceg", 2: "kernel-2.traceg"}})
    assert table.columns.tolist() == ["kernel_id", "weight", "cluster", "launch", "trace"]
    assert table["kernel_id"].tolist() == [2, 4, 6]
    assert table["launch"].tolist() == [1, 3, 5]
    assert table["weight"].tolist() == [2.0, 2.5, 1.5]  # repeats summed
    assert table["cluster"].tolist() == [1, 2, 0]
    assert table["trace"].tolist() == ["kernel-2.traceg", "", "kernel-6.traceg"]
    assert table["weight"].sum() == pytest.approx(plan.samples["weight"].sum())
    with pytest.raises(ValueError, match="standard one"):
        weights_table(plan, {"launch": {}})

    write_plan_records(tmp_path, plan, {"trace": {6: "kernel-6.traceg"}})
    assert (tmp_path / WEIGHTS_FILE).read_text().splitlines() == [
        "kernel_id,weight,cluster,launch,trace",
        "2,2,1,1,",
        "4,2.5,2,3,",
        "6,1.5,0,5,kernel-6.traceg",
    ]
    assert Plan.read(tmp_path / PLAN_FILE).dumps() == plan.dumps()
    write_plan_records(tmp_path / "plain", plan)
    assert (tmp_path / "plain" / WEIGHTS_FILE).read_text().splitlines()[0] == "kernel_id,weight,cluster,launch"


@settings(max_examples=200, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_format_number_reads_back_exactly(x):
    text = format_number(x)
    assert float(text) == x
    assert not text.endswith(".0")


def test_format_number_examples():
    assert [format_number(v) for v in (4.0, 0.1, 1 / 3, -2.0, 1e20, 2.5)] == [
        "4",
        "0.1",
        repr(1 / 3),
        "-2",
        "1e+20",
        "2.5",
    ]


# --- results ------------------------------------------------------------------------------------
def _results(statuses=("ok", "ok")) -> pd.DataFrame:
    return pd.DataFrame(
        {"kernel_id": [2, 4], "cycles": [1500.0, 0.25], "instructions": [10.0, np.nan], "status": list(statuses)}
    )


def test_collect_prints_a_table_by_default(capsys):
    emit_results(_results(), output=None, as_json=False, allow_incomplete=False, title="Sim results")
    out = capsys.readouterr().out
    assert "Sim results" in out and "1,500" in out and "0.25" in out and " - " in out  # NaN shown as '-'
    assert "kernel_id,cycles" not in out


def test_collect_json_and_csv(tmp_path, capsys):
    emit_results(_results(), output=None, as_json=True, allow_incomplete=False, title="t")
    doc = json.loads(capsys.readouterr().out)
    assert doc["results"][1] == {"kernel_id": 4, "cycles": 0.25, "instructions": None, "status": "ok"}
    out = tmp_path / "r.csv"
    emit_results(_results(), output=out, as_json=False, allow_incomplete=False, title="t")
    cap = capsys.readouterr()
    assert cap.out == "" and cap.err == f"{out}: 2 kernel(s)\n"
    assert out.read_text() == "kernel_id,cycles,instructions,status\n2,1500,10,ok\n4,0.25,,ok\n"
    assert stat.S_IMODE(out.stat().st_mode) & 0o044 == 0o044 & ~_umask()  # not left private
    assert [p.name for p in tmp_path.iterdir()] == ["r.csv"]
    with pytest.raises(UserError, match="is a folder"):
        emit_results(_results(), output=tmp_path, as_json=False, allow_incomplete=False, title="t")


def _umask() -> int:
    m = os.umask(0)
    os.umask(m)
    return m


def test_collect_with_unusable_kernels_writes_then_fails_in_one_line(tmp_path, capsys):
    df = _results(("ok", "crashed"))
    out = tmp_path / "r.csv"
    with pytest.raises(UserError) as exc:
        emit_results(
            df, output=out, as_json=False, allow_incomplete=False, title="t", details={4: "ASSERT FAILED on line 9"}
        )
    assert str(exc.value) == (
        "1 of 2 kernel(s) have no usable result (kernel 4: crashed, ASSERT FAILED on line 9); "
        "rerun them, or pass --allow-incomplete to keep the partial table"
    )
    assert "crashed" in out.read_text()
    emit_results(df, output=out, as_json=False, allow_incomplete=True, title="t")
    projected = _results(("ok", "projected"))
    emit_results(projected, output=out, as_json=False, allow_incomplete=False, title="t")  # projected is usable
    assert capsys.readouterr().err.splitlines()[-1] == f"{out}: 2 kernel(s), 1 projected"


def test_estimate_from_a_results_table_and_raw_output(tmp_path):
    wl = traces_workload()
    plan = make_plan(wl, [1, 3, 5], [2.0, 2.0, 2.0], [0, 1, 2])
    table = tmp_path / "r.csv"
    table.write_text("kernel_id,cycles,status\n2,100,ok\n4,200,ok\n")
    raw = tmp_path / "run.log"
    raw.write_text("log\n")
    seen = []

    def collect(outputs, p):
        seen.append([Path(o).name for o in outputs])
        return pd.DataFrame({"kernel_id": [6, 1], "cycles": [300.0, 9.0], "status": ["ok", "ok"], "extra": [1, 2]}), {}

    df = results_for_estimate([table, raw], plan, collect, ["cycles"])
    assert seen == [["run.log"]]  # the table is read as a table, the rest goes to the adapter
    assert df.to_dict("list") == {"kernel_id": [2, 4, 6], "cycles": [100.0, 200.0, 300.0], "status": ["ok", "ok", "ok"]}

    def twice(outputs, p):
        return pd.DataFrame({"kernel_id": [4], "cycles": [1.0], "status": ["ok"]}), {}

    with pytest.raises(UserError, match="kernel 4 has results in more than one input"):
        results_for_estimate([table, raw], plan, twice, ["cycles"])
    with pytest.raises(
        UserError, match=r"cannot estimate: 1 sampled kernel\(s\) have no usable result \(kernel 6: missing"
    ):
        results_for_estimate([table], plan, collect, ["cycles"])
    bad = tmp_path / "bad.csv"
    bad.write_text("kernel_id,cycles\n2,1\n")
    with pytest.raises(UserError, match="no column status"):
        results_for_estimate([bad], plan, collect, ["cycles"])
