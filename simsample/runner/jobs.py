"""One simulator job: what to run, where its log goes, how to tell that the log is complete.

A job is a plain command run in its own folder with standard output and error sent to a log.
Simulators such as Accel-Sim exit with status 0 even when a run failed (a missing trace, a
crash in a worker thread), so completeness is judged from the log by the adapter's ``check``
function, never from the exit status alone.

The log is written as ``LOG.partial`` and renamed to ``LOG`` only when ``check`` accepts it; a
failed attempt is renamed to ``LOG.failed`` (kept for its tail). So a ``LOG`` file is always a
complete run: a killed worker, a cancelled cluster job or Ctrl-C leaves at most a ``.partial``,
which a rerun overwrites. This is what makes a run resumable: a job whose ``LOG`` exists and
passes ``check`` is not run again. An attempt stopped by Ctrl-C, SIGTERM or SIGHUP is not a
failure: its ``.partial`` is removed and no ``.failed`` is written.

Each simulator starts in its own session (its own process group), and stopping it ends the
whole group: a simulator started through a wrapper script (``mpirun``, a site's launcher)
would otherwise keep running, reparented to init, after its parent shell was terminated.

:func:`run_job` is a plain top-level function of picklable arguments so that it runs the same
in a thread of this process, in a Dask worker or in a SLURM job started by dask-jobqueue.
"""

from __future__ import annotations

import os
import signal
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
                proc = subprocess.Popen(
                    list(job.argv),
                    cwd=job.cwd,
                    stdout=fh,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    env=env,
                    start_new_session=True,
                )
            except OSError as exc:
                return JobResult(
                    job.name, False, f"cannot start {job.argv[0]}: {exc}", seconds=time.monotonic() - start
                )
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
                except BaseException:  # Ctrl-C in this thread: stop the simulator, remove the .partial
                    _stop(proc)
                    fh.close()
                    partial.unlink(missing_ok=True)
                    raise
            if should_stop is not None and should_stop():  # ended by the executor's stop()
                stopped = True
                _stop(proc)
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


def _signal_group(proc: subprocess.Popen, sig: int) -> None:
    """Send ``sig`` to the process group ``proc`` leads (its own session: see the module docstring)."""
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _stop(proc: subprocess.Popen, grace: float = 5.0) -> None:
    """Terminate a simulator and everything it started (its process group), kill what is left
    after ``grace`` seconds, and wait for it."""
    _signal_group(proc, signal.SIGTERM)
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        _signal_group(proc, signal.SIGKILL)
        proc.wait()
    # the leader may have ended while a child it started ignores SIGTERM
    deadline = time.monotonic() + grace
    while _group_alive(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    _signal_group(proc, signal.SIGKILL)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def stop_process(proc: subprocess.Popen) -> None:
    """End a process started by :func:`run_in_group` (or a job) and its whole group."""
    _stop(proc)


def run_in_group(
    argv: Sequence[str],
    *,
    cwd: str | os.PathLike[str] | None = None,
    stdout: object = None,
    env: dict[str, str] | None = None,
) -> int:
    """``subprocess.run(argv).returncode``, with the command in its own session: Ctrl-C,
    SIGTERM or SIGHUP received here (they raise in this thread) end the command's whole process
    group, which is waited for before the exception goes on.

    Standard output (and error, unless ``stdout`` is None) go to ``stdout``; standard input is
    closed, since a simulator in its own session cannot read the terminal anyway.
    """
    proc = subprocess.Popen(
        list(argv),
        cwd=cwd,
        stdout=stdout,
        stderr=subprocess.STDOUT if stdout is not None else None,
        stdin=subprocess.DEVNULL,
        env=env,
        start_new_session=True,
    )
    try:
        return proc.wait()
    except BaseException:
        _stop(proc)
        raise


def pending(jobs: Sequence[Job]) -> tuple[list[Job], list[Job]]:
    """Split ``jobs`` into those to run and those whose log is already complete (skipped)."""
    todo, done = [], []
    for job in jobs:
        (done if job.is_complete() else todo).append(job)
    return todo, done
