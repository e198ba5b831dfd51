"""Options and helpers shared by commands."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import click

from simsample.errors import UserError


def parse_params(pairs: Sequence[str]) -> dict[str, str]:
    """``["k=v", ...]`` → ``{"k": "v"}``; a pair without ``=`` is a user error."""
    out: dict[str, str] = {}
    for pair in pairs:
        if "=" not in pair:
            raise UserError(f"--param {pair!r}: expected NAME=VALUE")
        k, v = pair.split("=", 1)
        k = k.strip()
        if not k:
            raise UserError(f"--param {pair!r}: empty parameter name")
        out[k] = v.strip()
    return out


def profile_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--format``, ``--columns`` and ``--rank``: how profile files are read.

    ``--columns`` is kept in the click context (not passed to the command) so that every command
    taking profiles gets it without a new parameter; :func:`reader_options` hands it on.
    """
    f = click.option(
        "--columns",
        default=None,
        metavar="KEY=COL,...",
        expose_value=False,
        callback=_store_columns,
        help="--format csv: which CSV column holds what, e.g. name=Name,duration_ns=Duration.",
    )(f)
    f = click.option("--rank", type=int, default=None, help="Kineto: keep only this rank's file(s) / events.")(f)
    f = click.option(
        "--format", "fmt", default=None, metavar="NAME", help="Reader to use instead of detecting the format."
    )(f)
    return f


def join_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--join METRICS.csv``: per-launch metrics (Nsight Compute CSV) attached to the launches."""
    from pathlib import Path

    return click.option(
        "--join",
        "join",
        default=None,
        metavar="METRICS.csv",
        type=click.Path(path_type=Path),
        help="Attach per-launch metrics (Nsight Compute CSV), matched by kernel name, shape and launch order.",
    )(f)


def _store_columns(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    if value is not None:
        from simsample.io.csv_columns import parse_columns

        ctx.meta["simsample.columns"] = parse_columns(value)


def reader_options(rank: int | None) -> dict[str, Any]:
    out: dict[str, Any] = {"rank": rank} if rank is not None else {}
    ctx = click.get_current_context(silent=True)
    columns = ctx.meta.get("simsample.columns") if ctx is not None else None
    if columns:
        out["columns"] = columns
    return out


def echo_json(doc: Any) -> None:
    click.echo(json.dumps(doc, indent=2, sort_keys=False, default=_default))


def _default(o: Any) -> Any:
    try:
        import numpy as np

        if isinstance(o, np.integer):
            return int(o)
        if isinstance(o, np.floating):
            return float(o)
    except ImportError:  # pragma: no cover
        pass
    return str(o)


def fmt_ns(ns: float | None) -> str:
    """Human-readable duration."""
    if ns is None:
        return "-"
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if abs(ns) >= scale:
            return f"{ns / scale:.3f} {unit}"
    return f"{ns:.0f} ns"


def verbose_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--verbose``: list every input passed over instead of counting them."""
    return click.option(
        "--verbose", "-v", is_flag=True, help="List every input that was passed over (skipped), not just their count."
    )(f)


def report_skipped(skipped: Sequence[str], verbose: bool) -> None:
    """Inputs passed over, on standard error: one summary line, or one line each with ``--verbose``.

    An Nsight Systems report among them is always named with its export command: it is what
    the user meant to give."""
    if not skipped:
        return
    if verbose:
        for s in skipped:
            click.echo(f"skipped {s}", err=True)
        return
    hints = [s for s in skipped if "nsys export" in s]
    first = hints[0] if hints else skipped[0]
    more = f" (first: {first})" if len(skipped) > 1 else f": {first}"
    click.echo(f"skipped {len(skipped)} input(s){more}; --verbose lists them", err=True)


#: ``--csv`` given to a command whose table an adapter prints (``estimate --sim NAME ... --csv``):
#: the host takes the flag off the adapter's command line and the shared printer reads it here
_CSV_REQUESTED = False


def request_csv(value: bool) -> None:
    global _CSV_REQUESTED
    _CSV_REQUESTED = value


def csv_requested() -> bool:
    return _CSV_REQUESTED
