"""margin: simsample's own sampler and the default of ``simsample plan``.

It keeps what the measurements on real profiles favour and sizes with a margin:

1. **Clusters**: launches grouped by kernel name, each group split at the peaks of its times by
   ROOT's exact 2-means recursion (:func:`simsample.plugins.samplers.root.root_tree`), which separates a
   slow tail from the body of a kernel. The recursion also runs at larger ε (:data:`TREE_EPS`),
   and the tree whose joint allocation for ε has the smallest variance is kept (version 4:
   :func:`best_tree`), so that a smaller ε never gives a less precise plan.
2. **One allocation for the workload**: the draws of all clusters are sized together by the KKT
   solution for ε of the workload's total (not of each kernel's), with the finite-population
   correction, so a small cluster is not asked for more draws than the error bound needs.
3. **A margin**: the draws are sized for ``sizing_confidence`` (99.8%) and the interval is
   reported at ``confidence`` (99%). Sized for exactly ε at 95%, one plan in twenty misses ε by
   design, and on a workload evaluated with 20 seeds two misses are likely; the margin costs
   about 2.5 times the draws of a 95% sizing, which the joint allocation with the correction
   more than pays for (13× against ROOT's 4× on the development profiles).
4. The estimator (:mod:`simsample.sampling.estimate`) takes each sampled cluster's spread as at least
   the design metric's, which is known for every launch: a sample that misses a skewed
   cluster's tail no longer gives a narrow interval that misses the truth.
5. **Spread to borrow** (``pool_dof``): on a design metric that is a proxy of the simulated one
   (trace features: warp instructions), the heaviest clusters drawn once whose launches the
   design metric cannot tell apart get a second draw until the sample measures a few degrees of
   freedom of the spread it does not show, which the clusters drawn once borrow
   (:func:`pool_donors`). On measured times (a profile) none: there the design metric's spread
   is the launches' own and a second draw would buy no interval the design does not give
   (version 4; version 2 and 3 spent them everywhere, which halved small plans' speedup).
   Where they apply, one more draw goes to the cluster of equal design values whose draws each
   stand for the largest part of the total, if that cluster holds two thirds of the variance
   and the draw costs at most a fifth of the plan's sampled time (``spread_draw``, version 6;
   :func:`spread_draw`): the spread that matters most is then measured with two degrees of
   freedom, not one. "Heaviest" and "variance" are the cycles': where the features model each
   launch's cycles (``predicted_cycles``), the second draws go in turn to the heaviest by the
   design metric and by that model, and the spread draw follows the model (``donors_by``,
   version 7): warp instructions miss the cycles of launches bound by latency.
6. **Occupancy and cache context on trace features** (``group=auto``): launches of one kernel
   are grouped by the SMs their grid occupies and their waves, and by whether their loads find
   lines recent launches touched (cold, partly warm, warm; :mod:`simsample.sampling.grouping`),
   since the same instructions cost different cycles at different shapes and against a cold or
   a warm L2; profiles keep the name grouping (measured durations carry both).
7. **Tails within ε** (``tails``, version 8): the estimator's interval reaches at least the
   clusters' tails (how far the mean of a cluster's few draws can land), which a
   variance-sized allocation does not see, and which need not shrink with one more draw (100
   launches with one 10% out: one draw's 99% tail 1.3%, two draws' 5.0%). While they would
   widen the interval beyond ε, the cluster of the farthest reach gets one more draw
   (:func:`simsample.sdk.tail_draws`): a smaller ε no longer gives a wider interval (the CUDA
   SDK's lineOfSight: ±4.6% at ε = 3% against ±2.6% at 5%; now ±1.5%), and a plan whose one
   draw's tail exceeded ε is within it (Rodinia's hotspot: ±11% at ε = 5%, now ±2.2%).

Two further ideas are parameters, off by default because they did not pay on the development
profiles: ``pool=true`` merges clusters of at most five launches that the allocation gives less
than one draw into strata across kernels (fewer launches sampled, but not less time: the
harmonic-mean speedup fell from 13.1× to 10.6×); ``max_skew`` raises draws until the
estimator's skewness is below a bound (Cochran's rule n > 25·G1² applied to the total; 0.2
is Cochran's), which fixed coverage where the design floor above now does, at a third of the
speedup (see :mod:`simsample.plugins.samplers._margin.pooling`).

**What the interval covers.** The interval of ``simsample estimate`` is for the total of the
metric simulated, under the design: launches drawn at random within each cluster, the
estimate's distribution near normal. It can fail where the simulated metric does not follow
the design metric the clusters were built on (a cluster of launches with equal profiled times
whose simulated cycles differ: single-draw clusters then borrow the pooled relative variance
of the others, see :mod:`simsample.sampling.estimate`), where sampled launches are simulated in a
different context than in the full run (caches: use ``apply --warmup``), and, like every
design-based interval, in about 1% of plans by construction.
"""

from __future__ import annotations

import gc
import math
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import numpy as np

from simsample.plugins.samplers._margin.pooling import (
    regroup,
    skew_sizes,
    small_clusters,
    third_moments,
)
from simsample.plugins.samplers.root import root_tree
from simsample.sdk import (
    GROUPINGS,
    MEASURED_METRICS,
    MODEL_COLUMN,
    Param,
    Plan,
    Range,
    Sampler,
    Strata,
    Workload,
    allocate,
    draw_plan,
    exact_stats,
    group_ranges,
    hookimpl,
    model_cycles,
    prepare,
    resolve_grouping,
    sampled_time,
    tail_draws,
    z_value,
)

#: Draws of a pooled stratum: two, so that it estimates its own variance.
POOLED_DRAWS = 2

#: Degrees of freedom of spread that second draws buy on a proxy design metric (``pool_dof``).
PROXY_POOL_DOF = 4

#: Largest share of the plan's sampled time the one more draw of :func:`spread_draw` may add
#: (``spread_draw``): 7-11% on the trace workloads with a full run, 28% on the bundled example.
SPREAD_DRAW_COST = 0.2

#: Smallest share of the flat clusters' variance the cluster of :func:`spread_draw` must hold:
#: chains 0.95 and decoder 0.76 get the draw; MacSim layers 0.55, training 0.29 and hetero 0.22,
#: whose real sampled runs it made miss, do not.
SPREAD_DRAW_SHARE = 2 / 3

#: What weighs the clusters for the second draws and the spread draw (``donors_by``).
DONORS_BY = ("cycles", "design")


class MarginSampler(Sampler):
    name = "margin"
    # 5: stats.tail: the launches' own quantile, and for clusters drawn 2-4 times (same draws);
    # 6: one more draw in the heaviest flat cluster where second draws apply (spread_draw);
    # 7: those draws weigh the clusters by the features' model of the cycles too (donors_by);
    # 8: more draws where the clusters' tails would widen the interval beyond ε (tails)
    version = "8"
    description = (
        "simsample's default: ROOT's splits, one allocation with the finite-population correction, sized with a margin"
    )
    params = (
        Param(
            "eps",
            float,
            0.05,
            "error bound ε: relative half-width of the interval, a fraction (0.05 = 5%)",
            minimum=1e-6,
            maximum=1.0,
        ),
        Param("confidence", float, 0.99, "confidence level of the reported interval", minimum=0.5, maximum=0.999999),
        Param(
            "sizing_confidence",
            float,
            0.998,
            "confidence the draws are sized for (at least 'confidence'): the margin that keeps nearly every plan "
            "within ε",
            minimum=0.5,
            maximum=0.999999,
        ),
        Param(
            "group",
            str,
            "auto",
            "group launches by kernel name (argument list stripped), by name, grid and block, by name and occupancy "
            "class (SMs used, waves: trace features), or also by cache context (warm_reads); auto: "
            "name+occupancy+context on trace features, name elsewhere",
            choices=GROUPINGS,
        ),
        Param(
            "pool",
            bool,
            False,
            "merge clusters of at most 5 launches worth less than one draw into strata across kernels",
        ),
        Param(
            "max_skew",
            float,
            None,
            "largest skewness of the estimator of the total (Cochran's rule: 0.2; none: no limit)",
            minimum=0.01,
            maximum=10.0,
            nullable=True,
        ),
        Param("metric", str, "auto", "per-launch cost column: auto = cycles, else duration_ns"),
        Param(
            "pool_dof",
            int,
            None,
            "second draws from the heaviest single-draw clusters of equal design values until the sample measures "
            "this many degrees of freedom of the spread the design metric does not show, which clusters drawn once "
            f"borrow (0: none; none: {PROXY_POOL_DOF} on a proxy design metric such as warp instructions, 0 on "
            "measured times)",
            minimum=0,
            maximum=1000,
            nullable=True,
        ),
        Param(
            "spread_draw",
            float,
            None,
            "where second draws apply: one more draw in the cluster of equal design values whose draws each stand for "
            "the largest part of the total, when it holds two thirds of the variance and that draw adds at most this "
            "share of the plan's sampled time (0: none; "
            f"none: {SPREAD_DRAW_COST} where pool_dof is above 0, else 0)",
            minimum=0.0,
            maximum=1.0,
            nullable=True,
        ),
        Param(
            "donors_by",
            str,
            "cycles",
            "what weighs the clusters for the second draws and the spread draw: cycles = half the second draws by "
            f"the design metric, half by the features' model of the cycles ({MODEL_COLUMN}), and the spread draw by "
            "the model, where the workload has that column; design = the design metric alone (version 6)",
            choices=DONORS_BY,
        ),
        Param(
            "tails",
            bool,
            True,
            "more draws in the clusters of the farthest tails while their tails would widen the interval beyond ε "
            "(false: version 7's draws)",
        ),
    )
    bounded = True

    def plan(self, workload: Workload, params: Mapping[str, Any], seed: int) -> Plan:
        # ROOT's recursion, sized as this sampler sizes: without replacement, with the correction
        sizing = max(params["sizing_confidence"], params["confidence"])
        rp = {
            **params,
            "confidence": sizing,
            "replace": False,
            "fpc": True,
            "min_draws": 1,
            "split": "exact",
            "allocation": "joint",
        }
        metric, strata = prepare(workload, rp, grouping=params["group"], by_value=True)
        z = z_value(sizing)
        leaves = best_tree(strata, rp, seed, eps=params["eps"], z=z)
        small = small_clusters(leaves, eps=params["eps"], z=z) if params["pool"] else np.zeros(len(leaves), bool)
        pooled_launches = int(sum(r.size for r, s in zip(leaves, small) if s))
        if small.sum() >= 2 and pooled_launches > 2:
            layout, pool_group = regroup(
                strata, [r for r, s in zip(leaves, small) if not s], [r for r, s in zip(leaves, small) if s]
            )
            ranges = group_ranges(layout)
            if pool_group >= 0:
                strata_of_pool = root_tree(layout, ranges[pool_group], rp, seed)
                ranges = ranges[:pool_group] + exact_stats(layout, strata_of_pool) + ranges[pool_group + 1 :]
            pooled = np.array([r.group == pool_group for r in ranges])
        else:
            layout, ranges, pooled = strata, leaves, np.zeros(len(leaves), bool)
        sizes = np.array([r.size for r in ranges], dtype=np.float64)
        means = np.array([r.mean for r in ranges])
        stds = np.array([r.std for r in ranges])
        lower = np.minimum(np.where(pooled, float(POOLED_DRAWS), 1.0), sizes)
        alloc = allocate(means, stds, sizes, eps=params["eps"], z=z, replace=False, lower=lower, upper=sizes)
        draws = alloc.draws
        if params["max_skew"] is not None:
            draws = skew_sizes(draws, sizes.astype(np.int64), stds, third_moments(layout, ranges), params["max_skew"])
        before_pool = int(np.sum(draws))
        pool_dof = params["pool_dof"]
        if pool_dof is None:
            pool_dof = 0 if metric in MEASURED_METRICS else PROXY_POOL_DOF
        cost = params["spread_draw"]
        if cost is None:
            cost = SPREAD_DRAW_COST if pool_dof > 0 else 0.0
        model = None
        if params["donors_by"] == "cycles" and (pool_dof > 0 or cost > 0):
            cycles = model_cycles(workload, metric, strata.values)
            if cycles is not strata.values:  # the features model the cycles (a proxy design metric)
                model = range_means(layout, ranges, cycles)
        draws = pool_donors(draws, sizes, means, pool_dof, stds=stds, model=model)
        after_pool = int(np.sum(draws))
        draws = spread_draw(draws, sizes, means if model is None else model, stds, cost)
        after_spread = int(np.sum(draws))
        if params["tails"]:
            draws = tail_draws(draws, layout, ranges, eps=params["eps"], confidence=params["confidence"])
        extra = {
            "grouping": resolve_grouping(workload, params["group"]),
            "groups": strata.groups,
            "pooled_clusters": int(small.sum()) if pooled.any() else 0,
            "pooled_launches": int(sizes[pooled].sum()),
            "pooled_strata": int(pooled.sum()),
            "skew_draws": int(before_pool - alloc.draws.sum()),
            "pool_draws": int(after_pool - before_pool),
            "spread_draws": int(after_spread - after_pool),
            "tail_draws": int(np.sum(draws) - after_spread),
            # what weighed the clusters for those draws: the design metric alone where the
            # workload has no model of the cycles, or on measured times (no such draws there)
            "donors_by": "design" if model is None else "cycles",
        }
        return draw_plan(
            workload,
            self,
            params,
            seed,
            metric=metric,
            strata=layout,
            ranges=ranges,
            draws=draws,
            replace=False,
            eps=params["eps"],
            confidence=params["confidence"],
            extra_prediction=extra,
        )


#: ε at which ROOT's recursion also builds the clusters (those above the plan's ε): a tree of
#: them replaces the plan's own where, allocated for the plan's ε, it is more precise.
TREE_EPS = (0.02, 0.05, 0.1, 0.2)

#: How much more sampled time than the plan's own tree a more precise tree may cost (none: any).
TREE_COST = math.inf


def best_tree(strata: Strata, rp: Mapping[str, Any], seed: int, *, eps: float, z: float) -> list[Range]:
    """The leaves of ROOT's recursion at ``eps``, or of the recursion at one of :data:`TREE_EPS`
    above it where that tree, allocated jointly for ``eps``, has the smallest variance (at most
    :data:`TREE_COST` times the own tree's sampled time). Every tree meets the bound; the most
    precise one makes the plan of a smaller ε never less precise than that of a larger one, since
    the trees offered to the larger are offered to the smaller too, with more draws.

    ROOT accepts a split when its two children, each sized for ε on its own, cost less than the
    parent; at a small ε a parent's draws reach its size (the correction) and no split looks
    worth it, so the tree of a smaller ε could be coarser, and its plan both dearer and less
    precise than the tree of a larger ε allocated for the smaller one (a profile whose plan at
    ε = 3% drew 882 launches for ±2.1% where the tree of 5%, allocated for 3%, drew 763 for
    ±1.5%): a smaller ε gave a wider interval. On the development profiles the most precise
    tree also cost less time: the harmonic-mean speedup rose from 4.33× to 4.51× (5 seeds)."""
    best: tuple[float, float, list[Range]] | None = None
    for tree_eps in [eps, *sorted(e for e in TREE_EPS if e > eps)]:
        p = {**rp, "eps": tree_eps}
        leaves: list[Range] = []
        with collector_paused():  # thousands of short-lived, never cyclic objects per tree
            for r in group_ranges(strata):
                leaves.extend(root_tree(strata, r, p, seed))
            leaves = exact_stats(strata, leaves)
        sizes = np.array([r.size for r in leaves], dtype=np.float64)
        means = np.array([r.mean for r in leaves])
        alloc = allocate(
            means, np.array([r.std for r in leaves]), sizes, eps=eps, z=z, replace=False, lower=1.0, upper=sizes
        )
        cost = sampled_time(alloc.draws, means)
        if best is None:
            best = (cost, alloc.variance, leaves)
            budget = cost * (1 + 1e-12)
        elif cost <= budget * TREE_COST and alloc.variance < best[1] * (1 - 1e-12):
            best = (cost, alloc.variance, leaves)
    assert best is not None
    return best[2]


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector held off for a block. ROOT's recursion makes about
    100,000 small objects at 10^6 launches (ranges, tuples, lists), none of them part of a
    cycle; each collection they trigger also walks the older objects (pandas, NumPy, the
    workload), and in a fresh ``plan`` process those collections took about 0.03 s of the
    sampler's 0.35 s. Reference counting still frees everything at once."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def pool_donors(
    draws: np.ndarray,
    sizes: np.ndarray,
    means: np.ndarray,
    dof: int,
    *,
    stds: np.ndarray | None = None,
    model: np.ndarray | None = None,
) -> np.ndarray:
    """Draws raised to 2 in the heaviest clusters drawn once (largest N·mean first) until the
    clusters drawn two or more times (a census included) give ``dof`` degrees of freedom of the
    spread the design metric does not show.

    With ``stds`` (the design metric's spread per cluster) only clusters of equal design values
    are raised and counted with m − 1 degrees of freedom, others with m − 2: the estimator
    measures the spread that the design metric does not explain as the scatter about a line in
    the design metric through a cluster's draws (:mod:`simsample.sampling.estimate`), and two
    draws of different design values give none, so such a draw would cost time and buy nothing.

    A cluster drawn once cannot measure its own spread, and where every cluster is drawn once
    (launches of equal instructions: the design metric has no spread anywhere) the estimator had
    nothing but the differences between clusters to borrow from, which gave intervals of ±58 to
    ±450% around estimates within 2% (trace features of the chains and hetero workloads). A few
    second draws measure the simulated metric's own relative spread, pooled by the estimator; on
    a workload of 10⁵ launches they cost nothing, on one of 30 they cost a few launches. The
    heaviest clusters, not one of each kernel: their spread is the one the total's variance is
    made of, and measured across kernels instead, the pool missed the spread of hetero's GEMMs
    (coverage 8 of 20 plans against the full run's cycles, where heaviest-first gave 18).

    With ``model`` (each cluster's mean of the features' model of the cycles, version 7) the
    clusters are taken in turn from two orders: heaviest by the design metric, heaviest by the
    model. Warp instructions misjudge where the cycles are for launches bound by latency (a
    two-CTA boundary fix: 34% of a solver's cycles, a sliver of its instructions), so the pool
    measured the spread of instruction-heavy clusters and lent it to cycle-heavy ones whose
    cycles barely vary (short kernels: intervals 17 times the error). By the model alone, the
    pool missed the instruction-heavy ones' spread instead (chains and training covered 0.85 and
    0.75 of 200 fresh seeds); taken in turn, both kinds are measured.
    """
    out = np.asarray(draws, dtype=np.int64).copy()
    n = np.asarray(sizes, dtype=np.int64)
    m = np.minimum(out, n)
    flat = np.ones(n.size, bool) if stds is None else np.asarray(stds, dtype=np.float64) <= 0
    have = int(np.sum(np.where(m >= 2, m - np.where(flat, 1, 2), 0)))
    if have >= dof:
        return out
    candidates = np.flatnonzero((m == 1) & (n >= 2) & flat)
    orders = [candidates[np.argsort(-(n[candidates] * np.asarray(means, dtype=np.float64)[candidates]), kind="stable")]]
    if model is not None:
        orders.append(
            candidates[np.argsort(-(n[candidates] * np.asarray(model, dtype=np.float64)[candidates]), kind="stable")]
        )
    for i in _in_turn(orders):
        if have >= dof:
            break
        out[i] = 2
        have += 1
    return out


def _in_turn(orders: list[np.ndarray]) -> Iterator[int]:
    """The first of each order, then the second of each, ..., each index once."""
    seen: set[int] = set()
    for rank in range(max((len(o) for o in orders), default=0)):
        for order in orders:
            if rank < len(order) and int(order[rank]) not in seen:
                seen.add(int(order[rank]))
                yield int(order[rank])


def range_means(strata: Strata, ranges: list[Range], per_launch: np.ndarray) -> np.ndarray:
    """Each cluster's mean of ``per_launch`` (one value per launch of the workload), from one
    cumulative sum over the launches in the strata's order: every cluster is a contiguous range
    of it."""
    cum = np.concatenate(([0.0], np.cumsum(np.asarray(per_launch, dtype=np.float64)[strata.order])))
    lo = np.array([r.lo for r in ranges], dtype=np.int64)
    hi = np.array([r.hi for r in ranges], dtype=np.int64)
    return (cum[hi] - cum[lo]) / np.maximum(hi - lo, 1)


def spread_draw(draws: np.ndarray, sizes: np.ndarray, means: np.ndarray, stds: np.ndarray, cost: float) -> np.ndarray:
    """Draws with one more in the cluster of equal design values, not yet a census, whose draws
    each stand for the largest part of the total (N·mean/m, the design metric's), when that
    cluster holds at least :data:`SPREAD_DRAW_SHARE` of the flat clusters' variance (each term
    (N·mean)²(1/m − 1/N), as under one relative spread) and the draw adds at most ``cost`` times
    the plan's sampled time (Σ m·mean); unchanged otherwise.

    Why: after the second draws (:func:`pool_donors`) the interval on a proxy design metric rests
    on the spread a few pairs measured, pooled over clusters of very different weight. Where one
    cluster holds most of the variance (chains: the cold ``fill`` cluster of 18 launches, two
    draws, 95% of it), its pair is the spread that matters, measured with about one degree of
    freedom, and the pool of near-equal warm pairs understated it: margin's 99% interval covered
    0.92 of fresh seeds (20-219). A third draw there measures that spread with two: 0.95, and
    the intervals of every trace workload with a full run got sharper (median half-width ÷ mean
    error: chains 6.6 -> 5.6, decoder 5.4 -> 4.7, training 4.4 -> 3.5, hetero 15.6 -> 12.0,
    MacSim layers 5.1 -> 3.5) for 5-12% of their speedup. But where the variance is spread over
    several clusters the pool was the right measure, and a third draw of a near-constant cluster
    only shrank it: real sampled runs of training covered 3 of 5 seeds (5 of 5 without), MacSim
    layers 16 of 20 (19), at intervals of ±0.05-0.11%. Hence the share: the draw goes where one
    cluster holds most of the variance (chains, decoder). The cost bound keeps a small plan whose
    every draw is a large share (the bundled example: 28%, 2.71x -> 2.12x) as it was.
    Only clusters of equal design values: a cluster with design spread has its own floor, and
    the estimator's line through its draws needs the draw more than once to measure anything.
    Version 7 passes the features' model of the cycles as ``means`` where the workload has one
    (``donors_by=cycles``): the share and the cost are then the cycles', not the instructions'
    (the decoder's heaviest flat cluster holds 0.76 of the variance in warp instructions, 0.45 in
    modelled cycles, and no longer gets the draw)."""
    out = np.asarray(draws, dtype=np.int64).copy()
    if cost <= 0:
        return out
    n = np.asarray(sizes, dtype=np.int64)
    mu = np.asarray(means, dtype=np.float64)
    m = np.minimum(out, n)
    candidates = np.flatnonzero((np.asarray(stds, dtype=np.float64) <= 0) & (m >= 1) & (m < n))
    if candidates.size == 0:
        return out
    i = int(candidates[np.argmax(n[candidates] * mu[candidates] / m[candidates])])
    # each flat cluster's variance term under a common relative spread: (N·ȳ)² (1/m − 1/N)
    terms = (n[candidates] * mu[candidates]) ** 2 * (1.0 / m[candidates] - 1.0 / n[candidates])
    held = float(terms[candidates == i][0]) / float(terms.sum()) if terms.sum() > 0 else 0.0
    if held >= SPREAD_DRAW_SHARE and mu[i] <= cost * float(np.sum(m * mu)):
        out[i] = m[i] + 1
    return out


@hookimpl
def register_samplers(register):
    register(MarginSampler())
