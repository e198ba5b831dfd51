"""The ``dask`` executor: each job is a task on a dask.distributed cluster.

The task is :func:`simsample.runner.jobs.run_job` itself, so a worker starts the simulator in
the job's folder and writes its log there: the run folder must be on a file system the workers
share with this machine (the usual setup of a cluster). Workers need simsample installed (the
same environment). One task per worker thread runs at a time; start workers with as many
threads as simulations a node should run.

Ctrl-C sets a cluster-wide ``distributed.Event`` that running tasks poll, so their simulators
are terminated (and their ``.partial`` logs removed), and cancels the tasks not yet started.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from simsample.errors import UserError
from simsample.runner.jobs import Job, JobResult, run_job

INSTALL_HINT = "install the cluster extra: pip install 'simsample[cluster]'"


def _run_on_worker(job: Job, stop_name: str) -> JobResult:
    from distributed import Event

    stop = Event(stop_name)
    return run_job(job, should_stop=stop.is_set, poll=1.0)


def connect(address: str) -> Any:
    """A client of the scheduler at ``address`` (one clear line when it cannot be reached).

    How long to try is Dask's own setting ``distributed.comm.timeouts.connect`` (30 s unless
    configured, e.g. ``DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT=5s``)."""
    try:
        from distributed import Client
    except ImportError:
        raise UserError(f"--executor dask needs dask.distributed; {INSTALL_HINT}") from None
    try:
        return Client(address)
    except (OSError, TimeoutError, ValueError) as exc:
        raise UserError(
            f"--scheduler {address}: cannot reach a Dask scheduler there ({exc}); start one (dask scheduler) or "
            "check the address"
        ) from None


class DaskExecutor:
    """Jobs as tasks of a dask.distributed ``client``."""

    name = "dask"

    def __init__(self, client: Any, *, owns: Any = None, label: str | None = None) -> None:
        self.client = client
        self._owns = owns  # a cluster this executor started (closed with it)
        self._futures: list[Any] = []
        self._stop_name = f"simsample-stop-{uuid.uuid4().hex}"
        self._label = label

    def describe(self) -> str:
        if self._label:
            return self._label
        return f"dask at {self.client.scheduler.address}"

    def submit(self, job: Job, done: Callable[[Any], None]) -> Any:
        fut = self.client.submit(
            _run_on_worker, job, self._stop_name, pure=False, key=f"simsample-{job.name}-{uuid.uuid4().hex[:8]}"
        )
        fut.add_done_callback(done)
        self._futures.append(fut)
        return fut

    def stop(self) -> None:
        from distributed import Event

        try:
            Event(self._stop_name, client=self.client).set()
            self.client.cancel([f for f in self._futures if not f.done()])
        finally:
            self.close()

    def close(self) -> None:
        try:
            self.client.close()
        finally:
            if self._owns is not None:
                self._owns.close()
