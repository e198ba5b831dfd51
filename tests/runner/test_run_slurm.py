"""run --executor slurm: the job script written into the run folder, and a real single-node SLURM
(started by tests/slurm_cluster.py when slurm-wlm and munge are installed; skipped otherwise)."""

from __future__ import annotations

import pytest

from simsample.cli import run as cli_run
from simsample_accelsim.split import check_job_log, read_jobs
from tests import slurm_cluster
from tests.runner.test_run_local import _run, _split, setup  # noqa: F401 - the fixture

pytest.importorskip("dask_jobqueue")


def test_the_worker_job_script_carries_the_slurm_options(tmp_path):
    from simsample.runner.slurm import JOB_SCRIPT, SLURM_DIR, SlurmOptions, make_cluster

    opts = SlurmOptions(
        partition="gpu-sim",
        time="02:30:00",
        memory="6GB",
        account="arch-lab",
        cores=2,
        workers=3,
        extra=("--qos=long",),
    )
    cluster = make_cluster(opts, tmp_path)
    try:
        script = (tmp_path / SLURM_DIR / JOB_SCRIPT).read_text()
    finally:
        cluster.close()
    lines = script.splitlines()
    assert lines[0].startswith("#!")
    for want in (
        "#SBATCH -p gpu-sim",
        "#SBATCH -A arch-lab",
        "#SBATCH -t 02:30:00",
        "#SBATCH --qos=long",
        "#SBATCH -n 1",
        "#SBATCH --cpus-per-task=2",
    ):
        assert want in lines, want
    assert any(ln.startswith("#SBATCH --mem=") for ln in lines)
    assert "distributed.cli.dask_worker" in script and "--nthreads 2" in script
    assert f"#SBATCH -e {tmp_path / SLURM_DIR}" in script  # the workers' own logs land in the run folder


def test_slurm_options_without_sbatch_end_in_one_line(setup, capsys, monkeypatch):  # noqa: F811
    tmp, traces, plan_path, _, args = setup
    run = _split(tmp, traces, plan_path, warmup="none")
    monkeypatch.setenv("PATH", str(tmp / "nothing-here"))
    capsys.readouterr()
    assert _run(run, args, "--executor", "slurm", "--partition", "p", "--time", "bad-time-") == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: --executor slurm")


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    why = slurm_cluster.available()
    if why is not None:
        pytest.skip(f"single-node SLURM unavailable: {why}")
    mp = pytest.MonkeyPatch()
    with slurm_cluster.single_node_slurm(tmp_path_factory.mktemp("slurm")) as env:
        for k, v in env.items():
            mp.setenv(k, v)
        yield env
    mp.undo()


def test_jobs_run_as_slurm_jobs_on_a_real_single_node_slurm(setup, slurm, monkeypatch):  # noqa: F811
    tmp, traces, plan_path, plan, args = setup
    run = _split(tmp, traces, plan_path, warmup="1")
    monkeypatch.setenv("FAKE_SIM_STATE", str(tmp))
    jobs, _ = read_jobs(run)
    monkeypatch.setenv("FAKE_SIM_CRASH_ONCE", str(jobs[2].kernel_id))
    slurm_opts = [
        "--executor",
        "slurm",
        "--partition",
        "test",
        "--time",
        "00:10:00",
        "--memory",
        "1GB",
        "--jobs",
        "2",
        "--retries",
        "1",
    ]
    assert _run(run, args, *slurm_opts) == 0
    assert all(check_job_log(j.log(run), j.kernel_id) is None for j in jobs)
    assert (run / "slurm" / "worker-job.sh").is_file()
    assert list((run / "slurm").glob("*.err")) or list((run / "slurm").glob("*.out"))  # the worker jobs ran under SLURM
    assert cli_run(["estimate", "--sim", "accelsim", str(run)]) == 0


def test_a_partition_slurm_does_not_have_is_one_line(setup, slurm, capsys):  # noqa: F811
    tmp, traces, plan_path, _, args = setup
    run = _split(tmp, traces, plan_path, warmup="none")
    capsys.readouterr()
    assert _run(run, args, "--executor", "slurm", "--partition", "nosuch", "--memory", "1GB") == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Invalid partition" in err[0] and "worker-job.sh" in err[0]
    assert not list(run.rglob("accelsim.log*"))


def test_making_the_cluster_leaves_ctrl_c_as_it_was(tmp_path):
    """Importing dask_jobqueue makes Ctrl-C ``sys.exit()`` (status 0, no word) for the whole
    process; a run on the cluster that the user interrupted looked finished. In a fresh
    interpreter (where the import still has its effect), the handler is the same after
    ``make_cluster`` as before."""
    import subprocess
    import sys

    code = (
        "import signal, sys\n"
        "from pathlib import Path\n"
        "from simsample.runner.slurm import SlurmOptions, make_cluster\n"
        "before = signal.getsignal(signal.SIGINT)\n"
        f"cluster = make_cluster(SlurmOptions(partition='p', time='00:10:00', memory='1GB', account=None, cores=1, "
        f"workers=1), Path({str(tmp_path)!r}))\n"
        "cluster.close()\n"
        "import dask_jobqueue.runner\n"
        "sys.exit(0 if signal.getsignal(signal.SIGINT) is before else 1)\n"
    )
    assert subprocess.run([sys.executable, "-c", code], timeout=120).returncode == 0
