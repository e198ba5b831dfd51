"""How commands print tables: whole kernel names at any width, CSV beside JSON.

Kernel names are never cut: two kernels that differ only in the middle of a long template
name (thrust, ``vectorized_elementwise_kernel<4, ...>``) must print as two different rows. A
table shows each name without its argument list (what samplers group by), folded onto as
many lines as the terminal needs; ``--wide`` prints the complete names, one row per line, for
a pager or ``grep``. ``--csv`` writes the table's rows as CSV on standard output, with full
names and unformatted numbers, so that it parses back.
"""

from __future__ import annotations

import csv
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import click

#: a console this wide never folds a row: ``--wide`` tables are as wide as their content
_UNBOUNDED = 1_000_000


def table_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--csv`` and ``--wide``, passed to the command as ``as_csv`` and ``wide``."""
    f = click.option(
        "--wide", is_flag=True, help="Complete kernel names (argument lists included), one row per line, however wide."
    )(f)
    f = click.option(
        "--csv", "as_csv", is_flag=True, help="The table as CSV on standard output (full names, raw numbers)."
    )(f)
    return f


def output_width(default: int = 160) -> int | None:
    """Width of tables: the terminal's (None: rich asks it); when the output is not a terminal,
    ``$COLUMNS`` if it is exported (a user asking for a width), else ``default``, so that a table
    piped to a file or a pager is not squeezed to 80 columns."""
    if sys.stdout.isatty():
        return None
    import os

    columns = os.environ.get("COLUMNS", "")
    return int(columns) if columns.isdigit() and 20 <= int(columns) <= 10_000 else default


def console(wide: bool = False, *, width: int | None = None):
    """A console for tables: the terminal's width (see :func:`output_width`), unbounded with ``--wide``."""
    from rich.console import Console

    if wide:
        return Console(highlight=False, soft_wrap=False, width=_UNBOUNDED)
    return Console(highlight=False, soft_wrap=True, width=output_width(width or 160))


def kernel_label(name: str, wide: bool = False) -> str:
    """A kernel name for a table: whole with ``--wide``, else without its argument list; either
    way at most :data:`simsample.io.limits.FIXED` ``"kernel name characters shown"``, cut in the
    middle with ``…`` (a name of megabytes, folded into a table, took minutes; JSON keeps it whole)."""
    from simsample.io.limits import shown_name

    if wide:
        return shown_name(name)
    from simsample.io.names import strip_args

    return shown_name(strip_args(shown_name(name, 4096)))


def name_column(table: Any, header: str, wide: bool = False) -> None:
    """Add the name column: folded (never cut) on a terminal, one line with ``--wide``."""
    table.add_column(header, overflow="fold", no_wrap=wide, min_width=None if wide else NAME_MIN_WIDTH)


#: the name column is never narrower than this: on a narrower terminal the table grows instead
NAME_MIN_WIDTH = 24


def print_table(con: Any, table: Any) -> None:
    """Print ``table`` at the console's width, or wider when that would squeeze a column away.

    rich fits a table to the width by shrinking and finally dropping columns; on a narrow
    terminal that would hide the kernel names. The numbers keep their width, the names at least
    :data:`NAME_MIN_WIDTH` (folded onto more lines), and the table is as wide as that needs."""
    from rich.console import Console
    from rich.measure import Measurement

    need = 1
    for col in table.columns:
        if col.overflow == "fold" and not col.no_wrap:
            need += NAME_MIN_WIDTH + 3
            continue
        cells = [col.header, *getattr(col, "_cells", [])]
        need += max(Measurement.get(con, con.options, c).maximum for c in cells) + 3
    if con.width < need:
        con = Console(highlight=False, soft_wrap=True, width=need, file=con.file)
    con.print(table)


def print_csv(rows: Iterable[Mapping[str, Any]], columns: Sequence[str]) -> None:
    """Rows as CSV on standard output (None prints as an empty field)."""
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(columns)
    for r in rows:
        out.writerow(["" if r.get(c) is None else r.get(c) for c in columns])
    sys.stdout.flush()


def one_of(as_json: bool, as_csv: bool) -> None:
    """``--json`` and ``--csv`` are two formats of one output: at most one of them."""
    if as_json and as_csv:
        from simsample.errors import UserError

        raise UserError("--json and --csv are two formats of the same output; give one of them")
