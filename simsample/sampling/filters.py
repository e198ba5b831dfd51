"""Windows and filters on a profile's launches, and where those launches are in the process.

A plan made on a profile is used twice after sampling: a tracer must trace the sampled launches
(and a few predecessors for warm-up), and ``estimate`` must say what the estimate stands for.
Both need facts the sampled workload alone does not carry, which this module records in the
plan's ``process`` section (plan format 1.2):

* **Where the tracer's counter starts.** NVBit tracers number every launch of the process from
  1. A profile of the whole process (an Nsight Systems export, nvprof) starts at launch 1; a
  PyTorch-profiler (Kineto) trace covers a window of steps, so its first launch is launch N of
  the process for an N nobody wrote down. ``first_launch`` is that N (``--first-launch``, or
  found from the source where it can be), or ``None``: a plan without it cannot name launches to
  a tracer, and :func:`launch_numbers` refuses rather than guess.
* **What was left out.** ``--include``/``--exclude`` (regular expressions on kernel names),
  ``--steps A-B`` (Kineto ``ProfilerStep#N`` annotations, NVTX step ranges of an Nsight Systems
  export) and ``--time-range`` keep a subset of
  the launches; the plan is made on that subset, and records the filters and the measured time
  of what they excluded so that ``estimate`` can put it beside the estimate (it is measured on
  the GPU, not simulated). Each kept launch keeps its number in the process (filters remove
  launches, they do not renumber the ones the tracer will see).
* **Which launch each sample is.** Per distinct sampled launch: its kernel id, its number in the
  process, its base kernel name and launch shape, so that a partial trace folder can be checked
  launch by launch (the tracer's ``-kernel id`` is the launch number).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import lazy_loader as lazy
import numpy as np

from simsample.errors import UserError
from simsample.io.names import base_name
from simsample.io.numbers import INT64_MAX, check_int

pd = lazy.load("pandas")

#: Formats whose first launch is launch 1 of the process (captures of the whole process).
WHOLE_PROCESS_FORMATS = ("nsys", "nsys_sqlite", "nsys_csv", "nvprof")
#: Formats whose ids are the tracer's own launch numbers.
TRACE_ID_FORMATS = ("accelsim",)
SHAPE = ("grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z")

_UNITS = {"ns": 1, "us": 1_000, "µs": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
#: The latest time a --time-range may name: 2^62 ns (146 years), where int64 nanoseconds are still exact to add.
_TIME_MAX_NS = 2**62


@dataclass(frozen=True)
class LaunchFilter:
    """The filters of ``plan`` as given (see the module docstring); all optional."""

    include: str | None = None
    exclude: str | None = None
    steps: str | None = None
    time_range: str | None = None

    @property
    def active(self) -> bool:
        return any(v is not None for v in (self.include, self.exclude, self.steps, self.time_range))

    def to_json(self) -> dict[str, str]:
        return {
            k: v
            for k, v in (
                ("include", self.include),
                ("exclude", self.exclude),
                ("steps", self.steps),
                ("time_range", self.time_range),
            )
            if v is not None
        }


@dataclass
class Filtered:
    """The launches a filter kept, with what it left out."""

    workload: Any  # simsample.workload.Workload of the kept launches
    rows: np.ndarray | None  # their rows in the profile; None when every launch is kept (no array the profile's length)
    excluded_launches: int
    excluded_time_ns: int | None
    total_time_ns: int | None
    profile_launches: int
    notes: list[str]
    #: of the excluded: those inside the window left out by name, and those outside the window,
    #: each as {"launches", "time_ns", "share"} (share: of the window's kernel time for the former,
    #: of the profile's for the latter)
    parts: dict[str, dict[str, Any]] | None = None


def _regex(text: str, option: str) -> re.Pattern[str]:
    try:
        return re.compile(text, re.IGNORECASE)
    except re.error as e:
        raise UserError(f"{option} {text!r}: not a regular expression ({e})") from None


def parse_steps(text: str) -> tuple[int, int]:
    """``--steps A-B`` (or ``A``): an inclusive range of step numbers."""
    m = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", text)
    if m is None:
        raise UserError(f"--steps {text!r}: expected A-B (ProfilerStep numbers, inclusive), e.g. 6-8")
    if any(g is not None and len(g) > 18 for g in m.groups()):  # not converted: a step number beyond int64 is no step
        raise UserError(
            f"--steps {text[:40]!r}: a step number beyond any profile's steps; choose steps the profile has"
        )
    a, b = int(m.group(1)), int(m.group(2) or m.group(1))
    if b < a:
        raise UserError(f"--steps {text!r}: the range ends before it starts")
    return a, b


def parse_time_range(text: str) -> tuple[int, int]:
    """``--time-range START-END`` with units (``ns``, ``us``, ``ms``, ``s``; ns when none), measured
    from the start of the profile's first launch; an empty end means to the end."""
    shown = text if len(text) <= 60 else text[:57] + "..."
    m = re.fullmatch(r"\s*([\d.]+)\s*(ns|us|µs|ms|s)?\s*-\s*(?:([\d.]+)\s*(ns|us|µs|ms|s)?)?\s*", text)
    if m is None:
        raise UserError(
            f"--time-range {shown!r}: expected START-END with units, e.g. 200ms-450ms (from the first launch's start)"
        )

    def ns(number: str, unit: str | None) -> int:
        try:
            value = float(number) * _UNITS[unit or "ns"]
        except ValueError:
            raise UserError(f"--time-range {shown!r}: expected numbers, e.g. 200ms-450ms") from None
        if not math.isfinite(value) or value > _TIME_MAX_NS:  # 400 digits: inf, or beyond int64 nanoseconds
            raise UserError(
                f"--time-range {shown!r}: {number}{unit or 'ns'} is beyond any profile (at most "
                f"{_TIME_MAX_NS // 10**9:,} s)"
            )
        return round(value)

    lo = ns(m.group(1), m.group(2))
    hi = ns(m.group(3), m.group(4)) if m.group(3) else 2**62
    if hi <= lo:
        raise UserError(f"--time-range {shown!r}: the range ends before it starts")
    return lo, hi


def apply_filters(wl: Any, flt: LaunchFilter, *, step_of: np.ndarray | None = None) -> Filtered:
    """The launches of ``wl`` that ``flt`` keeps. ``step_of``: each launch's step number (-1 outside
    every step), needed for ``--steps`` (:func:`simsample.io.kineto_steps.step_of_launches`)."""
    k = wl.kernels
    n = len(k)
    keep = np.ones(n, dtype=bool)
    notes: list[str] = []
    by_name = np.ones(n, dtype=bool)
    names = k["name"]
    if not isinstance(names.dtype, pd.CategoricalDtype):
        names = names.astype("category")
    cats = [str(c) for c in names.cat.categories]
    codes = names.cat.codes.to_numpy()
    if flt.include is not None:
        rx = _regex(flt.include, "--include")
        by_name &= np.array([bool(rx.search(c)) for c in cats], dtype=bool)[codes] if cats else by_name
    if flt.exclude is not None:
        rx = _regex(flt.exclude, "--exclude")
        by_name &= ~np.array([bool(rx.search(c)) for c in cats], dtype=bool)[codes] if cats else by_name
    if flt.steps is not None:
        a, b = parse_steps(flt.steps)
        if step_of is None:
            raise UserError(
                f"--steps {flt.steps}: {wl.source} has no step annotations that simsample reads (ProfilerStep#N, "
                "NVTX 'step N')"
            )
        present = sorted(set(int(s) for s in np.unique(step_of) if s >= 0))
        inside = [s for s in present if a <= s <= b]
        if not inside:
            raise UserError(f"--steps {flt.steps}: the profile has steps {_span(present)}; choose steps among them")
        if len(inside) < b - a + 1:
            notes.append(f"--steps {flt.steps}: the profile has steps {_span(present)}; using {_span(inside)}")
        keep &= (step_of >= a) & (step_of <= b)
    if flt.time_range is not None:
        lo, hi = parse_time_range(flt.time_range)
        col = k["start_ns"] if "start_ns" in k.columns else None
        if col is None or col.isna().any() or (n > 1 and int(col.min()) == int(col.max())):
            raise UserError(
                f"--time-range {flt.time_range}: {wl.source} ({wl.format}) has no launch times (every launch starts "
                f"at {'an unknown time' if col is None or col.isna().any() else int(col.min())}); plan on a profile, "
                "which has them"
            )
        start = col.to_numpy(np.int64)
        rel = start - (int(start.min()) if n else 0)
        keep &= (rel >= lo) & (rel < hi)
    window = keep.copy()
    keep &= by_name
    if flt.active and not keep.any():
        raise UserError(
            f"{wl.source}: the filters ({', '.join(f'{a}={b}' for a, b in flt.to_json().items())}) keep no launch; "
            "loosen them"
        )
    rows = (
        None if keep.all() else np.flatnonzero(keep)
    )  # at 5·10^7 launches an identity array holds 0.4 GB through the sampler
    dur = k["duration_ns"]
    timed = not dur.isna().any() if n else False
    total = int(dur.sum()) if timed else None
    excluded_time = int(dur[~keep].sum()) if timed else None
    kept = wl if rows is None else subset_launches(wl, rows)
    parts: dict[str, dict[str, Any]] = {}
    named, outside = window & ~by_name, ~window
    window_time = int(dur[window].sum()) if timed else None
    if flt.include is not None or flt.exclude is not None:
        t_named = int(dur[named].sum()) if timed else None
        parts["by_name"] = {
            "launches": int(named.sum()),
            "time_ns": t_named,
            "share": (t_named / window_time) if t_named is not None and window_time else None,
        }
    if flt.steps is not None or flt.time_range is not None:
        t_out = int(dur[outside].sum()) if timed else None
        parts["outside_window"] = {
            "launches": int(outside.sum()),
            "time_ns": t_out,
            "share": (t_out / total) if t_out is not None and total else None,
        }
    return Filtered(
        kept, rows, int(n - (n if rows is None else len(rows))), excluded_time, total, n, notes, parts or None
    )


def subset_launches(wl: Any, rows: np.ndarray) -> Any:
    """The launches ``rows`` (positions) of ``wl``, their ids kept (side data such as basic-block vectors is
    not carried: samplers that need it plan on the whole workload)."""
    from simsample.workload import Workload

    df = wl.kernels.iloc[rows].reset_index(drop=True)
    if isinstance(df["name"].dtype, pd.CategoricalDtype):
        df["name"] = df["name"].cat.remove_unused_categories()
    return Workload(df, source=wl.source, format=wl.format, memcpy_count=wl.memcpy_count, meta=dict(wl.meta))


def _span(steps: Sequence[int]) -> str:
    if not steps:
        return "none"
    # sorted distinct step numbers: contiguous when as many as their span (never enumerate the span: a step number is
    # data)
    if steps[-1] - steps[0] + 1 == len(steps):
        return f"{steps[0]}-{steps[-1]}"
    if len(steps) > 12:
        return ", ".join(map(str, steps[:5])) + f", ... ({len(steps) - 10} more), " + ", ".join(map(str, steps[-5:]))
    return ", ".join(map(str, steps))


def first_launch_of(wl: Any, option: int | None) -> tuple[int | None, str]:
    """The process launch number of the profile's first launch, and how it was found."""
    if option is not None:
        if isinstance(option, int) and not isinstance(option, bool) and option < 1:
            raise UserError(f"--first-launch {option}: launch numbers start at 1 (the tracer's counter)")
        # the last launch's number, first + launches - 1, must fit the int64 columns (else it wraps negative)
        last = INT64_MAX - max(len(wl) - 1, 0)
        return check_int(
            option, f"--first-launch (with the profile's {len(wl):,} launches after it)", lo=1, hi=last
        ), "option"
    if wl.format in TRACE_ID_FORMATS:
        return (int(wl.kernels["kernel_id"].iloc[0]) if len(wl) else 1), "trace ids"
    if wl.format in WHOLE_PROCESS_FORMATS:
        return 1, "whole-process profile"
    return None, "unknown"


def process_numbers(wl: Any, first: int | None) -> np.ndarray | None:
    """Each launch's number in the process: the tracer's ids for a trace folder, else ``first`` +
    the launch's row; None when ``first`` is unknown."""
    if wl.format in TRACE_ID_FORMATS:
        return wl.kernels["kernel_id"].to_numpy(np.int64)
    if first is None:
        return None
    return first + np.arange(len(wl), dtype=np.int64)


def process_section(
    plan: Any,
    kept: Any,
    rows: np.ndarray | None,
    numbers: np.ndarray | None,
    *,
    first: int | None,
    how: str,
    flt: LaunchFilter,
    filtered: Filtered | None = None,
) -> dict[str, Any]:
    """The plan's ``process`` section for a plan made on ``kept`` (the filtered workload; ``rows``
    its rows in the profile, None for all of them; ``numbers`` the profile's process numbers)."""
    k = kept.kernels
    by_launch = plan.samples.drop_duplicates("launch").sort_values("launch")
    pos = by_launch["launch"].to_numpy(np.int64)
    # the sampled rows only (a plan of 10^6 launches samples a few thousand), as Python values
    # column by column: no per-launch NumPy scalar
    col = k["name"]
    codes = col.cat.codes.to_numpy()[pos] if isinstance(col.dtype, pd.CategoricalDtype) else None
    if codes is not None and not (codes < 0).any():  # each kernel's base name once, then by code
        bases = [base_name(str(c)) for c in col.cat.categories]
        names = [bases[c] for c in codes.tolist()]
    else:
        cache: dict[str, str] = {}
        names = [
            cache[nm] if nm in cache else cache.setdefault(nm, base_name(nm))
            for nm in col.iloc[pos].astype(str).tolist()
        ]
    shapes = [k[c].to_numpy(np.int64)[pos].tolist() for c in SHAPE] if len(pos) else [[] for _ in SHAPE]
    nums = numbers[pos if rows is None else rows[pos]].tolist() if numbers is not None else [None] * len(pos)
    samples = [
        [kid, num, nm, *shp] for kid, num, nm, *shp in zip(by_launch["kernel_id"].tolist(), nums, names, *shapes)
    ]
    out: dict[str, Any] = {"first_launch": first, "first_launch_from": how}
    if filtered is not None:
        out["profile_launches"] = filtered.profile_launches
        if flt.active:
            out["filters"] = flt.to_json()
            share = (
                (filtered.excluded_time_ns / filtered.total_time_ns)
                if filtered.excluded_time_ns is not None and filtered.total_time_ns
                else None
            )
            out["excluded"] = {
                "launches": filtered.excluded_launches,
                "time_ns": filtered.excluded_time_ns,
                "share": share,
                **(filtered.parts or {}),
            }
    out["samples"] = samples
    return out


# --- reading a plan's process section --------------------------------------------------------


@dataclass(frozen=True)
class SampleLaunch:
    """A distinct sampled launch as the plan's process section records it."""

    kernel_id: int
    number: int | None
    name: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]


def sample_launches(plan: Any) -> list[SampleLaunch] | None:
    """The plan's distinct sampled launches with their process numbers, or None when the plan has
    no process section."""
    proc = plan.process
    if not proc or "samples" not in proc:
        return None
    return [
        SampleLaunch(
            int(s[0]),
            None if s[1] is None else int(s[1]),
            str(s[2]),
            (int(s[3]), int(s[4]), int(s[5])),
            (int(s[6]), int(s[7]), int(s[8])),
        )
        for s in proc["samples"]
    ]


def launch_numbers(plan: Any, *, what: str = "a tracer selection") -> dict[int, int]:
    """Kernel id -> launch number in the process of every distinct sampled launch; refuses (one
    line) when the plan does not know where its launches are in the process."""
    samples = sample_launches(plan)
    if samples is None:
        if plan.workload.get("format") in TRACE_ID_FORMATS:  # a plan made on trace folders before format 1.2
            return {int(k): int(k) for k in plan.samples["kernel_id"]}
        raise UserError(
            "the plan records no launch numbers (made before simsample recorded them); make it again with "
            f"'simsample plan ... --first-launch N' for {what}"
        )
    if any(s.number is None for s in samples):
        src = plan.workload.get("source") or "the profile"
        raise UserError(
            f"the plan's profile {src} ({plan.workload.get('format')}) does not say which launch of the process it "
            "starts at (a PyTorch-profiler trace covers a window of steps), so the tracer's numbers of its launches "
            "are unknown; make the plan with --first-launch N (N = the process's launch number of the profile's "
            f"first launch) for {what}"
        )
    return {s.kernel_id: int(s.number) for s in samples}  # type: ignore[misc]


def excluded_summary(plan: Any) -> Mapping[str, Any] | None:
    """What the plan's filters left out (launches, measured time, share), or None."""
    proc = plan.process or {}
    return proc.get("excluded") if proc.get("filters") else None


@dataclass
class Prepared:
    """A profile's launches ready for a sampler: the filtered workload and where they are in the process."""

    filtered: Filtered
    first: int | None
    how: str
    profile: Any  # the workload before filtering
    flt: LaunchFilter

    @property
    def workload(self) -> Any:
        return self.filtered.workload

    @property
    def numbers(self) -> np.ndarray | None:
        """The process number of each launch of the profile (before filtering), made when asked
        for: after the sampler, whose temporaries are then freed, not beside them."""
        return process_numbers(self.profile, self.first)


def prepare(wl: Any, paths: Sequence[Any], flt: LaunchFilter, *, first_launch: int | None = None) -> Prepared:
    """Filter ``wl`` (read from ``paths``) and find where its launches are in the process."""
    step_of = None
    if flt.time_range is not None:
        parse_time_range(flt.time_range)  # a malformed option is refused before any work
    if flt.steps is not None:
        parse_steps(flt.steps)
        if wl.format == "kineto":
            from simsample.io.kineto_steps import step_of_launches

            step_of = step_of_launches(paths, wl)
        elif wl.format == "nsys_sqlite":
            from simsample.io.nsys_steps import step_of_launches as nvtx_steps

            step_of = nvtx_steps(paths[0], wl)
        else:
            raise UserError(
                f"--steps: {wl.source} is {wl.format}; steps are read from PyTorch-profiler traces (ProfilerStep#N) "
                "and Nsight Systems SQLite exports (NVTX ranges named 'step N' or 'ProfilerStep#N'); use "
                "--time-range"
            )
        if step_of is None:
            raise UserError(
                f"--steps {flt.steps}: {wl.source} has no step annotation (ProfilerStep#N, or an NVTX range 'step N'); "
                "use --time-range instead"
            )
    filtered = apply_filters(wl, flt, step_of=step_of)
    first, how = first_launch_of(wl, first_launch)
    return Prepared(filtered, first, how, wl, flt)


def attach_process(plan: Any, prep: Prepared) -> None:
    """Record the process section (see the module docstring) in ``plan``."""
    plan.process = process_section(
        plan,
        prep.workload,
        prep.filtered.rows,
        prep.numbers,
        first=prep.first,
        how=prep.how,
        flt=prep.flt,
        filtered=prep.filtered,
    )


def excluded_line(plan: Any) -> str | None:
    """One line for ``estimate``: what the plan's filters left out, measured, beside the estimate."""
    ex = excluded_summary(plan)
    if not ex:
        return None
    filters = (plan.process or {}).get("filters", {})
    given = ", ".join(f"--{k.replace('_', '-')} {v}" for k, v in filters.items())

    def measured(part: Mapping[str, Any], of: str) -> str:
        if part.get("time_ns") is None:
            return " (the profile has no times)"
        share = f", {100 * part['share']:.1f}% of {of}" if part.get("share") is not None else ""
        return f" (measured on the GPU: {part['time_ns'] / 1e6:,.3f} ms{share})"

    of_window, of_profile = "the window's kernel time", "the profile's kernel time"
    pieces = []
    if ex.get("by_name"):
        names = " ".join(f"--{k} {filters[k]}" for k in ("include", "exclude") if k in filters)
        pieces.append(
            f"{ex['by_name']['launches']:,} launches left out by name ({names}){measured(ex['by_name'], of_window)}"
        )
    if ex.get("outside_window"):
        pieces.append(
            f"{ex['outside_window']['launches']:,} launches outside the "
            f"window{measured(ex['outside_window'], of_profile)}"
        )
    if not pieces:
        pieces.append(f"{ex.get('launches', 0):,} launches excluded{measured(ex, of_profile)}")
    return (
        f"estimated: the {plan.workload.get('launches', '?'):,} launches planned ({given}); "
        f"measured, not simulated, not in the estimate: " + "; ".join(pieces)
    )
