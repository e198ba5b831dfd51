"""Cache context from MacSim traces: how much of a launch's memory traffic finds lines still in
the last-level cache.

MacSim runs the launches of a trace folder back to back and never flushes its caches between
them, so two launches of one kernel with the same instructions take different cycles when they
meet different caches. On the layers workload (``benchmarks/macsim_layers_workload.py``: a
projection and a residual add per layer, four layers, three steps over the same weights) the
first step's launches take 2,481 to 5,419 cycles and every later one 1,236 to 1,310: the first
step reads weights, and writes activations, that no earlier launch touched. Nothing in the
instruction counts or the shape shows it, so a plan that groups by name puts the seven cold
launches with the seventeen warm ones; a plan that happens to draw none of them misses by -28%
with an interval of a percent, one that draws one widens to +-120%.

The traces say it before any simulation. ``warm_reads`` (the column name the samplers'
``group=auto`` reads, shared with the Accel-Sim adapter) is here the share of a launch's
warp-level loads *and stores* that touch lines launches before it touched within the LLC's reach:
walking back from the launch, the launches until the distinct lines they touched reach
``reach`` x the LLC's lines. Stores count, unlike Accel-Sim's: MacSim's stores wait for their
line (``mem_ooo_stores 0`` in the params.in it ships), and a residual add that reads two warm
arrays but writes a fresh one runs 2,593 to 2,949 cycles where the same add writing a recently
touched array runs 1,309. Lines are the 128-byte lines of :func:`.warmup.kernel_footprint` (the
addresses the tracer recorded, one per warp-level access).

A launch whose code no launch in its window ran reads 0, whatever its data: every warp fetches
its instructions from memory first. The first ``resid`` of the layers workload reads two warm
arrays, as the second and third do, but runs 2,949 cycles against their 2,593 and 2,595; counted
by its data alone it would share their cluster, and the plans that drew only those two would
miss by 0.9% with an interval of +-0.2% (7 of 20 on the full run's own cycles). The code lines
also count among the lines a window holds.

With the occupancy columns of :mod:`.features`, ``group=auto`` is then name, occupancy and
context class (cold, partly warm, warm), as on Accel-Sim trace features.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from simsample.sdk import CONTEXT_COLUMN, UserError, cache_window_start
from simsample_macsim.warmup import Footprint

__all__ = ["CONTEXT_COLUMN", "DEFAULT_CONTEXT_REACH", "warm_access_shares"]

#: Lines touched before a launch, in multiples of the LLC's lines, that its accesses can still find.
DEFAULT_CONTEXT_REACH = 1.0


def warm_access_shares(
    footprints: Sequence[Footprint], *, llc_lines: int, reach: float = DEFAULT_CONTEXT_REACH
) -> np.ndarray:
    """Per launch (in run order), the share of its warp-level accesses (``counts`` per line)
    that touch a line an earlier launch touched within ``reach`` x ``llc_lines`` distinct lines
    (data and code lines); 0.0 when those launches ran none of its code lines (``code``); 1.0
    for a launch without memory accesses (nothing of it waits on memory).

    One pass in run order: per line the last launch that touched it, per launch how many lines
    it touched last, so the distinct lines of the launches i..j-1 are the sum of those counts
    over them (:func:`simsample.sdk.cache_window_start`); linear in the accesses and the window lengths."""
    if llc_lines < 1:
        raise UserError(
            f"the LLC holds {llc_lines} lines by params.in; check num_llc, llc_num_set, llc_assoc and llc_line_size"
        )
    if not reach > 0 or not np.isfinite(reach):
        raise UserError(f"context reach {reach}: must be a finite number > 0 (in multiples of the LLC's lines)")
    n = len(footprints)
    out = np.ones(n, np.float64)
    if n == 0:
        return out
    lines, counts, code = zip(*(_distinct(f) for f in footprints))
    sizes = [x.size for x in lines]
    flat = np.concatenate(lines)
    uniq, inverse = np.unique(flat, return_inverse=True)
    ids = np.split(inverse.reshape(-1).astype(np.int64), np.cumsum(sizes)[:-1])
    last = np.full(uniq.size, -1, np.int64)  # per line: the last launch so far that touched it
    owned = np.zeros(n, np.int64)  # per launch: lines whose last toucher (so far) it is
    limit = reach * llc_lines
    for j in range(n):
        r = ids[j]
        if r.size == 0:
            continue
        weights = counts[j]
        before = last[r]
        total = float(weights.sum())
        if total > 0:
            start = max(cache_window_start(owned, j, limit), 0)
            warm = before >= start
            mine = code[j]
            if mine.any() and not warm[mine].any():
                out[j] = 0.0  # no recent launch ran its code: its warps wait on instruction fetches first
            else:
                out[j] = float(weights[warm].sum()) / total
        earlier = before[before >= 0]
        if earlier.size:
            np.subtract.at(owned, earlier, 1)
        owned[j] = r.size
        last[r] = j
    return out


def _distinct(f: Footprint) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A footprint's data and code lines, each once: per line its data accesses (a line listed
    twice adds up; code lines count none) and whether the launch's instructions are on it."""
    data = np.asarray(f.lines, np.uint64).ravel()
    counts = np.asarray(f.counts, np.float64).ravel()
    if data.size != counts.size:
        raise ValueError(f"a footprint lists {data.size} lines but {counts.size} access counts")
    code = np.asarray(f.code, np.uint64).ravel()
    lines = np.concatenate([data, code])
    weights = np.concatenate([counts, np.zeros(code.size)])
    flags = np.concatenate([np.zeros(data.size), np.ones(code.size)])
    if lines.size > 1 and not bool(np.all(lines[1:] > lines[:-1])):
        lines, inverse = np.unique(lines, return_inverse=True)
        weights = np.bincount(inverse.ravel(), weights=weights, minlength=lines.size)
        flags = np.bincount(inverse.ravel(), weights=flags, minlength=lines.size)
    return lines, weights, flags > 0
