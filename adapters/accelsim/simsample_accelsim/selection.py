"""Tracer selections: which launches the Accel-Sim NVBit tracer must trace for a plan, as tracer runs.

The tracer (accel-sim-framework ``util/tracer_nvbit/tracer_tool/tracer_tool.cu``) selects kernels
in one way only: ``DYNAMIC_KERNEL_LIMIT_START``/``_END``, one inclusive range of launch numbers
per run of the application. It counts every ``cuLaunchKernel`` and ``cuLaunchKernel_ptsz`` of the
process from 1 (not ``cuLaunchKernelEx`` launches, nor kernels of CUDA graphs); a traced launch
keeps its number (``kernel-N.traceg``, ``-kernel id = N``). With ``TERMINATE_UPON_LIMIT=1`` the
process exits at the first launch past ``_END``, so a run costs the application's time up to its
range plus the instrumented launches. ``USER_DEFINED_FOLDERS=1`` with ``TRACES_FOLDER`` puts a
run's ``kernel-N.trace`` files, its ``kernelslist`` (overwritten by every run: memcpys from the
process start, and the traced kernels) and ``stats.csv`` (every launch up to the last) into a
folder of its own; the tracer's post-processing (``traces-processing/post-traces-processing
FOLDER/kernelslist``) turns them into ``kernel-N.traceg`` and ``kernelslist.g``, as
``util/tracer_nvbit/run_hw_trace.py`` does.

A plan needs each sampled launch and its warm-up window: the launches the default warm-up may
choose from (``targeted``: the ``--warmup-horizon`` launches before it; ``K``: the K before it).
:func:`tracer_ranges` merges those windows into ranges wherever the gap between two is at most
``max_gap`` launches (tracing a few launches too many is cheaper than another run of the
application up to that point), and :func:`tracer_script` writes the runs as a shell script.
:mod:`.merge` then makes one trace folder of the runs' folders.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from simsample.sdk import UserError, check_int, comment_text, launch_numbers, refuse_control

#: Default largest gap (in launches) bridged by tracing the launches in between rather than
#: starting another tracer run.
DEFAULT_MAX_GAP = 16


@dataclass(frozen=True)
class TracerSelection:
    """The tracer runs a plan needs: inclusive launch-number ranges, one run each."""

    ranges: tuple[tuple[int, int], ...]
    sampled: tuple[int, ...]  # distinct sampled launch numbers
    window: int
    max_gap: int

    @property
    def launches(self) -> int:
        """Launches traced in all (each range traced once)."""
        return sum(b - a + 1 for a, b in self.ranges)

    @property
    def runs(self) -> int:
        return len(self.ranges)

    @property
    def needed(self) -> int:
        """Launches the plan needs (samples and their windows), before merging across gaps: the
        length of the union of the windows, counted as intervals (a window is a number the user
        wrote, ``--warmup-horizon``: it is never enumerated)."""
        total = 0
        end = 0  # last launch counted so far
        for n in sorted(self.sampled):
            a = max(1, n - self.window, end + 1)
            if n >= a:
                total += n - a + 1
                end = n
        return total


def tracer_ranges(numbers: Iterable[int], window: int, max_gap: int = DEFAULT_MAX_GAP) -> list[tuple[int, int]]:
    """Inclusive ranges covering each launch number and the ``window`` launches before it,
    merged where at most ``max_gap`` launches lie between two."""
    if window < 0 or max_gap < 0:
        raise UserError(f"window {window} and max gap {max_gap} must be >= 0")
    out: list[list[int]] = []
    for n in sorted(set(int(x) for x in numbers)):
        if n < 1:
            raise UserError(f"launch number {n}: the tracer counts launches from 1")
        check_int(n, "launch number", lo=1)
        a = max(1, n - window)
        if out and a <= out[-1][1] + 1 + max_gap:
            out[-1][1] = max(out[-1][1], n)
        else:
            out.append([a, n])
    return [(a, b) for a, b in out]


def cap_runs(ranges: Sequence[tuple[int, int]], max_runs: int | None) -> list[tuple[int, int]]:
    """Merge the ranges across their smallest gaps until there are at most ``max_runs`` (each run
    replays the application up to its range: many runs of a long process cost more than the
    launches traced in the gaps)."""
    out = [list(r) for r in ranges]
    if max_runs is None or len(out) <= max_runs:
        return [(a, b) for a, b in out]
    if max_runs < 1:
        raise UserError(f"--max-runs {max_runs}: must be at least 1")
    import heapq

    # gaps between neighbours; merge the smallest first (a linked list keeps it O(n log n))
    nxt = list(range(1, len(out))) + [-1]
    prv = [-1] + list(range(len(out) - 1))
    alive = [True] * len(out)
    heap = [(out[i + 1][0] - out[i][1], i, i + 1) for i in range(len(out) - 1)]
    heapq.heapify(heap)
    runs = len(out)
    while runs > max_runs and heap:
        gap, i, j = heapq.heappop(heap)
        if not (alive[i] and alive[j]) or nxt[i] != j or out[j][0] - out[i][1] != gap:
            continue
        out[i][1] = out[j][1]
        alive[j] = False
        nxt[i] = nxt[j]
        if nxt[j] >= 0:
            prv[nxt[j]] = i
            heapq.heappush(heap, (out[nxt[j]][0] - out[i][1], i, nxt[j]))
        runs -= 1
    return [(a, b) for (a, b), ok in zip(out, alive) if ok]


def window_of(warmup: str, horizon: int) -> int:
    """The launches before a sample that the warm-up setting ``warmup`` may choose from, parsed
    as ``apply`` parses it (:func:`.warmup.parse_warmup`). ``reuse`` (and ``auto``, which is
    ``reuse`` on a patched build) cannot know before tracing how far back the L2 turned over: it
    traces ``horizon`` launches like ``targeted``, and its window stops at the first launch the
    folder does not hold."""
    from simsample_accelsim.warmup import parse_warmup

    t = str(warmup).strip().lower()
    spec = parse_warmup("reuse" if t == "auto" else warmup, max(1, int(horizon)))
    if spec.none:
        return 0
    if spec.targeted or spec.reuse:
        return int(horizon)
    assert spec.k is not None
    return check_int(int(spec.k), "--warmup K")


def plan_selection(
    plan, *, window: int, max_gap: int = DEFAULT_MAX_GAP, max_runs: int | None = None
) -> TracerSelection:
    """The tracer runs for ``plan`` (refused in one line when the plan does not know where its
    launches are in the process, e.g. a PyTorch-profiler window without ``--first-launch``)."""
    numbers = sorted(set(launch_numbers(plan, what="a tracer selection").values()))
    ranges = cap_runs(tracer_ranges(numbers, window, max_gap), max_runs)
    return TracerSelection(tuple(ranges), tuple(numbers), int(window), int(max_gap))


def run_name(i: int) -> str:
    return f"run-{i + 1:04d}"


def tracer_script(
    sel: TracerSelection,
    *,
    app: str | None,
    tracer: str | None,
    runs: str,
    plan_path: str,
    traces: str,
    sampled: str,
    compress: bool = False,
) -> str:
    """A bash script of the tracer runs (one per range) and, at its end, the commands that follow.

    Every value the user gave lands in the script as one single-quoted word of an assignment or
    of ``printf``'s arguments, never inside double quotes (where ``$(...)`` and backquotes run)
    nor raw in a comment (where a newline would start a command); values with control characters
    are refused (:func:`simsample.io.script_values.refuse_control`). ``app`` is a command line:
    the script runs it with ``eval``, as typed, and nothing else of it is evaluated. Paths are
    passed after ``--`` so that one starting with ``-`` is not read as an option."""
    q = shlex.quote
    path_hint = "give a path without control characters (rename it, or use a symbolic link)"
    plan_path = refuse_control(plan_path, "--plan", hint=path_hint)
    runs, traces, sampled = (
        refuse_control(v, opt, hint=path_hint)
        for v, opt in ((runs, "--runs"), (traces, "--traces"), (sampled, "--sampled"))
    )
    for v, opt in ((runs, "--runs"), (traces, "--traces"), (sampled, "--sampled")):
        if not v.strip():  # an empty RUNS would put the runs' folders (removed and remade) at the file system's root
            raise UserError(f"{opt} {v!r}: give a folder name")
    app = refuse_control(app, "--app", hint="give the command on one line") if app else ""
    tracer = refuse_control(tracer, "--tracer", hint=path_hint) if tracer else ""
    if any(c in tracer for c in " :"):
        raise UserError(
            f"--tracer {tracer!r}: LD_PRELOAD splits paths at spaces and colons; give a path without them (a "
            "symbolic link to it)"
        )
    lines = [
        "#!/usr/bin/env bash",
        f"# Tracer runs for the plan {comment_text(plan_path)}: {sel.launches:,} launches in {sel.runs:,} run(s)",
        f"# ({len(sel.sampled):,} sampled launches and the {sel.window} launches before each, ranges merged across "
        f"gaps of up to {sel.max_gap}).",
        "# Set APP to the command that runs the application exactly as profiled, TRACER_TOOL to the tracer's "
        "tracer_tool.so;",
        "# a run whose folder already has kernelslist.g is skipped, so the script can be rerun after a failure.",
        "set -euo pipefail",
        f"default_app={q(app)}",
        f"default_tracer={q(tracer)}",
        f"default_runs={q(runs)}",
        'APP="${APP:-$default_app}"',
        'TRACER_TOOL="${TRACER_TOOL:-$default_tracer}"',
        'RUNS="${RUNS:-$default_runs}"',
        'POST_PROCESSING="${POST_PROCESSING:-$(dirname -- "$TRACER_TOOL")/traces-processing/post-traces-processing}"',
        'if [ -z "$APP" ] || [ -z "$TRACER_TOOL" ]; then echo "set APP and TRACER_TOOL (see the top of this script)" '
        ">&2; exit 1; fi",
        "",
        "trace_range() {  # NAME START END",
        '  local dir="$RUNS/$1"',
        '  if [ -f "$dir/kernelslist.g" ]; then printf \'%s: traced already, skipped\\n\' "$dir"; return; fi',
        '  rm -rf -- "$dir"; mkdir -p -- "$dir"; dir=$(CDPATH="" cd -- "$dir" && pwd)',
        '  printf \'%s: launches %s-%s\\n\' "$1" "$2" "$3"',
        '  ( export CUDA_INJECTION64_PATH="$TRACER_TOOL" LD_PRELOAD="$TRACER_TOOL" USER_DEFINED_FOLDERS=1 '
        'TRACES_FOLDER="$dir" \\',
        '      DYNAMIC_KERNEL_LIMIT_START="$2" DYNAMIC_KERNEL_LIMIT_END="$3" TERMINATE_UPON_LIMIT=1 '
        f"TRACE_FILE_COMPRESS={1 if compress else 0}",
        '    eval "$APP" )',
        '  "$POST_PROCESSING" "$dir/kernelslist"',
        '  rm -f -- "$dir"/*.trace "$dir"/*.trace.xz "$dir/kernelslist"',
        "}",
        "",
    ]
    lines += [f"trace_range {run_name(i)} {int(a)} {int(b)}" for i, (a, b) in enumerate(sel.ranges)]
    lines += [
        "",
        "# then: one trace folder of the runs, the sampled folder, the simulation, the estimate",
        "sq() { local s=${1//\\'/\\'\\\\\\'\\'}; printf \"'%s'\" \"$s\"; }  # a value as one single-quoted word, in "
        "any locale",
        f'printf \'next: simsample accelsim merge %s/run-* --out %s\\n\' "$(sq "$RUNS")" {q(q(traces))}',
        f"printf '      simsample apply --sim accelsim --plan %s --traces %s --out %s\\n' {q(q(plan_path))} "
        f"{q(q(traces))} {q(q(sampled))}",
        "",
    ]
    return "\n".join(lines)


def describe(sel: TracerSelection) -> str:
    """One line: what the selection traces."""
    return (
        f"{sel.launches:,} launches in {sel.runs:,} tracer run(s) ({len(sel.sampled):,} sampled launches and windows "
        f"of {sel.window}: {sel.needed:,} needed, gaps of up to {sel.max_gap} bridged)"
    )


def ranges_text(ranges: Sequence[tuple[int, int]], limit: int = 6) -> str:
    shown = ", ".join(f"{a}-{b}" if a != b else str(a) for a, b in ranges[:limit])
    return shown + (f" and {len(ranges) - limit} more" if len(ranges) > limit else "")
