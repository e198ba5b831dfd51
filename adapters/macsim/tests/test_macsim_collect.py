"""MacSim's standard output → per-kernel cycles and instructions, and the estimate from them.

The real logs in ../shared/data are a full run of vectormultadd (Kernel0, 1, 2) and a sampled run
that ran Kernel2 first, then Kernel0. Kernel2 takes 2887 cycles after two kernels warmed the
caches and queues, but 3820 when it runs first: a sampled run's first kernel starts cold.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simsample.cli import run
from simsample.errors import FormatError, UserError
from simsample.workload import from_records
from tests.helpers import shared_path

pytest.importorskip("simsample_macsim")

from adapters.macsim.tests.test_macsim_reader import VMA  # noqa: E402
from simsample_macsim.collect import collect  # noqa: E402
from simsample_macsim.output import parse_log  # noqa: E402

FULL = ("simulators", "macsim", "run-output-vectormultadd4096")
SAMPLED = ("simulators", "macsim", "run-output-sampled-K2K0")


def test_full_run_kernel_cycles_and_instructions():
    r = parse_log(shared_path(*FULL, "macsim.out"))
    assert [k.number for k in r.kernels] == [0, 1, 2]
    assert [k.cycles for k in r.kernels] == [3518, 3102, 2887]
    assert [k.instructions for k in r.kernels] == [1664, 1664, 1664]  # 128 warps x 13 retired
    assert [k.warps for k in r.kernels] == [128, 128, 128]
    assert r.final_cycle == 9507 and r.expected == 3
    # general.stat.out beside the log agrees with the log's totals
    assert r.totals["CYC_COUNT_TOT"] == 9507 and r.totals["INST_COUNT_TOT"] == 4992
    assert r.problems == []


def test_sampled_run_first_kernel_starts_cold():
    r = parse_log(shared_path(*SAMPLED))  # the run folder: macsim.out inside
    got = {k.number: k.cycles for k in r.kernels}
    assert got == {2: 3820, 0: 6511 - 3820}
    full = {k.number: k.cycles for k in parse_log(shared_path(*FULL)).kernels}
    assert got[2] > full[2]  # 3820 > 2887: simulated first, nothing warmed up
    assert r.totals["CYC_COUNT_TOT"] == 6511 and r.totals["INST_COUNT_TOT"] == 3328
    assert r.problems == []


def test_collect_without_plan_and_with_two_logs_of_the_same_kernel():
    df, _ = collect([shared_path(*FULL)])
    assert df["kernel_id"].tolist() == [0, 1, 2]
    assert df["cycles"].tolist() == [3518, 3102, 2887]
    assert (df["status"] == "ok").all()
    with pytest.raises(UserError, match="Kernel2 appears in both"):
        collect([shared_path(*FULL), shared_path(*SAMPLED)])


def _plan_from_traces(tmp_path: Path, samples: str) -> Path:
    """A plan for the real traces, sampling the kernels listed in ``samples`` (CSV text)."""
    csv = tmp_path / "samples.csv"
    csv.write_text(samples)
    plan = tmp_path / "plan.json"
    assert (
        run(["plan", str(shared_path(*VMA)), "--sampler", "explicit", "--param", f"file={csv}", "-o", str(plan)]) == 0
    )
    return plan


def test_collect_cli_against_a_plan(tmp_path, capsys):
    plan = _plan_from_traces(tmp_path, "kernel_id,weight\n2,1.5\n0,1.5\n")
    out = tmp_path / "results.csv"
    capsys.readouterr()
    assert run(["collect", "--sim", "macsim", "--plan", str(plan), str(shared_path(*SAMPLED)), "-o", str(out)]) == 0
    df = pd.read_csv(out)
    assert df.columns.tolist() == ["kernel_id", "cycles", "instructions", "status"]
    assert df["kernel_id"].tolist() == [0, 2]  # one row per sampled kernel, launch order
    assert df["cycles"].tolist() == [2691, 3820]
    assert df["instructions"].tolist() == [1664, 1664]
    assert run(["collect", "--sim", "macsim", "--plan", str(plan), str(shared_path(*SAMPLED)), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [r["cycles"] for r in doc["results"]] == [2691, 3820]


def test_a_sampled_kernel_missing_from_the_output(tmp_path, capsys):
    plan = _plan_from_traces(tmp_path, "kernel_id,weight\n1,3\n")
    capsys.readouterr()
    assert run(["collect", "--sim", "macsim", "--plan", str(plan), str(shared_path(*SAMPLED))]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "note: 2 simulated kernel(s) are not in the plan and are left out (Kernel2, Kernel0)"
    assert (
        err[1] == "error: 1 of 1 kernel(s) have no usable result (kernel 1: missing, in none of the outputs given); "
        "rerun them, or pass --allow-incomplete to keep the partial table"
    )
    assert (
        run(["collect", "--sim", "macsim", "--plan", str(plan), str(shared_path(*SAMPLED)), "--allow-incomplete"]) == 0
    )


def test_estimate_from_the_sampled_run(tmp_path, capsys):
    plan = _plan_from_traces(tmp_path, "kernel_id,weight\n2,1.5\n0,1.5\n")
    capsys.readouterr()
    assert (
        run(["estimate", "--sim", "macsim", "--plan", str(plan), str(shared_path(*SAMPLED, "macsim.out")), "--json"])
        == 0
    )
    doc = json.loads(capsys.readouterr().out)
    est = {e["metric"]: e["estimate"] for e in doc["estimates"]}
    assert est["cycles"] == pytest.approx(1.5 * 2691 + 1.5 * 3820)
    assert est["instructions"] == pytest.approx(3 * 1664)
    assert est["ipc"] == pytest.approx(3 * 1664 / (1.5 * 2691 + 1.5 * 3820))


def test_plan_from_a_profile_maps_kernels_by_launch_position(tmp_path):
    # a profile of the same three launches, with its own ids (e.g. correlation ids)
    wl = from_records(
        {
            "kernel_id": [100, 105, 110],
            "name": ["a", "b", "c"],
            "grid_x": [1, 1, 1],
            "block_x": [32, 32, 32],
            "duration_ns": [10, 20, 30],
        },
        source="profile.csv",
        format="nsys",
    )
    from simsample.plugins.samplers.random import RandomSampler

    s = RandomSampler()
    plan = s.plan(wl, s.resolve_params({"count": 3}), 0)
    df, _ = collect([shared_path(*SAMPLED)], plan)
    got = dict(zip(df["kernel_id"], df["cycles"]))
    assert got[110] == 3820 and got[100] == 2691  # Kernel2 is the third launch, Kernel0 the first
    assert df.set_index("kernel_id").loc[105, "status"] == "missing"


def _truncated_log(src: Path, dst: Path, before: str) -> Path:
    lines = src.read_text().splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if before in line)
    dst.mkdir()
    (dst / "macsim.out").write_text("".join(lines[:cut]))
    return dst / "macsim.out"


def test_incomplete_run_is_detected(tmp_path, capsys):
    log = _truncated_log(shared_path(*FULL, "macsim.out"), tmp_path / "run", "finalize simulation")
    r = parse_log(log)
    assert [k.status for k in r.kernels] == ["ok", "ok", "incomplete"]
    assert r.kernels[-1].cycles is None
    assert "did not finish" in r.kernels[-1].reason and r.problems == []
    assert run(["collect", "--sim", "macsim", str(log)]) == 1
    err = capsys.readouterr().err
    assert err == (
        f"error: 1 of 3 kernel(s) have no usable result (kernel 2: incomplete, no 'finalize simulation' line in {log}: "
        "the run did not finish); rerun them, or pass --allow-incomplete to keep the partial table\n"
    )
    assert run(["collect", "--sim", "macsim", str(log), "--allow-incomplete", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["results"][2] == {"kernel_id": 2, "cycles": None, "instructions": None, "status": "incomplete"}


def test_crash_marks_the_running_kernel(tmp_path):
    log = _truncated_log(shared_path(*FULL, "macsim.out"), tmp_path / "run", "Kernel2/trace.txt is opened")
    with open(log, "a") as fh:
        fh.write("src/memory.cc:99: ASSERT FAILED (I=13  C=7000):  something\n")
    r = parse_log(log)
    assert [k.status for k in r.kernels] == ["ok", "ok", "crashed"]
    assert r.kernels[-1].reason.startswith("ASSERT FAILED on line")


def test_not_a_macsim_log(tmp_path):
    p = tmp_path / "x.out"
    p.write_text("hello\n")
    with pytest.raises(FormatError, match="no 'setup_process' line"):
        parse_log(p)
    with pytest.raises(UserError, match="no macsim.out"):
        parse_log(tmp_path)


@settings(max_examples=50, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(1, 10**7), st.lists(st.integers(0, 10**5), min_size=0, max_size=5)),
        min_size=1,
        max_size=8,
    ),
    st.booleans(),
)
def test_synthetic_logs(kernels, finished):
    """Cycles are differences of consecutive setup cycles; instructions sum the Finished lines."""
    import tempfile

    lines = ["Arguments: ./macsim", "src/macsim.cc:541: (I=0  C=0):  initialize simulation"]
    cycle, n = 0, len(kernels)
    for i, (dur, warps) in enumerate(kernels):
        lines.append(
            f"src/process_manager.cc:426: (I=7  C={cycle}):  setup_process:0 /x/y/Kernel{3 * i}/trace.txt "
            f"current_index:{i} ({n})"
        )
        lines += [f"**Core 01 Thread {w:02d} Finished:   insts:{c:<10d}  cycles:5 (5)" for w, c in enumerate(warps)]
        lines.append(f"**Core 01 Core_Total  Finished:   insts:{10**9}  cycles:5 (5)")  # per-core totals are ignored
        cycle += dur
    if finished:
        lines.append(f"src/macsim.cc:624: (I=7  C={cycle}):  finalize simulation")
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "macsim.out"
        p.write_text("\n".join(lines) + "\n")
        r = parse_log(p)
    assert [k.number for k in r.kernels] == [3 * i for i in range(n)]
    expect = [d for d, _ in kernels]
    if not finished:
        expect[-1] = None
    assert [k.cycles for k in r.kernels] == expect
    assert [k.instructions for k in r.kernels] == [sum(w) for _, w in kernels]
    assert r.finished == finished
    assert np.all([k.status == "ok" for k in r.kernels[:-1]])


def test_estimate_from_a_results_table_matches_the_log(tmp_path, capsys):
    plan = _plan_from_traces(tmp_path, "kernel_id,weight\n2,1.5\n0,1.5\n")
    table = tmp_path / "results.csv"
    assert run(["collect", "--sim", "macsim", "--plan", str(plan), str(shared_path(*SAMPLED)), "-o", str(table)]) == 0
    capsys.readouterr()
    assert run(["estimate", "--sim", "macsim", "--plan", str(plan), str(table), "--json"]) == 0
    from_table = json.loads(capsys.readouterr().out)
    assert run(["estimate", "--sim", "macsim", "--plan", str(plan), str(shared_path(*SAMPLED)), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == from_table
    # the same kernels from a table and from the log: refused
    assert run(["estimate", "--sim", "macsim", "--plan", str(plan), str(table), str(shared_path(*SAMPLED))]) == 1
    assert "has results in more than one input" in capsys.readouterr().err


def test_run_dry_run_prints_the_command(tmp_path, capsys):
    for name in ("params.in", "trace_file_list", "kernel_config.txt"):
        (tmp_path / name).write_text("x\n")
    assert (
        run(["run", "--sim", "macsim", "--sampled", str(tmp_path), "--macsim", "/opt/macsim/bin/macsim", "--dry-run"])
        == 0
    )
    assert (
        capsys.readouterr().out.strip()
        == f"cd {tmp_path} && /opt/macsim/bin/macsim > {tmp_path.resolve() / 'macsim.out'} 2>&1"
    )
    (tmp_path / "params.in").unlink()
    assert run(["run", "--sim", "macsim", "--sampled", str(tmp_path), "--macsim", "/opt/macsim/bin/macsim"]) == 1
    assert "no params.in" in capsys.readouterr().err
