"""Folders laid out as tracer runs with launch ranges would leave them: for tests and benchmarks.

A run of the NVBit tracer with ``DYNAMIC_KERNEL_LIMIT_START=a``/``_END=b``,
``TERMINATE_UPON_LIMIT=1`` and ``USER_DEFINED_FOLDERS=1``, after the tracer's post-processing,
leaves in its ``TRACES_FOLDER``: ``kernel-N.traceg`` for N in a..b; ``kernelslist.g`` with every
``MemcpyHtoD`` the process made before it exited at launch b+1 and the kernel lines of a..b, in
the order they happened; ``stats.csv`` with one line per launch 1..b. :func:`write_tracer_runs`
writes such folders from a description of the process (each launch's name and shape, where the
memcpys fall, and how to produce a launch's trace: a link to an existing trace, or
:func:`.synth.write_kernel`). ``stats="range"`` writes only a run's own range into its
``stats.csv`` (except the run that goes furthest): the real files repeat every earlier launch in
every run, which at a million launches and hundreds of runs is the tracer's cost, not the one a
benchmark of simsample should pay.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from simsample_accelsim.kernelslist import DEFAULT_LIST
from simsample_accelsim.selection import run_name
from simsample_accelsim.tracerstats import STATS_FILE, STATS_HEADER, stats_line

#: (name, grid, block) of launch N
LaunchInfo = Callable[[int], tuple[str, tuple[int, int, int], tuple[int, int, int]]]


def write_tracer_runs(
    runs_dir: str | Path,
    ranges: Sequence[tuple[int, int]],
    *,
    launch: LaunchInfo,
    trace: Callable[[int, Path], str],
    memcpys: Sequence[tuple[int, str]] = (),
    stats: str = "full",
) -> list[Path]:
    """Write one run folder per range under ``runs_dir`` (named as the selection script names
    them). ``trace(n, folder)`` puts launch n's trace into ``folder`` and returns its file name;
    ``memcpys``: ``(n, line)`` for a ``MemcpyHtoD`` made before launch n (n = 1: before any)."""
    root = Path(runs_dir)
    root.mkdir(parents=True, exist_ok=True)
    copies = sorted(memcpys, key=lambda m: m[0])
    furthest = max((b for _, b in ranges), default=0)
    out: list[Path] = []
    for i, (a, b) in enumerate(ranges):
        folder = root / run_name(i)
        folder.mkdir()
        lines: list[str] = []
        j = 0
        while j < len(copies) and copies[j][0] <= a:
            lines.append(copies[j][1])
            j += 1
        for n in range(a, b + 1):
            lines.append(trace(n, folder))
            while j < len(copies) and copies[j][0] <= n + 1:
                lines.append(copies[j][1])
                j += 1
        (folder / DEFAULT_LIST).write_text("".join(line + "\n" for line in lines))
        first = 1 if stats == "full" or b == furthest else a
        with open(folder / STATS_FILE, "w") as fh:
            fh.write(STATS_HEADER + "\n")
            for n in range(first, b + 1):
                name, grid, block = launch(n)
                fh.write(stats_line(n, name, grid, block) + "\n")
        out.append(folder)
    return out


def link_trace(source: Path) -> Callable[[int, Path], str]:
    """``trace`` for :func:`write_tracer_runs` that links launch n's file from a full trace folder
    (``kernel-N.traceg`` or ``kernel-N.traceg.xz``, whichever exists)."""

    def put(n: int, folder: Path) -> str:
        for name in (f"kernel-{n}.traceg", f"kernel-{n}.traceg.xz"):
            if (source / name).exists():
                os.symlink(os.path.abspath(source / name), folder / name)
                return name
        raise FileNotFoundError(f"{source}: no trace of launch {n}")

    return put
