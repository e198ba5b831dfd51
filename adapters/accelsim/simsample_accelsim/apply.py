"""Apply a plan to a trace folder: a new folder whose command list runs only the sampled launches.

The output folder holds ``kernelslist.g`` with the sampled launches in their original order
(each once, whatever its weight) and every ``MemcpyHtoD`` of the input list that precedes the
last of them, in place (so each kept kernel sees the same copies before it as in the full run);
a symlink (or, with ``copy``, a copy) of each sampled trace; ``simsample-weights.csv``
(``kernel_id,weight,cluster``) and the plan itself (``simsample-plan.json``). Lines the simulator
ignores are dropped.

The plan must have been made for this folder (same fingerprint). A plan made on another source
of the same launch sequence (a profile with its own ids and demangled names: same shape
fingerprint) is applied by launch position, with a note. The output is built in a temporary
folder beside OUT and renamed into place, so a failure leaves nothing behind; the input is
never modified.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from simsample.errors import PlanMismatchError, UserError
from simsample.fileio import atomic_write_text
from simsample.plan import Plan
from simsample_accelsim.kernelslist import DEFAULT_LIST, KernelEntry, Memcpy, render, shell_unsafe
from simsample_accelsim.notes import warn
from simsample_accelsim.reader import TraceFolder, folder_notes, resolve_list, scan_folder, workload_of

WEIGHTS_FILE = "simsample-weights.csv"
PLAN_FILE = "simsample-plan.json"


@dataclass
class ApplyResult:
    """What ``apply`` wrote."""

    out: Path
    rows: list[int]  # kept launch rows of the input folder, in order
    memcpys: int
    by_position: bool
    copied: bool


def match_plan(plan: Plan, tf: TraceFolder) -> tuple[np.ndarray, bool]:
    """Workload rows of the plan's samples in this folder, and whether matched by position only."""
    wl = workload_of(tf)
    launches = plan.samples["launch"].to_numpy(np.int64)
    if wl.fingerprint == plan.workload.get("fingerprint"):
        ids = wl.kernels["kernel_id"].to_numpy(np.int64)
        if len(launches) and (launches.max() >= len(wl) or not np.array_equal(ids[launches], plan.samples["kernel_id"].to_numpy(np.int64))):
            raise PlanMismatchError("plan's samples do not match its own launch positions; the plan file is inconsistent")
        return launches, False
    if wl.shape_fingerprint == plan.workload.get("shape_fingerprint"):
        return launches, True
    plan.check_workload(wl, what="trace folder")  # raises with the standard message
    raise PlanMismatchError("plan does not match the trace folder")  # pragma: no cover


def _check_out_path(out: Path) -> Path:
    absolute = Path(os.path.abspath(out))
    bad = shell_unsafe(str(absolute))
    if bad is not None:
        raise UserError(
            f"{out}: the output path contains {bad!r}; the simulator passes trace paths unquoted to a shell, "
            "so choose a folder path without spaces or shell characters"
        )
    return absolute


def _inside(child: Path, parent: Path) -> bool:
    try:
        child.resolve().relative_to(parent.resolve())
        return True
    except ValueError:
        return False


def apply_plan(plan: Plan, traces: str | Path, out: str | Path, *, copy: bool = False, force: bool = False) -> ApplyResult:
    """Write the sampled trace folder ``out`` for ``plan`` from ``traces`` (see the module docstring)."""
    out_abs = _check_out_path(Path(out))
    src_folder = resolve_list(traces).parent
    if _inside(out_abs, src_folder) or _inside(src_folder, out_abs):
        raise UserError(f"{out}: the output folder must be outside the trace folder {src_folder} (and not contain it); inputs are never modified")
    if out_abs.exists():
        if not out_abs.is_dir():
            raise UserError(f"{out}: exists and is not a folder")
        if any(out_abs.iterdir()) and not force:
            raise UserError(f"{out}: exists and is not empty; choose a new folder or pass --force to replace it")
    tf = scan_folder(traces)
    for note in folder_notes(tf):
        warn(note)
    rows, by_position = match_plan(plan, tf)
    kept = sorted(set(int(r) for r in rows))
    if kept and kept[-1] >= len(tf.files):
        raise PlanMismatchError(f"plan samples launch {kept[-1]} but {tf.kernels_list.path} has {len(tf.files)} launches")
    if by_position:
        warn(
            f"plan was made on {plan.workload.get('source') or 'another source'} (other ids and names, same launch sequence): "
            "applying it by launch position"
        )
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
    out_abs.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_abs.name}.", suffix=".tmp", dir=out_abs.parent))
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o777 & ~umask)  # mkdtemp makes it private; the result is an ordinary folder
        for i in kept:
            name = tf.entry_name(i)
            dst = tmp / name
            dst.parent.mkdir(parents=True, exist_ok=True)
            src = tf.files[i].resolve()
            if copy:
                shutil.copyfile(src, dst)
            else:
                os.symlink(src, dst)
        atomic_write_text(tmp / DEFAULT_LIST, render(commands))
        w = plan.weights_by_id()
        lines = ["kernel_id,weight,cluster"]
        for k, wt, cl in zip(w["kernel_id"].tolist(), w["weight"].tolist(), w["cluster"].tolist()):
            lines.append(f"{int(k)},{_fmt(float(wt))},{int(cl)}")
        atomic_write_text(tmp / WEIGHTS_FILE, "\n".join(lines) + "\n")
        plan.write(tmp / PLAN_FILE)
        _replace(tmp, out_abs)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return ApplyResult(out_abs, kept, sum(isinstance(c, Memcpy) for c in commands), by_position, copy)


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(x)


def _replace(tmp: Path, out: Path) -> None:
    """Move the finished folder into place (replacing an existing ``out``)."""
    if not out.exists():
        os.rename(tmp, out)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".old", dir=out.parent))
    old.rmdir()
    os.rename(out, old)
    try:
        os.rename(tmp, out)
    except BaseException:
        with contextlib.suppress(OSError):
            os.rename(old, out)
        raise
    shutil.rmtree(old, ignore_errors=True)
