"""Apply a plan to a trace folder: a new folder whose command list runs only the sampled launches.

The output folder holds ``kernelslist.g`` with the sampled launches in their original order
(each once, whatever its weight) and every ``MemcpyHtoD`` of the input list that precedes the
last of them, in place (so each kept kernel sees the same copies before it as in the full run);
a symlink (or, with ``copy``, a copy) of each sampled trace; ``simsample-weights.csv``
(``kernel_id,weight,cluster,launch,role,trace``) and the plan itself (``simsample-plan.json``).
Lines the simulator ignores are dropped.

With a warm-up (:mod:`.warmup`), the launches chosen to run before the sampled ones are kept
too, in their real place, each once however many samples share it; the weights file lists them
with weight 0 and role ``warmup`` (``collect``/``estimate`` leave them out). In ``functional``
mode a warm-up launch is written as ``warmup kernel-N.traceg`` instead of a kernel line: the
project's Accel-Sim patch (``-functional_warmup 1``) plays its global-memory accesses into the
caches without timing; an unpatched simulator ignores such lines (they start with neither
``MemcpyHtoD`` nor ``kernel``), so the list stays runnable.

Plan matching and the output folder follow :mod:`simsample.adapter_support`: the plan must have
been made for this folder (same fingerprint), or on another source of the same launch sequence
(a profile with its own ids and demangled names: same shape fingerprint), which is applied by
launch position with a note. The output is built beside OUT and moved into place when complete,
so a failure leaves nothing behind; the input is never modified.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from simsample.sdk import (
    PLAN_FILE,
    WEIGHTS_FILE,
    Plan,
    PlanMismatchError,
    UserError,
    atomic_write_text,
    check_output_folder,
    link_or_copy,
    match_plan,
    staged_folder,
    write_plan_records,
)
from simsample_accelsim.kernelslist import DEFAULT_LIST, KernelEntry, Memcpy, render, shell_unsafe
from simsample_accelsim.notes import warn
from simsample_accelsim.partial import choose_warmup_traced, folder_numbers, is_partial, match_partial, warmup_records
from simsample_accelsim.reader import TraceFolder, folder_notes, resolve_list, scan_folder, workload_of
from simsample_accelsim.warmup import WarmupSpec, preceding, reuse_window, targeted, warmup_steps

__all__ = ["PLAN_FILE", "WEIGHTS_FILE", "ApplyResult", "apply_plan"]


@dataclass
class ApplyResult:
    """What ``apply`` wrote."""

    out: Path
    rows: list[int]  # kept launch rows of the input folder, in order
    memcpys: int
    by_position: bool
    copied: bool
    warmup: list[int]  # warm-up launch rows (not sampled), in order
    functional: bool = False


def _check_out_path(out: Path) -> Path:
    absolute = Path(os.path.abspath(out))
    bad = shell_unsafe(str(absolute))
    if bad is not None:
        raise UserError(
            f"{out}: the output path contains {bad!r}; the simulator passes trace paths unquoted to a shell, "
            "so choose a folder path without spaces or shell characters"
        )
    return absolute


#: Prefix of a functional warm-up line in the command list (kept exactly: the simulator patch parses it).
WARMUP_PREFIX = "warmup "


def choose_warmup(
    tf: TraceFolder, plan: Plan, rows: Sequence[int], spec: WarmupSpec, *, shared: bool = True
) -> dict[int, list[int]]:
    """Per sampled row, the warm-up rows ``spec`` asks for (a note when K is more than there are).
    ``shared=False``: each sample runs in a job of its own, so other sampled launches can be its warm-up."""
    samples = sorted(set(int(r) for r in rows))
    if spec.none or not samples:
        return {s: [] for s in samples}
    numbers = folder_numbers(tf)
    if is_partial(numbers):  # a folder of selected ranges: predecessors by launch number, among those traced
        assert numbers is not None
        return choose_warmup_traced(tf, plan, rows, spec, numbers, shared=shared)
    if not spec.targeted and not spec.reuse:
        assert spec.k is not None
        warm, short = preceding(samples, spec.k)
        if short:
            warn(
                f"--warmup {spec.k}: {short} sampled launch(es) have fewer than {spec.k} launches before them; they "
                "get those there are"
            )
        return warm
    from simsample_accelsim.footprints import FootprintStore, footprint_of

    store = FootprintStore()  # what profile features left there; a trace changed since is scanned again

    def scan_footprint(path: Path):
        return footprint_of(path, store)

    if spec.reuse:
        return reuse_window(
            samples, lambda i: scan_footprint(tf.files[i]), l2_lines=spec.l2_lines, reach=spec.reach, shared=shared
        )
    weight_of_row: dict[int, float] = {}
    for r, w in zip(rows, plan.samples["weight"]):
        weight_of_row[int(r)] = weight_of_row.get(int(r), 0.0) + float(w)
    return targeted(
        samples,
        weight_of_row,
        lambda i: scan_footprint(tf.files[i]),
        horizon=spec.horizon,
        coverage=spec.coverage,
        budget=spec.budget,
        cost=spec.cost.cycles,
        shared=shared,
    )


def open_for_plan(
    plan: Plan, traces: str | Path, out: str | Path, *, force: bool
) -> tuple[Path, TraceFolder, Sequence[int], bool, list[int]]:
    """What writing ``plan``'s launches from ``traces`` into ``out`` starts with (here and in
    :mod:`.split`): the output checked before the traces are scanned (a wrong OUT fails fast),
    the folder's notes, the plan matched to the folder's launches and the sampled traces present.
    Returns the absolute output path, the folder, the plan's rows, whether they were matched by
    position, and the sorted distinct sampled rows."""
    out_abs = _check_out_path(Path(out))
    check_output_folder(Path(out), force=force, inputs=[resolve_list(traces).parent])
    tf = scan_folder(traces)
    for message in folder_notes(tf):
        warn(message)
    try:
        rows, by_position = match_plan(plan, workload_of(tf), what="trace folder")
    except PlanMismatchError as e:  # a folder holding some launches of the run: match by launch number
        rows, by_position = match_partial(plan, tf, e), plan.workload.get("format") != "accelsim"
    kept = sorted(set(int(r) for r in rows))  # match_plan checked that they are rows of this folder
    for i in kept:
        if not tf.files[i].exists():
            raise UserError(f"{tf.files[i]}: sampled trace is missing")
    return out_abs, tf, rows, by_position, kept


def apply_plan(
    plan: Plan,
    traces: str | Path,
    out: str | Path,
    *,
    copy: bool = False,
    force: bool = False,
    warmup: WarmupSpec | None = None,
    functional: bool = False,
) -> ApplyResult:
    """Write the sampled trace folder ``out`` for ``plan`` from ``traces`` (see the module docstring)."""
    out_abs, tf, rows, by_position, kept = open_for_plan(plan, traces, out, force=force)
    warm = choose_warmup(tf, plan, rows, warmup or WarmupSpec())
    keep = set(kept)
    steps = warmup_steps(tf.kernels_list.commands, kept, warm)  # what runs before each sample, in order
    extra = sorted({x for st in steps.values() for x in st if isinstance(x, int)} - keep)
    for i in extra:
        if not tf.files[i].exists():
            raise UserError(f"{tf.files[i]}: warm-up trace is missing")
    run = keep | set(extra)
    last = kept[-1] if kept else -1
    commands: list[Memcpy | KernelEntry] = []
    position = 0
    for cmd in tf.kernels_list.commands:
        if isinstance(cmd, KernelEntry):
            if position in run:
                name = tf.entry_name(position)
                commands.append(
                    KernelEntry(cmd.line, WARMUP_PREFIX + name if functional and position not in keep else name)
                )
            position += 1
        elif position <= last:
            commands.append(cmd)
    trace_of_id = {int(k): tf.entry_name(int(r)) for k, r in zip(plan.samples["kernel_id"], rows)}
    ids = workload_of(tf).kernels["kernel_id"].to_numpy()
    warm_rows = warmup_records(plan, rows, folder_numbers(tf), ids, extra, tf.entry_name)
    clash = sorted(set(warm_rows) & set(int(k) for k in plan.samples["kernel_id"]))
    if clash:  # a plan made on another source numbers launches its own way
        raise UserError(
            f"warm-up launch {tf.entry_name(warm_rows[clash[0]][0])} has kernel id {clash[0]}, which the plan gives "
            "to a sampled launch (the plan was made on another source); make the plan on this trace folder, or pass "
            "--warmup none"
        )
    with staged_folder(Path(out), force=force, inputs=[resolve_list(traces).parent]) as tmp:
        for i in sorted(run):
            link_or_copy(tf.files[i], tmp / tf.entry_name(i), copy=copy)
        atomic_write_text(tmp / DEFAULT_LIST, render(commands))
        write_plan_records(tmp, plan, {"trace": trace_of_id}, warmup=warm_rows)
    return ApplyResult(
        out_abs, kept, sum(isinstance(c, Memcpy) for c in commands), by_position, copy, extra, functional
    )
