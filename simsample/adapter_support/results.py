"""Per-kernel results of a simulator run, as ``collect`` shows them and ``estimate`` uses them.

A results table has one row per simulated kernel, keyed by the plan's ``kernel_id``, with the
adapter's metric columns and a ``status``: ``ok``; ``projected`` (usable: a kernel stopped early
whose totals were projected, such as Accel-Sim's PKP); ``missing`` (sampled, but in none of the
outputs given); or an adapter's word for a broken run (``incomplete``, ``crashed``, ``failed``).

``simsample.collect`` refuses a table in which a sampled kernel has no usable result (one line
naming the first such kernel), unless ``allow_incomplete``; ``simsample.estimate`` refuses it
always. Both accept the simulator's output and/or results tables written by ``collect -o``.
How the command line shows a table is :mod:`simsample.cli.results`'s business.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import lazy_loader as lazy
import numpy as np

from simsample.errors import FormatError, IncompleteResults, UserError
from simsample.io.files import check_input_file
from simsample.io.limits import check_size
from simsample.planfile import Plan
from simsample.sampling.metrics import Metric

pd = lazy.load("pandas")

STATUS_OK = "ok"
STATUS_MISSING = "missing"
#: Statuses whose numbers an estimate may use.
USABLE_STATUSES = ("ok", "projected")

CollectFn = Callable[[Sequence[Path], Plan], "tuple[pd.DataFrame, Mapping[int, str]]"]


def against_plan(found: pd.DataFrame, plan: Plan | None, metrics: Sequence[str]) -> pd.DataFrame:
    """``kernel_id, *metrics, status``: with a plan, one row per sampled kernel id in the plan's
    order (``missing`` where no output had it); without, the kernels found, by id."""
    cols = ["kernel_id", *metrics, "status"]
    if plan is None:
        return found[cols].sort_values("kernel_id", kind="stable").reset_index(drop=True)
    df = found.set_index("kernel_id").reindex(plan.sampled_ids)
    df.index.name = "kernel_id"
    df["status"] = df["status"].where(df["status"].notna(), STATUS_MISSING)
    return df.reset_index()[cols]


def against_plan_all(found: pd.DataFrame, plan: Plan) -> pd.DataFrame:
    """``found`` with one row per sampled kernel id in the plan's order, every column kept:
    ``missing`` where no output had the kernel; rows of kernels the plan did not sample dropped."""
    if found["kernel_id"].duplicated().any():
        dup = int(found.loc[found["kernel_id"].duplicated(), "kernel_id"].iloc[0])
        raise UserError(f"kernel {dup} has results in more than one input; pass each once")
    df = found.set_index("kernel_id").reindex(plan.sampled_ids)
    df.index.name = "kernel_id"
    df["status"] = df["status"].where(df["status"].notna(), STATUS_MISSING)
    out = df.reset_index()
    for c in out.columns:  # reindexing made integer and boolean columns with a missing row float/object
        if c in found.columns and found[c].dtype.kind in "iub" and not out[c].isna().any():
            out[c] = out[c].astype(found[c].dtype)
    out.attrs.update(found.attrs)
    return out


def incomplete_error(df: pd.DataFrame, details: Mapping[int, str] | None = None) -> IncompleteResults:
    """What ``collect`` refuses an incomplete table with (one line naming the first kernel)."""
    bad = df[~df["status"].isin(USABLE_STATUSES)]
    return IncompleteResults(f"{len(bad)} of {len(df)} kernel(s) have no usable result ({_why(bad.iloc[0], details)})")


def unusable_message(bad: pd.DataFrame, details: Mapping[int, str] | None = None) -> str:
    """The one line ``estimate`` refuses results with when sampled kernels have no usable result."""
    return (
        f"cannot estimate: {len(bad)} sampled kernel(s) have no usable result "
        f"({_why(bad.iloc[0], details)}); simulate them, then estimate again"
    )


def _why(row: pd.Series, details: Mapping[int, str] | None) -> str:
    k = int(row["kernel_id"])
    extra = (details or {}).get(k) or ("in none of the outputs given" if row["status"] == STATUS_MISSING else "")
    return f"kernel {k}: {row['status']}" + (f", {extra}" if extra else "")


def results_csv_text(df: pd.DataFrame) -> str:
    """The table as CSV: integral floats without ``.0``, others exact, missing values empty."""
    from simsample.adapter_support.weights import format_number

    return df.to_csv(index=False, float_format=format_number, lineterminator="\n")


def usable_results(df: pd.DataFrame, metrics: Sequence[str], details: Mapping[int, str] | None = None) -> pd.DataFrame:
    """``kernel_id, *metrics, status`` of a table whose every row is usable; a user error naming
    the first unusable kernel otherwise."""
    bad = df[~df["status"].isin(USABLE_STATUSES)]
    if len(bad):
        raise UserError(unusable_message(bad, details))
    return df[["kernel_id", *metrics, "status"]].reset_index(drop=True)


def is_results_csv(path: Path) -> bool:
    """Whether ``path`` is a results table written by ``collect -o`` (it starts with ``kernel_id,``)."""
    try:
        with open(path, "rb") as fh:
            return fh.read(16).startswith(b"kernel_id,")
    except OSError:
        return False


def read_results_csv(path: Path, metrics: Sequence[str]) -> pd.DataFrame:
    """``kernel_id, *metrics, status`` of a results table written by ``collect -o``."""
    p = check_input_file(path)
    check_size(p, "log")
    try:
        df = pd.read_csv(p)
    except Exception as exc:
        raise FormatError(p, f"not a readable CSV ({exc})") from exc
    missing = [c for c in ("kernel_id", *metrics, "status") if c not in df.columns]
    if missing:
        raise FormatError(p, f"expected a results table as 'collect -o' writes it; no column {missing[0]}", line=1)
    return df[["kernel_id", *metrics, "status"]]


def read_results_table(path: Path, metrics: Sequence[Metric]) -> pd.DataFrame:
    """A results table written by ``collect -o``, with the declared columns it has: ``kernel_id``,
    the metrics, ``status`` (required) and any other declared column."""
    p = check_input_file(path)
    check_size(p, "log")
    try:
        df = pd.read_csv(p)
    except Exception as exc:
        raise FormatError(p, f"not a readable CSV ({exc})") from exc
    counts = [m.name for m in metrics if m.kind == "count"]
    missing = [c for c in ("kernel_id", *counts, "status") if c not in df.columns]
    if missing:
        raise FormatError(p, f"expected a results table as 'collect -o' writes it; no column {missing[0]}", line=1)
    keep = ["kernel_id", *[m.name for m in metrics if m.name in df.columns and m.name != "kernel_id"], "status"]
    ids = pd.to_numeric(df["kernel_id"], errors="coerce")
    if ids.isna().any():
        raise FormatError(
            p,
            f"kernel_id {df['kernel_id'][ids.isna()].iloc[0]!r} is not a launch id",
            line=int(ids.isna().to_numpy().nonzero()[0][0]) + 2,
        )
    df["kernel_id"] = ids.astype(np.int64)
    return df[list(dict.fromkeys(keep))]


def check_launch_count(distinct: int, plan: Plan, source: str) -> None:
    """Refuse results for more distinct launches than the plan's workload has: the output of
    another run (a sampled run's warm-up launches are launches of the same workload)."""
    launches = plan.workload.get("launches")
    # A plan made on a window of the profile (--steps, --time-range, --include/--exclude) has a
    # workload of the window's launches; the whole run's table has the profile's, and is the same run.
    whole = (plan.process or {}).get("profile_launches")
    if isinstance(launches, int) and isinstance(whole, int) and whole > launches:
        launches = whole
    if isinstance(launches, int) and distinct > launches:
        raise UserError(
            f"{source}: results for {distinct:,} launches, but the plan's workload has {launches:,}; "
            "these results are from another run: give the output of the run made for this plan"
        )


def check_results_belong(found: pd.DataFrame, plan: Plan, metrics: Sequence[str], source: str) -> None:
    """Refuse results that cannot be the plan's: more launches than the plan's workload has (the
    log or table of another run), or a metric that is infinite.

    Results for launches the plan did not sample are otherwise allowed and ignored: a sampled run
    may simulate warm-up launches (weight 0) before a sampled one, and a full run of the same
    workload holds every sampled launch. This check belongs where results are matched to the
    plan, before any interval is computed.
    """
    ids = pd.to_numeric(found["kernel_id"], errors="coerce")
    check_launch_count(int(ids.nunique()), plan, source)
    sampled = ids.isin(plan.sampled_ids)
    for m in metrics:
        vals = pd.to_numeric(found[m], errors="coerce").to_numpy(np.float64)
        bad = np.isinf(vals) & sampled.to_numpy()
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise UserError(
                f"{source}: kernel {int(ids.iloc[i])}: {m} is {vals[i]} (not a finite number); "
                "check the simulator output or results table"
            )


def results_for_estimate(
    outputs: Sequence[Path], plan: Plan, collect: CollectFn, metrics: Sequence[str]
) -> pd.DataFrame:
    """One usable row per sampled kernel (``kernel_id, *metrics, status``) from simulator outputs
    and/or results tables (``collect -o``); a kernel found in two inputs is refused.

    ``collect(outputs, plan)`` is the adapter's collection: a table as :func:`against_plan`
    gives (more columns allowed) and, per kernel id, why its result is unusable.
    """
    tables = [Path(p) for p in outputs if Path(p).is_file() and is_results_csv(Path(p))]
    raw = [Path(p) for p in outputs if Path(p) not in tables]
    frames = [read_results_csv(p, metrics) for p in tables]
    details: Mapping[int, str] = {}
    if raw:
        df, details = collect(raw, plan)
        frames.append(df[df["status"] != STATUS_MISSING][["kernel_id", *metrics, "status"]])
    found = pd.concat(frames, ignore_index=True)
    check_results_belong(found, plan, metrics, ", ".join(str(p) for p in outputs))
    found = found[found["kernel_id"].isin(plan.sampled_ids)]
    dup = found["kernel_id"].duplicated()
    if dup.any():
        raise UserError(
            f"kernel {int(found.loc[dup, 'kernel_id'].iloc[0])} has results in more than one input; pass each once"
        )
    return usable_results(against_plan(found, plan, metrics), metrics, details)
