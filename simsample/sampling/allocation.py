"""How many launches to draw from each cluster: STEM's error model and its KKT allocation.

Drawing m_i of the N_i launches of cluster i (mean μ_i, standard deviation σ_i over its
members) and estimating its total as N_i·ȳ_i, the estimate of the workload's total
T = Σ N_i·μ_i has variance

- with replacement (i.i.d. draws, the paper):   V(m) = Σ N_i²·σ_i² / m_i
- without replacement (the default):            V(m) = Σ N_i²·S_i²·(1/m_i − 1/N_i),
  S_i² = σ_i²·N_i/(N_i − 1), the finite-population correction.

Both are ``Σ B_i/m_i − D``. The error bound ε at confidence 1 − α asks z·√V ≤ ε·T, i.e.
``Σ B_i/m_i ≤ c + D`` with c = (ε·T/z)². STEM (MICRO'25 §3.3, Problem 1) minimises the time
of the sampled launches, Σ m_i·μ_i, under that constraint. Its KKT solution (appendix §8.1) is

    m_i = (Σ_j √(a_j·b_j)) / c · √(b_i/a_i),   a_i = μ_i, b_i = B_i

(the paper's eq. 6 prints √(Σ a_j b_j) in the numerator; the derivation gives Σ √(a_j b_j),
which is what makes the constraint hold with equality). With the box constraints
1 ≤ m_i ≤ N_i that a real draw needs, the optimum is m_i = clip(t·√(B_i/μ_i), 1, N_i) for the one
t at which the constraint holds with equality (the multiplier of the bounds is zero inside the
box); :func:`allocate` finds that t exactly from the breakpoints of the piecewise function.
A cluster with σ = 0 (identical values) or μ = 0 (all zero: Kineto rounds durations to whole
microseconds) needs no draws by the formula; the lower bound still gives it one, so that no
cluster is ever dropped from the estimate.

Rounding up each m_i keeps the constraint satisfied (V only decreases as m grows).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

#: ``ndtri(0.5 + c / 2)`` for the confidence levels plans are made at, as SciPy computes them (a
#: test compares each with ``scipy.special.ndtri``): a plan at one of these levels imports no
#: SciPy, which costs a tenth of a second (``scipy.special`` brings ``numpy.testing`` and
#: ``unittest`` with it) in a command that plans 10^6 launches in about a second.
Z_KNOWN = {
    0.8: 1.2815515655446004,
    0.9: 1.6448536269514722,
    0.95: 1.959963984540054,
    0.98: 2.3263478740408408,
    0.99: 2.5758293035489004,
    0.995: 2.807033768343811,
    0.998: 3.090232306167813,
    0.999: 3.2905267314919255,
    0.9999: 3.8905918864131204,
}


@lru_cache(maxsize=64)
def z_value(confidence: float) -> float:
    """Two-sided standard normal quantile: 1.96 for 0.95.

    ``scipy.special.ndtri`` is what ``scipy.stats.norm.ppf`` evaluates, to the bit, without the
    second or so that importing ``scipy.stats`` costs every ``plan`` (and the usual levels are
    looked up in :data:`Z_KNOWN`, its values, without importing SciPy at all).
    """
    if confidence in Z_KNOWN:
        return Z_KNOWN[confidence]
    from scipy.special import ndtri

    return float(ndtri(0.5 + confidence / 2.0))


def variance_terms(sizes: np.ndarray, stds: np.ndarray, *, replace: bool) -> tuple[np.ndarray, float]:
    """``B`` and ``D`` of ``V(m) = Σ B_i/m_i − D`` for the given draw."""
    n = np.asarray(sizes, dtype=np.float64)
    s = np.asarray(stds, dtype=np.float64)
    var = s * s
    if replace:
        return n * n * var, 0.0
    big_s2 = np.where(n > 1, var * n / np.maximum(n - 1.0, 1.0), 0.0)
    return n * n * big_s2, float(np.sum(n * big_s2))


def design_variance(draws: np.ndarray, sizes: np.ndarray, stds: np.ndarray, *, replace: bool) -> float:
    """V(m): variance of Σ N_i·ȳ_i under the draw (see the module docstring)."""
    m = np.asarray(draws, dtype=np.float64)
    b, d = variance_terms(sizes, stds, replace=replace)
    pos = b > 0
    return float(max(np.sum(b[pos] / m[pos]) - d, 0.0))


def kkt_unbounded(a: np.ndarray, b: np.ndarray, c: float) -> np.ndarray:
    """The paper's eq. 6 as derived in §8.1, before rounding and without bounds."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    return np.sum(np.sqrt(a * b)) / c * np.sqrt(b / a)


@dataclass
class Allocation:
    """Draws per cluster: the continuous optimum and the integers actually drawn."""

    continuous: np.ndarray  # optimal m_i of the relaxed problem, within [lower, upper]
    draws: np.ndarray  # ceil(continuous), int64, within [lower, upper]
    feasible: bool  # False when even the upper bounds cannot meet the error bound
    total: float  # T = Σ N_i μ_i
    variance: float  # V(draws)

    def relative_error(self, z: float) -> float | None:
        """z·√V / T: the error the draws achieve at that confidence (None when T = 0)."""
        if self.total <= 0:
            return None
        return z * math.sqrt(self.variance) / self.total


def sampled_time(draws: np.ndarray, means: np.ndarray) -> float:
    """Σ m_i·μ_i: the paper's proxy for simulation time (eq. 7/8)."""
    if len(draws) == 2 == len(means):
        # ROOT's children, once per split tried: NumPy's sum of two products, as Python floats
        # (the same two roundings; the sum of fewer than eight values is a plain running sum)
        return 0.0 + float(draws[0]) * float(means[0]) + float(draws[1]) * float(means[1])
    return float(np.sum(np.asarray(draws, dtype=np.float64) * np.asarray(means, dtype=np.float64)))


def allocate(
    means: np.ndarray,
    stds: np.ndarray,
    sizes: np.ndarray,
    *,
    eps: float,
    z: float,
    replace: bool,
    lower: float | np.ndarray = 1.0,
    upper: np.ndarray | None = None,
) -> Allocation:
    """Minimise Σ m_i·μ_i subject to z·√V(m) ≤ ε·T and lower ≤ m_i ≤ upper_i (default N_i).

    ``means``/``stds`` are the clusters' population mean and standard deviation (ddof 0).
    A few clusters (ROOT decides thousands of two-cluster splits) go through the same
    algorithm on Python floats, which avoids numpy's per-call overhead.
    """
    if upper is None and len(means) <= _SMALL and (isinstance(lower, (int, float)) or np.ndim(lower) == 0):
        if len(means) == 2:
            found = _allocate_pair(means, stds, sizes, eps=eps, z=z, replace=replace, lower=float(lower))
            if found is not None:
                return found
        return _allocate_small(means, stds, sizes, eps=eps, z=z, replace=replace, lower=float(lower))
    mu = np.asarray(means, dtype=np.float64)
    n = np.asarray(sizes, dtype=np.float64)
    k = mu.size
    lo = np.broadcast_to(np.asarray(lower, dtype=np.float64), (k,)).copy()  # a floor per cluster, or one for all
    hi = n.copy() if upper is None else np.asarray(upper, dtype=np.float64).copy()
    lo = np.minimum(lo, hi)
    b, d = variance_terms(n, stds, replace=replace)
    total = float(np.sum(n * mu))
    budget = (eps * total / z) ** 2 + d if total > 0 else 0.0
    m = _solve(mu, b, lo, hi, budget)
    feasible = bool(np.sum(b[b > 0] / hi[b > 0]) <= budget * (1 + 1e-12) or not np.any(b > 0))
    draws = np.minimum(np.ceil(m * (1.0 - 1e-12)), hi)
    draws = np.maximum(draws, lo).astype(np.int64)
    return Allocation(
        continuous=m,
        draws=draws,
        feasible=feasible,
        total=total,
        variance=design_variance(draws, n, stds, replace=replace),
    )


def _solve(mu: np.ndarray, b: np.ndarray, lo: np.ndarray, hi: np.ndarray, budget: float) -> np.ndarray:
    """m_i = clip(t·r_i, lo_i, hi_i) with the t that makes Σ b_i/m_i equal the budget."""
    m = lo.copy()
    active = b > 0  # clusters whose draws reduce the variance
    if not np.any(active):
        return m
    costless = active & (mu <= 0)  # cannot happen for non-negative data; take them whole
    m[costless] = hi[costless]
    act = active & ~costless
    if not np.any(act):
        return m
    fixed = float(np.sum(b[costless] / hi[costless])) if np.any(costless) else 0.0
    bb, r, l, h = b[act], np.sqrt(b[act] / mu[act]), lo[act], hi[act]  # noqa: E741  (l, h: lower and upper bounds)
    target = budget - fixed
    if target <= 0 or np.sum(bb / h) >= target:  # infeasible or exactly at the bounds
        m[act] = h
        return m
    if np.sum(bb / l) <= target:  # the lower bounds already meet it
        return m

    def g(t: float) -> float:
        return float(np.sum(bb / np.clip(t * r, l, h)))

    # g decreases in t and is K + A/t between consecutive breakpoints l/r, h/r
    bps = np.unique(np.concatenate([l / r, h / r]))
    t0 = _last_breakpoint(g, bps, target)
    # inside (t0, next breakpoint): free clusters are those with l < t·r < h just above t0
    probe = t0 * r * (1 + 1e-12)
    free = (probe > l) & (probe < h)
    at_hi = probe >= h
    at_lo = ~free & ~at_hi
    k_fixed = float(np.sum(bb[at_hi] / h[at_hi]) + np.sum(bb[at_lo] / l[at_lo]))
    a_free = float(np.sum(bb[free] / r[free]))
    if a_free <= 0:
        t = t0
    else:
        t = a_free / (target - k_fixed)
    m[act] = np.clip(t * r, l, h)
    return m


def _last_breakpoint(g: Callable[[float], float], bps: Sequence[float], target: float) -> float:
    """The last of the sorted breakpoints ``bps`` where the decreasing ``g`` is still ≥ ``target``,
    by bisection (g(bps[0]) = Σ b/l > target > Σ b/h = g(bps[-1]))."""
    i, j = 0, len(bps) - 1
    while j - i > 1:
        mid = (i + j) // 2
        if g(bps[mid]) >= target:
            i = mid
        else:
            j = mid
    return float(bps[i])


_SMALL = 4


def _allocate_small(means, stds, sizes, *, eps: float, z: float, replace: bool, lower: float) -> Allocation:
    """:func:`allocate` for a handful of clusters, on Python floats (same algorithm)."""
    m, draws, b, d, total, budget = _solve_small(means, stds, sizes, eps=eps, z=z, replace=replace, lower=lower)
    k = len(draws)
    hi = [float(v) for v in sizes]
    feasible = not any(v > 0 for v in b) or sum(b[i] / hi[i] for i in range(k) if b[i] > 0) <= budget * (1 + 1e-12)
    var = max(sum(b[i] / draws[i] for i in range(k) if b[i] > 0) - d, 0.0)
    return Allocation(
        continuous=np.array(m, dtype=np.float64),
        draws=np.array(draws, dtype=np.int64),
        feasible=bool(feasible),
        total=total,
        variance=var,
    )


def _allocate_pair(means, stds, sizes, *, eps: float, z: float, replace: bool, lower: float) -> Allocation | None:
    """:func:`_allocate_small` for two clusters that both have spread and cost, or None.

    The same operations in the same order, written out for two: ROOT's recursion sizes the two
    children of every split it tries (about 10,000 allocations at 10^6 launches over margin's
    trees) and the general code's lists, closures and sums were most of that cost. Sums are
    written ``0.0 + a + b``, which is what ``sum`` computes for two terms (with or without its
    compensated summation). Tests compare both on random clusters, field by field.
    """
    found = _pair(means[0], means[1], stds[0], stds[1], sizes[0], sizes[1], eps, z, replace, lower)
    if found is None:
        return None
    m0, m1, d0, d1, at_hi, budget, total, b0, b1, d = found
    return Allocation(
        continuous=np.array((m0, m1), dtype=np.float64),
        draws=np.array((d0, d1), dtype=np.int64),
        feasible=at_hi <= budget * (1 + 1e-12),
        total=total,
        variance=max(0.0 + b0 / d0 + b1 / d1 - d, 0.0),
    )


def pair_draws(
    mean0: float,
    mean1: float,
    std0: float,
    std1: float,
    size0: int,
    size1: int,
    *,
    eps: float,
    z: float,
    replace: bool,
    lower: float,
) -> tuple[int, int] | None:
    """``allocate(...).draws`` of two clusters that both have spread and cost, as Python ints
    (None for other pairs: ask :func:`allocate`). ROOT's recursion reads nothing else of the
    allocations it makes for every split it tries (about 9,000 at 10^6 launches over margin's
    trees): this skips the :class:`Allocation` and its arrays, with the very code of
    :func:`_allocate_pair`, so the same numbers."""
    found = _pair(mean0, mean1, std0, std1, size0, size1, eps, z, replace, float(lower))
    return None if found is None else (found[2], found[3])


def _pair(mu0, mu1, sd0, sd1, n0, n1, eps: float, z: float, replace: bool, lower: float) -> tuple | None:
    """The two-cluster optimum of :func:`_allocate_pair`: ``(m0, m1, d0, d1, at_hi, budget,
    total, b0, b1, d)``, or None when a cluster has no spread or no cost."""
    mu0, mu1 = float(mu0), float(mu1)
    n0, n1 = float(n0), float(n1)
    sd0, sd1 = float(sd0), float(sd1)
    if replace:
        b0 = n0 * n0 * sd0 * sd0
        b1 = n1 * n1 * sd1 * sd1
        d = 0.0
    else:
        s0 = sd0 * sd0 * n0 / (n0 - 1.0) if n0 > 1 else 0.0
        s1 = sd1 * sd1 * n1 / (n1 - 1.0) if n1 > 1 else 0.0
        b0 = n0 * n0 * s0
        b1 = n1 * n1 * s1
        d = 0.0 + n0 * s0 + n1 * s1
    if not (b0 > 0 and mu0 > 0 and b1 > 0 and mu1 > 0):
        return None
    lo0, lo1 = min(lower, n0), min(lower, n1)
    total = 0.0 + n0 * mu0 + n1 * mu1
    budget = (eps * total / z) ** 2 + d if total > 0 else 0.0
    target = budget - 0.0
    r0, r1 = math.sqrt(b0 / mu0), math.sqrt(b1 / mu1)
    at_hi = 0.0 + b0 / n0 + b1 / n1
    if target <= 0 or at_hi >= target:
        m0, m1 = n0, n1
    elif 0.0 + b0 / lo0 + b1 / lo1 > target:

        def g(t: float) -> float:
            return 0.0 + b0 / min(max(t * r0, lo0), n0) + b1 / min(max(t * r1, lo1), n1)

        t0 = _last_breakpoint(g, sorted({lo0 / r0, lo1 / r1} | {n0 / r0, n1 / r1}), target)
        k_fixed = a_free = 0.0
        probe = t0 * r0 * (1 + 1e-12)
        if probe >= n0:
            k_fixed += b0 / n0
        elif probe > lo0:
            a_free += b0 / r0
        else:
            k_fixed += b0 / lo0
        probe = t0 * r1 * (1 + 1e-12)
        if probe >= n1:
            k_fixed += b1 / n1
        elif probe > lo1:
            a_free += b1 / r1
        else:
            k_fixed += b1 / lo1
        t = a_free / (target - k_fixed) if a_free > 0 else t0
        m0, m1 = min(max(t * r0, lo0), n0), min(max(t * r1, lo1), n1)
    else:
        m0, m1 = lo0, lo1
    d0 = int(max(min(math.ceil(m0 * (1.0 - 1e-12)), n0), lo0))
    d1 = int(max(min(math.ceil(m1 * (1.0 - 1e-12)), n1), lo1))
    return m0, m1, d0, d1, at_hi, budget, total, b0, b1, d


def small_draws(
    means: Sequence[float],
    stds: Sequence[float],
    sizes: Sequence[int],
    *,
    eps: float,
    z: float,
    replace: bool,
    lower: float,
) -> list[int]:
    """``allocate(...).draws`` of a handful of clusters (at most four), as Python ints.

    ROOT's recursion sizes the two children of every split it tries (about 10,000 at 10^6
    launches, over margin's trees) and reads nothing but the draws: this skips building the
    :class:`Allocation` (arrays, the variance) and computes the draws with the very code
    :func:`allocate` runs for so few clusters, so they are the same numbers.
    """
    return _solve_small(means, stds, sizes, eps=eps, z=z, replace=replace, lower=lower)[1]


def _solve_small(means, stds, sizes, *, eps: float, z: float, replace: bool, lower: float):
    """The continuous optimum and the draws of :func:`allocate` for a handful of clusters, on
    Python floats, with the ``b``, ``d``, total and budget they came from."""
    mu = [float(v) for v in means]
    n = [float(v) for v in sizes]
    sd = [float(v) for v in stds]
    k = len(mu)
    if replace:
        b = [n[i] * n[i] * sd[i] * sd[i] for i in range(k)]
        d = 0.0
    else:
        s2 = [sd[i] * sd[i] * n[i] / (n[i] - 1.0) if n[i] > 1 else 0.0 for i in range(k)]
        b = [n[i] * n[i] * s2[i] for i in range(k)]
        d = sum(n[i] * s2[i] for i in range(k))
    lo = [min(float(lower), n[i]) for i in range(k)]
    hi = n
    total = sum(n[i] * mu[i] for i in range(k))
    budget = (eps * total / z) ** 2 + d if total > 0 else 0.0
    m = list(lo)
    act = [i for i in range(k) if b[i] > 0 and mu[i] > 0]
    for i in range(k):
        if b[i] > 0 and mu[i] <= 0:
            m[i] = hi[i]
    fixed = sum(b[i] / hi[i] for i in range(k) if b[i] > 0 and mu[i] <= 0)
    target = budget - fixed
    if act:
        r = {i: math.sqrt(b[i] / mu[i]) for i in act}
        if target <= 0 or sum(b[i] / hi[i] for i in act) >= target:
            for i in act:
                m[i] = hi[i]
        elif sum(b[i] / lo[i] for i in act) > target:

            def g(t: float) -> float:
                return sum(b[i] / min(max(t * r[i], lo[i]), hi[i]) for i in act)

            t0 = _last_breakpoint(g, sorted({lo[i] / r[i] for i in act} | {hi[i] / r[i] for i in act}), target)
            k_fixed = a_free = 0.0
            for i in act:
                probe = t0 * r[i] * (1 + 1e-12)
                if probe >= hi[i]:
                    k_fixed += b[i] / hi[i]
                elif probe > lo[i]:
                    a_free += b[i] / r[i]
                else:
                    k_fixed += b[i] / lo[i]
            t = a_free / (target - k_fixed) if a_free > 0 else t0
            for i in act:
                m[i] = min(max(t * r[i], lo[i]), hi[i])
    draws = [int(max(min(math.ceil(m[i] * (1.0 - 1e-12)), hi[i]), lo[i])) for i in range(k)]
    return m, draws, b, d, total, budget
