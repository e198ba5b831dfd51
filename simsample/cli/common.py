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
    """``--format`` and ``--rank``: how profile files are read."""
    f = click.option("--rank", type=int, default=None, help="Kineto: keep only this rank's file(s) / events.")(f)
    f = click.option("--format", "fmt", default=None, metavar="NAME", help="Reader to use instead of detecting the format.")(f)
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


def reader_options(rank: int | None) -> dict[str, Any]:
    return {"rank": rank} if rank is not None else {}


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
