"""The ``local`` executor: jobs run as simulator processes on this machine, ``jobs`` at a time.

Each job is its own operating-system process (the simulator), so the pool that starts them is a
pool of threads, each waiting on one child process: the parallelism is the processes', and a
thread pool needs no pickling and can stop its children on Ctrl-C. The default width is the
number of CPUs this process may use (``os.sched_getaffinity``, which honours ``taskset`` and
container CPU sets), since a cycle-level simulator keeps one core busy.
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from simsample.runner.jobs import Job, JobResult, run_job, stop_process


def usable_cpus() -> int:
    """CPUs this process may run on (at least 1)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


class LocalExecutor:
    """A pool of ``jobs`` workers on this machine."""

    name = "local"

    def __init__(self, jobs: int | None = None) -> None:
        self.width = jobs or usable_cpus()
        self._pool = ThreadPoolExecutor(max_workers=self.width, thread_name_prefix="simsample-job")
        self._stop = threading.Event()
        self._procs: set[subprocess.Popen] = set()
        self._lock = threading.Lock()

    def describe(self) -> str:
        return f"local, {self.width} at a time"

    def submit(self, job: Job, done: Callable[[Future], None]) -> Future:
        fut = self._pool.submit(self._run, job)
        fut.add_done_callback(done)
        return fut

    def _run(self, job: Job) -> JobResult:
        if self._stop.is_set():
            return JobResult(job.name, False, "stopped", interrupted=True)

        def started(proc: subprocess.Popen) -> None:
            with self._lock:
                self._procs.add(proc)

        try:
            return run_job(job, should_stop=self._stop.is_set, on_start=started, poll=0.2)
        finally:
            with self._lock:
                self._procs = {p for p in self._procs if p.poll() is None}

    def stop(self) -> None:
        """Ctrl-C: start nothing more, end the running simulators (each one's process group), wait
        for the workers."""
        self._stop.set()
        with self._lock:
            procs = list(self._procs)
        for p in procs:
            stop_process(p)
        self._pool.shutdown(wait=True, cancel_futures=True)

    def close(self) -> None:
        self._pool.shutdown(wait=True)
