"""``apply --split``: one job folder per sampled launch, each a plain Accel-Sim run.

A sampled launch with its warm-up launches does not depend on the other samples, and real
sampled simulations take hours per launch, so they are run as separate jobs (on a local pool, a
Dask cluster or SLURM, :mod:`simsample.runner`). The run folder holds::

    OUT/simsample-plan.json, OUT/simsample-weights.csv    as for apply (warm-up rows: role warmup)
    OUT/simsample-jobs.json                               the jobs: name, kernel id, trace, warm-up ids
    OUT/jobs/<name>/kernelslist.g                         memcpys and warm-up launches, then the launch
    OUT/jobs/<name>/kernel-N.traceg ...                   links (or copies) of the traces it names

Each job's list is what :func:`.warmup.warmup_steps` says runs before its sample (every
``MemcpyHtoD`` before it and its warm-up launches, in real order), then the sample. With
functional warm-up the sampled launches that precede it in the plan (three by default) run in
detail (not replayed), as they do in the one-list run (:func:`previous_samples`). The
warm-up choice is the one ``apply`` makes (:func:`.apply.choose_warmup`), except that another
sampled launch no longer runs for free in the same list: it can be a warm-up launch of a job.
So ``cd OUT/jobs/<name> && accel-sim.out -trace ./kernelslist.g -config ...`` is a job run by
hand; ``simsample run --sim accelsim --sampled OUT`` runs them all, each log in
``OUT/jobs/<name>/accelsim.log``.

``collect``/``estimate`` given OUT read every job's log and keep from each only the launch it
was run for (the warm-up launches, sampled elsewhere or not, are left out).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from simsample.sdk import (
    Plan,
    UserError,
    atomic_write_text,
    link_or_copy,
    read_text_limited,
    staged_folder,
    write_plan_records,
)
from simsample_accelsim.apply import WARMUP_PREFIX, choose_warmup, open_for_plan
from simsample_accelsim.kernelslist import DEFAULT_LIST, KernelEntry, Memcpy, render
from simsample_accelsim.notes import warn
from simsample_accelsim.partial import folder_numbers, warmup_ids
from simsample_accelsim.reader import resolve_list, workload_of
from simsample_accelsim.warmup import WarmupSpec, warmup_steps

JOBS_FILE = "simsample-jobs.json"
JOBS_DIR = "jobs"
JOB_LOG = "accelsim.log"
FORMAT = "simsample-accelsim-jobs"


@dataclass(frozen=True)
class JobEntry:
    """One job of a run folder."""

    name: str
    kernel_id: int
    trace: str
    warmup: tuple[int, ...]  # kernel ids of its warm-up launches, in order

    def folder(self, run: Path) -> Path:
        return Path(run) / JOBS_DIR / self.name

    def log(self, run: Path) -> Path:
        return self.folder(run) / JOB_LOG


@dataclass
class SplitResult:
    """What ``apply --split`` wrote."""

    out: Path
    jobs: list[JobEntry]
    warmup_launches: int  # distinct launches run only as warm-up
    memcpys: int  # memcpy lines over all jobs
    copied: bool


#: Sampled launches run in detail before each job's own (functional warm-up only): with one, the
#: decoder's split estimates were 0.47% and 0.51% off the one-list run's, with three 0.15% and
#: 0.30% (docs/results/held-out-workloads.md).
DEFAULT_DETAILED_PREVIOUS = 3


def split_plan(
    plan: Plan,
    traces: str | Path,
    out: str | Path,
    *,
    copy: bool = False,
    force: bool = False,
    warmup: WarmupSpec | None = None,
    functional: bool = False,
    detailed_previous: int = DEFAULT_DETAILED_PREVIOUS,
) -> SplitResult:
    """Write the run folder ``out`` (see the module docstring); with functional warm-up, the
    ``detailed_previous`` sampled launches before each job's own run in detail
    (:func:`previous_samples`)."""
    if detailed_previous < 0:
        raise UserError(
            f"--split-detailed {detailed_previous}: must be 0 or more (sampled launches run in detail before each "
            "job's own)"
        )
    out_abs, tf, rows, _by_position, kept = open_for_plan(plan, traces, out, force=force)
    warm = choose_warmup(tf, plan, rows, warmup or WarmupSpec(), shared=False)
    detailed = previous_samples(kept, detailed_previous) if functional else {}
    for s, prev in detailed.items():
        warm[s] = sorted(set(warm.get(s, ())) | set(prev))
    steps = warmup_steps(tf.kernels_list.commands, kept, warm)
    entries = {i: c for i, c in enumerate(tf.kernels_list.kernels)}
    ids = workload_of(tf).kernels["kernel_id"].to_numpy()
    id_of_row = {int(r): int(k) for k, r in zip(plan.samples["kernel_id"], rows)}
    keep = set(kept)
    warm_only = sorted({x for st in steps.values() for x in st if isinstance(x, int)} - keep)
    for i in warm_only:
        if not tf.files[i].exists():
            raise UserError(f"{tf.files[i]}: warm-up trace is missing")
    warm_id = warmup_ids(plan, rows, folder_numbers(tf), ids, warm_only)  # in the plan's numbering
    warm_rows = {kid: (pos, tf.entry_name(i)) for i, (kid, pos) in warm_id.items()}
    clash = sorted(set(warm_rows) & set(id_of_row.values()))
    if clash:
        raise UserError(
            f"warm-up launch {warm_rows[clash[0]][1]} has kernel id {clash[0]}, which the plan gives to a sampled "
            "launch (the plan was made on another source); make the plan on this trace folder, or pass --warmup none"
        )
    width = len(str(max(id_of_row.values(), default=0)))
    jobs: list[JobEntry] = []
    memcpys = 0
    with staged_folder(Path(out), force=force, inputs=[resolve_list(traces).parent]) as tmp:
        for s in kept:
            kid = id_of_row[s]
            name = f"k{kid:0{width}d}"
            folder = tmp / JOBS_DIR / name
            folder.mkdir(parents=True)
            commands: list[Memcpy | KernelEntry] = []
            warm_ids: list[int] = []
            for step in steps[s]:
                if isinstance(step, Memcpy):
                    commands.append(step)
                    memcpys += 1
                    continue
                trace = tf.entry_name(step)
                link_or_copy(tf.files[step], folder / trace, copy=copy)
                replayed = functional and step not in detailed.get(s, ())
                commands.append(KernelEntry(entries[step].line, WARMUP_PREFIX + trace if replayed else trace))
                warm_ids.append(warm_id[step][0] if step not in keep else id_of_row[step])
            trace = tf.entry_name(s)
            link_or_copy(tf.files[s], folder / trace, copy=copy)
            commands.append(KernelEntry(entries[s].line, trace))
            atomic_write_text(folder / DEFAULT_LIST, render(commands))
            jobs.append(JobEntry(name, kid, trace, tuple(warm_ids)))
        write_jobs(tmp, jobs, functional=functional)
        write_plan_records(tmp, plan, {"trace": {id_of_row[s]: tf.entry_name(s) for s in kept}}, warmup=warm_rows)
    return SplitResult(out_abs, jobs, len(warm_only), memcpys, copy)


def previous_samples(kept: Sequence[int], count: int = DEFAULT_DETAILED_PREVIOUS) -> dict[int, tuple[int, ...]]:
    """For each sampled row but the first, the ``count`` sampled rows before it (fewer where
    there are fewer): what ran in detail just before it in the one-list run.

    The simulator keeps more than the L2 across kernels: the instruction cache of every SM is
    never flushed, and trace PCs start at 0 in every kernel, so a kernel runs with its code
    lines already fetched by whichever kernel ran before it. Functional warm-up fills only the
    L2; a job whose sample was the first kernel run in detail ran colder than the same sample
    in the list (hetero: +1.55% on the total, one launch +26%). Running the previous sample in
    detail first gives each job the context its sample has in the list. State that builds up
    over several detailed kernels (the SM where the next CTA is issued, the DRAM's banks) is
    nearer the list's with more: the decoder's launch 226, after 221 predecessors replayed and
    the previous sample in detail, ran 10,805 cycles; with the previous four, 10,927; in the
    list, 10,990."""
    ordered = sorted(set(int(r) for r in kept))
    return {s: tuple(ordered[max(0, i - count) : i]) for i, s in enumerate(ordered) if i and count}


def write_jobs(folder: Path, jobs: Sequence[JobEntry], *, functional: bool) -> None:
    doc = {
        "format": FORMAT,
        "version": 1,
        "functional_warmup": functional,
        "log": JOB_LOG,
        "jobs": [{"name": j.name, "kernel_id": j.kernel_id, "trace": j.trace, "warmup": list(j.warmup)} for j in jobs],
    }
    atomic_write_text(Path(folder) / JOBS_FILE, json.dumps(doc, indent=1) + "\n")


def is_run_folder(path: str | Path) -> bool:
    """Whether ``path`` is a folder written by ``apply --split``."""
    return (Path(path) / JOBS_FILE).is_file()


def read_jobs(run: str | Path) -> tuple[list[JobEntry], bool]:
    """The jobs of a run folder and whether its warm-up is functional (one clear line if malformed)."""
    path = Path(run) / JOBS_FILE
    try:
        doc = json.loads(read_text_limited(path))
        if doc.get("format") != FORMAT:
            raise ValueError(f"format is {doc.get('format')!r}, expected {FORMAT!r}")
        jobs = [
            JobEntry(str(j["name"]), int(j["kernel_id"]), str(j["trace"]), tuple(int(w) for w in j.get("warmup", [])))
            for j in doc["jobs"]
        ]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UserError(f"{path}: not a job list written by 'simsample apply --split' ({exc})") from None
    for j in jobs:
        if "/" in j.name or j.name in ("", ".", ".."):
            raise UserError(f"{path}: job name {j.name!r} is not a folder name")
    return jobs, bool(doc.get("functional_warmup", False))


def check_job_log(path: Path, kernel_id: int) -> str | None:
    """None when the log at ``path`` is a finished run with statistics for ``kernel_id``; else why not."""
    from simsample_accelsim.collect import parse_log

    try:
        summary = parse_log(path)
    except UserError as exc:
        return str(exc).split(": ", 1)[-1]
    if summary.failure:
        return summary.failure
    mine = [r for r in summary.runs if r.trace_kernel_id == kernel_id]
    if not mine or not mine[-1].has_stats:
        return f"no statistics for kernel {kernel_id}" + (
            "" if summary.exit_detected else " (the log ends before 'exit detected')"
        )
    if not summary.exit_detected:
        return "the log ends before 'exit detected'"
    return None


def expand_run_folders(paths: Sequence[Path]) -> tuple[list[Path], dict[Path, int], Path | None]:
    """Logs to read for ``paths``: a run folder stands for its jobs' complete logs.

    Returns the logs, the kernel id each job log was run for (the others in it are warm-up
    launches) and the plan of the (first) run folder. A job without a complete log is named in
    a warning; ``collect`` then reports its launch as missing.
    """
    logs: list[Path] = []
    owner: dict[Path, int] = {}
    plan_path: Path | None = None
    for p in paths:
        if not (Path(p).is_dir() and is_run_folder(p)):
            logs.append(Path(p))
            continue
        jobs, _ = read_jobs(p)
        if plan_path is None and (Path(p) / "simsample-plan.json").is_file():
            plan_path = Path(p) / "simsample-plan.json"
        absent = []
        for j in jobs:
            log = j.log(Path(p))
            if log.is_file():
                logs.append(log)
                owner[log.resolve()] = j.kernel_id
            else:
                absent.append(j.name)
        if absent:
            shown = ", ".join(absent[:6]) + (f" and {len(absent) - 6} more" if len(absent) > 6 else "")
            warn(
                f"{p}: {len(absent)} of {len(jobs)} job(s) have no complete log ({shown}); run 'simsample run --sim "
                f"accelsim --sampled {p}' to finish them"
            )
        if not any(owner.get(Path(j.log(Path(p))).resolve()) is not None for j in jobs):
            raise UserError(
                f"{p}: no job of this run folder has a complete log yet; run 'simsample run --sim accelsim --sampled "
                f"{p}' first"
            )
    return logs, owner, plan_path
