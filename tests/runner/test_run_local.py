"""apply --split and run on the local executor, with a fake Accel-Sim (tests/fake_accelsim.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from adapters.accelsim.tests.test_accelsim_apply import make_plan
from simsample.cli import run as cli_run
from simsample_accelsim import read_traces
from simsample_accelsim.apply import WEIGHTS_FILE
from simsample_accelsim.collect import collect_logs
from simsample_accelsim.kernelslist import KernelEntry, Memcpy, parse_kernelslist
from simsample_accelsim.split import JOB_LOG, JOBS_DIR, check_job_log, read_jobs
from simsample_accelsim.warmup import preceding, targeted, warmup_steps
from tests.fake_accelsim import make_workload, sim_args, write_fake_simulator

ROWS = [0, 1, 3, 4, 6, 9, 10, 11]  # neighbours: a sample is another's warm-up launch


@pytest.fixture
def setup(tmp_path):
    traces = make_workload(tmp_path / "traces")
    wl = read_traces(traces, quiet=True)
    plan = make_plan(wl, ROWS, weights=[1.5] * len(ROWS))
    plan_path = tmp_path / "plan.json"
    plan.write(plan_path)
    exe, configs = write_fake_simulator(tmp_path / "sim")
    return tmp_path, traces, plan_path, plan, sim_args(exe, configs)


def _split(tmp, traces, plan_path, warmup="2", out="run"):
    rc = cli_run(
        [
            "apply",
            "--sim",
            "accelsim",
            "--plan",
            str(plan_path),
            "--traces",
            str(traces),
            "--out",
            str(tmp / out),
            "--split",
            "--warmup",
            warmup,
        ]
    )
    assert rc == 0
    return tmp / out


def _run(run: Path, args: list[str], *more: str) -> int:
    return cli_run(["run", "--sim", "accelsim", "--sampled", str(run), *args, *more])


def test_split_writes_one_plain_job_per_sample_with_its_warmup_and_memcpys(setup):
    tmp, traces, plan_path, plan, _ = setup
    run = _split(tmp, traces, plan_path, warmup="2")
    jobs, functional = read_jobs(run)
    assert not functional
    assert [j.kernel_id for j in jobs] == sorted(plan.sampled_ids)
    tf_list = parse_kernelslist(traces / "kernelslist.g")
    warm, _ = preceding(ROWS, 2)
    steps = warmup_steps(tf_list.commands, ROWS, warm)
    names = [k.text for k in tf_list.kernels]
    for row, job in zip(ROWS, jobs):
        lst = parse_kernelslist(run / JOBS_DIR / job.name / "kernelslist.g")
        want = [c.text if isinstance(c, Memcpy) else names[c] for c in steps[row]] + [names[row]]
        assert [c.text for c in lst.commands] == want
        for c in lst.commands:  # every trace the list names is in the job folder
            if isinstance(c, KernelEntry):
                assert (run / JOBS_DIR / job.name / c.text).resolve() == (traces / c.text).resolve()
        assert list(job.warmup) == [
            int(read_traces(traces, quiet=True).kernels["kernel_id"].iloc[r]) for r in warm[row]
        ]
    w = pd.read_csv(run / WEIGHTS_FILE)
    assert set(w.loc[w["role"] == "sample", "kernel_id"]) == set(plan.sampled_ids)
    assert (w.loc[w["role"] == "warmup", "weight"] == 0).all()


def test_targeted_split_lets_a_sampled_launch_warm_another():
    # launch 1 writes what 2 reads; both sampled: in one list 1 runs anyway, in a job of its own 2 needs it
    lines = {
        0: (np.array([], np.int64), np.array([5], np.int64), 10),
        1: (np.array([], np.int64), np.array([1, 2, 3], np.int64), 10),
        2: (np.array([1, 2, 3], np.int64), np.array([], np.int64), 10),
    }
    fp = lines.__getitem__
    assert targeted([1, 2], {1: 1.0, 2: 1.0}, fp, budget=None) == {1: [], 2: []}
    assert targeted([1, 2], {1: 1.0, 2: 1.0}, fp, budget=None, shared=False) == {1: [], 2: [1]}


def test_split_run_collects_what_a_single_run_collects(setup, tmp_path):
    tmp, traces, plan_path, plan, args = setup
    run = _split(tmp, traces, plan_path, warmup="2")
    assert _run(run, args, "--jobs", "2") == 0
    single = tmp / "single"
    assert (
        cli_run(
            [
                "apply",
                "--sim",
                "accelsim",
                "--plan",
                str(plan_path),
                "--traces",
                str(traces),
                "--out",
                str(single),
                "--warmup",
                "none",
            ]
        )
        == 0
    )
    assert cli_run(["run", "--sim", "accelsim", "--sampled", str(single), *args, "-o", str(tmp / "single.log")]) == 0
    a = collect_logs([tmp / "single.log"], plan)
    assert cli_run(["collect", "--sim", "accelsim", str(run), "-o", str(tmp / "split.csv")]) == 0
    b = pd.read_csv(tmp / "split.csv")
    assert b["kernel_id"].tolist() == sorted(
        plan.sampled_ids
    )  # each sample once, although samples are warm-up launches of others
    for col in ("cycles", "instructions", "l1_hits", "l2_accesses", "dram_reads"):
        assert b[col].tolist() == a[col].tolist()
    assert cli_run(["estimate", "--sim", "accelsim", str(run)]) == 0


def test_rerun_skips_complete_jobs(setup, monkeypatch):
    tmp, traces, plan_path, _, args = setup
    run = _split(tmp, traces, plan_path, warmup="1")
    calls = tmp / "calls"
    monkeypatch.setenv("FAKE_SIM_CALLS", str(calls))
    assert _run(run, args) == 0
    jobs, _ = read_jobs(run)
    assert len(calls.read_text().splitlines()) == len(jobs)
    for j in jobs[2:4]:
        j.log(run).unlink()
    calls.unlink()
    assert _run(run, args) == 0
    assert sorted(Path(p).name for p in calls.read_text().splitlines()) == [j.name for j in jobs[2:4]]
    calls.unlink()
    assert _run(run, args) == 0
    assert not calls.exists()


def test_failures_are_retried_then_reported_with_the_log_tail(setup, monkeypatch, capsys):
    tmp, traces, plan_path, plan, args = setup
    run = _split(tmp, traces, plan_path, warmup="none")
    jobs, _ = read_jobs(run)
    flaky, broken = jobs[1], jobs[5]
    monkeypatch.setenv("FAKE_SIM_STATE", str(tmp))
    monkeypatch.setenv("FAKE_SIM_CRASH_ONCE", str(flaky.kernel_id))
    monkeypatch.setenv("FAKE_SIM_CRASH", str(broken.kernel_id))
    assert _run(run, args, "--retries", "1") == 1
    err = capsys.readouterr().err
    last = err.strip().splitlines()[-1]
    assert last.startswith("error: ") and broken.name in last and "1 of 8 job(s) failed" in last
    assert "Assertion `0' failed" in err  # the tail of the failed log
    assert flaky.log(run).is_file() and check_job_log(flaky.log(run), flaky.kernel_id) is None
    assert not flaky.log(run).with_name(JOB_LOG + ".failed").exists()
    assert not broken.log(run).exists() and broken.log(run).with_name(JOB_LOG + ".failed").is_file()
    assert not list(run.rglob("*.partial"))
    # collect names what is missing; once the crash is gone a rerun runs that job only
    assert cli_run(["collect", "--sim", "accelsim", str(run)]) == 1
    monkeypatch.delenv("FAKE_SIM_CRASH")
    monkeypatch.setenv("FAKE_SIM_CALLS", str(tmp / "calls"))
    assert _run(run, args) == 0
    assert [Path(p).name for p in (tmp / "calls").read_text().splitlines()] == [broken.name]


def test_ctrl_c_leaves_no_log_taken_for_complete_and_a_restart_finishes_the_rest(setup):
    tmp, traces, plan_path, plan, args = setup
    run = _split(tmp, traces, plan_path, warmup="none")
    jobs, _ = read_jobs(run)
    env = {**os.environ, "FAKE_SIM_DELAY": "0.6"}
    cmd = [sys.executable, "-m", "simsample", "run", "--sim", "accelsim", "--sampled", str(run), *args, "--jobs", "2"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and sum(j.log(run).exists() for j in jobs) < 2:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert err.strip().splitlines()[-1] == "interrupted"
    done = [j for j in jobs if j.log(run).exists()]
    assert 2 <= len(done) < len(jobs)
    assert all(check_job_log(j.log(run), j.kernel_id) is None for j in done)
    assert not list(run.rglob("*.partial"))
    env["FAKE_SIM_CALLS"] = str(tmp / "calls")
    env["FAKE_SIM_DELAY"] = "0"
    again = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    ran = sorted(Path(p).name for p in (tmp / "calls").read_text().splitlines())
    assert ran == sorted(j.name for j in jobs if j not in done)


def test_dry_run_prints_one_hand_runnable_command_per_job(setup, capsys):
    tmp, traces, plan_path, _, args = setup
    run = _split(tmp, traces, plan_path, warmup="1")
    capsys.readouterr()
    assert _run(run, args, "--dry-run") == 0
    out = capsys.readouterr().out.splitlines()
    jobs, _ = read_jobs(run)
    assert len(out) == len(jobs)
    for line, j in zip(out, jobs):
        assert line.startswith(f"cd {run.resolve() / JOBS_DIR / j.name} && ") and "-trace ./kernelslist.g" in line
    assert not list(run.rglob(JOB_LOG))


@pytest.mark.parametrize(
    "more, words",
    [
        (["--executor", "dask"], "--scheduler"),
        (["--scheduler", "tcp://127.0.0.1:1"], "--executor dask"),
        (["--jobs", "0"], "--jobs 0"),
        (["--retries", "-1"], "--retries -1"),
        (["-o", "x.log"], "leave out -o"),
    ],
)
def test_option_mistakes_end_in_one_line(setup, capsys, more, words):
    tmp, traces, plan_path, _, args = setup
    run = _split(tmp, traces, plan_path, warmup="none")
    assert _run(run, args, *more) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and words in err[0]


def test_executor_options_on_a_single_run_folder_are_refused(setup, capsys):
    tmp, traces, plan_path, _, args = setup
    out = tmp / "single"
    assert (
        cli_run(
            [
                "apply",
                "--sim",
                "accelsim",
                "--plan",
                str(plan_path),
                "--traces",
                str(traces),
                "--out",
                str(out),
                "--warmup",
                "none",
            ]
        )
        == 0
    )
    assert _run(out, args, "-o", str(tmp / "x.log"), "--jobs", "2") == 1
    assert "apply --split" in capsys.readouterr().err


@pytest.mark.parametrize("sim", ["macsim", "hyfiss"])
def test_split_on_simulators_without_it_is_one_line(tmp_path, capsys, sim):
    rc = cli_run(
        [
            "apply",
            "--sim",
            sim,
            "--plan",
            str(tmp_path / "p.json"),
            "--traces",
            str(tmp_path),
            "--out",
            str(tmp_path / "o"),
            "--split",
        ]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 1 and len(err) == 1 and "--split" in err[0] and "not available" in err[0]


def test_functional_split_writes_warmup_lines_and_the_run_says_which_flag(setup, capsys):
    tmp, traces, plan_path, plan, args = setup
    rc = cli_run(
        [
            "apply",
            "--sim",
            "accelsim",
            "--plan",
            str(plan_path),
            "--traces",
            str(traces),
            "--out",
            str(tmp / "run"),
            "--split",
            "--warmup",
            "1",
            "--warmup-mode",
            "functional",
        ]
    )
    assert rc == 0
    jobs, functional = read_jobs(tmp / "run")
    assert functional
    ordered = sorted(jobs, key=lambda j: j.kernel_id)
    for i, j in enumerate(ordered):
        text = (tmp / "run" / JOBS_DIR / j.name / "kernelslist.g").read_text().splitlines()
        kernels = [ln for ln in text if not ln.startswith("MemcpyHtoD")]
        # the (up to three) samples before it in the plan run in detail, as in the one-list run; the rest is replayed
        before = [o.trace for o in ordered[max(0, i - 3) : i]]
        assert kernels[-1] == j.trace
        assert [ln for ln in kernels[:-1] if not ln.startswith("warmup kernel-")] == before
        assert len(kernels) - 1 == len(j.warmup)
    capsys.readouterr()
    assert _run(tmp / "run", args) == 0  # the fake simulator, like an unpatched one, ignores warm-up lines
    assert "-functional_warmup 1" in capsys.readouterr().err
    assert cli_run(["collect", "--sim", "accelsim", str(tmp / "run")]) == 0
