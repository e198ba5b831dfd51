"""How the command line shows a results table (``simsample collect --sim NAME``).

Without ``-o`` it prints a readable table; ``--json`` prints ``{"results": [...]}``; ``--csv`` the
table as CSV on standard output; ``-o results.csv`` writes the table as CSV, atomically (and prints
nothing but a one-line summary on standard error). The table itself comes from
:func:`simsample.collect`, which has already refused an incomplete one unless
``--allow-incomplete`` was given.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import click
import lazy_loader as lazy
import numpy as np

from simsample.adapter_support.results import (
    USABLE_STATUSES,
    incomplete_error,
    results_csv_text,
)
from simsample.errors import UserError
from simsample.io.files import atomic_write_text, check_output_file

pd = lazy.load("pandas")


def results_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """``-o/--output``, ``--json`` and ``--allow-incomplete``: the output options of every
    adapter's ``collect`` (parameters ``output``, ``as_json``, ``allow_incomplete``)."""
    f = click.option(
        "--allow-incomplete",
        is_flag=True,
        help="Exit 0 even when some kernels have no usable result (they keep their status).",
    )(f)
    f = click.option("--json", "as_json", is_flag=True, help="Machine-readable output on standard output.")(f)
    f = click.option(
        "-o",
        "--output",
        type=click.Path(path_type=Path),
        default=None,
        help="Write the results table as CSV (atomically) instead of printing it.",
    )(f)
    return f


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
    as_csv: bool | None = None,
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

    if as_csv is None:
        as_csv = csv_requested()
    if as_csv and not as_json:  # ``collect --sim NAME ... --csv``: the table on standard output
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
            table.add_column(
                c, justify="left" if c in ("status", "name") or df[c].dtype == object else "right", no_wrap=True
            )
        for r in df[shown].itertuples(index=False):
            table.add_row(*[_cell(c, v) for c, v in zip(shown, r)])
        console = Console(soft_wrap=True)
        width = Measurement.get(console, console.options.update_width(100_000), table).maximum
        if width > console.width:  # never cut numbers short: a wide table is wider than the screen
            console = Console(soft_wrap=True, width=width)
        console.print(table)
    bad = df[~df["status"].isin(USABLE_STATUSES)]
    if len(bad) and not allow_incomplete:
        raise incomplete_error(df, details)
