"""Apply a plan to a trace folder: a new folder whose command list runs only the sampled launches.

The output folder holds ``kernelslist.g`` with the sampled launches in their original order
(each once, whatever its weight) and every ``MemcpyHtoD`` of the input list that precedes the
last of them, in place (so each kept kernel sees the same copies before it as in the full run);
a symlink (or, with ``copy``, a copy) of each sampled trace; ``simsample-weights.csv``
(``kernel_id,weight,cluster,launch,trace``) and the plan itself (``simsample-plan.json``). Lines
the simulator ignores are dropped.

Plan matching and the output folder follow :mod:`simsample.adapter_support`: the plan must have
been made for this folder (same fingerprint), or on another source of the same launch sequence
(a profile with its own ids and demangled names: same shape fingerprint), which is applied by
launch position with a note. The output is built beside OUT and moved into place when complete,
so a failure leaves nothing behind; the input is never modified.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from simsample.adapter_support import (
    PLAN_FILE,
    WEIGHTS_FILE,
    check_output_folder,
    link_or_copy,
    match_plan,
    staged_folder,
    write_plan_records,
)
from simsample.errors import UserError
from simsample.fileio import atomic_write_text
from simsample.plan import Plan
from simsample_accelsim.kernelslist import DEFAULT_LIST, KernelEntry, Memcpy, render, shell_unsafe
from simsample_accelsim.notes import warn
from simsample_accelsim.reader import folder_notes, resolve_list, scan_folder, workload_of

__all__ = ["PLAN_FILE", "WEIGHTS_FILE", "ApplyResult", "apply_plan"]


@dataclass
class ApplyResult:
    """What ``apply`` wrote."""

    out: Path
    rows: list[int]  # kept launch rows of the input folder, in order
    memcpys: int
    by_position: bool
    copied: bool


def _check_out_path(out: Path) -> Path:
    absolute = Path(os.path.abspath(out))
    bad = shell_unsafe(str(absolute))
    if bad is not None:
        raise UserError(
            f"{out}: the output path contains {bad!r}; the simulator passes trace paths unquoted to a shell, "
            "so choose a folder path without spaces or shell characters"
        )
    return absolute


def apply_plan(plan: Plan, traces: str | Path, out: str | Path, *, copy: bool = False, force: bool = False) -> ApplyResult:
    """Write the sampled trace folder ``out`` for ``plan`` from ``traces`` (see the module docstring)."""
    out_abs = _check_out_path(Path(out))
    inputs = [resolve_list(traces).parent]
    check_output_folder(Path(out), force=force, inputs=inputs)  # before scanning: a wrong OUT fails fast
    tf = scan_folder(traces)
    for message in folder_notes(tf):
        warn(message)
    rows, by_position = match_plan(plan, workload_of(tf), what="trace folder")
    kept = sorted(set(int(r) for r in rows))  # match_plan checked that they are rows of this folder
    for i in kept:
        if not tf.files[i].exists():
            raise UserError(f"{tf.files[i]}: sampled trace is missing")
    keep = set(kept)
    last = kept[-1] if kept else -1
    commands: list[Memcpy | KernelEntry] = []
    position = 0
    for cmd in tf.kernels_list.commands:
        if isinstance(cmd, KernelEntry):
            if position in keep:
                commands.append(KernelEntry(cmd.line, tf.entry_name(position)))
            position += 1
        elif position <= last:
            commands.append(cmd)
    trace_of_id = {int(k): tf.entry_name(int(r)) for k, r in zip(plan.samples["kernel_id"], rows)}
    with staged_folder(Path(out), force=force, inputs=inputs) as tmp:
        for i in kept:
            link_or_copy(tf.files[i], tmp / tf.entry_name(i), copy=copy)
        atomic_write_text(tmp / DEFAULT_LIST, render(commands))
        write_plan_records(tmp, plan, {"trace": trace_of_id})
    return ApplyResult(out_abs, kept, sum(isinstance(c, Memcpy) for c in commands), by_position, copy)
