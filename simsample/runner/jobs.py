"""One simulator job: what to run, where its log goes, how to tell that the log is complete.

A job is a plain command run in its own folder with standard output and error sent to a log.
Simulators such as Accel-Sim exit with status 0 even when a run failed (a missing trace, a
crash in a worker thread), so completeness is judged from the log by the adapter's ``check``
function, never from the exit status alone.

The log is written as ``LOG.partial`` and renamed to ``LOG`` only when ``check`` accepts it; a
failed attempt is renamed to ``LOG.failed`` (kept for its tail). So a ``LOG`` file is always a
complete run: a killed worker, a cancelled cluster job or Ctrl-C leaves at most a ``.partial``,
which a rerun overwrites. This is what makes a run resumable: a job whose ``LOG`` exists and
passes ``check`` is not run again.

:func:`run_job` is a plain top-level function of picklable arguments so that it runs the same
in a thread of this process, in a Dask worker or in a SLURM job started by dask-jobqueue.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

#: Returns None when the log at the given path is a complete run, else why it is not.
Check = Callable[[Path], "str | None"]

PARTIAL, FAILED = ".partial", ".failed"
TAIL_LINES = 12


@dataclass(frozen=True)
class Job:
    """A command run in ``cwd`` with its output in ``log`` (see the module docstring)."""

    name: str
    cwd: str
    argv: tuple[str, ...]
    log: str
    check: Check
    env: tuple[tuple[str, str], ...] = ()

    @property
    def partial(self) -> Path:
        return Path(self.log + PARTIAL)

    @property
    def failed(self) -> Path:
        return Path(self.log + FAILED)

    def is_complete(self) -> bool:
        """Whether the job's log exists and is a complete run (a rerun skips it)."""
        log = Path(self.log)
        return log.is_file() and self.check(log) is None


@dataclass
class JobResult:
    """What became of one attempt at a job."""

    name: str
    ok: bool
    reason: str = ""
    tail: list[str] = field(default_factory=list)
    seconds: float = 0.0
    interrupted: bool = False


def log_tail(path: str | Path, lines: int = TAIL_LINES) -> list[str]:
    """The last ``lines`` lines of a log (read from its end: logs can be gigabytes)."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - 64 * 1024))
            data = fh.read()
    except OSError:
        return []
    text = data.decode("utf-8", errors="replace").splitlines()
    return text[-lines:]


def run_job(
    job: Job,
    *,
    should_stop: Callable[[], bool] | None = None,
    on_start: Callable[[subprocess.Popen], None] | None = None,
    poll: float = 0.5,
) -> JobResult:
    """Run ``job`` once (see the module docstring); never raises for a failed simulation.

    ``should_stop`` is polled while the command runs; when it returns True the command is
    terminated and the attempt reported as interrupted. ``on_start`` receives the process (the
    local executor keeps it to stop it on Ctrl-C).
    """
    start = time.monotonic()
    partial = job.partial
    env = {**os.environ, **dict(job.env)} if job.env else None
    try:
        with open(partial, "w") as fh:
            try:
                proc = subprocess.Popen(list(job.argv), cwd=job.cwd, stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
            except OSError as exc:
                return JobResult(job.name, False, f"cannot start {job.argv[0]}: {exc}", seconds=time.monotonic() - start)
            if on_start is not None:
                on_start(proc)
            stopped = False
            while True:
                try:
                    rc = proc.wait(timeout=poll)
                    break
                except subprocess.TimeoutExpired:
                    if should_stop is not None and should_stop():
                        stopped = True
                        _stop(proc)
                except BaseException:  # Ctrl-C in this thread: stop the simulator, leave only the .partial
                    _stop(proc)
                    raise
        if stopped:
            partial.unlink(missing_ok=True)
            return JobResult(job.name, False, "stopped", seconds=time.monotonic() - start, interrupted=True)
        reason = job.check(partial)
        if reason is None and rc != 0:
            reason = f"exit status {rc}"
        if reason is None:
            os.replace(partial, job.log)
            job.failed.unlink(missing_ok=True)  # an earlier attempt's failure is history now
            return JobResult(job.name, True, seconds=time.monotonic() - start)
        os.replace(partial, job.failed)
        return JobResult(job.name, False, reason, log_tail(job.failed), seconds=time.monotonic() - start)
    except OSError as exc:
        return JobResult(job.name, False, f"{job.log}: {exc.strerror or exc}", seconds=time.monotonic() - start)


def _stop(proc: subprocess.Popen, grace: float = 5.0) -> None:
    """Terminate a process, then kill it if it does not end within ``grace`` seconds."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def pending(jobs: Sequence[Job]) -> tuple[list[Job], list[Job]]:
    """Split ``jobs`` into those to run and those whose log is already complete (skipped)."""
    todo, done = [], []
    for job in jobs:
        (done if job.is_complete() else todo).append(job)
    return todo, done
