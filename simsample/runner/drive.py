"""Run a list of jobs on an executor: skip the complete ones, retry failures, show progress.

Executors (:mod:`.local`, :mod:`.daskpool`, :mod:`.slurm`) only start jobs; what is the same for
all of them lives here: the resume rule (a job whose log is complete is skipped), ``retries``
extra attempts for a failed job, the progress bar (done, failed, retried, time left), and
Ctrl-C, which stops the executor and removes the ``.partial`` logs so that nothing
half-written remains (a half-written log is never named as a complete one anyway, see
:mod:`.jobs`).
"""

from __future__ import annotations

import queue
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from simsample.runner.jobs import Job, JobResult, pending


class Executor(Protocol):
    name: str

    def describe(self) -> str: ...

    def submit(self, job: Job, done: Callable[[Any], None]) -> Any: ...

    def stop(self) -> None: ...

    def close(self) -> None: ...


@dataclass
class RunSummary:
    """What a run did."""

    total: int
    skipped: list[str] = field(default_factory=list)
    done: list[JobResult] = field(default_factory=list)
    failed: list[JobResult] = field(default_factory=list)
    retried: int = 0
    seconds: float = 0.0


def _result(fut: Any, job: Job) -> JobResult:
    """The JobResult of a finished future; an executor-side error (a lost worker) is a failure."""
    try:
        res = fut.result()
    except BaseException as exc:  # noqa: BLE001 - a worker lost or a job cancelled is a failed attempt
        if isinstance(exc, KeyboardInterrupt):
            raise
        return JobResult(job.name, False, f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)
    return res


class _Bar:
    """A rich progress bar on standard error when it is a terminal; one line per event otherwise."""

    def __init__(self, total: int, title: str, echo: Callable[[str], None]) -> None:
        self.echo = echo
        self._prog = None
        if sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._prog = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("[red]{task.fields[failed]} failed[/] {task.fields[retried]} retried"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            self._prog.start()
            self._task = self._prog.add_task(title, total=total, failed=0, retried=0)

    def update(self, *, advance: int = 0, failed: int, retried: int) -> None:
        if self._prog is not None:
            self._prog.update(self._task, advance=advance, failed=failed, retried=retried)

    def note(self, text: str) -> None:
        if self._prog is not None:
            self._prog.console.print(text, markup=False, highlight=False)
        else:
            self.echo(text)

    def close(self) -> None:
        if self._prog is not None:
            self._prog.stop()


def run_jobs(
    jobs: Sequence[Job], executor: Executor, *, retries: int = 0, echo: Callable[[str], None] = print
) -> RunSummary:
    """Run the incomplete ``jobs`` on ``executor`` (see the module docstring)."""
    start = time.monotonic()
    todo, complete = pending(jobs)
    summary = RunSummary(total=len(jobs), skipped=[j.name for j in complete])
    if not todo:
        return summary
    by_name = {j.name: j for j in todo}
    finished: queue.Queue = queue.Queue()
    attempts: dict[str, int] = {}
    outstanding = 0

    def submit(job: Job) -> None:
        nonlocal outstanding
        attempts[job.name] = attempts.get(job.name, 0) + 1
        outstanding += 1
        executor.submit(job, lambda fut, job=job: finished.put((job, fut)))

    bar = _Bar(len(todo), f"{len(todo)} job(s), {executor.describe()}", echo)
    try:
        for job in todo:
            submit(job)
        while outstanding:
            try:
                job, fut = finished.get(timeout=0.25)
            except queue.Empty:
                continue
            outstanding -= 1
            res = _result(fut, job)
            if res.ok:
                summary.done.append(res)
                bar.update(advance=1, failed=len(summary.failed), retried=summary.retried)
            elif attempts[job.name] <= retries and not res.interrupted:
                summary.retried += 1
                bar.note(f"{job.name}: failed ({res.reason}); attempt {attempts[job.name] + 1} of {retries + 1}")
                bar.update(failed=len(summary.failed), retried=summary.retried)
                submit(job)
            else:
                summary.failed.append(res)
                bar.note(f"{job.name}: failed ({res.reason})")
                bar.update(advance=1, failed=len(summary.failed), retried=summary.retried)
    except BaseException:
        bar.close()
        executor.stop()
        for job in by_name.values():
            job.partial.unlink(missing_ok=True)
        raise
    bar.close()
    executor.close()
    summary.seconds = time.monotonic() - start
    return summary


def failure_report(summary: RunSummary, logs_of: Callable[[str], str], tail: int = 8) -> str:
    """The failed jobs with their log's tail, for standard error (the error line comes after)."""
    out = []
    for res in summary.failed:
        out.append(f"--- {res.name}: {res.reason} ({logs_of(res.name)})")
        out.extend(f"    {line}" for line in res.tail[-tail:])
    return "\n".join(out)
