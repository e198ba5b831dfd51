"""The ``slurm`` executor: dask-jobqueue starts Dask workers as SLURM jobs; jobs run on them.

Each SLURM job is one Dask worker with ``cores`` threads (one simulation per core) and the given
partition, wall time, memory and account. The batch script dask-jobqueue submits is written to
``RUN/slurm/worker-job.sh`` before anything is submitted, so it can be read (or submitted by
hand) and the workers' own logs land in ``RUN/slurm/``. Simulations then run through
:class:`.daskpool.DaskExecutor`: the run folder must be on a file system the nodes share.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simsample.errors import UserError
from simsample.io.files import atomic_write_text
from simsample.io.script_values import refuse_control
from simsample.runner.daskpool import INSTALL_HINT, DaskExecutor

SLURM_DIR = "slurm"
JOB_SCRIPT = "worker-job.sh"


@dataclass(frozen=True)
class SlurmOptions:
    """What the SLURM jobs ask for."""

    partition: str | None = None
    time: str = "24:00:00"
    memory: str = "8GB"
    account: str | None = None
    cores: int = 1
    workers: int = 1  # SLURM jobs to start (each one a worker)
    extra: tuple[str, ...] = ()  # more #SBATCH directives, such as "--qos=long"


def _slurm_cluster_class() -> Any:
    """dask-jobqueue's ``SLURMCluster``, imported without its side effect on Ctrl-C.

    Importing dask_jobqueue (its ``runner`` module) replaces the SIGINT handler with
    ``sys.exit()``: a Ctrl-C during a run on the cluster then ended the command with status 0 and
    no word, as if it had finished. The handler in place before the import is put back."""
    import signal
    import threading

    main = threading.current_thread() is threading.main_thread()
    previous = signal.getsignal(signal.SIGINT) if main else None
    try:
        from dask_jobqueue import SLURMCluster
    except ImportError:
        raise UserError(f"--executor slurm needs dask-jobqueue; {INSTALL_HINT}") from None
    finally:
        if main and previous is not None and signal.getsignal(signal.SIGINT) is not previous:
            signal.signal(signal.SIGINT, previous)
    return SLURMCluster


def make_cluster(opts: SlurmOptions, folder: Path) -> Any:
    """A dask-jobqueue SLURMCluster for ``opts``, its job script written into ``folder/slurm``."""
    # each value lands on a '#SBATCH' line of the job script: a newline in one would start a command
    for what, value in (
        ("--partition", opts.partition),
        ("--time", opts.time),
        ("--memory", opts.memory),
        ("--account", opts.account),
        *(("an #SBATCH directive", x) for x in opts.extra),
        ("the run folder", str(Path(folder).absolute())),
    ):
        if value is not None:
            refuse_control(str(value), what)
    SLURMCluster = _slurm_cluster_class()  # noqa: N806 - a class
    logs = folder / SLURM_DIR
    logs.mkdir(parents=True, exist_ok=True)
    try:
        cluster = SLURMCluster(
            queue=opts.partition,
            account=opts.account,
            walltime=opts.time,
            memory=opts.memory,
            cores=opts.cores,
            processes=1,
            python=sys.executable,
            log_directory=str(logs),
            job_name="simsample",
            job_extra_directives=list(opts.extra),
        )
    except (ValueError, TypeError) as exc:
        raise UserError(f"--executor slurm: {exc}") from None
    atomic_write_text(logs / JOB_SCRIPT, cluster.job_script())
    return cluster


def slurm_executor(opts: SlurmOptions, folder: Path, jobs: int) -> DaskExecutor:
    """Start ``min(opts.workers, jobs)`` SLURM jobs and return an executor on them."""
    from distributed import Client

    if shutil.which("sbatch") is None:
        raise UserError(
            "--executor slurm: no sbatch on PATH; run this on a SLURM login node (or use --executor local or dask)"
        )
    cluster = make_cluster(opts, folder)
    script = folder / SLURM_DIR / JOB_SCRIPT
    try:
        _test_only(script)
        cluster.scale(jobs=max(1, min(opts.workers, jobs)))
        _wait_submitted(cluster)
        client = Client(cluster)
    except Exception as exc:  # sbatch refused the job: one line
        with contextlib.suppress(Exception):  # closing a cluster whose workers never started can fail too
            cluster.close()
        why = str(exc) if isinstance(exc, UserError) else f"sbatch did not accept the worker jobs ({exc})"
        raise UserError(f"--executor slurm: {why}; see {script}") from None
    where = f"partition {opts.partition}" if opts.partition else "default partition"
    return DaskExecutor(client, owns=cluster, label=f"slurm ({where}, {opts.workers} worker job(s))")


def _wait_submitted(cluster: Any, timeout: float = 60.0) -> None:
    """Wait until sbatch has given every worker job an id (queued, not necessarily running).

    dask-jobqueue submits in the background and only logs a refusal, so without this a wrong
    partition or account would leave the run waiting for workers that never come.
    """
    deadline = time.monotonic() + timeout
    while True:
        workers = list(cluster.workers.values())
        if workers and all(getattr(w, "job_id", None) for w in workers):
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"no SLURM job id after {timeout:.0f} s")
        time.sleep(0.2)


def _test_only(script: Path) -> None:
    """``sbatch --test-only``: SLURM checks partition, account, time and memory without queueing
    anything, so a wrong option is one line now instead of workers that never come."""
    res = subprocess.run(["sbatch", "--test-only", str(script)], capture_output=True, text=True, timeout=60)
    if res.returncode != 0:
        lines = [ln for ln in (res.stderr or res.stdout).splitlines() if ln.strip()]
        raise UserError(f"sbatch refuses the worker job: {lines[-1] if lines else f'exit status {res.returncode}'}")
