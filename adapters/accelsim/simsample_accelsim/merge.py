"""One trace folder from the folders of several tracer runs (a tracer selection, :mod:`.selection`).

Each run of the NVBit tracer with a launch range leaves a folder with ``kernelslist.g`` (after
post-processing), ``kernel-N.traceg[.xz]`` for its range and ``stats.csv``. Its list holds every
``MemcpyHtoD`` from the start of the process up to the end of its range (memcpys are listed
whether or not a kernel is traced) and its traced kernels in launch order. The merged folder
holds every traced launch once, in launch order, and every memcpy once, each before the first
traced launch it preceded in the run that traced that launch: the command list the tracer would
have written for those launches in one run. Runs must replay the same process: their memcpy
sequences must agree (each a prefix of the longest), and so must their ``stats.csv``: the
longest (the run that went furthest lists every launch up to its end) is kept as the merged
``stats.csv``, and each other run's lines for its own range (the last lines of its file, read
from the end, so that a thousand runs of a long process cost their ranges, not their prefixes)
must agree with it. A launch traced by two runs is taken from the first.

Traces are linked (or copied with ``copy``); the output is built beside its place and moved in
when complete, inputs are never modified.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from simsample.sdk import INT64_MAX, UserError, atomic_write_text, check_output_folder, link_or_copy, staged_folder
from simsample_accelsim.kernelslist import DEFAULT_LIST, KernelEntry, Memcpy, parse_kernelslist, render
from simsample_accelsim.traceg import read_header
from simsample_accelsim.tracerstats import STATS_FILE, read_stats, read_stats_tail

_NUMBER = re.compile(r"^kernel-(\d+)\.traceg(?:\.xz)?$")


@dataclass
class MergeResult:
    """What ``merge`` wrote."""

    out: Path
    launches: int
    memcpys: int
    runs: int
    ranges: list[tuple[int, int]]
    duplicates: int


def _run_list(folder: Path) -> Path:
    lst = folder / DEFAULT_LIST
    if lst.is_file():
        return lst
    if (folder / "kernelslist").is_file():
        raise UserError(
            f"{folder}: has the tracer's raw kernelslist but no {DEFAULT_LIST}; run the tracer's post-processing on "
            "it first (traces-processing/post-traces-processing FOLDER/kernelslist)"
        )
    raise UserError(f"{folder}: no {DEFAULT_LIST} (expected the folder of one tracer run)")


def _ranges(numbers: Sequence[int]) -> list[tuple[int, int]]:
    out: list[list[int]] = []
    for n in numbers:
        if out and n == out[-1][1] + 1:
            out[-1][1] = n
        else:
            out.append([n, n])
    return [(a, b) for a, b in out]


def merge_runs(runs: Sequence[str | Path], out: str | Path, *, copy: bool = False, force: bool = False) -> MergeResult:
    """Merge tracer run folders into the new trace folder ``out`` (see the module docstring)."""
    if not runs:
        raise UserError("merge needs at least one tracer run folder")
    folders = [Path(r) for r in runs]
    for f in folders:
        if not f.is_dir():
            raise UserError(f"{f}: not a folder (give the folders of the tracer runs)")
    check_output_folder(Path(out), force=force, inputs=folders)
    memcpy_seq: list[Memcpy] = []
    seq_from: Path | None = None
    launches: dict[int, tuple[Path, str, int]] = {}  # number -> (trace file, list line, memcpys before it in its run)
    duplicates = 0
    run_ranges: list[tuple[Path, int, int]] = []  # stats.csv, first and last launch the run traced
    for folder in folders:
        lst = parse_kernelslist(_run_list(folder))
        mine = [c for c in lst.commands if isinstance(c, Memcpy)]
        common = min(len(mine), len(memcpy_seq))
        for j in range(common):
            a, b = mine[j], memcpy_seq[j]
            if (a.address, a.nbytes) != (b.address, b.nbytes):
                raise UserError(
                    f"{lst.path} line {a.line}: memcpy #{j + 1} ({a.text}) differs from {seq_from}'s ({b.text}): the "
                    "runs did not replay the same process (same inputs, same allocations); trace them again from "
                    "the same command"
                )
        if len(mine) > len(memcpy_seq):
            memcpy_seq, seq_from = mine, lst.path
        before = 0
        for cmd in lst.commands:
            if isinstance(cmd, Memcpy):
                before += 1
                continue
            assert isinstance(cmd, KernelEntry)
            m = _NUMBER.match(cmd.text)
            if m is None:
                raise UserError(
                    f"{lst.path} line {cmd.line}: {cmd.text!r} is not a tracer trace name (kernel-N.traceg[.xz])"
                )
            n = _launch_number(m.group(1), lst.path, cmd.line)
            f = folder / cmd.text
            if not f.is_file():
                raise UserError(f"{f}: listed in {lst.path.name} but missing")
            if n in launches:
                duplicates += 1
                continue
            h = read_header(f)
            if h.kernel_id is not None and h.kernel_id != n:
                raise UserError(
                    f"{f}: its header says -kernel id = {h.kernel_id}, its name launch {n}; the folder was renamed "
                    "or mixed"
                )
            launches[n] = (f, cmd.text, before)
        mine_numbers = [
            _launch_number(_NUMBER.match(c.text).group(1), lst.path, c.line)
            for c in lst.kernels  # type: ignore[union-attr]
            if _NUMBER.match(c.text)
        ]
        if (folder / STATS_FILE).is_file() and mine_numbers:
            run_ranges.append((folder / STATS_FILE, min(mine_numbers), max(mine_numbers)))
    if not launches:
        raise UserError(f"{', '.join(map(str, folders[:3]))}: no traced launch in these runs")
    order = sorted(launches)
    commands: list[Memcpy | KernelEntry] = []
    done = 0
    for n in order:
        f, text, before = launches[n]
        if before < done:
            raise UserError(
                f"{f}: launch {n} comes after {done} memcpys in another run but after {before} in its own: the runs "
                "did not replay the same process"
            )
        commands.extend(memcpy_seq[done:before])
        done = before
        commands.append(KernelEntry(0, text))
    commands.extend(memcpy_seq[done:])
    longest = _check_stats(run_ranges)
    with staged_folder(Path(out), force=force, inputs=folders) as tmp:
        for n in order:
            f, text, _ = launches[n]
            link_or_copy(f, tmp / text, copy=copy)
        atomic_write_text(tmp / DEFAULT_LIST, render(commands))
        if longest is not None:
            link_or_copy(longest, tmp / STATS_FILE, copy=True)
    return MergeResult(Path(out), len(order), len(memcpy_seq), len(folders), _ranges(order), duplicates)


def _launch_number(digits: str, path: Path, line: int) -> int:
    """The launch number of a ``kernel-N.traceg`` name: the tracer counts launches from 1, and the
    number must fit the int64 columns it is kept in."""
    n = int(digits) if len(digits) <= 19 else INT64_MAX + 1  # never convert a thousand digits
    if not 1 <= n <= INT64_MAX:
        raise UserError(
            f"{path} line {line}: kernel-{digits[:24]}.traceg: launch {'0' if n == 0 else 'number beyond int64'} is no "
            "launch of the tracer (it counts from 1); the folder was renamed or damaged"
        )
    return n


def _check_stats(run_ranges: list[tuple[Path, int, int]]) -> Path | None:
    """The ``stats.csv`` to keep (the run that went furthest), after checking every other run's
    lines for its own range against it. Only the lines the runs' files hold are compared: a range
    (``a``-``b``, numbers from the folders) is never enumerated."""
    if not run_ranges:
        return None
    longest = max(run_ranges, key=lambda r: r[2])[0]
    tails = {path: read_stats_tail(path, b - a + 1) for path, a, b in run_ranges if path != longest}
    full = read_stats(longest, only={n for rows in tails.values() for n in rows})
    for path, rows in tails.items():
        for n, row in rows.items():
            ref = full.get(n)
            if ref is not None and (ref.name, ref.grid, ref.block) != (row.name, row.grid, row.block):
                raise UserError(
                    f"{path}: launch {n} is {row.name} {row.grid}x{row.block}, but {longest} says {ref.name} "
                    f"{ref.grid}x{ref.block}: the runs did not replay the same process"
                )
    return longest
