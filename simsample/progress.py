"""Progress bars on standard error, shown only when it is a terminal.

One display at a time: a bar opened while another is showing (a reader's own bar inside the
byte count of :func:`reading`, a file read inside ``evaluate``'s bar) draws nothing, so the
outer one keeps the line.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

_showing = 0  # displays open now; only the outermost one draws

#: files smaller than this are read too quickly for a bar to be worth drawing
BAR_MIN_BYTES = 16 << 20


def _enabled() -> bool:
    return sys.stderr.isatty() and _showing == 0


@contextmanager
def _display() -> Iterator[None]:
    global _showing
    _showing += 1
    try:
        yield
    finally:
        _showing -= 1


@contextmanager
def task(description: str, total: float | None, *, bytes_: bool = False) -> Iterator[callable]:
    """Yield ``advance(n)``; draws a transient bar while the block runs (terminals only).

    Without a ``total`` the bar pulses and shows the time spent, not a count out of "?"."""
    if not _enabled():
        yield lambda n=1: None
        return
    # rich is imported here, not at the top: only a terminal that shows a bar pays for it.
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    columns = [TextColumn("{task.description}"), BarColumn()]
    if total is None:
        columns += [TimeElapsedColumn()]
    else:
        columns += [TransferSpeedColumn()] if bytes_ else [MofNCompleteColumn()]
        columns += [TimeRemainingColumn()]
    with _display(), Progress(*columns, console=Console(stderr=True), transient=True) as prog:
        tid = prog.add_task(description, total=total)
        yield lambda n=1: prog.advance(tid, n)


@contextmanager
def stage(description: str) -> Iterator[callable]:
    """Yield ``say(text)``: one transient line on a terminal saying what is being done now
    (reading, checking, planning), replaced by each ``say``; nothing when not a terminal."""
    if not _enabled():
        yield lambda text: None
        return
    from rich.console import Console

    with _display(), Console(stderr=True).status(description) as status:
        yield lambda text: status.update(text)


@contextmanager
def reading(paths: Sequence[Path], description: str) -> Iterator[None]:
    """A bar of bytes read, with the speed and the time left, while the block reads ``paths``.

    Readers read their files in their own ways (pandas, SQLite, a compiled scanner), so the bar
    does not ask them: it follows the offset of every descriptor this process holds open on
    those files (Linux's ``/proc/self/fdinfo``). Where no offset moves (a file read through
    ``mmap`` or ``pread``, another system) the bar pulses and counts the time instead. Small
    inputs and folders get no bar.
    """
    files = [Path(p) for p in paths if Path(p).is_file()]
    size = sum(f.stat().st_size for f in files)
    if not _enabled() or size < BAR_MIN_BYTES or not os.path.isdir("/proc/self/fdinfo"):
        yield
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    targets = {str(f.resolve()) for f in files}
    columns = [
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
        TimeElapsedColumn(),
    ]
    stop = threading.Event()
    with _display(), Progress(*columns, console=Console(stderr=True), transient=True) as prog:
        tid = prog.add_task(description, total=None)

        def follow() -> None:
            seen: dict[str, int] = {}
            while not stop.wait(0.25):
                for path, pos in _offsets(targets).items():
                    seen[path] = max(seen.get(path, 0), pos)
                if seen:
                    prog.update(tid, total=size, completed=min(sum(seen.values()), size))

        watcher = threading.Thread(target=follow, name="simsample-progress", daemon=True)
        watcher.start()
        try:
            yield
        finally:
            stop.set()
            watcher.join()


def _offsets(targets: set[str]) -> dict[str, int]:
    """The largest offset of any open descriptor on each of ``targets`` (Linux only)."""
    out: dict[str, int] = {}
    try:
        fds = os.listdir("/proc/self/fd")
    except OSError:
        return out
    for fd in fds:
        try:
            path = os.readlink(f"/proc/self/fd/{fd}")
            if path not in targets:
                continue
            with open(f"/proc/self/fdinfo/{fd}") as fh:
                for line in fh:
                    if line.startswith("pos:"):
                        out[path] = max(out.get(path, 0), int(line.split()[1]))
                        break
        except (OSError, ValueError):
            continue
    return out
