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

from simsample.errors import UserError
from simsample.sampling.grouping import CONTEXT_COLUMN
from simsample_accelsim.warmup import Footprint

__all__ = ["CONTEXT_COLUMN", "DEFAULT_CONTEXT_REACH", "warm_read_shares"]

#: Lines touched before a launch, in multiples of the L2's lines, that its reads can still find.
DEFAULT_CONTEXT_REACH = 1.0


def warm_read_shares(footprints: Sequence[Footprint], *, l2_lines: int, reach: float = DEFAULT_CONTEXT_REACH) -> np.ndarray:
    """Per launch (in launch order), the share of its loads that read a line an earlier launch
    touched within ``reach`` x ``l2_lines`` distinct lines; 1.0 for a launch without loads
    (nothing of it waits on memory)."""
    if l2_lines < 1:
        raise UserError(f"the L2 holds {l2_lines} lines by the config; fix -gpgpu_cache:dl2 or give --config")
    if reach <= 0:
        raise UserError(f"context reach {reach}: must be > 0 (in multiples of the L2's lines)")
    limit = reach * l2_lines
    touched = [np.union1d(f.reads, f.writes) for f in footprints]
    out = np.ones(len(touched), np.float64)
    for j, f in enumerate(footprints):
        if f.reads.size == 0:
            continue
        weights = f.read_counts if f.read_counts is not None else np.ones(f.reads.size, np.int64)
        total = float(np.sum(weights))
        if total <= 0:
            continue
        seen = _recent_lines(touched, j, limit)
        out[j] = float(np.sum(weights[np.isin(f.reads, seen, assume_unique=True)])) / total
    return out


def _recent_lines(touched: Sequence[np.ndarray], j: int, limit: float) -> np.ndarray:
    """The distinct lines of launches j-1, j-2, ... until they number at least ``limit``."""
    parts: list[np.ndarray] = []
    count = 0
    seen = np.zeros(0, np.uint64)
    for i in range(j - 1, -1, -1):
        parts.append(touched[i])
        count += touched[i].size
        if count >= limit:  # the raw count bounds the distinct one from above: merge, then check
            seen = np.unique(np.concatenate([seen, *parts]))
            parts, count = [], seen.size
            if count >= limit:
                return seen
    return np.unique(np.concatenate([seen, *parts])) if parts else seen
