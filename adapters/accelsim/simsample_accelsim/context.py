"""Cache context from the traces: how much of a launch's reading finds lines still in L2.

Launches of one kernel at one shape, with the same instructions, still take different cycles
when they meet different caches: the first training step reads weights and activations no
earlier launch left in L2 and runs 8-10% slower than the same launch in later steps; hetero's
sgemm that reads a relu's output just written runs 7,200 cycles, the same sgemm whose other
operand was last touched long ago 8,000. Nothing in the instruction counts or the shape shows
it, so a cluster mixing both is sampled as if it were even, and the few draws that measure its
spread seldom land on the rarer kind: the interval comes out a tenth of the error (training,
planned on features: 2 of 20 plans with ±0.3-0.5% around errors of 0.7-1.6%).

The traces say it before any simulation. ``warm_reads`` is the share of a launch's warp-level
loads that read lines launches before it touched (read or wrote) within the L2's reach: walking
back from the launch, the launches until the distinct lines they touched reach ``reach`` x the
L2's lines (what the L2 can still hold under LRU), as :func:`.warmup.reuse_window` walks for the
warm-up. Loads, not lines: a line many warps re-read stalls them all when it is cold. Memcpys do
not count: the simulator's memcpy fill of L2 keeps only 32 address bits by default
(``-gpgpu_perf_sim_memcpy_64bit``), so device buffers above 4 GiB are not warmed by it.

``group=auto`` of the samplers on trace features puts launches of one kernel, occupancy class
and context class (cold, partly warm, warm: :func:`simsample.sampling.grouping.context_class`)
in one group.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from simsample.sdk import CONTEXT_COLUMN, UserError, cache_window_start
from simsample_accelsim.warmup import Footprint

__all__ = ["CONTEXT_COLUMN", "DEFAULT_CONTEXT_REACH", "warm_read_shares"]

#: Lines touched before a launch, in multiples of the L2's lines, that its reads can still find.
DEFAULT_CONTEXT_REACH = 1.0


def warm_read_shares(
    footprints: Sequence[Footprint], *, l2_lines: int, reach: float = DEFAULT_CONTEXT_REACH
) -> np.ndarray:
    """Per launch (in launch order), the share of its loads that read a line an earlier launch
    touched within ``reach`` x ``l2_lines`` distinct lines; 1.0 for a launch without loads
    (nothing of it waits on memory).

    One pass in launch order, linear in the lines touched (see :func:`simsample.sdk.cache_window_start`)."""
    if l2_lines < 1:
        raise UserError(f"the L2 holds {l2_lines} lines by the config; fix -gpgpu_cache:dl2 or give --config")
    if reach <= 0:
        raise UserError(f"context reach {reach}: must be > 0 (in multiples of the L2's lines)")
    n = len(footprints)
    out = np.ones(n, np.float64)
    if n == 0:
        return out
    lines, ids = _dense_ids(
        [np.asarray(f.reads, np.uint64) for f in footprints] + [np.asarray(f.writes, np.uint64) for f in footprints]
    )
    read_ids, write_ids = ids[:n], ids[n:]
    last = np.full(lines, -1, np.int64)  # per line: the last launch before the current one that touched it
    per_launch = np.zeros(n, np.int64)  # per launch: lines whose last toucher (so far) it is
    for j, f in enumerate(footprints):
        r, w = read_ids[j], write_ids[j]
        before_r = last[r]
        if r.size:
            weights = np.asarray(f.read_counts if f.read_counts is not None else np.ones(r.size, np.int64))
            total = float(np.sum(weights))
            if total > 0:
                start = cache_window_start(per_launch, j, reach * l2_lines)
                out[j] = float(np.sum(weights[before_r >= start])) / total
        # launch j becomes the last toucher of its lines (a line both read and written counts once)
        last[r] = j
        before_w = last[w]
        new_w = before_w != j
        before = np.concatenate([before_r, before_w[new_w]])
        before = before[before >= 0]
        if before.size:
            per_launch[:j] -= np.bincount(before, minlength=j)
        per_launch[j] = r.size + int(np.count_nonzero(new_w))
        last[w] = j
    return out


def _dense_ids(arrays: Sequence[np.ndarray]) -> tuple[int, list[np.ndarray]]:
    """Line numbers of all ``arrays`` mapped to 0..lines-1 (one sort of them all)."""
    sizes = [a.size for a in arrays]
    flat = np.concatenate([np.asarray(a, np.uint64) for a in arrays]) if arrays else np.zeros(0, np.uint64)
    uniq, inverse = np.unique(flat, return_inverse=True)
    inverse = inverse.reshape(-1).astype(np.int64)
    return int(uniq.size), np.split(inverse, np.cumsum(sizes)[:-1])
