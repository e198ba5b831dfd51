"""Progress bars on standard error, shown only when it is a terminal."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager


def _enabled() -> bool:
    return sys.stderr.isatty()


@contextmanager
def task(description: str, total: float | None, *, bytes_: bool = False) -> Iterator[callable]:
    """Yield ``advance(n)``; draws a transient bar while the block runs (terminals only)."""
    if not _enabled():
        yield lambda n=1: None
        return
    # rich is imported here, not at the top: only a terminal that shows a bar pays for it.
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn, TransferSpeedColumn

    columns = [TextColumn("{task.description}"), BarColumn()]
    columns += [TransferSpeedColumn()] if bytes_ else [MofNCompleteColumn()]
    columns += [TimeRemainingColumn()]
    with Progress(*columns, console=Console(stderr=True), transient=True) as prog:
        tid = prog.add_task(description, total=total)
        yield lambda n=1: prog.advance(tid, n)
