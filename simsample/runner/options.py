"""The executor options every adapter's ``run`` shares, and the executor they describe."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from simsample.errors import UserError

EXECUTORS = ("local", "dask", "slurm")


def executor_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--executor``, ``--jobs``, ``--retries``, ``--scheduler`` and the SLURM options
    (parameters ``executor``, ``jobs``, ``retries``, ``scheduler``, ``partition``, ``walltime``,
    ``memory``, ``account``, ``cores``, ``sbatch``)."""
    opts = [
        click.option(
            "--executor",
            type=click.Choice(EXECUTORS),
            default="local",
            show_default=True,
            help="Where the jobs of a split run folder run: this machine, a Dask cluster, or SLURM jobs.",
        ),
        click.option(
            "--jobs",
            "-j",
            type=int,
            default=None,
            help="local: simulations at a time (default: the usable CPUs); slurm: worker jobs to start (default: 4).",
        ),
        click.option("--retries", type=int, default=0, show_default=True, help="Extra attempts for a job that fails."),
        click.option(
            "--scheduler",
            default=None,
            metavar="ADDRESS",
            help="dask: address of the scheduler, such as tcp://host:8786.",
        ),
        click.option("--partition", default=None, help="slurm: partition (queue) of the worker jobs."),
        click.option(
            "--time", "walltime", default="24:00:00", show_default=True, help="slurm: wall time of each worker job."
        ),
        click.option("--memory", default="8GB", show_default=True, help="slurm: memory of each worker job."),
        click.option("--account", default=None, help="slurm: account charged."),
        click.option(
            "--cores",
            type=int,
            default=1,
            show_default=True,
            help="slurm: cores per worker job (simulations it runs at a time).",
        ),
        click.option(
            "--sbatch",
            multiple=True,
            metavar="DIRECTIVE",
            help="slurm: another #SBATCH directive, such as --qos=long (repeatable).",
        ),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def make_executor(
    folder: Path,
    n_jobs: int,
    *,
    executor: str,
    jobs: int | None,
    retries: int,
    scheduler: str | None,
    partition: str | None,
    walltime: str,
    memory: str,
    account: str | None,
    cores: int,
    sbatch: tuple[str, ...],
) -> Any:
    """The executor the options name, for ``n_jobs`` jobs of the run folder ``folder``."""
    if jobs is not None and jobs < 1:
        raise UserError(f"--jobs {jobs}: must be at least 1")
    if retries < 0:
        raise UserError(f"--retries {retries}: must be >= 0")
    if executor != "dask" and scheduler is not None:
        raise UserError("--scheduler is for --executor dask; add it, or leave --scheduler out")
    if executor == "local":
        from simsample.runner.local import LocalExecutor

        return LocalExecutor(jobs)
    if executor == "dask":
        if scheduler is None:
            raise UserError(
                "--executor dask needs --scheduler ADDRESS (the dask.distributed scheduler to send the jobs to)"
            )
        from simsample.runner.daskpool import DaskExecutor, connect

        return DaskExecutor(connect(scheduler))
    from simsample.runner.slurm import SlurmOptions, slurm_executor

    if cores < 1:
        raise UserError(f"--cores {cores}: must be at least 1")
    opts = SlurmOptions(partition, walltime, memory, account, cores, jobs or 4, tuple(sbatch))
    return slurm_executor(opts, folder, n_jobs)
