"""Steps every simulator adapter takes: match a plan to traces, stage an output folder, and
turn per-kernel simulator numbers into a results table against the plan.

Kept in this package (and mirrored in the other adapters) so that each adapter installs alone.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import click
import numpy as np
import pandas as pd

from simsample.cli.common import echo_json
from simsample.errors import FormatError, UserError
from simsample.fileio import atomic_write_text, check_input_file
from simsample.plan import Plan
from simsample.workload import Workload

STATUS_OK = "ok"
WEIGHTS_FILE = "simsample-weights.csv"
PLAN_FILE = "simsample-plan.json"


def note(message: str) -> None:
    """One line on standard error, for what the user should know but need not act on."""
    click.echo(f"note: {message}", err=True)


def sample_rows(plan: Plan, wl: Workload, *, what: str) -> np.ndarray:
    """Row positions in ``wl`` of the plan's samples (one per sample, repeats kept).

    The plan's fingerprint must match; a plan made from another source of the same launch
    sequence (same kernel identifiers and shapes, other ids) is applied by launch position,
    with a note. Anything else is refused.
    """
    launches = plan.samples["launch"].to_numpy(np.int64)
    if wl.fingerprint == plan.workload.get("fingerprint"):
        pos = pd.Series(np.arange(len(wl)), index=wl.kernels["kernel_id"].to_numpy(np.int64))
        ids = plan.samples["kernel_id"].to_numpy(np.int64)
        return pos.reindex(ids).to_numpy(np.int64)
    if plan.workload.get("shape_fingerprint") and wl.shape_fingerprint == plan.workload.get("shape_fingerprint"):
        if len(launches) and launches.max() >= len(wl):
            plan.check_workload(wl, what=what)
        note(
            f"the plan was made from {plan.workload.get('source') or 'another source'} ({plan.workload.get('format') or '?'}); "
            f"its launch sequence matches {what} {wl.source}, so samples are applied by launch position"
        )
        return launches
    plan.check_workload(wl, what=what)
    raise AssertionError("unreachable")  # check_workload raised


def check_output_folder(out: Path, *, force: bool, inputs: Sequence[Path] = ()) -> None:
    """OUT must be new or empty (or ``force``), and never one of the inputs or inside one."""
    out_r = out.resolve()
    for p in inputs:
        p_r = Path(p).resolve()
        if out_r == p_r or p_r in out_r.parents or out_r in p_r.parents:
            raise UserError(f"{out}: the output folder overlaps the input {p}; choose a folder outside it")
    if out.exists() or out.is_symlink():
        if not out.is_dir() or out.is_symlink():
            raise UserError(f"{out}: exists and is not a folder")
        if any(out.iterdir()) and not force:
            raise UserError(f"{out}: folder is not empty; choose a new folder or pass --force to replace it")


@contextlib.contextmanager
def staged_folder(out: Path, *, force: bool, inputs: Sequence[Path] = ()) -> Iterator[Path]:
    """Build the output in a hidden folder beside ``out`` and move it into place on success.

    On any failure the partial folder is removed and ``out`` is left as it was.
    """
    check_output_folder(out, force=force, inputs=inputs)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".partial", dir=out.parent))
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o777 & ~umask)
        yield tmp
        for root, _dirs, files in os.walk(tmp):  # atomic writes create private files
            for name in files:
                p = Path(root) / name
                if not p.is_symlink():
                    os.chmod(p, (p.stat().st_mode | 0o644) & ~umask)
        if out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".old", dir=out.parent))
            os.rmdir(old)
            os.rename(out, old)
            os.rename(tmp, out)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def link_or_copy(src: Path, dst: Path, *, copy: bool) -> None:
    """``dst`` becomes a symlink to ``src`` (absolute), or a real copy with ``copy``."""
    src = src.resolve()
    if copy:
        if src.is_dir():
            shutil.copytree(src, dst, symlinks=False)
        else:
            shutil.copy2(src, dst)
    else:
        os.symlink(src, dst, target_is_directory=src.is_dir())


def weights_table(plan: Plan, folder_of_id: dict[int, str] | None = None) -> pd.DataFrame:
    """One row per distinct sampled kernel id, in launch order: id, weight, cluster, launch
    (and the trace folder simulated for it, when known)."""
    w = plan.weights_by_id()
    out = pd.DataFrame(
        {
            "kernel_id": w["kernel_id"].astype(np.int64),
            "weight": w["weight"].astype(np.float64),
            "cluster": w["cluster"].astype(np.int64),
            "launch": w["launch"].astype(np.int64),
        }
    )
    if folder_of_id is not None:
        out["trace"] = [folder_of_id.get(int(k), "") for k in out["kernel_id"]]
    return out


def write_weights(path: Path, table: pd.DataFrame) -> None:
    atomic_write_text(path, table.to_csv(index=False, float_format="%.17g", lineterminator="\n"))


def plan_ids(plan: Plan | None, native: Sequence[int], positions: Sequence[int], native_format: str) -> list[int | None]:
    """The plan's kernel id for each simulated kernel.

    ``native`` is the id the kernel has in the simulator's own traces, ``positions`` its 0-based
    launch index. A plan made from these traces (or no plan) uses the native ids; a plan made
    from a profile is matched by launch position. ``None`` marks a kernel the plan did not
    sample.
    """
    if plan is None or plan.workload.get("format") == native_format:
        sampled = None if plan is None else set(int(k) for k in plan.samples["kernel_id"])
        return [int(n) if sampled is None or int(n) in sampled else None for n in native]
    by_launch = dict(zip(plan.samples["launch"].astype(int), plan.samples["kernel_id"].astype(int)))
    return [by_launch.get(int(p)) for p in positions]


def against_plan(found: pd.DataFrame, plan: Plan | None, metrics: Sequence[str]) -> pd.DataFrame:
    """Results with one row per sampled kernel id (``missing`` where no output had it)."""
    cols = ["kernel_id", *metrics, "status"]
    if plan is None:
        return found[cols].sort_values("kernel_id", kind="stable").reset_index(drop=True)
    ids = plan.sampled_ids
    df = found.set_index("kernel_id").reindex(ids)
    df.index.name = "kernel_id"
    df["status"] = df["status"].where(df["status"].notna(), "missing")
    df = df.reset_index()
    return df[cols]


def _why(row: pd.Series, details: dict[int, str] | None) -> str:
    k = int(row["kernel_id"])
    extra = (details or {}).get(k) or ("in none of the outputs given" if row["status"] == "missing" else "")
    return f"kernel {k}: {row['status']}" + (f", {extra}" if extra else "")


def _cell(column: str, value: object) -> str:
    if isinstance(value, (float, np.floating)) and np.isnan(value):
        return "-"
    if column != "kernel_id" and isinstance(value, (int, float, np.integer, np.floating)):
        return f"{value:,.0f}"
    return str(value)


def emit_results(
    df: pd.DataFrame,
    *,
    output: Path | None,
    as_json: bool,
    allow_incomplete: bool,
    title: str,
    details: dict[int, str] | None = None,
) -> None:
    """Write or print the table; then fail (one line, exit 1) if any kernel is not usable.

    ``details`` says, per kernel id, why its result is unusable (shown for the first one).
    """
    if output is not None:
        atomic_write_text(output, df.to_csv(index=False, lineterminator="\n"))
        click.echo(f"{output}: {len(df)} kernel(s)", err=True)
    if as_json:
        echo_json({"results": [{k: (None if isinstance(v, float) and np.isnan(v) else v) for k, v in r.items()} for r in df.to_dict("records")]})
    elif output is None:
        from rich.console import Console
        from rich.table import Table

        table = Table(title=title)
        for c in df.columns:
            table.add_column(c, justify="left" if c == "status" else "right")
        for r in df.itertuples(index=False):
            table.add_row(*[_cell(c, v) for c, v in zip(df.columns, r)])
        Console(soft_wrap=True).print(table)
    bad = df[df["status"] != STATUS_OK]
    if len(bad) and not allow_incomplete:
        raise UserError(
            f"{len(bad)} of {len(df)} kernel(s) have no usable result ({_why(bad.iloc[0], details)}); "
            "rerun them, or pass --allow-incomplete to keep the partial table"
        )


def usable_results(df: pd.DataFrame, metrics: Sequence[str], details: dict[int, str] | None = None) -> pd.DataFrame:
    """The rows an estimate can use; a user error naming the first unusable kernel otherwise."""
    bad = df[df["status"] != STATUS_OK]
    if len(bad):
        raise UserError(
            f"cannot estimate: {len(bad)} sampled kernel(s) have no usable result "
            f"({_why(bad.iloc[0], details)}); simulate them, then estimate again"
        )
    return df[["kernel_id", *metrics]]


def is_results_csv(path: Path) -> bool:
    """Whether ``path`` is a results table written by ``collect -o``."""
    try:
        with open(path, "rb") as fh:
            return fh.read(16).startswith(b"kernel_id,")
    except OSError:
        return False


def read_results_csv(path: Path, metrics: Sequence[str]) -> pd.DataFrame:
    """A results table written by ``collect -o`` (so that ``estimate`` can start from it)."""
    p = check_input_file(path)
    try:
        df = pd.read_csv(p)
    except Exception as exc:
        raise FormatError(p, f"not a readable CSV ({exc})") from exc
    missing = [c for c in ("kernel_id", *metrics, "status") if c not in df.columns]
    if missing:
        raise FormatError(p, f"expected a results table as 'collect -o' writes it; no column {missing[0]}", line=1)
    return df[["kernel_id", *metrics, "status"]]


def results_for_estimate(
    outputs: Sequence[Path],
    plan: Plan,
    collect: Callable[[Sequence[Path], Plan], tuple[pd.DataFrame, dict[int, str]]],
    metrics: Sequence[str],
) -> pd.DataFrame:
    """Results from simulator outputs and/or results tables, one usable row per sampled kernel."""
    tables = [p for p in outputs if Path(p).is_file() and is_results_csv(Path(p))]
    raw = [p for p in outputs if p not in tables]
    frames = [read_results_csv(Path(p), metrics) for p in tables]
    details: dict[int, str] = {}
    if raw:
        df, details = collect(raw, plan)
        frames.append(df[df["status"] != "missing"])
    found = pd.concat(frames, ignore_index=True)
    found = found[found["kernel_id"].isin(plan.sampled_ids)]
    dup = found["kernel_id"].duplicated()
    if dup.any():
        raise UserError(f"kernel {int(found.loc[dup, 'kernel_id'].iloc[0])} has results in more than one input; pass each once")
    return usable_results(against_plan(found, plan, metrics), metrics, details)
