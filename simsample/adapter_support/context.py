"""What the adapters' cache-context columns share: the window of launches that fits the cache.

Both trace-driven adapters (Accel-Sim, MacSim) compute ``warm_reads``, the share of a launch's
accesses to lines that the launches just before it touched, walking back only as far as the
distinct lines still fit the simulated last-level cache. The walk is the same whatever the trace
format; it lives here so that a fix to it reaches every adapter (adapters do not import each
other).
"""

from __future__ import annotations

import numpy as np


def cache_window_start(owned: np.ndarray, j: int, limit: float) -> int:
    """The first launch of the window before launch ``j``: walking back from ``j - 1``, the launch
    at which the distinct lines touched reach ``limit`` (0 if they never do).

    ``owned[i]`` is the number of lines whose last toucher before ``j`` is launch ``i``. A line was
    touched by launches ``i..j-1`` exactly when its last toucher lies among them, so the distinct
    lines of that window are ``owned[i:j].sum()``: the walk needs no line sets. It goes back in
    blocks of doubling length, so it costs the window's length, not ``j``.
    """
    total = 0
    step = 64
    hi = j
    while hi > 0:
        lo = max(0, hi - step)
        block = owned[lo:hi][::-1].cumsum() + total
        reached = np.flatnonzero(block >= limit)
        if reached.size:
            return hi - 1 - int(reached[0])
        total = int(block[-1])
        hi = lo
        step *= 2
    return 0


__all__ = ["cache_window_start"]
