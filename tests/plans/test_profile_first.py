"""Profile first, trace only what the plan needs: tracer selections, merged runs, partial folders."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simsample.cli import run as cli_run
from simsample.errors import UserError
from simsample.planfile import Plan
from simsample_accelsim.apply import apply_plan
from simsample_accelsim.kernelslist import KernelEntry, parse_kernelslist
from simsample_accelsim.merge import merge_runs
from simsample_accelsim.reader import scan_folder
from simsample_accelsim.selection import cap_runs, plan_selection, tracer_ranges
from simsample_accelsim.synth import KernelSpec, write_workload
from simsample_accelsim.synthruns import link_trace, write_tracer_runs
from simsample_accelsim.tracerstats import read_stats, read_stats_tail, stats_line
from simsample_accelsim.warmup import parse_warmup
from tests.helpers import shared_path

COLUMNS = (
    "name=Name,duration_ns=Duration,grid_x=GridX,grid_y=GridY,grid_z=GridZ,block_x=BlockX,block_y=BlockY,block_z=BlockZ"
)


# --- selections -------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 400), min_size=1, max_size=40), st.integers(0, 6), st.integers(0, 20))
def test_ranges_cover_each_window_and_keep_the_gaps(numbers, window, gap):
    ranges = tracer_ranges(numbers, window, gap)
    covered = {n for a, b in ranges for n in range(a, b + 1)}
    for n in numbers:
        assert set(range(max(1, n - window), n + 1)) <= covered
    for (a1, b1), (a2, b2) in zip(ranges, ranges[1:]):
        assert a1 <= b1 < a2 <= b2 and a2 - b1 - 1 > gap  # disjoint, in order, gaps wider than bridged
    assert all(b in numbers for _, b in ranges)  # a range ends at a sampled launch: no launch traced after it


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(1, 1000), min_size=1, max_size=60), st.integers(1, 8))
def test_capped_runs_cover_the_same_launches(numbers, cap):
    ranges = tracer_ranges(numbers, 2, 0)
    capped = cap_runs(ranges, cap)
    assert len(capped) <= cap
    covered = {n for a, b in capped for n in range(a, b + 1)}
    assert all(set(range(a, b + 1)) <= covered for a, b in ranges)
    assert capped[0][0] == ranges[0][0] and capped[-1][1] == ranges[-1][1]


def test_stats_lines_read_back(tmp_path):
    p = tmp_path / "stats.csv"
    lines = [stats_line(n, f"_Z1k{n}Pf", (n, 2, 1), (32, 1, 1), 100 * n) for n in range(1, 6)]
    lines[-1] = stats_line(5, "_Z1k5Pf", (5, 2, 1), (32, 1, 1), None)  # the process ended inside it
    p.write_text("kernel id, kernel mangled name, grid_dimX\n" + "\n".join(lines) + "\n")
    rows = read_stats(p)
    assert sorted(rows) == [1, 2, 3, 4, 5]
    assert (
        rows[3].name == "_Z1k3Pf"
        and rows[3].grid == (3, 2, 1)
        and rows[3].block == (32, 1, 1)
        and rows[3].total_insts == 300
    )
    assert rows[5].total_insts is None
    assert sorted(read_stats_tail(p, 2)) == [4, 5]
    p.write_text("kernel-1.trace, x, 1, 1\n")
    with pytest.raises(UserError, match="line 1"):
        read_stats(p)


# --- a synthetic process, traced in ranges ------------------------------------------------------


def process_folder(tmp_path: Path, n: int = 30) -> tuple[Path, list[tuple[int, str]]]:
    """A full trace folder of n launches (ids 1..n) with memcpys before 1, 8 and 21; returns it and
    the memcpys as (launch they precede, line)."""
    names = ["_Z4gemmPf", "_Z4reluPf", "_Z4copyPf"]
    specs = [
        KernelSpec(
            name=names[i % 3],
            grid=(1 + i % 4, 1, 1),
            block=(32, 1, 1),
            iters=1,
            body=("LDG.E", "STG.E"),
            base_address=0x7F5A40000000 + (i // 2) * 0x1000,
        )
        for i in range(n)
    ]
    mem = [(0, 0x1000, 64), (0, 0x2000, 32), (7, 0x3000, 16), (20, 0x4000, 8)]
    d = tmp_path / "full"
    write_workload(d, specs, memcpys=mem)
    return d, [(pos + 1, f"MemcpyHtoD,0x{a:016x},{b}") for pos, a, b in mem]


def runs_of(full: Path, ranges, runs: Path, stats: str = "full") -> list[Path]:
    tf = scan_folder(full)
    info = {h.kernel_id: (h.name, h.grid, h.block) for h in tf.headers}
    mem = []
    pos = 1
    for c in tf.kernels_list.commands:
        if isinstance(c, KernelEntry):
            pos += 1
        else:
            mem.append((pos, c.text))
    return write_tracer_runs(runs, ranges, launch=lambda n: info[n], trace=link_trace(full), memcpys=mem, stats=stats)


def test_merge_lists_each_launch_once_with_its_memcpys_in_place(tmp_path):
    full, _ = process_folder(tmp_path)
    ranges = [(3, 6), (10, 12), (5, 9), (22, 24)]  # the third overlaps the first
    runs = runs_of(full, ranges, tmp_path / "runs", stats="range")
    assert (runs[1] / "kernelslist.g").read_text().splitlines()[:5] == [
        "MemcpyHtoD,0x0000000000001000,64",
        "MemcpyHtoD,0x0000000000002000,32",
        "MemcpyHtoD,0x0000000000003000,16",
        "kernel-10.traceg",
        "kernel-11.traceg",
    ]  # memcpys from the process start, though its range starts at 10
    res = merge_runs(runs, tmp_path / "traces")
    traced = sorted({n for a, b in ranges for n in range(a, b + 1)})
    assert (
        res.launches == len(traced) and res.memcpys == 4 and res.duplicates == 2 and res.ranges == [(3, 12), (22, 24)]
    )
    want = []
    pos = 0
    for line in (full / "kernelslist.g").read_text().splitlines():
        if line.startswith("kernel"):
            pos += 1
            if pos in traced:
                want.append(line)
        elif pos < 24:
            want.append(line)
    assert (
        tmp_path / "traces" / "kernelslist.g"
    ).read_text().splitlines() == want  # the list the tracer writes for those launches
    assert sorted(read_stats(tmp_path / "traces" / "stats.csv")) == list(
        range(1, 25)
    )  # kept: the run that went furthest
    assert [h.kernel_id for h in scan_folder(tmp_path / "traces").headers] == traced


def test_merge_refuses_runs_of_different_processes(tmp_path, capsys):
    full, _ = process_folder(tmp_path)
    runs = runs_of(full, [(3, 6), (10, 12)], tmp_path / "runs")
    lst = runs[1] / "kernelslist.g"
    lst.write_text(lst.read_text().replace("0x0000000000002000,32", "0x0000000000009000,32"))
    out = tmp_path / "traces"
    assert cli_run(["accelsim", "merge", *map(str, runs), "--out", str(out)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "did not replay the same process" in err[0] and not out.exists()


def synth_plan(tmp_path: Path, full: Path, sampled: list[int]) -> Path:
    """A plan made by the CLI on the full folder's features, sampling the given launch numbers."""
    feats = tmp_path / "f.parquet"
    assert cli_run(["profile", "features", "--sim", "accelsim", str(full), "-o", str(feats), "--no-cache"]) == 0
    ids = tmp_path / "ids.csv"
    ids.write_text("kernel_id,weight\n" + "".join(f"{k},2\n" for k in sampled))
    plan = tmp_path / "plan.json"
    assert cli_run(["plan", str(feats), "--sampler", "explicit", "--param", f"file={ids}", "-o", str(plan)]) == 0
    return plan


@pytest.mark.parametrize("warmup", ["targeted", "2", "none"])
def test_selection_only_folder_applies_as_the_full_folder(tmp_path, warmup, capsys):
    full, _ = process_folder(tmp_path)
    plan_path = synth_plan(tmp_path, full, [9, 17, 26])
    plan = Plan.read(plan_path)
    spec = parse_warmup(warmup)
    sel = plan_selection(plan, window=5 if warmup == "targeted" else int(warmup.replace("none", "0")), max_gap=0)
    assert sel.runs == 3
    merge_runs(runs_of(full, sel.ranges, tmp_path / "runs"), tmp_path / "traces")
    a = apply_plan(plan, full, tmp_path / "a", warmup=spec)
    b = apply_plan(plan, tmp_path / "traces", tmp_path / "b", warmup=spec)
    for f in ("kernelslist.g", "simsample-weights.csv"):
        assert (tmp_path / "a" / f).read_text() == (tmp_path / "b" / f).read_text()
    assert len(a.warmup) == len(b.warmup)
    if warmup == "2":
        assert len(a.warmup) == 6


def test_partial_folder_refusals_and_short_windows(tmp_path, capsys):
    full, _ = process_folder(tmp_path)
    plan_path = synth_plan(tmp_path, full, [9, 17, 26])
    runs = runs_of(full, [(8, 9), (15, 17)], tmp_path / "runs")  # launch 26 not traced, 9's window short
    merge_runs(runs, tmp_path / "part")
    out = tmp_path / "o"
    capsys.readouterr()
    assert (
        cli_run(
            [
                "apply",
                "--sim",
                "accelsim",
                "--plan",
                str(plan_path),
                "--traces",
                str(tmp_path / "part"),
                "--out",
                str(out),
            ]
        )
        == 1
    )
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("error")]
    assert (
        len(err) == 1
        and "sampled launch 26" in err[0]
        and "DYNAMIC_KERNEL_LIMIT_START=26 DYNAMIC_KERNEL_LIMIT_END=26" in err[0]
    )
    assert not out.exists()
    merge_runs([*runs, *runs_of(full, [(26, 26)], tmp_path / "runs2")], tmp_path / "part2")
    assert (
        cli_run(
            [
                "apply",
                "--sim",
                "accelsim",
                "--plan",
                str(plan_path),
                "--traces",
                str(tmp_path / "part2"),
                "--out",
                str(out),
                "--warmup",
                "3",
            ]
        )
        == 0
    )
    notes = [ln for ln in capsys.readouterr().err.splitlines() if "fewer traced predecessors" in ln]
    assert len(notes) == 1 and "3 sampled launch(es)" in notes[0]
    kernels = [ln for ln in (out / "kernelslist.g").read_text().splitlines() if ln.startswith("kernel")]
    assert kernels == [
        "kernel-8.traceg",
        "kernel-9.traceg",
        "kernel-15.traceg",
        "kernel-16.traceg",
        "kernel-17.traceg",
        "kernel-26.traceg",
    ]


def test_partial_folder_of_another_run_is_refused_by_name_and_shape(tmp_path, capsys):
    full, _ = process_folder(tmp_path)
    plan_path = synth_plan(tmp_path, full, [9, 17])
    merge_runs(runs_of(full, [(8, 9), (16, 17)], tmp_path / "runs"), tmp_path / "part")
    victim = tmp_path / "part" / "kernel-17.traceg"
    text = Path(os.path.realpath(victim)).read_text()
    victim.unlink()
    victim.write_text(text.replace("-kernel name = _Z4reluPf", "-kernel name = _Z5otherPf", 1))
    assert (
        cli_run(
            [
                "apply",
                "--sim",
                "accelsim",
                "--plan",
                str(plan_path),
                "--traces",
                str(tmp_path / "part"),
                "--out",
                str(tmp_path / "o"),
            ]
        )
        == 1
    )
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("error")]
    assert len(err) == 1 and "launch 17 is other" in err[0] and "the plan's launch 17 is relu" in err[0]


def test_select_writes_the_tracer_runs(tmp_path, capsys):
    full, _ = process_folder(tmp_path)
    plan_path = synth_plan(tmp_path, full, [9, 17, 26])
    script = tmp_path / "trace.sh"
    capsys.readouterr()
    assert (
        cli_run(["accelsim", "select", "--plan", str(plan_path), "-o", str(script), "--max-gap", "0", "--warmup", "2"])
        == 0
    )
    out = capsys.readouterr().out
    assert "9 launches in 3 tracer run(s)" in out
    text = script.read_text()
    assert "trace_range run-0001 7 9\ntrace_range run-0002 15 17\ntrace_range run-0003 24 26\n" in text
    for var in (
        "DYNAMIC_KERNEL_LIMIT_START",
        "DYNAMIC_KERNEL_LIMIT_END",
        "USER_DEFINED_FOLDERS=1",
        "TRACES_FOLDER",
        "TERMINATE_UPON_LIMIT=1",
        "post-traces-processing",
    ):
        assert var in text
    assert os.access(script, os.X_OK)


# --- profile plans ------------------------------------------------------------------------------


def hetero_profile(tmp_path: Path) -> Path:
    """A per-kernel CSV profile of the hetero run: demangled names, the full run's cycles as durations."""
    d = shared_path("simulators", "accelsim", "hetero")
    from simsample.io.names import base_name

    cycles = {k["kernel_id"]: k["gpu_sim_cycle"] for k in json.loads((d / "full_stats.json").read_text())["kernels"]}
    rows = ["Name,Duration,GridX,GridY,GridZ,BlockX,BlockY,BlockZ"]
    for h in scan_folder(d).headers:
        rows.append(
            f"{base_name(h.name)}(float*),{cycles[h.kernel_id]},"
            f"{h.grid[0]},{h.grid[1]},{h.grid[2]},{h.block[0]},{h.block[1]},{h.block[2]}"
        )
    p = tmp_path / "profile.csv"
    p.write_text("\n".join(rows) + "\n")
    return p


def test_profile_plan_applies_with_the_default_warmup_and_estimates(tmp_path, capsys):
    """The 0/1-based collision: profile positions 0.., trace ids 1..; the default (targeted) warm-up
    used to be refused with 'warm-up launch kernel-9.traceg.xz has kernel id 9, which the plan
    gives to a sampled launch'."""
    from tests.fake_accelsim import write_fake_simulator

    d = shared_path("simulators", "accelsim", "hetero")
    prof = hetero_profile(tmp_path)
    plan = tmp_path / "plan.json"
    assert (
        cli_run(["plan", str(prof), "--format", "csv", "--columns", COLUMNS, "--first-launch", "1", "-o", str(plan)])
        == 0
    )
    out = tmp_path / "sampled"
    assert cli_run(["apply", "--sim", "accelsim", "--plan", str(plan), "--traces", str(d), "--out", str(out)]) == 0
    w = pd.read_csv(out / "simsample-weights.csv")
    assert (w["role"] == "warmup").any()
    # the profile's numbering: trace kernel-N is profile launch N-1, warm-up rows included
    assert all(t == f"kernel-{k + 1}.traceg.xz" for k, t in zip(w["kernel_id"], w["trace"]))
    assert set(w.loc[w["role"] == "sample", "kernel_id"]) == set(Plan.read(plan).sampled_ids)
    exe, configs = write_fake_simulator(tmp_path / "fake")
    log = tmp_path / "sim.log"
    assert (
        cli_run(
            [
                "run",
                "--sim",
                "accelsim",
                "--sampled",
                str(out),
                "--accelsim",
                str(exe),
                *[x for c in configs for x in ("--config", str(c))],
                "-o",
                str(log),
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert (
        cli_run(["estimate", "--sim", "accelsim", "--plan", str(plan), str(log), "--json"]) == 0
    )  # no --traces needed: the plan knows its numbers
    doc = json.loads(capsys.readouterr().out)
    assert {e["metric"] for e in doc["estimates"]} >= {"cycles", "instructions"}


def test_a_profile_that_does_not_say_where_it_starts_gives_no_tracer_selection(tmp_path, capsys):
    prof = hetero_profile(tmp_path)
    plan = tmp_path / "plan.json"
    assert cli_run(["plan", str(prof), "--format", "csv", "--columns", COLUMNS, "-o", str(plan)]) == 0
    assert Plan.read(plan).process["first_launch"] is None
    capsys.readouterr()
    assert cli_run(["accelsim", "select", "--plan", str(plan), "-o", str(tmp_path / "t.sh")]) == 1
    assert cli_run(["apply", "--sim", "macsim", "--plan", str(plan), "--out", str(tmp_path / "m")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all("--first-launch N" in e for e in err)
    assert not (tmp_path / "t.sh").exists() and not (tmp_path / "m").exists()
    assert (
        cli_run(
            [
                "plan",
                str(prof),
                "--format",
                "csv",
                "--columns",
                COLUMNS,
                "--first-launch",
                "101",
                "-o",
                str(plan),
            ]
        )
        == 0
    )
    assert (
        cli_run(["apply", "--sim", "macsim", "--plan", str(plan), "--out", str(tmp_path / "m"), "--warmup-window", "2"])
        == 0
    )
    info = (tmp_path / "m" / "sampled_kernels_info.txt").read_text().splitlines()
    sampled = Plan.read(plan).samples["launch"].tolist()
    listed = [int(x) for line in info[2:-1] for x in line.split()[2:]]
    assert sorted(listed) == sorted({100 + p for p in sampled})  # MacSim's tracer counts from 0: launch 101 is 100
    warm = [int(x) for x in info[-1].split()[2:]]
    assert info[-1].startswith("0 ") and warm and not set(warm) & set(listed)


def test_windowed_kineto_plan_filters_and_names_the_excluded_share(tmp_path, capsys):
    f = shared_path("profiles", "kineto", "hta", "nccl_parser_config", "nccl_data.json.gz")
    plan = tmp_path / "plan.json"
    assert cli_run(["plan", str(f), "--exclude", "nccl", "--steps", "6-8", "-o", str(plan)]) == 0
    assert "using 6-6" in capsys.readouterr().err
    p = Plan.read(plan)
    assert not any("nccl" in s[2].lower() for s in p.process["samples"])
    ex = p.process["excluded"]
    assert p.process["filters"] == {"exclude": "nccl", "steps": "6-8"} and ex["by_name"]["launches"] > 0
    assert 0 < ex["by_name"]["share"] < 1 and ex["outside_window"]["launches"] > 0
    values = tmp_path / "v.csv"
    values.write_text(
        "kernel_id,value\n" + "".join(f"{k},{x}\n" for k, x in zip(p.samples["kernel_id"], p.samples["x"]))
    )
    capsys.readouterr()
    assert cli_run(["estimate", "--plan", str(plan), str(values)]) == 0
    out = capsys.readouterr().out
    assert (
        "left out by name (--exclude nccl)" in out
        and f"{100 * ex['by_name']['share']:.1f}% of the window's kernel time" in out
    )
    assert (
        cli_run(["accelsim", "select", "--plan", str(plan), "-o", str(tmp_path / "t.sh")]) == 1
    )  # a window: no silent selection
    assert "does not say which launch of the process it starts at" in capsys.readouterr().err


def test_filter_options_are_checked(tmp_path, capsys):
    prof = hetero_profile(tmp_path)
    base = ["plan", str(prof), "--format", "csv", "--columns", COLUMNS, "-o", str(tmp_path / "p.json")]
    for extra, msg in (
        (["--steps", "3-1"], "ends before it starts"),
        (["--steps", "2"], "steps are read from PyTorch-profiler"),
        (["--exclude", "("], "not a regular expression"),
        (["--include", "nothing-matches"], "keep no launch"),
        (["--first-launch", "0"], "start at 1"),
        (["--time-range", "abc"], "expected START-END"),
    ):
        capsys.readouterr()
        assert cli_run(base + extra) == 1, extra
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and msg in err[0], (extra, err)
    assert cli_run(base + ["--include", "sgemm", "--time-range", "0-200us"]) == 0
    p = Plan.read(tmp_path / "p.json")
    assert {s[2] for s in p.process["samples"]} == {"sgemm_kernel"}


def test_plans_without_the_process_section_still_read(tmp_path):
    d = shared_path("simulators", "accelsim", "hetero")
    plan = tmp_path / "plan.json"
    assert (
        cli_run(["plan", str(d), "--sampler", "explicit", "--param", f"file={d / 'sampled_ids.json'}", "-o", str(plan)])
        == 0
    )
    doc = json.loads(plan.read_text())
    assert doc["simsample_plan_minor"] == 2 and doc["process"]["first_launch"] == 1
    del doc["process"]
    doc["simsample_plan_minor"] = 1
    old = tmp_path / "old.json"
    old.write_text(json.dumps(doc))
    p = Plan.read(old)
    assert p.process is None and json.loads(p.dumps())["simsample_plan_minor"] == 1
    out = tmp_path / "o"
    assert apply_plan(p, d, out, warmup=parse_warmup("none")).rows == [28, 29, 30, 31, 37, 38, 46, 53]


def test_hetero_selection_only_folder_matches_the_full_folder(tmp_path):
    d = shared_path("simulators", "accelsim", "hetero")
    plan_path = tmp_path / "plan.json"
    assert (
        cli_run(
            ["plan", str(d), "--sampler", "explicit", "--param", f"file={d / 'sampled_ids.json'}", "-o", str(plan_path)]
        )
        == 0
    )
    plan = Plan.read(plan_path)
    sel = plan_selection(plan, window=5, max_gap=0)
    assert sel.ranges == ((24, 39), (42, 47), (49, 54))
    merge_runs(runs_of(d, sel.ranges, tmp_path / "runs"), tmp_path / "traces")
    spec = parse_warmup("targeted")
    apply_plan(plan, d, tmp_path / "a", warmup=spec)
    apply_plan(plan, tmp_path / "traces", tmp_path / "b", warmup=spec)
    for f in ("kernelslist.g", "simsample-weights.csv"):
        assert (tmp_path / "a" / f).read_text() == (tmp_path / "b" / f).read_text()
    assert parse_kernelslist(tmp_path / "b" / "kernelslist.g").memcpys  # every memcpy before the last kept launch, once


def test_nvtx_step_ranges_of_an_nsys_export(tmp_path, capsys):
    import sqlite3

    from tests.readers.test_readers_nsys import _FULL, STRINGS, _export, _row

    # kernels launched at 100, 200, ... (runtime calls), each running 100 ns later: the second of each step runs in the
    # next step's range, but belongs to the step that launched it
    rows = [_row(200 + 100 * i, 10, i + 1, name_id=1 + i % 2) for i in range(8)]
    p = _export(tmp_path / "run.sqlite", _FULL, rows, {**STRINGS, 300: "step 2"})
    con = sqlite3.connect(p)
    con.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, correlationId INTEGER)")
    con.executemany(
        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, ?)",
        [(100 + 100 * i, 110 + 100 * i, i + 1) for i in range(8)],
    )
    con.execute("CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, text TEXT, textId INTEGER)")
    con.executemany(
        "INSERT INTO NVTX_EVENTS VALUES (?, ?, ?, ?, ?)",
        [
            (90, 290, 59, "step 1", None),
            (290, 490, 59, None, 300),
            (490, 690, 60, "ProfilerStep#3", None),
            (95, 96, 59, "forward", None),
        ],
    )
    con.commit()
    con.close()
    plan = tmp_path / "plan.json"
    assert (
        cli_run(["plan", str(p), "--steps", "2-3", "--sampler", "random", "--param", "count=2", "-o", str(plan)]) == 0
    )
    proc = Plan.read(plan).process
    assert (
        proc["first_launch"] == 1 and proc["excluded"]["outside_window"]["launches"] == 4
    )  # launches 3-6 are steps 2 and 3
    assert all(3 <= s[1] <= 6 for s in proc["samples"]) and len(proc["samples"]) == 2
    from simsample.io.nsys_steps import step_of_launches
    from simsample.reading import load_workload

    assert step_of_launches(p, load_workload([p])).tolist() == [1, 1, 2, 2, 3, 3, -1, -1]
