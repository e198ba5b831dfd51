"""Trace folders that hold only some launches of a run: what a tracer selection produces.

The NVBit tracer numbers every launch of the process from 1 and writes launch N as
``kernel-N.traceg`` with ``-kernel id = N``, whether it traced all launches or a range. A folder
made from a tracer selection (:mod:`.selection`, :mod:`.merge`) therefore holds the sampled
launches and their warm-up windows under their global numbers, and nothing else. Such a folder
has another fingerprint than the run the plan was made for, so :func:`match_partial` matches the
plan's samples by launch number instead:

* the plan gives each distinct sampled launch its number in the process, its base name and
  shape (its ``process`` section, :mod:`simsample.sampling.filters`; plans made before format 1.2
  have none and are matched as before: whole folders only);
* each must be in the folder, or the refusal names the first missing one and the tracer setting
  that brings it;
* each is checked by base kernel name and launch shape against the plan's record of it, and
  against the folder's ``stats.csv`` (the tracer's list of every launch) when there is one, so a
  folder from another run, or a profile whose numbering is off by some launches the profile did
  not see, is refused instead of applied to the wrong launches.

Warm-up then chooses among the launches that were traced (:func:`choose_warmup_traced`): an
untraced predecessor is as if it touched nothing, and one note says how many samples had fewer
traced predecessors than the warm-up looks at.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from simsample.sdk import (
    PlanMismatchError,
    UserError,
    base_name,
    launch_numbers,
    sample_launches,
)
from simsample_accelsim.notes import warn
from simsample_accelsim.tracerstats import STATS_FILE, read_stats
from simsample_accelsim.warmup import Footprint, WarmupSpec, targeted

if TYPE_CHECKING:
    from simsample.sdk import Plan
    from simsample_accelsim.reader import TraceFolder


def folder_numbers(tf: TraceFolder) -> np.ndarray | None:
    """The launch number of each row of the folder (its ``-kernel id``), or None when the ids do
    not read as tracer launch numbers (missing, or not increasing in list order)."""
    ids = [h.kernel_id for h in tf.headers]
    if any(i is None for i in ids):
        return None
    arr = np.asarray(ids, dtype=np.int64)
    if len(arr) > 1 and not np.all(np.diff(arr) > 0):
        return None
    return arr


def is_partial(numbers: np.ndarray | None) -> bool:
    """Whether a folder's launch numbers have gaps (a folder made from selected ranges)."""
    return numbers is not None and len(numbers) > 0 and int(numbers[-1] - numbers[0]) + 1 != len(numbers)


def _shape_text(name: str, grid: Sequence[int], block: Sequence[int]) -> str:
    return f"{name} grid ({','.join(map(str, grid))}) block ({','.join(map(str, block))})"


def match_partial(plan: Plan, tf: TraceFolder, first_error: PlanMismatchError) -> np.ndarray:
    """Folder rows of the plan's samples (plan order, repeats kept), matched by launch number;
    ``first_error`` is re-raised when the plan cannot be matched that way at all."""
    numbers = folder_numbers(tf)
    if numbers is None or sample_launches(plan) is None:
        # without the plan's record of each sampled launch, nothing to check a match by number against
        raise first_error
    try:
        number_of_id = launch_numbers(plan, what="a folder holding only some launches")
    except UserError as e:
        raise PlanMismatchError(f"{first_error}; to match a folder of some launches by launch number: {e}") from None
    ids = plan.samples["kernel_id"].to_numpy(np.int64)
    unknown = sorted({int(k) for k in ids} - set(number_of_id))
    if unknown:
        raise PlanMismatchError(
            f"{first_error}; and the plan's process section has no launch number for sampled kernel {unknown[0]} "
            "(the plan file is inconsistent): make the plan again"
        )
    _check_part_of_run(plan, tf, numbers, first_error, max(number_of_id.values(), default=0))
    row_of = {int(n): i for i, n in enumerate(numbers.tolist())}
    records = {s.kernel_id: s for s in (sample_launches(plan) or [])}
    stats_path = tf.folder / STATS_FILE
    stats = read_stats(stats_path, only=set(number_of_id.values())) if stats_path.is_file() else None
    missing = sorted({number_of_id[int(k)] for k in ids} - set(row_of))
    if missing and len(missing) == len(set(number_of_id.values())):
        raise first_error  # not one of its launches: another run's folder, not a part of this one
    if missing:
        n = missing[0]
        rec = next((r for r in records.values() if r.number == n), None)
        what = f" ({_shape_text(rec.name, rec.grid, rec.block)})" if rec else ""
        raise UserError(
            f"{tf.folder}: sampled launch {n}{what} is not in this folder ({len(missing)} of "
            f"{len(set(number_of_id.values()))} sampled launches missing); trace it with "
            f"DYNAMIC_KERNEL_LIMIT_START={n} DYNAMIC_KERNEL_LIMIT_END={n}, or run the runs of 'simsample accelsim "
            "select' and merge them"
        )
    for kid in sorted({int(k) for k in ids}):
        n = number_of_id[kid]
        h = tf.headers[row_of[n]]
        have = (base_name(h.name), tuple(h.grid), tuple(h.block))
        rec = records.get(kid)
        if rec is not None and (rec.name, rec.grid, rec.block) != have:
            raise UserError(
                f"{tf.files[row_of[n]].name}: launch {n} is {_shape_text(*have)}, but the plan's launch {n} is "
                f"{_shape_text(rec.name, rec.grid, rec.block)}: the traces are not of the run the plan was made for, "
                "or the profile does not start at the launch the plan says (check --first-launch; the tracer counts "
                "cuLaunchKernel only)"
            )
        if stats is not None:
            row = stats.get(n)
            if row is not None and (base_name(row.name), row.grid, row.block) != have:
                raise UserError(
                    f"{stats_path}: launch {n} is {_shape_text(base_name(row.name), row.grid, row.block)}, but "
                    f"{tf.files[row_of[n]].name} is {_shape_text(*have)}: the folder mixes traces of different runs"
                )
    warn(
        f"{tf.folder} holds {len(numbers):,} launches of the run (launch numbers {int(numbers[0])} to "
        f"{int(numbers[-1])}), not the {_count(plan.workload.get('launches'))} the plan was made on: its "
        f"{len(set(number_of_id.values())):,} sampled launches were found by launch number and checked by name and "
        "shape"
    )
    return np.array([row_of[number_of_id[int(k)]] for k in ids], dtype=np.int64)


def _count(n: object) -> str:
    return f"{n:,}" if isinstance(n, int) else "?"


def _check_part_of_run(
    plan: Plan, tf: TraceFolder, numbers: np.ndarray, first_error: PlanMismatchError, last_sampled: int
) -> None:
    """The run check for matching by launch number: legitimate only for a folder that holds part
    of the plan's run (a tracer selection: launches with gaps, or a range that does not start at
    launch 1, or a prefix shorter than the plan's launches). A whole folder (launches 1 to N
    without a gap) that reaches past the plan's last launch is a whole run: it is the plan's run
    only if its launches there have the plan's shapes in order (the plan's ``shape_fingerprint``,
    checked when the plan was made on the unfiltered launches of its window); otherwise
    ``first_error`` (the fingerprint mismatch) is raised: another run's folder is refused even
    where its sampled launches have the same names and shapes."""
    proc = plan.process or {}
    first = proc.get("first_launch")
    span = proc.get("profile_launches", plan.workload.get("launches"))
    if not isinstance(first, int) or not isinstance(span, int) or not len(numbers):
        return
    whole = int(numbers[0]) == 1 and not is_partial(numbers)
    end = first - 1 + span  # the plan's last launch in the process
    if not whole or int(numbers[-1]) < end:
        return  # part of a run: matched by launch number, each sampled launch checked by name and shape
    if last_sampled > end:
        # a plan made on a folder of some launches (its trace ids have gaps): it has no window to compare in order
        return
    if proc.get("filters"):
        return  # the plan's launches are a filtered subset of its window: its shapes cannot be compared in order
    from simsample.sdk import subset_launches
    from simsample_accelsim.reader import workload_of

    shape = plan.workload.get("shape_fingerprint")
    window = subset_launches(workload_of(tf), np.arange(first - 1, end, dtype=np.int64))
    if shape and window.shape_fingerprint == shape:
        return
    raise PlanMismatchError(
        f"{first_error} (the folder holds the whole run, launches 1 to {int(numbers[-1]):,}, and its launches "
        f"{first:,} to {end:,} are not the plan's: another run, or an edited plan; a folder of some launches, from "
        "'simsample accelsim select' and merge, is matched by launch number)"
    )


def _stored_footprints(tf: TraceFolder):
    """Footprint of folder row i, as the whole-run warm-up takes it (:func:`.footprints.footprint_of`):
    from the store ``profile features`` filled, else scanned once by the compiled scanner (numpy
    where it cannot be used) and stored; a partial folder's warm-up no longer reads the trace
    bodies again with the numpy scanner (the same lines, counts and instructions)."""
    from simsample_accelsim.footprints import FootprintStore, footprint_of

    store = FootprintStore()

    def footprint(i: int) -> Footprint:
        return footprint_of(tf.files[i], store)

    return footprint


def _empty_footprint() -> Footprint:
    e = np.empty(0, dtype=np.int64)
    return Footprint(e, e, 0, None)


def choose_warmup_traced(
    tf: TraceFolder,
    plan: Plan,
    rows: Sequence[int],
    spec: WarmupSpec,
    numbers: np.ndarray,
    *,
    shared: bool = True,
    footprint=None,
) -> dict[int, list[int]]:
    """Per sampled row, the warm-up rows ``spec`` asks for, chosen by launch number among the
    launches the folder holds (``numbers``: each row's launch number). A predecessor that was
    not traced is skipped (``K``) or counts as touching nothing (``targeted``); one note says
    how many samples had fewer traced predecessors than the warm-up looks at."""
    samples = sorted({int(r) for r in rows})
    if spec.none or not samples:
        return {s: [] for s in samples}
    row_of = {int(n): i for i, n in enumerate(numbers.tolist())}
    if spec.reuse:
        return _reuse_traced(tf, samples, spec, numbers, row_of, shared=shared, footprint=footprint)
    window = spec.horizon if spec.targeted else int(spec.k or 0)
    short = 0
    # the window is a number the user wrote (--warmup-horizon, K): count the traced launches in it
    # by bisection in the folder's sorted numbers, never by walking the window
    for s in samples:
        g = int(numbers[s])
        lo = max(1, g - window)
        traced = int(np.searchsorted(numbers, g, side="left") - np.searchsorted(numbers, lo, side="left"))
        if traced < g - lo:
            short += 1
    if short:
        warn(
            f"--warmup {spec.label()}: {short} sampled launch(es) have fewer traced predecessors than the {window} "
            "launches the warm-up looks at; it chose among those that were traced (trace the windows: 'simsample "
            "accelsim select')"
        )
    if not spec.targeted:
        k = int(spec.k or 0)
        # rows are in launch-number order: those of the K launches before a sample are one slice
        return {
            s: list(range(int(np.searchsorted(numbers, max(1, int(numbers[s]) - k), side="left")), s)) for s in samples
        }
    if footprint is None:
        footprint = _stored_footprints(tf)

    weight_of_number: dict[int, float] = {}
    for r, w in zip(rows, plan.samples["weight"]):
        g = int(numbers[int(r)])
        weight_of_number[g] = weight_of_number.get(g, 0.0) + float(w)

    def fp(n: int):
        return footprint(row_of[n]) if n in row_of else _empty_footprint()

    def traced_before(g: int) -> list[int]:
        # the traced launches of the window, nearest first: an untraced one touches nothing, so it is
        # never looked at (the horizon is a number the user wrote, up to 2^63)
        lo = int(np.searchsorted(numbers, max(1, g - spec.horizon), side="left"))
        hi = int(np.searchsorted(numbers, g, side="left"))
        return numbers[lo:hi][::-1].tolist()

    chosen = targeted(
        sorted(weight_of_number),
        weight_of_number,
        fp,
        horizon=spec.horizon,
        coverage=spec.coverage,
        budget=spec.budget,
        cost=spec.cost.cycles,
        shared=shared,
        predecessors=traced_before,
    )
    return {s: [row_of[n] for n in chosen[int(numbers[s])]] for s in samples}


def _reuse_traced(
    tf: TraceFolder,
    samples: Sequence[int],
    spec: WarmupSpec,
    numbers: np.ndarray,
    row_of: dict[int, int],
    *,
    shared: bool,
    footprint=None,
) -> dict[int, list[int]]:
    """The reuse window (:func:`.warmup.reuse_window`) among the launches traced without a gap
    before each sample: the walk back stops at the first launch the folder does not hold, and
    one note says how many samples it stopped short for."""
    if footprint is None:
        footprint = _stored_footprints(tf)

    keep = {int(numbers[s]) for s in samples} if shared else set()
    limit = spec.reach * spec.l2_lines
    out: dict[int, list[int]] = {}
    short = 0
    for s in samples:
        g = int(numbers[s])
        seen = np.zeros(0, np.uint64)  # line numbers are uint64: an int64 start made the union float64
        window: list[int] = []
        n = g - 1
        while n >= 1 and seen.size < limit:
            if n not in row_of:
                short += 1
                break
            if n not in keep:
                window.append(row_of[n])
            f = Footprint(*footprint(row_of[n]))
            seen = np.union1d(seen, np.union1d(f.reads, f.writes))
            n -= 1
        out[s] = sorted(window)
    if short:
        warn(
            f"--warmup {spec.label()}: the window of {short} sampled launch(es) reaches launches that were not traced; "
            "it stops there (trace longer windows: 'simsample accelsim select')"
        )
    return out


def warmup_ids(
    plan: Plan, sample_rows: Sequence[int], numbers: np.ndarray | None, folder_ids: np.ndarray, warm: Sequence[int]
) -> dict[int, tuple[int, int]]:
    """Folder row -> (kernel id, launch position) in the plan's own numbering, for each warm-up
    launch ``warm``. A plan made on a profile numbers its launches its own way (0-based
    positions, where the traces count from 1); where its samples sit at a constant offset from the
    launch numbers, the warm-up launches get ids and positions at the same offset, so that they
    can never take a sampled launch's id. Otherwise (no offset that holds for every sample) the
    traces' own ids and the folder rows are used, as before."""
    ids = plan.samples["kernel_id"].to_numpy(np.int64)
    launches = plan.samples["launch"].to_numpy(np.int64)
    key = numbers if numbers is not None else folder_ids
    at = key[np.asarray(sample_rows, dtype=np.int64)] if len(ids) else np.empty(0, np.int64)
    id_off = np.unique(ids - at)
    pos_off = np.unique(launches - at)
    out: dict[int, tuple[int, int]] = {}
    for i in warm:
        n = int(key[i])
        out[int(i)] = (
            n + int(id_off[0]) if len(id_off) == 1 else int(folder_ids[i]),
            n + int(pos_off[0]) if len(pos_off) == 1 else int(i),
        )
    return out


def warmup_records(
    plan: Plan,
    sample_rows: Sequence[int],
    numbers: np.ndarray | None,
    folder_ids: np.ndarray,
    warm: Sequence[int],
    entry_name,
) -> dict[int, tuple[int, str]]:
    """The weights file's rows of the warm-up launches ``warm`` (folder rows): kernel id ->
    (launch position, trace), in the plan's numbering (:func:`warmup_ids`)."""
    return {
        kid: (pos, entry_name(i)) for i, (kid, pos) in warmup_ids(plan, sample_rows, numbers, folder_ids, warm).items()
    }


def sampled_numbers(plan: Plan) -> Mapping[int, int]:
    """Kernel id -> launch number of the plan's samples (for messages and selections)."""
    return launch_numbers(plan)
