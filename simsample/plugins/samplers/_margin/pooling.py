"""Pooled strata and skewness-aware sizes: the ``pool`` and ``max_skew`` options of the ``margin`` sampler.

**Pooling.** A cluster whose optimal share of the draws (one joint KKT allocation with the
finite-population correction, no floor) is below one draw is not worth a draw of its own: on a
trace of hundreds of kernels with a few launches each, giving each kernel one draw caps the
speedup near launches ÷ kernels. Such clusters (of at most ``POOL_MAX_SIZE`` launches: a
larger cluster of one kernel follows the simulated metric more closely than any mixture) are
merged into one pool across kernels, which
is then stratified on the design metric (sorted by value and cut where ROOT's rule says a cut
saves simulation). A pooled stratum is an ordinary stratum of the design: a simple random
sample of its launches, whatever kernel they belong to, estimates its total without bias, and
with at least two draws it estimates its own variance.

**Skewness.** The interval is a normal (Student) interval. Cochran's rule for a mean of skewed
values, n > 25·G1² (G1 the skewness), is the condition that the mean's own skewness G1/√n be
below 0.2. Applied to the estimator of the total, T = Σ N_h·ȳ_h without replacement, the third
cumulant is Σ N_h³·(1−f_h)(1−2f_h)·μ3_h/m_h² and the variance Σ N_h²·(1−f_h)·σ_h²/m_h (population
moments of the design metric): draws are added to the strata that contribute most to the
skewness until |κ3|/V^1.5 ≤ ``max_skew``. On the development profiles it asked for many draws
(a third of the speedup): a stratum of near-equal times with one distant value is very skewed
even where its spread is far inside ε, so the estimator's floor at the design spread is the
default remedy for coverage instead.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from simsample.sdk import Grouping, Range, Strata, allocate, build_strata, range_key

#: Largest cluster that may be pooled (launches).
POOL_MAX_SIZE = 5


def small_clusters(ranges: Sequence[Range], *, eps: float, z: float, max_size: int = POOL_MAX_SIZE) -> np.ndarray:
    """Which clusters are not worth a draw of their own: at most ``max_size`` launches, and less
    than one draw in the joint allocation (with the correction, no floor). Larger clusters keep
    their own draw even where the allocation gives them less: a cluster of one kernel is the
    stratum whose simulated values follow the design values most closely."""
    if not ranges:
        return np.zeros(0, bool)
    means = np.array([r.mean for r in ranges])
    stds = np.array([r.std for r in ranges])
    sizes = np.array([r.size for r in ranges], dtype=np.float64)
    alloc = allocate(
        means, stds, sizes, eps=eps, z=z, replace=False, lower=1e-6, upper=sizes
    )  # no floor (0 would divide by it)
    return np.asarray((alloc.continuous < 1.0) & (sizes <= max_size))


def regroup(strata: Strata, keep: Sequence[Range], pooled: Sequence[Range]) -> tuple[Strata, int]:
    """A layout in which every kept cluster is a group of its own and the pooled clusters' launches
    form one more group (the last; -1 when nothing is pooled), each sorted by value."""
    codes = np.full(strata.order.size, -1, dtype=np.int64)
    keys = []
    for g, r in enumerate(keep):
        codes[strata.order[r.lo : r.hi]] = g
        keys.append(range_key(strata, r))
    pool_group = -1
    if pooled:
        pool_group = len(keep)
        kernels = sorted({strata.keys[r.group] for r in pooled})
        for r in pooled:
            codes[strata.order[r.lo : r.hi]] = pool_group
        shown = ", ".join(kernels[:3]) + (f" and {len(kernels) - 3} more" if len(kernels) > 3 else "")
        keys.append(f"pooled ({len(kernels)} kernels: {shown})")
    return build_strata(strata.values, Grouping(codes, keys), by_value=True), pool_group


def third_moments(strata: Strata, ranges: Sequence[Range]) -> np.ndarray:
    """Population third central moment of the values of each range."""
    out = np.zeros(len(ranges))
    for i, r in enumerate(ranges):
        if r.size > 2 and r.std > 0:
            d = strata.xs[r.lo : r.hi] - r.mean
            out[i] = float(np.mean(d * d * d))
    return out


def estimator_skewness(draws: np.ndarray, sizes: np.ndarray, stds: np.ndarray, mu3: np.ndarray) -> float:
    """|κ3(T)| / V(T)^1.5 of T = Σ N_h·ȳ_h drawn without replacement (module docstring)."""
    m = np.asarray(draws, dtype=np.float64)
    n = np.asarray(sizes, dtype=np.float64)
    f = np.divide(m, n, out=np.ones_like(m), where=n > 0)
    var = float(np.sum(np.divide(n * n * (1 - f) * stds * stds, m, out=np.zeros_like(m), where=m > 0)))
    k3 = float(np.sum(np.divide(n**3 * (1 - f) * (1 - 2 * f) * mu3, m * m, out=np.zeros_like(m), where=m > 0)))
    if var <= 0:
        return 0.0
    return abs(k3) / var**1.5


def skew_sizes(draws: np.ndarray, sizes: np.ndarray, stds: np.ndarray, mu3: np.ndarray, max_skew: float) -> np.ndarray:
    """The draws, raised where needed until the estimator's skewness is at most ``max_skew``.

    Each step raises the stratum whose term dominates κ3 by a quarter (at least one draw, at
    most its size); a stratum taken whole contributes nothing, so the loop ends."""
    m = np.asarray(draws, dtype=np.int64).copy()
    n = np.asarray(sizes, dtype=np.int64)
    for _ in range(10_000):
        if estimator_skewness(m, n, stds, mu3) <= max_skew:
            break
        mf = m.astype(np.float64)
        f = mf / np.maximum(n, 1)
        term = np.abs(
            np.divide(
                n.astype(np.float64) ** 3 * (1 - f) * (1 - 2 * f) * mu3, mf * mf, out=np.zeros_like(mf), where=m > 0
            )
        )
        term[m >= n] = 0.0
        h = int(np.argmax(term))
        if term[h] <= 0:
            break
        m[h] = min(int(n[h]), max(int(m[h]) + 1, int(math.ceil(m[h] * 1.25))))
    return m
