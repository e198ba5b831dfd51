"""run --executor dask against a real dask.distributed LocalCluster, with the fake Accel-Sim."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from simsample.cli import run as cli_run
from simsample_accelsim.split import JOB_LOG, check_job_log, read_jobs
from tests.runner.test_run_local import _run, _split, setup  # noqa: F401 - the fixture

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def cluster():
    # threads, not processes: fast to start; each job is still its own simulator process
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as c:
        yield c


def test_dask_runs_every_job_and_a_rerun_only_the_missing(setup, cluster, monkeypatch):  # noqa: F811
    tmp, traces, plan_path, plan, args = setup
    run = _split(tmp, traces, plan_path, warmup="2")
    dask = ["--executor", "dask", "--scheduler", cluster.scheduler_address]
    monkeypatch.setenv("FAKE_SIM_CALLS", str(tmp / "calls"))
    assert _run(run, args, *dask) == 0
    jobs, _ = read_jobs(run)
    assert all(check_job_log(j.log(run), j.kernel_id) is None for j in jobs)
    assert len((tmp / "calls").read_text().splitlines()) == len(jobs)
    assert cli_run(["collect", "--sim", "accelsim", str(run), "-o", str(tmp / "r.csv")]) == 0
    assert pd.read_csv(tmp / "r.csv")["kernel_id"].tolist() == sorted(plan.sampled_ids)
    jobs[0].log(run).unlink()
    (tmp / "calls").unlink()
    assert _run(run, args, *dask) == 0
    assert [Path(p).name for p in (tmp / "calls").read_text().splitlines()] == [jobs[0].name]


def test_dask_retries_a_crash_and_reports_a_job_that_keeps_failing(setup, cluster, monkeypatch, capsys):  # noqa: F811
    tmp, traces, plan_path, _, args = setup
    run = _split(tmp, traces, plan_path, warmup="none")
    jobs, _ = read_jobs(run)
    monkeypatch.setenv("FAKE_SIM_STATE", str(tmp))
    monkeypatch.setenv("FAKE_SIM_CRASH_ONCE", str(jobs[0].kernel_id))
    monkeypatch.setenv("FAKE_SIM_CRASH", str(jobs[3].kernel_id))
    assert _run(run, args, "--executor", "dask", "--scheduler", cluster.scheduler_address, "--retries", "2") == 1
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith("error: ") and jobs[3].name in last
    assert jobs[0].log(run).is_file() and not jobs[3].log(run).exists()
    assert jobs[3].log(run).with_name(JOB_LOG + ".failed").is_file()
    assert not list(run.rglob("*.partial"))


def test_an_unreachable_scheduler_is_one_line(setup, capsys):  # noqa: F811
    tmp, traces, plan_path, _, args = setup
    run = _split(tmp, traces, plan_path, warmup="none")
    capsys.readouterr()
    import dask

    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        assert _run(run, args, "--executor", "dask", "--scheduler", "tcp://127.0.0.1:9") == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot reach a Dask scheduler" in err[0]
