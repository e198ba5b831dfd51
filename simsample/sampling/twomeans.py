"""Splitting a sorted run of values in two: exact one-dimensional 2-means, or scikit-learn's.

In one dimension the optimal 2-means partition is a cut of the sorted values: every value below
the cut goes left, every value above goes right. Minimising the within-cluster sum of squares
over all cuts therefore needs one pass of prefix sums over the sorted values: deterministic and
O(n) per split after one sort, which is what ROOT and Allegro need on workloads of tens of
millions of launches (they split the same sorted array again and again, always a contiguous
range of it).

With the values centred (sum 0), a cut after the first k of n values leaves a within-cluster sum
of squares of ``SS − P_k²·n / (k·(n − k))``, ``P_k`` the sum of the first k centred values, so
the best cut maximises ``P_k²/(k·(n − k))``: no squares of the raw values, no cancellation.

:func:`kmeans_cut` reproduces the STEM artifact's split instead (scikit-learn ``KMeans`` with
k = 2 on values normalised to [0, 1]); it is randomised (seeded here) and far slower, so it is
only practical on small workloads.
"""

from __future__ import annotations

import math

import numpy as np


def best_cut(sorted_values: np.ndarray) -> int | None:
    """Position k (1 ≤ k < n) of the exact 2-means cut of ascending values, or None.

    The left cluster is ``sorted_values[:k]``. Cuts fall only between distinct values; ties in
    the objective go to the smallest k. None when all values are equal (nothing to split).
    """
    found = split_stats(sorted_values)
    return None if found is None else found[0]


try:  # what np.einsum calls without its optimiser (the same function: the same bits)
    from numpy._core.multiarray import c_einsum as _einsum
except ImportError:  # pragma: no cover - NumPy 1.x keeps it elsewhere; the public name works
    _einsum = np.einsum


def _sumsq(v: np.ndarray) -> float:
    """Σ v² without BLAS: on a busy machine a threaded BLAS dot product can stall for
    milliseconds per call, and the splits make thousands of them. ``np.einsum`` without
    ``optimize`` hands its arguments to ``c_einsum``; calling that directly saves half of
    each call's microsecond or two, which thousands of small clusters pay."""
    return float(_einsum("i,i->", v, v))


#: The public name of :func:`_sumsq`, for the callers that repeat :func:`centred_ss`'s one block.
sum_of_squares = _sumsq

#: Values processed per block: blocks of this size stay in cache and reuse two buffers, so a
#: split of tens of millions of values makes no large temporaries (page faults dominate there).
BLOCK = 1 << 16


def split_stats(sorted_values: np.ndarray) -> tuple[int, float, float, float, float] | None:
    """The exact 2-means cut k with both halves' mean and population standard deviation:
    ``(k, left_mean, left_std, right_mean, right_std)``, or None when all values are equal.

    One blocked pass computes the running sum of centred values, the objective at every cut
    between distinct values and each block's sum of squares; the halves' statistics follow
    from those (only the block holding the cut is read again).
    """
    x = np.asarray(sorted_values, dtype=np.float64)
    n = x.size
    if n < 2 or x[0] == x[-1]:
        return None
    if n <= BLOCK:
        return _split_one_block(x, n)
    return _split_blocked(x, n)


def _split_blocked(x: np.ndarray, n: int) -> tuple[int, float, float, float, float]:
    """:func:`split_stats` of any number of values in blocks of :data:`BLOCK` (the path of
    every size before small clusters took :func:`_split_one_block`; kept for large ones)."""
    mean = float(x.mean())
    size = min(BLOCK, n)
    buf = np.empty(size)
    ks = np.arange(1.0, size + 1.0)  # k − s for the cuts of a block
    block_ss = np.empty((n + BLOCK - 1) // BLOCK)
    carry = 0.0
    best_gain, best_k, best_p = -1.0, 0, 0.0
    for j, s in enumerate(range(0, n, BLOCK)):
        e = min(s + BLOCK, n)
        b = buf[: e - s]
        np.subtract(x[s:e], mean, out=b)
        block_ss[j] = _sumsq(b)
        np.cumsum(b, out=b)
        b += carry  # b[i] = sum of the first s + i + 1 centred values
        carry = float(b[-1])
        last = min(e, n - 1)  # a cut after index i (k = i + 1) needs i ≤ n − 2
        if last <= s:
            continue
        distinct = x[s + 1 : last + 1] != x[s:last]  # cuts only between distinct values
        if distinct.all():
            idx = None
            pc = b[: last - s]
            k = ks[: last - s] + s
        else:
            idx = np.flatnonzero(distinct)
            if idx.size == 0:
                continue
            pc = b[idx]
            k = idx + (s + 1.0)
        gain = pc * pc
        gain /= k * (n - k)
        i = int(np.argmax(gain))  # first maximum: ties go to the smallest k
        if gain[i] > best_gain:
            best_gain, best_p = float(gain[i]), float(pc[i])
            best_k = (i if idx is None else int(idx[i])) + s + 1
    cut, pk = best_k, best_p
    full = cut // BLOCK
    rest = x[full * BLOCK : cut] - mean
    ss_left_raw = float(block_ss[:full].sum()) + _sumsq(rest)
    ss_right_raw = float(block_ss.sum()) - ss_left_raw
    ss_left = max(ss_left_raw - pk * pk / cut, 0.0)
    ss_right = max(ss_right_raw - pk * pk / (n - cut), 0.0)
    left = (float(x[0]), 0.0) if x[0] == x[cut - 1] else (mean + pk / cut, float(np.sqrt(ss_left / cut)))
    right = (float(x[cut]), 0.0) if x[cut] == x[-1] else (mean - pk / (n - cut), float(np.sqrt(ss_right / (n - cut))))
    return (cut, *left, *right)


#: ``k`` for the cuts of one block (1, 2, ..., BLOCK), built once: the splits of small clusters
#: run thousands of times, and their NumPy calls, not their arithmetic, are what they cost.
_KS = np.arange(1.0, BLOCK + 1.0)


def _split_one_block(x: np.ndarray, n: int) -> tuple[int, float, float, float, float]:
    """:func:`split_stats` of at most :data:`BLOCK` ascending values, not all equal.

    The same operations on the same values in the same order as the blocked pass (whose one
    block starts at 0 with nothing carried), so the same bits, with half the NumPy calls: ROOT's
    recursion splits thousands of small clusters (about 5,000 at 10^6 launches), where each
    call's overhead, not its arithmetic, is the cost. Tests compare both paths bit for bit.
    """
    mean = float(np.add.reduce(x)) / n  # what x.mean() computes: the pairwise sum over n
    centred = x - mean
    ss_all = _sumsq(centred)
    pc = np.cumsum(centred)  # pc[i] = sum of the first i + 1 centred values
    distinct = x[1:] != x[:-1]  # cuts only between distinct values (a cut after index i ≤ n − 2)
    if distinct.all():
        idx = None
        pc = pc[: n - 1]
        k = _KS[: n - 1]
    else:
        idx = np.flatnonzero(distinct)
        pc = pc[idx]
        k = idx + 1.0
    gain = pc * pc
    gain /= k * (n - k)
    i = int(gain.argmax())  # first maximum: ties go to the smallest k
    # + 0.0: the blocked pass adds the carry (0.0 in its first block), which turns −0.0 into 0.0
    pk = float(pc[i]) + 0.0
    cut = (i if idx is None else int(idx[i])) + 1
    ss_left_raw = 0.0 + _sumsq(centred[:cut])
    ss_right_raw = ss_all - ss_left_raw
    ss_left = max(ss_left_raw - pk * pk / cut, 0.0)
    ss_right = max(ss_right_raw - pk * pk / (n - cut), 0.0)
    first, before, after, last = float(x[0]), float(x[cut - 1]), float(x[cut]), float(x[-1])
    left = (first, 0.0) if first == before else (mean + pk / cut, math.sqrt(ss_left / cut))
    right = (after, 0.0) if after == last else (mean - pk / (n - cut), math.sqrt(ss_right / (n - cut)))
    return (cut, *left, *right)


def centred_ss(values: np.ndarray, mean: float) -> float:
    """Σ (x − mean)² in blocks (no temporary the size of ``values``)."""
    x = np.asarray(values, dtype=np.float64)
    buf = np.empty(min(BLOCK, x.size))
    total = 0.0
    for s in range(0, x.size, BLOCK):
        b = buf[: min(BLOCK, x.size - s)]
        np.subtract(x[s : s + BLOCK], mean, out=b)
        total += _sumsq(b)
    return total


def within_ss(values: np.ndarray) -> float:
    """Sum of squared deviations from the mean (0 for fewer than two values)."""
    v = np.asarray(values, dtype=np.float64)
    if v.size < 2:
        return 0.0
    d = v - v.mean()
    return _sumsq(d)


def kmeans_cut(sorted_values: np.ndarray, seed: int) -> int | None:
    """The cut scikit-learn's ``KMeans(n_clusters=2)`` finds on values normalised to [0, 1].

    As in the STEM artifact: ``(x − min) / (max − min + 1e-6)``, library defaults otherwise,
    with ``random_state`` fixed so that a plan is reproducible. In one dimension the clusters
    are separated by the midpoint of the two centres, so the result is again a cut of the
    sorted values. None when there is nothing to split.
    """
    from sklearn.cluster import KMeans

    x = np.asarray(sorted_values, dtype=np.float64)
    n = x.size
    if n < 2 or x[0] == x[-1]:
        return None
    data = ((x - x.min()) / (x.max() - x.min() + 1e-6)).reshape(-1, 1)
    km = KMeans(n_clusters=2, random_state=int(seed) % (2**32)).fit(data)
    centres = np.sort(km.cluster_centers_.ravel())
    mid = (centres[0] + centres[1]) / 2.0
    k = int(np.searchsorted(data.ravel(), mid, side="right"))
    if k <= 0 or k >= n:
        return None
    return k
