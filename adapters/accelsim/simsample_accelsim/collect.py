"""Accel-Sim's standard output → per-launch results keyed by the workload's kernel ids.

What a log holds, per launched kernel: ``Processing kernel ./kernel-N.traceg`` and the echoed
header (``-kernel id = N``, ``-grid dim = ...``), ``launching kernel name: NAME uid: U``, and
after the kernel its statistics block (``kernel_name = ...``, ``kernel_launch_uid = U``,
``gpu_sim_cycle``, ``gpu_sim_insn``, ``gpu_ipc``, ``gpu_occupancy``, cache, DRAM and time
lines). ``kernel_launch_uid`` counts launches within one run, so a sampled run's uid 1 is kernel
29 when kernel 29 is the first sampled launch: launches are mapped through the echoed
``-kernel id`` (or, failing that, the order of the sampled launches). With a plan, launches it
did not sample (warm-up launches that ``apply --warmup`` put before the sampled ones) are left
out, with one note.

Patterns are those of Accel-Sim's own scraper (``util/job_launching/stats/example_stats.yml``).
Cache, DRAM, issued-CTA and simulation-time counters are cumulative over the run, so a kernel's
value is the difference from the previous kernel's (as the scraper does). L1 and L2 hits and
accesses are global reads plus writes (``GLOBAL_ACC_R`` + ``GLOBAL_ACC_W``).

Results of a kernel the PKP early-exit hook stopped (``pkp_stop_cycle``,
``pkp_projected_cycle``, ``pkp_projected_insn`` in its block) use the projected cycles and
instructions; their cache and DRAM counters are scaled by the same projection
(projected / simulated instructions); the simulated values stay in ``sim_cycles``/``sim_insn``
and the row has ``projected = True``.

A run is judged from the log, not its exit status (a missing trace file still exits with 0):
a kernel is unusable when it was launched but has no statistics (crash, ``Assertion ...
failed``), when the run hit ``-gpgpu_max_cycle``/``-gpgpu_max_insn`` while it ran, or when it
issued fewer CTAs than its grid (``-gpgpu_max_completed_cta``) without a PKP projection.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import lazy_loader as lazy
import numpy as np

from simsample.sdk import (
    USABLE_STATUSES,
    FormatError,
    IncompleteResults,
    Plan,
    UserError,
    check_input_file,
    check_launch_count,
    open_text,
)
from simsample_accelsim.notes import warn

pd = lazy.load("pandas")

#: Cumulative counters (value of a kernel = difference from the previous kernel in the log).
_AGG = {
    "l1r_hit": "Total_core_cache_stats_breakdown[GLOBAL_ACC_R][HIT]",
    "l1r_acc": "Total_core_cache_stats_breakdown[GLOBAL_ACC_R][TOTAL_ACCESS]",
    "l1w_hit": "Total_core_cache_stats_breakdown[GLOBAL_ACC_W][HIT]",
    "l1w_acc": "Total_core_cache_stats_breakdown[GLOBAL_ACC_W][TOTAL_ACCESS]",
    "l2r_hit": "L2_cache_stats_breakdown[GLOBAL_ACC_R][HIT]",
    "l2r_acc": "L2_cache_stats_breakdown[GLOBAL_ACC_R][TOTAL_ACCESS]",
    "l2w_hit": "L2_cache_stats_breakdown[GLOBAL_ACC_W][HIT]",
    "l2w_acc": "L2_cache_stats_breakdown[GLOBAL_ACC_W][TOTAL_ACCESS]",
    "dram_reads": "total dram reads",
    "dram_writes": "total dram writes",
    "issued_ctas": "gpu_tot_issued_cta",
}
#: Per-kernel values as printed.
_ABS = {
    "gpu_sim_cycle": "cycles",
    "gpu_sim_insn": "instructions",
    "gpu_ipc": "ipc",
    "gpu_occupancy": "occupancy",
    "pkp_stop_cycle": "pkp_stop_cycle",
    "pkp_projected_cycle": "pkp_projected_cycle",
    "pkp_projected_insn": "pkp_projected_insn",
    "pkp_stop_projected_cycle": "pkp_stop_projected_cycle",
}
_STAT_KEYS = {v: k for k, v in _AGG.items()}
_PREFIXES = (
    "Processing kernel ",
    "-kernel id = ",
    "-grid dim = ",
    "launching kernel name: ",
    "kernel_name = ",
    "kernel_launch_uid = ",
    "gpu_sim_cycle",
    "gpu_sim_insn",
    "gpu_ipc",
    "gpu_occupancy",
    "gpu_tot_issued_cta",
    "pkp_",
    "\tTotal_core_cache_stats_breakdown[GLOBAL_ACC_",
    "\tL2_cache_stats_breakdown[GLOBAL_ACC_",
    "total dram ",
    "gpgpu_simulation_time",
    "GPGPU-Sim: ",
)
_LAUNCH = re.compile(r"^launching kernel name: (.*?) uid: (\d+)")
_GRID = re.compile(r"\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\)")
_SIMTIME = re.compile(r"\((\d+) sec\)")
_FAILURES = (
    "Assertion",
    "Segmentation fault",
    "core dumped",
    "terminate called",
    "Aborted",
    "unsupported binary version",
    "Unable to open file",
)

#: Result columns, in order.
RESULT_COLUMNS = (
    "kernel_id",
    "name",
    "status",
    "cycles",
    "instructions",
    "ipc",
    "occupancy",
    "l1_hits",
    "l1_accesses",
    "l2_hits",
    "l2_accesses",
    "dram_reads",
    "dram_writes",
    "sim_seconds",
    "projected",
    "sim_cycles",
    "sim_insn",
    "pkp_stop_cycle",
    "uid",
    "trace",
    "log",
)
# What the estimate does with each column (counts, ratios, not estimable) is declared with the
# adapter: simsample_accelsim.adapter.METRICS.
USABLE = USABLE_STATUSES  # ok, projected


@dataclass
class KernelRun:
    """One launched kernel of a log."""

    uid: int
    name: str = ""
    trace: str = ""
    trace_kernel_id: int | None = None
    grid_size: int | None = None
    stats: dict[str, float] = field(default_factory=dict)
    raw: dict[str, float] = field(default_factory=dict)  # cumulative counters as printed
    has_stats: bool = False
    cut_by_limit: bool = False
    status: str = "ok"
    reason: str = ""


@dataclass
class LogSummary:
    """Everything read from one simulator log."""

    path: Path
    runs: list[KernelRun]
    exit_detected: bool
    failure: str | None
    missing_traces: list[str]


def _num(text: str) -> float:
    t = text.strip().rstrip("%").strip()
    try:
        return float(t)
    except ValueError:
        return math.nan  # "-nan" occupancy and the like


#: values Accel-Sim itself prints as ``-nan`` (an occupancy with no active warps); every other
#: statistic must be a finite number, or the log is damaged
_MAY_BE_NAN = frozenset({"gpu_occupancy"})


def _finite(path: Path, key: str, value: str) -> float:
    """A statistic's value, refused unless it is a finite number: ``gpu_sim_cycle = nan`` would
    otherwise drop cycles and IPC from an estimate without a word."""
    v = _num(value)
    if not math.isfinite(v):
        raise FormatError(
            path,
            f"kernel statistics: {key} = {value.strip()[:40]!r} is not a finite number; the log is damaged (rerun "
            "the simulation)",
        )
    return v


def parse_log(path: str | Path) -> LogSummary:
    """Read one Accel-Sim stdout log (plain, gz or xz)."""
    p = check_input_file(path)
    runs: dict[int, KernelRun] = {}
    order: list[int] = []
    blocks: list[KernelRun] = []
    current: KernelRun | None = None  # run whose statistics block is being read
    pending_trace, pending_id, pending_grid = "", None, None
    exit_detected, failure, missing = False, None, []
    last_launched: int | None = None
    saw_anything = False
    try:
        with open_text(p) as fh:
            for line in fh:
                if not line.startswith(_PREFIXES):
                    if failure is None and any(f in line for f in _FAILURES):
                        failure = line.strip()[:200]
                        if "unsupported binary version" in line and pending_trace:
                            missing.append(pending_trace)
                    continue
                saw_anything = True
                line = line.rstrip("\n")
                if line.startswith("Processing kernel "):
                    pending_trace, pending_id, pending_grid = line[len("Processing kernel ") :].strip(), None, None
                elif line.startswith("-kernel id = "):
                    pending_id = (
                        int(_num(line.split("=", 1)[1])) if not math.isnan(_num(line.split("=", 1)[1])) else None
                    )
                elif line.startswith("-grid dim = "):
                    m = _GRID.search(line)
                    pending_grid = int(m.group(1)) * int(m.group(2)) * int(m.group(3)) if m else None
                elif line.startswith("launching kernel name: "):
                    m = _LAUNCH.match(line)
                    if m:
                        uid = int(m.group(2))
                        run = KernelRun(
                            uid=uid,
                            name=m.group(1).strip(),
                            trace=pending_trace,
                            trace_kernel_id=pending_id,
                            grid_size=pending_grid,
                        )
                        runs[uid] = run
                        order.append(uid)
                        last_launched = uid
                        pending_trace, pending_id, pending_grid = "", None, None
                elif line.startswith("kernel_name = "):
                    current = KernelRun(uid=-1, name=line.split("=", 1)[1].strip())
                    blocks.append(current)
                elif line.startswith("kernel_launch_uid = ") and current is not None:
                    uid = int(_num(line.split("=", 1)[1]))
                    run = runs.get(uid)
                    if run is None:  # log without launch lines
                        run = runs[uid] = KernelRun(uid=uid, name=current.name)
                        order.append(uid)
                    run.has_stats = True
                    blocks[-1] = run
                    current = run
                elif line.startswith("GPGPU-Sim: "):
                    if "exit detected" in line:
                        exit_detected = True
                    elif "break due to reaching the maximum" in line:
                        target = runs.get(last_launched) if last_launched is not None else None
                        if current is not None and current.uid >= 0:
                            current.cut_by_limit = True
                        if target is not None:
                            target.cut_by_limit = True
                elif current is not None:
                    key, _, value = line.strip().partition("=")
                    key = key.strip()
                    if key in _ABS:
                        current.stats[_ABS[key]] = _finite(p, key, value) if key not in _MAY_BE_NAN else _num(value)
                    elif key in _STAT_KEYS:
                        current.raw[_STAT_KEYS[key]] = _finite(p, key, value)
                    elif key == "gpgpu_simulation_time":
                        m = _SIMTIME.search(value)
                        if m:
                            current.raw["sim_seconds"] = float(m.group(1))
    except (EOFError, OSError) as exc:
        raise FormatError(p, f"truncated or unreadable log ({exc})") from exc
    if not saw_anything:
        raise FormatError(
            p, "not an Accel-Sim log (no 'Processing kernel', 'launching kernel' or 'kernel_name =' lines)"
        )
    # cumulative counters -> per-kernel differences, in the order the blocks were printed
    previous: dict[str, float] = {}
    for run in blocks:
        for key, value in run.raw.items():
            run.stats[key] = value - previous.get(key, 0.0)
            previous[key] = value
    return LogSummary(p, [runs[u] for u in order], exit_detected, failure, missing)


def _judge(run: KernelRun, summary: LogSummary) -> None:
    s = run.stats
    if not run.has_stats or "cycles" not in s:
        run.status = "failed"
        run.reason = "launched but no statistics" + (f" ({summary.failure})" if summary.failure else " (the log ends)")
    elif run.cut_by_limit:
        run.status = "incomplete"
        run.reason = "the run reached -gpgpu_max_cycle/-gpgpu_max_insn during this kernel"
    elif "pkp_projected_cycle" in s:
        run.status = "projected"
    elif run.grid_size is not None and "issued_ctas" in s and s["issued_ctas"] < run.grid_size:
        run.status = "incomplete"
        run.reason = (
            f"stopped early: {int(s['issued_ctas'])} of {run.grid_size} CTAs issued (-gpgpu_max_completed_cta?)"
        )


def _add(a: float, b: float) -> float:
    """Reads plus writes; a side the log does not print counts as 0 (both missing: unknown)."""
    if math.isnan(a) and math.isnan(b):
        return math.nan
    return (0.0 if math.isnan(a) else a) + (0.0 if math.isnan(b) else b)


def _row(run: KernelRun, summary: LogSummary) -> dict[str, object]:
    s = run.stats
    g = lambda k: s.get(k, math.nan)  # noqa: E731
    cycles, insn = g("cycles"), g("instructions")
    row: dict[str, object] = {
        "name": run.name,
        "status": run.status,
        "cycles": cycles,
        "instructions": insn,
        "ipc": g("ipc"),
        "occupancy": g("occupancy"),
        "l1_hits": _add(g("l1r_hit"), g("l1w_hit")),
        "l1_accesses": _add(g("l1r_acc"), g("l1w_acc")),
        "l2_hits": _add(g("l2r_hit"), g("l2w_hit")),
        "l2_accesses": _add(g("l2r_acc"), g("l2w_acc")),
        "dram_reads": g("dram_reads"),
        "dram_writes": g("dram_writes"),
        "sim_seconds": g("sim_seconds"),
        "projected": False,
        "sim_cycles": cycles,
        "sim_insn": insn,
        "pkp_stop_cycle": g("pkp_stop_cycle"),
        "uid": run.uid,
        "trace": run.trace,
        "log": summary.path.name,
    }
    if run.status == "projected":
        pc, pi = g("pkp_projected_cycle"), g("pkp_projected_insn")
        scale = pi / insn if insn and insn > 0 and not math.isnan(pi) else (pc / cycles if cycles else math.nan)
        for k in ("l1_hits", "l1_accesses", "l2_hits", "l2_accesses", "dram_reads", "dram_writes"):
            row[k] = float(row[k]) * scale
        row.update(cycles=pc, instructions=pi, ipc=pi / pc if pc else math.nan, projected=True)
    return row


def collect_logs(
    logs: Sequence[str | Path],
    plan: Plan | None = None,
    *,
    traces: str | Path | None = None,
    allow_incomplete: bool = False,
    owner: Mapping[Path, int] | None = None,
) -> pd.DataFrame:
    """Per-launch results of the simulator logs (see the module docstring).

    ``owner`` maps (resolved) log paths of ``apply --split`` jobs to the kernel id the job was
    run for: the other launches of such a log are its warm-up launches, left out even when the
    plan samples them (their own job has their results).

    With a plan, every sampled launch must have usable results; otherwise a :class:`UserError`
    names the kernels and why (unless ``allow_incomplete``: then they are reported as warnings
    and kept with their status).
    """
    if not logs:
        raise UserError("no simulator log given")
    summaries = [parse_log(p) for p in logs]
    mapping = _id_mapper(summaries, plan, traces)
    sampled = set(plan.sampled_ids) if plan is not None else None
    warmups = 0
    seen: set[int] = set()
    rows: list[dict[str, object]] = []
    where: dict[int, str] = {}
    problems: list[str] = []
    unusable: list[str] = []
    for summary in summaries:
        if not summary.exit_detected:
            problems.append(
                f"{summary.path.name}: the run did not finish (no 'exit detected')"
                + (f": {summary.failure}" if summary.failure else "")
            )
        for trace in summary.missing_traces:
            problems.append(f"{summary.path.name}: trace {trace} could not be read by the simulator (missing file?)")
        own = owner.get(summary.path.resolve()) if owner else None
        for run in summary.runs:
            _judge(run, summary)
            kid = mapping(summary, run)
            if kid is None:
                continue
            seen.add(kid)
            if (own is not None and kid != own) or (sampled is not None and kid not in sampled):
                warmups += 1  # a warm-up launch (apply --warmup): simulated for its cache state only
                continue
            if kid in where:
                raise UserError(
                    f"kernel {kid} appears in {where[kid]} and in {summary.path.name}; give each launch's log once"
                )
            where[kid] = summary.path.name
            if run.status not in USABLE:
                problems.append(f"{summary.path.name}: kernel {kid} (uid {run.uid}) {run.status}: {run.reason}")
                unusable.append(f"{kid} ({run.status})")
            rows.append({"kernel_id": kid, **_row(run, summary)})
    if plan is not None:  # warm-up launches are the workload's own; more launches than it has are not
        check_launch_count(len(seen), plan, ", ".join(s.path.name for s in summaries))
    df = pd.DataFrame(rows, columns=list(RESULT_COLUMNS))
    df["kernel_id"] = df["kernel_id"].astype(np.int64)
    df["projected"] = df["projected"].astype(bool)
    usable = df[df["status"].isin(USABLE)]
    missing: list[int] = []
    if plan is not None:
        have = set(usable["kernel_id"].tolist())
        missing = [k for k in plan.sampled_ids if k not in have]
        absent = [k for k in missing if k not in where]
        if absent:
            problems.append(f"{len(absent)} sampled launch(es) absent from the log(s): {_ids(absent)}")
    if problems and not allow_incomplete:
        failure = next((s.failure for s in summaries if s.failure), None)
        unfinished = [s.path.name for s in summaries if not s.exit_detected]
        parts = []
        if failure or unfinished:
            parts.append(
                f"{', '.join(unfinished) or summaries[0].path.name}: the simulation "
                + (f"failed ({failure})" if failure else "did not finish")
            )
        if unusable:
            parts.append(
                f"unusable results for kernel(s) {', '.join(unusable[:6])}" + (" ..." if len(unusable) > 6 else "")
            )
        if missing:
            parts.append(
                f"{len(missing)} of {len(plan.sampled_ids)} sampled launches without results ({_ids(missing)})"
            )
        if not parts:
            parts.append(problems[0])
        raise IncompleteResults("; ".join(parts), "rerun them, or pass --allow-incomplete to keep the rest")
    for p in problems:
        warn(p)
    if warmups:  # after any error: a refusal stays one line
        what = (
            "ran as warm-up in the jobs' logs"
            if owner
            else "of the log(s) are not sampled by the plan (warm-up launches)"
        )
        warn(f"{warmups} launch(es) {what}; left out of the results")
    return (df if allow_incomplete else usable).sort_values("kernel_id").reset_index(drop=True)


def _ids(ids: Sequence[int], limit: int = 8) -> str:
    shown = ", ".join(str(i) for i in ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def _id_mapper(summaries: list[LogSummary], plan: Plan | None, traces: str | Path | None):
    """How a log's kernel becomes a workload kernel id."""
    plan_on_traces = plan is None or plan.workload.get("format") == "accelsim"
    if traces is not None:
        from simsample_accelsim.reader import read_traces

        wl = read_traces(traces, quiet=True)
        row_of = {int(k): i for i, k in enumerate(wl.kernels["kernel_id"].tolist())}
        if plan is not None and not plan_on_traces:
            if wl.shape_fingerprint != plan.workload.get("shape_fingerprint"):
                raise UserError(f"{traces}: these traces are not the launch sequence the plan was made for")
            by_launch = dict(zip(plan.samples["launch"].tolist(), plan.samples["kernel_id"].tolist()))

            def via_traces(summary: LogSummary, run: KernelRun) -> int | None:
                if run.trace_kernel_id is None or run.trace_kernel_id not in row_of:
                    warn(
                        f"{summary.path.name}: uid {run.uid} ({run.trace or run.name}) is not a launch of {traces}; "
                        "skipped"
                    )
                    return None
                return by_launch.get(row_of[run.trace_kernel_id])

            return via_traces
    if plan_on_traces and all(r.trace_kernel_id is not None for s in summaries for r in s.runs):
        return lambda summary, run: run.trace_kernel_id
    if plan is not None and all(r.trace_kernel_id is not None for s in summaries for r in s.runs):
        from simsample.sdk import sample_launches

        records = sample_launches(plan)  # a plan that knows its launches' numbers in the process (format 1.2)
        if records and all(r.number is not None for r in records):
            by_number = {int(r.number): r.kernel_id for r in records}  # type: ignore[arg-type]
            # a launch the plan did not sample (warm-up) gets an id no plan launch has, so it is counted and left out
            return lambda summary, run: by_number.get(int(run.trace_kernel_id), -int(run.trace_kernel_id))
    if plan is None:
        raise UserError(
            "the log does not echo the traces' '-kernel id' lines; pass --plan so that launches can be mapped by order"
        )
    sampled = plan.sampled_ids
    flat = [(s.path.name, r.uid) for s in summaries for r in sorted(s.runs, key=lambda r: r.uid)]
    if len(flat) != len(sampled):
        raise UserError(
            f"cannot map the logs' {len(flat)} launches to the plan's {len(sampled)} sampled launches by order; "
            "pass --traces with the trace folder the plan was applied to"
        )
    warn(
        "mapping the logs' launches to the plan's sampled launches by order (k-th launch of the run = k-th sampled "
        "launch)"
    )
    by_order = {key: sampled[i] for i, key in enumerate(flat)}
    return lambda summary, run: by_order[(summary.path.name, run.uid)]
