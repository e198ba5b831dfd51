"""Per-kernel results of a simulator run, as ``collect`` shows them and ``estimate`` uses them.

A results table has one row per simulated kernel, keyed by the plan's ``kernel_id``, with the
adapter's metric columns and a ``status``: ``ok``; ``projected`` (usable: a kernel stopped early
whose totals were projected, such as Accel-Sim's PKP); ``missing`` (sampled, but in none of the
outputs given); or an adapter's word for a broken run (``incomplete``, ``crashed``, ``failed``).

Every adapter's ``collect`` has the same output options (:func:`results_options`): without
``-o`` it prints a readable table; ``--json`` prints ``{"results": [...]}``; ``-o results.csv``
writes the table as CSV, atomically (and prints nothing but a one-line summary on standard
error). If a kernel has no usable result, the table is still written or shown and ``collect``
then exits 1 with one line naming the first such kernel, unless ``--allow-incomplete``.
``estimate`` accepts the simulator's output and/or such CSV files.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import click
import lazy_loader as lazy
import numpy as np

from simsample.errors import FormatError, UserError
from simsample.io.files import atomic_write_text, check_input_file, check_output_file
from simsample.io.limits import check_size
from simsample.planfile import Plan

pd = lazy.load("pandas")

STATUS_OK = "ok"
STATUS_MISSING = "missing"
#: Statuses whose numbers an estimate may use.
USABLE_STATUSES = ("ok", "projected")

CollectFn = Callable[[Sequence[Path], Plan], "tuple[pd.DataFrame, Mapping[int, str]]"]


def results_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """``-o/--output``, ``--json`` and ``--allow-incomplete``: the output options of every
    adapter's ``collect`` (parameters ``output``, ``as_json``, ``allow_incomplete``)."""
    f = click.option("--allow-incomplete", is_flag=True,
                     help="Exit 0 even when some kernels have no usable result (they keep their status).")(f)
    f = click.option("--json", "as_json", is_flag=True, help="Machine-readable output on standard output.")(f)
    f = click.option("-o", "--output", type=click.Path(path_type=Path), default=None,
                     help="Write the results table as CSV (atomically) instead of printing it.")(f)
    return f


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


def _why(row: pd.Series, details: Mapping[int, str] | None) -> str:
    k = int(row["kernel_id"])
    extra = (details or {}).get(k) or ("in none of the outputs given" if row["status"] == STATUS_MISSING else "")
    return f"kernel {k}: {row['status']}" + (f", {extra}" if extra else "")


def _cell(column: str, value: object) -> str:
    """Table text of a value: counts with thousands separators, ratios with 4 significant digits."""
    if value is None or (isinstance(value, (float, np.floating)) and np.isnan(value)):
        return "-"
    if isinstance(value, (bool, np.bool_)) or column == "kernel_id":
        return str(value)
    if isinstance(value, (int, np.integer)):
        return f"{value:,}"
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if v.is_integer():
            return f"{v:,.0f}"
        return f"{v:,.1f}" if abs(v) >= 1000 else f"{v:.4g}"
    return str(value)


def results_csv_text(df: pd.DataFrame) -> str:
    """The table as CSV: integral floats without ``.0``, others exact, missing values empty."""
    from simsample.adapter_support.weights import format_number

    return df.to_csv(index=False, float_format=format_number, lineterminator="\n")


def _json_value(v: object) -> object:
    if isinstance(v, (float, np.floating)) and np.isnan(v):
        return None
    return v


def emit_results(
    df: pd.DataFrame,
    *,
    output: Path | None,
    as_json: bool,
    allow_incomplete: bool,
    title: str,
    details: Mapping[int, str] | None = None,
    table_columns: Sequence[str] | None = None,
    inputs: Sequence[Path | None] = (),
) -> None:
    """Write or print the results table (see the module docstring); then fail (one line, exit 1)
    if a kernel has no usable result, unless ``allow_incomplete``.

    ``details`` says, per kernel id, why its result is unusable (shown for the first one);
    ``table_columns`` chooses the columns of the printed table (CSV and JSON have them all).
    """
    if output is not None:
        if Path(output).is_dir():
            raise UserError(f"{output}: is a folder; give a file name for the results table (e.g. results.csv)")
        check_output_file(output, inputs, what="results table")
        atomic_write_text(output, results_csv_text(df))
        projected = int((df["status"] == "projected").sum())
        click.echo(f"{output}: {len(df):,} kernel(s)" + (f", {projected:,} projected" if projected else ""), err=True)
    from simsample.cli.common import csv_requested

    if csv_requested() and not as_json:  # ``collect --sim NAME ... --csv``: the table on standard output
        click.echo(results_csv_text(df), nl=False)
    elif as_json:
        from simsample.cli.common import echo_json

        echo_json({"results": [{k: _json_value(v) for k, v in r.items()} for r in df.to_dict("records")]})
    elif output is None:
        from rich.console import Console
        from rich.measure import Measurement
        from rich.table import Table

        shown = [c for c in (table_columns or df.columns) if c in df.columns]
        table = Table(title=title)
        for c in shown:
            table.add_column(c, justify="left" if c in ("status", "name") or df[c].dtype == object else "right", no_wrap=True)
        for r in df[shown].itertuples(index=False):
            table.add_row(*[_cell(c, v) for c, v in zip(shown, r)])
        console = Console(soft_wrap=True)
        width = Measurement.get(console, console.options.update_width(100_000), table).maximum
        if width > console.width:  # never cut numbers short: a wide table is wider than the screen
            console = Console(soft_wrap=True, width=width)
        console.print(table)
    bad = df[~df["status"].isin(USABLE_STATUSES)]
    if len(bad) and not allow_incomplete:
        raise UserError(
            f"{len(bad)} of {len(df)} kernel(s) have no usable result ({_why(bad.iloc[0], details)}); "
            "rerun them, or pass --allow-incomplete to keep the partial table"
        )


def usable_results(df: pd.DataFrame, metrics: Sequence[str], details: Mapping[int, str] | None = None) -> pd.DataFrame:
    """``kernel_id, *metrics, status`` of a table whose every row is usable; a user error naming
    the first unusable kernel otherwise."""
    bad = df[~df["status"].isin(USABLE_STATUSES)]
    if len(bad):
        raise UserError(
            f"cannot estimate: {len(bad)} sampled kernel(s) have no usable result "
            f"({_why(bad.iloc[0], details)}); simulate them, then estimate again"
        )
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


def check_launch_count(distinct: int, plan: Plan, source: str) -> None:
    """Refuse results for more distinct launches than the plan's workload has: the output of
    another run (a sampled run's warm-up launches are launches of the same workload)."""
    launches = plan.workload.get("launches")
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


def results_for_estimate(outputs: Sequence[Path], plan: Plan, collect: CollectFn, metrics: Sequence[str]) -> pd.DataFrame:
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
        raise UserError(f"kernel {int(found.loc[dup, 'kernel_id'].iloc[0])} has results in more than one input; pass each once")
    return usable_results(against_plan(found, plan, metrics), metrics, details)
