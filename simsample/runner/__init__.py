"""Run a split sampled folder's jobs (one simulator run per sampled launch) in parallel.

:mod:`.jobs` (one job: its command, log and completeness check), :mod:`.drive` (resume,
retries, progress, Ctrl-C), and the executors :mod:`.local` (a pool on this machine),
:mod:`.daskpool` (a dask.distributed cluster) and :mod:`.slurm` (SLURM jobs via dask-jobqueue).
Adapters build the jobs; :mod:`.options` gives their ``run`` the same executor options.
"""

from __future__ import annotations

from simsample.runner.drive import RunSummary, failure_report, run_jobs
from simsample.runner.jobs import Job, JobResult, run_job

__all__ = ["Job", "JobResult", "RunSummary", "failure_report", "run_job", "run_jobs"]
