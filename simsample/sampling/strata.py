"""Launches laid out for stratified samplers (STEM, ROOT, Allegro): groups, clusters, draws.

The launches are sorted once by group and, for the samplers that split groups, by value within
each group (a stable radix sort of the group codes, then one sort per group: several times
faster than a two-key lexsort on tens of millions of launches; ties keep launch order). Every
cluster a sampler ever considers is then a contiguous range ``[lo, hi)`` of that order, so
splitting, statistics and drawing never touch more than the cluster's own launches, and no
Python loop runs over launches (only over groups and clusters).

The parameters shared by STEM and ROOT and the allocation helpers live here too.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from simsample.errors import UserError
from simsample.planfile import Cluster, Plan
from simsample.plugin_base import Param, Sampler
from simsample.sampling.allocation import allocate, design_variance, z_value
from simsample.sampling.draws import rng
from simsample.sampling.grouping import GROUPINGS, Grouping, group_launches
from simsample.sampling.representatives import model_cycles
from simsample.workload import Workload


@dataclass
class Strata:
    """``order`` holds row positions sorted by group (and by value within a group when
    ``by_value``); group g occupies ``order[bounds[g]:bounds[g+1]]``; ``xs = values[order]``."""

    values: np.ndarray
    order: np.ndarray
    xs: np.ndarray
    bounds: np.ndarray
    keys: list[str]
    by_value: bool
    #: What was computed of a range ``[lo, hi)`` (its split, its statistics), by ``(what, lo, hi)``:
    #: margin builds ROOT's tree at several ε over the same strata, and the trees share most of
    #: their ranges (at 10^6 launches 8,920 splits of which 5,085 distinct). Each entry is a
    #: function of the sorted values alone, so reusing it changes no result.
    memo: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def groups(self) -> int:
        return len(self.keys)


@dataclass
class Range:
    """A cluster: ``order[lo:hi]`` of the strata, in group ``group``, with its statistics."""

    group: int
    lo: int
    hi: int
    mean: float
    std: float

    @property
    def size(self) -> int:
        return self.hi - self.lo


def build_strata(values: np.ndarray, grouping: Grouping, *, by_value: bool) -> Strata:
    """Sort launches by group (stable), then by value within each group when ``by_value``.

    Ties keep launch order, so the layout (and every plan drawn from it) is the same on every
    machine. Whole-number values (nanoseconds, cycles) are sorted as unique integer keys
    ``value·n + position``, several times faster than a stable sort of floats and equivalent
    to it; other values use the stable sort.
    """
    codes = grouping.codes
    count = grouping.count
    small = np.uint16 if count <= np.iinfo(np.uint16).max else np.int64
    order = np.argsort(codes.astype(small, copy=False), kind="stable")
    counts = np.bincount(codes, minlength=count)
    bounds = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(counts, out=bounds[1:])
    xs = values[order]
    if by_value and xs.size:
        n = xs.size
        integral = bool(xs.min() >= 0 and float(xs.max()) * n + n < 2.0**62 and np.all(xs == np.floor(xs)))
        if integral:
            # one array of keys for all groups, each group's slice sorted in place; the steps are
            # ordered so that no more than four launch-sized arrays are alive at once
            keys = xs.astype(np.int64)
            del xs
            keys *= n
            keys += np.arange(n, dtype=np.int64)
            for g in range(count):
                lo, hi = int(bounds[g]), int(bounds[g + 1])
                if hi - lo > 1:
                    keys[lo:hi].sort()  # unique keys: any algorithm gives the stable order
            position = keys % n
            np.floor_divide(keys, n, out=keys)
            order = order[position]
            del position
            xs = keys.astype(np.float64)
            del keys
        else:
            for g in range(count):
                lo, hi = int(bounds[g]), int(bounds[g + 1])
                if hi - lo > 1:
                    s = np.argsort(xs[lo:hi], kind="stable")
                    order[lo:hi] = order[lo:hi][s]
                    xs[lo:hi] = xs[lo:hi][s]
    return Strata(values=values, order=order, xs=xs, bounds=bounds, keys=grouping.keys, by_value=by_value)


def make_range(strata: Strata, group: int, lo: int, hi: int) -> Range:
    """A :class:`Range` with the population mean and standard deviation of its values."""
    key = ("stats", lo, hi)
    found = strata.memo.get(key)
    if found is None:
        found = strata.memo[key] = _range_stats(strata, lo, hi)
    return Range(group, lo, hi, *found)


def _range_stats(strata: Strata, lo: int, hi: int) -> tuple[float, float]:
    """Population mean and standard deviation of ``xs[lo:hi]``, in two passes."""
    from simsample.sampling.twomeans import BLOCK, centred_ss, sum_of_squares

    seg = strata.xs[lo:hi]
    n = seg.size
    if n == 0:  # no launches: refused as before (an IndexError or a division by zero)
        return float(seg.mean()), (seg[0] if strata.by_value else centred_ss(seg, 0.0) / n)
    # seg.mean() is the pairwise sum divided by n; np.add.reduce skips its wrapper (same bits)
    mean = float(np.add.reduce(seg)) / n
    if strata.by_value and seg[0] == seg[-1]:  # sorted and constant
        return float(seg[0]), 0.0
    # centred_ss's one block, without its loop, for the thousands of small ranges (same bits)
    ss = 0.0 + sum_of_squares(seg - mean) if n <= BLOCK else centred_ss(seg, mean)
    return mean, math.sqrt(max(ss / n, 0.0))


def split_range(strata: Strata, r: Range, method: str, seed: int) -> tuple[Range, Range] | None:
    """The two halves of a range cut by 2-means (``exact`` or ``kmeans``), or None.

    With ``exact`` the halves' statistics come from the cut's own prefix sums (fast, used for
    decisions); :func:`exact_stats` recomputes them in two passes for what goes into a plan.
    """
    from simsample.sampling.twomeans import kmeans_cut, split_stats

    if method == "exact":
        key = ("split", r.lo, r.hi)
        if key in strata.memo:
            found = strata.memo[key]
        else:
            found = strata.memo[key] = split_stats(strata.xs[r.lo : r.hi])
        if found is None:
            return None
        k, lm, ls, rm, rs = found
        return Range(r.group, r.lo, r.lo + k, lm, ls), Range(r.group, r.lo + k, r.hi, rm, rs)
    k = kmeans_cut(strata.xs[r.lo : r.hi], seed)
    if k is None:
        return None
    return make_range(strata, r.group, r.lo, r.lo + k), make_range(strata, r.group, r.lo + k, r.hi)


def exact_stats(strata: Strata, ranges: Sequence[Range]) -> list[Range]:
    """The same ranges with mean and standard deviation recomputed from their values."""
    return [make_range(strata, r.group, r.lo, r.hi) for r in ranges]


def group_ranges(strata: Strata) -> list[Range]:
    """One range per group."""
    return [make_range(strata, g, int(strata.bounds[g]), int(strata.bounds[g + 1])) for g in range(strata.groups)]


def range_key(strata: Strata, r: Range) -> str:
    """The group's key, with the value interval when the range is part of a split group."""
    glo, ghi = int(strata.bounds[r.group]), int(strata.bounds[r.group + 1])
    key = strata.keys[r.group]
    if strata.by_value and (r.lo, r.hi) != (glo, ghi):
        key += f" [{_fmt(strata.xs[r.lo])}, {_fmt(strata.xs[r.hi - 1])}]"
    return key


def _fmt(v: float) -> str:
    return f"{v:.6g}"


def prepare(workload: Workload, params: Mapping[str, Any], *, grouping: str, by_value: bool) -> tuple[str, Strata]:
    """Resolve the metric, group the launches and sort them."""
    if len(workload) == 0:
        raise UserError(f"{workload.source or 'workload'} has no kernel launches to sample")
    metric = workload.default_metric() if params.get("metric", "auto") == "auto" else params["metric"]
    values = workload.values(metric)
    if values.size and values.min() < 0:
        raise UserError(f"{workload.source or 'workload'}: column {metric!r} has negative values; pick a cost metric")
    workload.hash_ahead()  # the plan records the fingerprints: hashed on another core while this samples
    return metric, build_strata(values, group_launches(workload, grouping), by_value=by_value)


def draw_plan(
    workload: Workload,
    sampler: Sampler,
    params: Mapping[str, Any],
    seed: int,
    *,
    metric: str,
    strata: Strata,
    ranges: Sequence[Range],
    draws: Sequence[int] | np.ndarray,
    replace: bool,
    eps: float,
    confidence: float,
    extra_prediction: Mapping[str, Any] | None = None,
) -> Plan:
    """Draw ``draws[i]`` launches uniformly from each range (in range order) and build the plan.

    Without replacement the draws are distinct and clamped to the cluster size; the weight of
    a draw is N_i/m_i either way. The prediction records the bound ε, the confidence, and the
    relative error the rounded draws achieve by the error model (``predicted_error``).
    """
    g = rng(seed)
    ids = workload.kernels["kernel_id"].to_numpy()  # as stored (int32 mostly): no int64 copy of every id
    rows_parts = []
    clusters: list[Cluster] = []
    model = model_cycles(workload, metric, strata.values)
    model_in_order = None if model is strata.values else model[strata.order]
    sizes = np.array([r.size for r in ranges], dtype=np.int64)
    m_all = np.asarray(draws, dtype=np.int64)
    if not replace:
        m_all = np.minimum(m_all, sizes)
    m_all = np.maximum(m_all, 1)
    for cid, (r, m) in enumerate(zip(ranges, m_all)):
        n = r.size
        m = int(m)
        if replace:
            picks = g.integers(0, n, size=m)
        elif m >= n:
            picks = None  # the whole cluster
        else:
            picks = np.sort(g.choice(n, size=m, replace=False))
        rows = strata.order[r.lo : r.hi] if picks is None else strata.order[r.lo + picks]
        rows_parts.append(rows)
        # the sorted distinct ids (np.unique's list, without its per-call cost: one per cluster)
        representatives = [int(ids[rows[0]])] if m == 1 else sorted(set(ids[rows].tolist()))
        clusters.append(
            Cluster(
                id=cid,
                key=range_key(strata, r),
                size=n,
                draws=m,
                stats={
                    "mean": r.mean,
                    "std": r.std,
                    "cov": r.std / r.mean if r.mean > 0 else 0.0,
                    "total": r.mean * n,
                    **(tail := single_draw_tail(strata, r, m, confidence)),
                    **model_spread(model_in_order, r, m if tail else 0, confidence),
                },
                representatives=representatives,
            )
        )
    rows = np.concatenate(rows_parts) if rows_parts else np.zeros(0, np.int64)
    # N_i/m_i for each of a cluster's m_i draws, and its id (float64 division as Python's of ints)
    weights = np.repeat(sizes / m_all, m_all)
    cl = np.repeat(np.arange(len(ranges), dtype=np.int64), m_all)
    means = np.array([r.mean for r in ranges])
    stds = np.array([r.std for r in ranges])
    total = float(np.sum(sizes * means))
    var = design_variance(m_all, sizes, stds, replace=replace)
    predicted = z_value(confidence) * math.sqrt(var) / total if total > 0 else 0.0
    extra = {"predicted_error": predicted, "clusters": len(ranges)}
    extra.update(extra_prediction or {})
    return Plan.build(
        workload,
        sampler,
        params,
        seed,
        metric=metric,
        rows=rows,
        weights=weights,
        cluster_of_row=cl,
        clusters=clusters,
        kind="stratified",
        replace=replace,
        error_bound=eps,
        confidence=confidence,
        extra_prediction=extra,
        model=None if model_in_order is None else model,
    )


ALLOCATIONS = ("group", "joint")

COMMON_PARAMS: tuple[Param, ...] = (
    Param(
        "eps",
        float,
        0.05,
        "error bound ε: relative half-width of the interval, a fraction (0.05 = 5%)",
        minimum=1e-6,
        maximum=1.0,
    ),
    Param(
        "confidence", float, 0.95, "confidence level of the bound (z = 1.96 for 0.95)", minimum=0.5, maximum=0.999999
    ),
    Param(
        "group",
        str,
        "name",
        "group launches by kernel name (argument list stripped) or by name, grid and block",
        choices=GROUPINGS,
    ),
    Param("replace", bool, False, "draw with replacement (i.i.d., the paper) instead of without"),
    Param(
        "fpc",
        bool,
        False,
        "size draws with the finite-population correction (without replacement only): fewer draws from small "
        "clusters, the error then sits at ε instead of below it; off: the paper's sizes, clamped to the cluster",
    ),
    Param(
        "allocation",
        str,
        "group",
        "group: each group's clusters sized by KKT to ε of the group's total (the artifact; the union is bounded too); "
        "joint: one KKT over all clusters, ε of the workload's total (fewest samples)",
        choices=ALLOCATIONS,
    ),
    Param(
        "min_draws",
        int,
        1,
        "at least this many draws per cluster (at most its size); 30 is the usual rule of thumb for the central "
        "limit theorem on skewed times",
        minimum=1,
    ),
    Param("metric", str, "auto", "per-launch cost column: auto = cycles, else duration_ns"),
)


def size_clusters(ranges: Sequence[Range], params: Mapping[str, Any]) -> np.ndarray:
    """Draws per cluster by the KKT allocation: over all clusters (``joint``) or group by group."""
    z = z_value(params["confidence"])
    means = np.array([r.mean for r in ranges])
    stds = np.array([r.std for r in ranges])
    sizes = np.array([r.size for r in ranges])
    if params["allocation"] == "joint":
        return allocate(
            means, stds, sizes, eps=params["eps"], z=z, replace=iid_sizing(params), lower=params["min_draws"]
        ).draws
    groups = np.array([r.group for r in ranges], dtype=np.int64)
    draws = np.zeros(len(ranges), dtype=np.int64)
    # ranges arrive grouped (group by group), so each group is a contiguous slice
    cuts = np.flatnonzero(np.diff(groups)) + 1
    for sl in np.split(np.arange(len(ranges)), cuts):
        if sl.size:
            draws[sl] = allocate(
                means[sl],
                stds[sl],
                sizes[sl],
                eps=params["eps"],
                z=z,
                replace=iid_sizing(params),
                lower=params["min_draws"],
            ).draws
    return draws


def single_cluster_draws(r: Range, params: Mapping[str, Any]) -> int:
    """Eq. 3 for one cluster, clamped to [min_draws, N] (see :func:`iid_sizing`)."""
    alloc = allocate(
        np.array([r.mean]),
        np.array([r.std]),
        np.array([r.size]),
        eps=params["eps"],
        z=z_value(params["confidence"]),
        replace=iid_sizing(params),
        lower=params["min_draws"],
    )
    return int(alloc.draws[0])


def iid_sizing(params: Mapping[str, Any]) -> bool:
    """Whether draws are sized with the i.i.d. variance (the paper's eq. 3/6): always when
    drawing with replacement, and without replacement unless ``fpc`` asks for the
    finite-population correction."""
    return bool(params["replace"] or not params.get("fpc", False))


def finish(
    sampler: Sampler,
    workload: Workload,
    params: Mapping[str, Any],
    seed: int,
    metric: str,
    strata: Strata,
    ranges: list[Range],
    draws: np.ndarray,
    extra: Mapping[str, Any] | None = None,
) -> Plan:
    """Draw and build the plan with the parameters every stratified sampler shares."""
    return draw_plan(
        workload,
        sampler,
        params,
        seed,
        metric=metric,
        strata=strata,
        ranges=ranges,
        draws=draws,
        replace=params["replace"],
        eps=params["eps"],
        confidence=params["confidence"],
        extra_prediction={"groups": strata.groups, **(extra or {})},
    )


def model_spread(model_in_order: np.ndarray | None, r: Range, m: int = 0, confidence: float = 0.99) -> dict[str, float]:
    """``{"model_mean": μ, "model_cov": σ/μ}`` of the features' model of the cycles over a
    cluster (ddof 0, as ``cov``; the mean lets the estimator turn the relative spread into the
    cycles' units when it fits the cycles on the model), and, for a cluster of ``m`` ≥ 1 draws
    (where its design metric records a tail), ``"model_tail"``: how far the mean of m draws lands
    at ``confidence`` by the model's values (:func:`single_draw_tail`'s quantile); nothing
    without a model.

    Warp instructions are a proxy of the cycles that misjudges their spread both ways. One GEMM
    kernel at several shapes of equal instructions (4 CTAs of a long loop against 16 of a short
    one) spreads in cycles where its instructions do not; the model sees the shapes. A short
    launch bound by its latency spreads far less in cycles than in instructions (a top-k of
    instructions 39% apart, cycles 10% apart, the model 16.5%); the model counts the latency.
    Estimating the cycles, the estimator takes a cluster's spread and tail to be the model's
    wherever the model spreads; other metrics take the larger of the two spreads
    (:meth:`simsample.sampling.estimate._Design.floor_cov2`)."""
    if model_in_order is None:
        return {}
    v = model_in_order[r.lo : r.hi]
    mean = float(v.mean())
    out = {"model_mean": mean, "model_cov": float(v.std()) / mean if mean > 0 else 0.0}
    if r.size > m and mean > 0 and has_tail(r.size, m):
        out["model_tail"] = draws_tail(v, mean, m, confidence) / mean
    return out


def spread_stats(values: np.ndarray, m: int, confidence: float, model: np.ndarray | None = None) -> dict[str, float]:
    """What :func:`draw_plan` records of a cluster's spread, for a sampler that draws a cluster
    itself (random's one cluster of every launch): the ``"tail"`` of the mean of its ``m`` draws
    at ``confidence``, where :func:`has_tail` says, and ``model``'s ``"model_cov"`` and
    ``"model_tail"`` (:func:`model_spread`; ``model`` is the features' model of the cycles of the
    same launches, None where the design metric is measured or there is none).

    Without them the estimator took a proxy's spread for the cycles': random's intervals on trace
    features were 8 to 36 times its errors (warp instructions spread 0.96 over a decoder's
    launches, the cycles 0.37), and two draws of Rodinia heartwall's 20 launches, a few of them
    far out, covered in 90% of plans at 95% (96% with the tail of their mean)."""
    v = np.asarray(values, dtype=np.float64)
    if v.size == 0:
        return {}
    mean, std = float(v.mean()), float(v.std())
    out: dict[str, float] = {}
    if _records_tail(v.size, mean, std, m):
        out["tail"] = draws_tail(v, mean, m, confidence) / mean
    if model is not None:
        whole = Range(0, 0, v.size, mean, std)
        out.update(model_spread(np.asarray(model, dtype=np.float64), whole, m if "tail" in out else 0, confidence))
    return out


def draws_tail(values: np.ndarray, mean: float, m: int, confidence: float) -> float:
    """The ``confidence`` quantile of |x̄_m − μ| over every set of ``m`` of ``values`` (one
    draw: over the values), in their units."""
    if m == 1:
        return draw_quantile(np.abs(values - mean), confidence)
    if m == 2 and math.comb(values.size, 2) > TAIL_MAX_SETS:  # every pair, without a cached table of them
        i, j = np.triu_indices(values.size, 1)
        return draw_quantile(np.abs((values[i] + values[j]) / 2 - mean), confidence)
    means = values[_draw_sets(values.size, m)].mean(axis=1)
    return draw_quantile(np.abs(means - mean), confidence)


def has_tail(n: int, m: int) -> bool:
    """Whether a cluster of ``n`` launches drawn ``m`` times records its draws' tail: one draw
    always; two while the pairs are at most :data:`TAIL_MAX_PAIRS`; three or four while the sets
    are at most :data:`TAIL_MAX_SETS` (beyond, the mean of m draws is near normal or the
    cluster's share small)."""
    if m < 1 or m > TAIL_MAX_DRAWS:
        return False
    return m == 1 or math.comb(n, m) <= (TAIL_MAX_PAIRS if m == 2 else TAIL_MAX_SETS)


def _records_tail(n: int, mean: float, std: float, m: int) -> bool:
    """Whether a cluster of ``n`` launches drawn ``m`` times records its draws' tail: more
    launches than draws, a spread, and :func:`has_tail`'s limits."""
    return n > m and std > 0 and mean > 0 and has_tail(n, m)


def single_draw_tail(strata: Strata, r: Range, m: int, confidence: float) -> dict[str, float]:
    """``{"tail": q}`` for a cluster drawn a few times (of more launches than draws, with
    spread): q is the ``confidence`` quantile of |x̄_m − μ|/μ, how far from the cluster's mean the
    mean of its m draws can land at that confidence. A few draws' estimate is as skewed as the
    cluster: 19 launches of which 3 are 2.7 standard deviations slow gave a normal 99% interval
    that missed whenever the one draw hit one of them; three draws of 21 launches with one far
    out missed in 17 of 100 plans at 95% (the CUDA SDK's quasirandomGenerator under stem). The
    estimator widens the interval until it holds these tails (:mod:`simsample.sampling.estimate`).
    One draw: over the launches; two to :data:`TAIL_MAX_DRAWS`: over every set of m launches,
    where :func:`has_tail` says. Empty otherwise."""
    if not _records_tail(r.size, r.mean, r.std, m):
        return {}
    key = ("tail", r.lo, r.hi, r.mean, m, confidence)  # margin's tail_draws asks first, draw_plan again
    found = strata.memo.get(key)
    if found is None:
        found = strata.memo[key] = draws_tail(strata.xs[r.lo : r.hi], r.mean, m, confidence) / r.mean
    return {"tail": found}


def tail_draws(
    draws: np.ndarray, strata: Strata, ranges: Sequence[Range], *, eps: float, confidence: float
) -> np.ndarray:
    """``draws`` with more where the clusters' tails would reach beyond ε: while the least
    half-width the estimator gives the plan's design metric, √Σ_i (N_i·μ_i·q_i)², q_i the tail of
    cluster i's m_i draws (:func:`single_draw_tail`), exceeds ε of its total, the cluster of the
    largest reach gets one more draw.

    A variance-sized allocation does not see a cluster's tail, and the tail of the mean of m
    draws need not shrink with m: 100 launches with one 10% above the rest give one draw a 99%
    tail of 1.3% (the slow launch is the 1% a draw may hit) and two draws one of 5.0% (2% of the
    pairs hold it). The CUDA SDK's lineOfSight at ε = 3% drew that cluster twice where ε = 5%
    drew it once, and printed ±4.6% against ±2.6%: a smaller ε, a wider interval, beyond its own
    bound. A plan whose interval its tails would widen beyond ε is not the plan of ε either
    (Rodinia's hotspot: one draw of 256 launches, three of them 11% off, ±11% at ε = 5%). Beyond
    :data:`TAIL_MAX_DRAWS` draws, or the sets :func:`has_tail` allows, no tail is recorded (the
    mean is near normal), so the loop ends there at the latest."""
    out = np.asarray(draws, dtype=np.int64).copy()
    sizes = np.array([r.size for r in ranges], dtype=np.int64)
    out = np.minimum(np.maximum(out, 1), sizes)
    total = float(sum(r.mean * r.size for r in ranges))
    if total <= 0 or not ranges:
        return out

    def reach(i: int) -> float:
        r = ranges[i]
        return r.size * r.mean * single_draw_tail(strata, r, int(out[i]), confidence).get("tail", 0.0)

    reaches = np.array([reach(i) for i in range(len(ranges))])
    while float(np.sqrt(np.sum(reaches * reaches))) > eps * total:
        i = int(np.argmax(reaches))
        if reaches[i] <= 0 or out[i] >= sizes[i]:
            break
        out[i] += 1
        reaches[i] = reach(i)
    return out


#: Clusters drawn at most this many times record the tail of their draws' mean (:func:`single_draw_tail`).
TAIL_MAX_DRAWS = 4

#: The most sets of m launches a cluster's tail is computed over (every one of them, exactly).
TAIL_MAX_SETS = 20000

#: The most pairs a cluster drawn twice computes its tail over (1,000 launches): Rodinia's
#: hotspot drew 256 launches, three of them 11% off, twice; without the tail of the 32,640 pairs
#: its normal interval of ±2.7% covered 95% of plans at 99%.
TAIL_MAX_PAIRS = 500_000


@functools.lru_cache(maxsize=256)
def _draw_sets(n: int, m: int) -> np.ndarray:
    """Every set of ``m`` of ``n`` positions, one a row (read-only: shared between clusters)."""
    sets = np.array(list(itertools.combinations(range(n), m)), dtype=np.int64)
    sets.flags.writeable = False
    return sets


def draw_quantile(values: np.ndarray, q: float) -> float:
    """The smallest of ``values`` that at least a share ``q`` of them do not exceed (the inverted
    CDF: NumPy's ``method="inverted_cdf"``): one draw from N launches lands within it with
    probability at least ``q``. Interpolating between order statistics put a 99% tail of 19
    launches just below the largest, so the draw of that one launch (1 in 19) fell outside
    (Rodinia heartwall and the CUDA SDK's convolutionSeparable: 92 of 100 fresh seeds covered);
    below 1/(1 − q) launches this is the largest. ``values`` is reordered in place."""
    n = values.size
    k = min(max(math.ceil(q * n - 1e-9), 1), n)
    values.partition(k - 1)
    return float(values[k - 1])
