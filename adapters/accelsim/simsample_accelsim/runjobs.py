"""``simsample run --sim accelsim`` on a split run folder: one Accel-Sim process per job.

Each job runs exactly as by hand (``cd jobs/NAME && accel-sim.out -trace ./kernelslist.g
-config ...``, :func:`.run.build_command`), its output in ``jobs/NAME/accelsim.log``. A job is
complete when its log has a statistics block for its sampled launch and Accel-Sim's ``exit
detected`` line (:func:`.split.check_job_log`); complete jobs are skipped, so a rerun after a
crash, a kill or Ctrl-C finishes only what is missing.
"""

from __future__ import annotations

import functools
import shlex
from collections.abc import Sequence
from pathlib import Path

import click

from simsample.sdk import Job, UserError, failure_report, make_executor, run_jobs
from simsample_accelsim.run import build_command
from simsample_accelsim.split import check_job_log, read_jobs


def jobs_of(
    run: Path, binary: Path, configs: Sequence[Path], extra: Sequence[str], *, check_binary: bool = True
) -> list[Job]:
    """The runner's jobs for the run folder ``run``."""
    entries, functional = read_jobs(run)
    if functional and "-functional_warmup" not in extra:
        click.echo(
            "note: the jobs list functional warm-up launches; pass '-- -functional_warmup 1' to a patched simulator "
            "to replay them",
            err=True,
        )
    jobs = []
    for e in entries:
        folder = e.folder(run)
        argv, cwd = build_command(folder, binary, configs, extra, check_binary=check_binary)
        jobs.append(
            Job(
                e.name,
                str(cwd),
                tuple(argv),
                str(e.log(run).resolve()),
                functools.partial(check_job_log, kernel_id=e.kernel_id),
            )
        )
    return jobs


def run_split(
    run: Path, binary: Path, configs: Sequence[Path], extra: Sequence[str], *, dry_run: bool, **executor
) -> None:
    """Run the jobs of ``run`` that are not complete (see the module docstring)."""
    jobs = jobs_of(run, binary, configs, extra, check_binary=not dry_run)
    if dry_run:
        for j in jobs:
            click.echo(f"cd {shlex.quote(j.cwd)} && {shlex.join(j.argv)} > {shlex.quote(Path(j.log).name)} 2>&1")
        return
    todo = [j for j in jobs if not j.is_complete()]
    ex = make_executor(run, len(todo), **executor) if todo else None
    summary = run_jobs(jobs, ex, retries=executor["retries"], echo=lambda t: click.echo(t, err=True)) if ex else None
    if summary is None:
        click.echo(f"{run}: all {len(jobs)} job(s) already complete; nothing to run", err=True)
        return
    skipped = f", {len(summary.skipped)} already complete" if summary.skipped else ""
    if summary.failed:
        click.echo(
            failure_report(summary, lambda name: str(Path(next(j.failed for j in jobs if j.name == name)))), err=True
        )
        names = ", ".join(r.name for r in summary.failed[:6]) + (" ..." if len(summary.failed) > 6 else "")
        raise UserError(
            f"{run}: {len(summary.failed)} of {len(jobs)} job(s) failed ({names}); {len(summary.done)} done{skipped}; "
            "their logs' tails are above; rerun the same command to retry only those"
        )
    click.echo(
        f"{run}: {len(summary.done)} job(s) done in {summary.seconds:.1f} s{skipped}; "
        f"estimate with: simsample estimate --sim accelsim {run}",
        err=True,
    )
