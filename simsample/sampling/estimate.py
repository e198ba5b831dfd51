"""From per-launch simulator results to whole-workload estimates with confidence intervals.

Point estimates
---------------
For a stratified plan (random draws within clusters) the default estimate of a total is the
expansion estimator Σ_i N_i·ȳ_i = Σ w·y, what every sampler's weights mean. The separate ratio
estimator :func:`estimate_ratio_total`, Σ_i X_i·(Σ y / Σ x)_i, uses the design metric x (the
metric the plan was sized on, known for every launch: its cluster totals X_i and the sampled
launches' values are in the plan) as auxiliary variable: where the simulated metric is nearly
proportional to the design metric inside a cluster, it removes the part of the error that the
design metric explains (Cochran, *Sampling Techniques*, §6.10–6.11).

Variance, and why it must neither collapse nor explode
------------------------------------------------------
Per cluster i with m_i draws of N_i launches the variance is N_i²·s_i²/m_i, times the
finite-population correction (1 − m_i/N_i) when drawn without replacement; a census cluster
adds none. A cluster of at least :data:`OWN_DRAWS` draws takes its design metric's spread S_x²
(known exactly from the plan: a sample that misses a skewed cluster's tail underestimates it)
plus its own scatter about its least-squares line in x (ddof 2), what the design does not show.

A cluster of fewer draws, and above all one drawn once, cannot measure its own spread, and
samplers draw once exactly where the design metric has (nearly) no spread, while the simulated
metric (cycles, which depend on caches and context) still varies there. It takes a variance
model, ȳ_i²·(CoV_x,i² + δ) (:func:`_borrow`):

- CoV_x,i²: its design metric's own relative spread, known exactly: what the design shows (on
  a proxy design metric, warp instructions, the features' model of the cycles' wherever the
  model spreads when the cycles are estimated, the larger of the two for other metrics:
  ``stats.model_cov``, :meth:`_Design.floor_cov2`; for the cycles, scaled by how far they follow
  the model over its kernel's draws, :func:`_kernel_model_slopes`);
- δ: the relative spread that the design metric does *not* explain, pooled over the clusters
  that measured it (:func:`_excess_pool`): each cluster of two or more draws gives the scatter
  of its simulated values about the least-squares line in x through its own draws (ddof 2; ddof
  1 where its draws share one x), and single-draw clusters of one kernel are collapsed
  (Hansen, Hurwitz and Madow 1953; Isaki 1983: their scatter about a line y = a + b·μ_x, less
  what their own design spread adds through the slope; only clusters of equal design values,
  where a draw's distance from the line is not mostly a spread known already). Pooled by
  degrees of freedom; a cluster of equal design values takes the larger of that pool and the one
  of clusters of equal design values alone (like with like).

This is a variance model fitted over the measured clusters with the design spread as its
covariate (coefficient 1: the part the design explains is not estimated again), and it replaced
a pooled relative variance of the simulated metric that one erratic cluster could dominate: on a
profile that is its own truth, a 1 ns fill kernel of CoV 31 gave every heavy single-draw
cluster its relative variance (stem ±70.8% around an error of 0.18%); its spread is what its
design values show, so δ = 0 there and each cluster keeps its exact design variance. Where
every cluster has equal design values (trace features: equal warp instructions) it is the
textbook pooled relative variance (Cochran §5A.12), measured by the second draws margin spends
there. Where nothing measured δ and no design spread is known, the plan gets no interval
rather than a false one. A simulator's fixed cost per launch (cycles = c + b·instructions) is
not counted as spread: the line has an intercept.

A single draw's estimate of a cluster is as skewed as the cluster, and a few draws' nearly so:
stratified plans record for each cluster drawn one to four times how far from its mean the mean
of its draws lands at the plan's confidence (``stats.tail``, the launches' own quantile; on
trace features, for the cycles, the model's, ``stats.model_tail``, as for the spread), and the
interval reaches at least the root sum of squares of their N·ȳ·tail (:func:`_tail_half_width`).

Degrees of freedom: the known parts count as known, each own estimate with m_i − 1, the pooled
δ as one shared estimate with its pool's degrees of freedom (Welch–Satterthwaite:
ν = (Σ v)² / Σ v_est²/ν). q is Student's t at ν (reported as ``MetricEstimate.dof`` and by
``simsample estimate`` where it widens the interval), the normal quantile of the paper's CLT
beyond :data:`NORMAL_DOF`. A confidence asked of ``simsample estimate`` whose t quantile is
more than :data:`MAX_T_RATIO` times the normal one is refused in one line naming the
confidence that would work (one degree of freedom makes a 99% interval ±63.7 standard errors);
at the plan's own confidence such a metric is given without an interval. Plans that pick one representative per cluster
(PKA, Sieve, Photon) carry no statistical bound, and their estimates have none, unless an audit
drawn beside them measured the representatives' error (:mod:`simsample.sampling.audit`).

Ratio metrics (IPC, hit rates) are ratios of estimated totals, R̂ = T̂_a / T̂_b; their variance is
the delta method's, Var(T̂_z)/T̂_b² with z = a − R̂·b per launch: clusters of enough draws give
z's own spread; the others z's pooled relative spread, or, where no cluster measured it, the
bound (S_a + R̂·S_b)² from what the totals of a and b borrow (:func:`_ratio_borrow`).

Values are looked up by the plan's sampled kernel ids, so a results table may hold more rows
(other kernels, warm-up launches): they are ignored. Every value used must be finite.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from dataclasses import replace as with_fields

import lazy_loader as lazy
import numpy as np

from simsample.errors import UserError
from simsample.planfile import Plan
from simsample.sampling.audit import audit_bound, has_audit
from simsample.sampling.grouping import CONTEXT_CLASSES
from simsample.workload import MEASURED_METRICS

pd = lazy.load("pandas")
special = lazy.load(
    "scipy.special", suppress_warning=True
)  # ndtri and stdtrit: the norm and t quantiles of scipy.stats, bit for bit, without importing it


@dataclass
class MetricEstimate:
    """Estimated whole-workload value of one metric."""

    metric: str
    estimate: float
    std_error: float | None
    ci_low: float | None
    ci_high: float | None
    confidence: float
    samples: int
    kind: str = "total"  # "total" or "ratio"
    #: effective (Welch–Satterthwaite) degrees of freedom of the interval's Student t quantile;
    #: None where the interval is normal (the variance is known or has many degrees of freedom)
    dof: float | None = None
    #: an audited representative plan's estimate of its own error, estimate − truth
    #: (:mod:`simsample.sampling.audit`); None for every other plan
    bias: float | None = None

    def to_json(self) -> dict:
        return {k: (None if isinstance(v, float) and not np.isfinite(v) else v) for k, v in asdict(self).items()}


def _z(confidence: float) -> float:
    if not 0 < confidence < 1:
        raise UserError(f"confidence must be between 0 and 1, got {confidence}")
    return float(special.ndtri(0.5 + confidence / 2))


def _sample_values(plan: Plan, values: Mapping[int, float] | pd.Series, metric: str) -> np.ndarray:
    """The value of each of the plan's samples, by kernel id; missing or non-finite values are
    one user error naming the first kernels."""
    series = values if isinstance(values, pd.Series) else pd.Series(dict(values), dtype=np.float64)
    if series.index.has_duplicates:
        dup = series.index[series.index.duplicated()][0]
        raise UserError(f"{metric}: kernel id {dup} has more than one value")
    ids = plan.samples["kernel_id"].to_numpy()
    present = pd.Index(series.index).isin(ids)
    y = series.reindex(ids).to_numpy(dtype=np.float64)
    missing = np.unique(ids[~pd.Index(ids).isin(series.index[present])])
    if missing.size:
        shown = ", ".join(str(int(m)) for m in missing[:10]) + (" ..." if missing.size > 10 else "")
        raise UserError(f"{metric}: no value for {missing.size} sampled kernel id(s): {shown}")
    bad = np.unique(ids[~np.isfinite(y)])
    if bad.size:
        shown = ", ".join(str(int(m)) for m in bad[:10]) + (" ..." if bad.size > 10 else "")
        raise UserError(
            f"{metric}: the value of {bad.size} sampled kernel id(s) is not a finite number ({shown}); fix or rerun "
            "them"
        )
    huge = np.unique(ids[np.abs(y) > MAX_VALUE])
    if huge.size:  # weighted sums and the squares of the interval would overflow to inf
        shown = ", ".join(str(int(m)) for m in huge[:10]) + (" ..." if huge.size > 10 else "")
        raise UserError(
            f"{metric}: the value of {huge.size} sampled kernel id(s) is beyond {MAX_VALUE:.0e} ({shown}), too large "
            "to sum without overflow; check them, or give the metric in larger units"
        )
    return y


#: the largest magnitude a sampled value may have: its weighted sum and the squares an interval
#: needs stay finite in float64 (no simulator counts anything near it; 1.7e308 gave "inf")
MAX_VALUE = 1e100


@dataclass
class _Design:
    """The plan's clusters as arrays, and each sample's cluster index (vectorised with bincount)."""

    k: int
    key: list[str]
    size: np.ndarray  # N_i
    cov: np.ndarray  # design metric CoV (σ/μ, ddof 0); NaN when unknown
    mean: np.ndarray  # design metric mean μ_i; NaN when unknown
    total: np.ndarray  # design metric total X_i; NaN when unknown
    pos: np.ndarray  # cluster index of each sample
    m: np.ndarray  # draws per cluster
    fpc: np.ndarray
    ddof1: np.ndarray  # σ² (ddof 0) → S² (ddof 1) of a finite population
    x: np.ndarray | None  # design value of each sample, when the plan records it
    tail: np.ndarray | None = (
        None  # how far from the mean a single draw lands at the plan's confidence (relative); NaN: unknown
    )
    confidence: float = 0.95  # the plan's
    #: the design metric is a measured time of the launches (a profile's durations, cycles), not a
    #: proxy such as warp instructions: a cluster of equal values then has no spread to borrow
    measured: bool = True
    #: the features' model of the cycles: its CoV over each cluster (``stats.model_cov``), on a
    #: proxy design metric only; NaN where none
    model_cov: np.ndarray | None = None
    #: the estimated metric is the one the model models (:data:`MODEL_METRIC`): its spread takes the
    #: proxy's place; for any other metric (instructions, cache accesses) it only raises the floor
    model_in_place: bool = False
    #: the features' model of the cycles of each sample (format 1.4), where the plan records it
    #: and the model's spread is in place (:attr:`model_in_place`); None elsewhere
    xm: np.ndarray | None = None
    #: the model's mean over each cluster (``stats.model_mean``); NaN where unknown
    model_mean: np.ndarray | None = None
    #: per cluster, the share of the model's relative spread (and tail) that the cycles are taken
    #: to follow (:func:`_kernel_model_slopes`, at most 1); None: all of it
    model_scale: np.ndarray | None = None
    #: per cluster, whether its tail is the model's (``stats.model_tail``)
    tail_of_model: np.ndarray | None = None

    def floor_cov2(self) -> np.ndarray:
        """Per cluster, the relative variance (S², ddof 1, over μ²) the simulated metric is taken
        to have at least: the design metric's, or on a proxy the features' model's of the cycles
        wherever the model spreads, for the cycles; for another metric the larger of the two.

        Warp instructions misjudge the cycles' spread both ways. Equal instructions can hide
        launches whose cycles differ (one GEMM kernel at two shapes, 4 CTAs of a long loop and 16
        of a short one, 1.5 times apart), and short launches bound by their latency spread far
        less in cycles than in instructions (a top-k 39% apart in instructions, 10% in cycles):
        the model sees the shapes and counts the latency (16.5% there). Neither bounds the
        cycles' spread (over 29 clusters of thirteen trace workloads the cycles spread more than
        the model in 6, all below 2.2%, and more than the instructions in 10); the pooled δ
        stands for the rest. Where the model sees no spread the instructions' stays. The model is
        of the cycles: a simulated metric that follows the instructions (their count, the cache
        accesses) keeps their spread as its floor (the bundled example's instructions: an
        interval of the model's spread missed the full run's count). What decides
        whether a spread is known at all (a proxy's equal values, nothing measured) stays the
        design metric's, so a model never turns a refused interval into one, nor lets a cluster
        skip the pooled estimate."""
        cov2 = np.nan_to_num(self.cov) ** 2
        if self.model_cov is not None:
            model2 = np.where(np.isnan(self.cov), 0.0, np.nan_to_num(self.model_cov) ** 2)
            if self.model_scale is not None:  # set only where the model's spread is in place
                model2 = model2 * self.model_scale**2
            cov2 = np.where(model2 > 0, model2, cov2) if self.model_in_place else np.fmax(cov2, model2)
        return cov2 * self.ddof1


def _stat(plan: Plan, key: str) -> np.ndarray:
    return np.array([np.nan if c.stats.get(key) is None else float(c.stats[key]) for c in plan.clusters])


#: The metric the features' model (``predicted_cycles``) models: estimating it, a cluster's spread
#: is the model's in place of the proxy design metric's (:meth:`_Design.floor_cov2`).
MODEL_METRIC = "cycles"


def _design(plan: Plan, metric: str | None = None) -> _Design:
    """The plan's clusters as arrays, for estimating ``metric`` (None: not the model's metric)."""
    replace = bool(plan.estimator.get("replace"))
    ids = np.array([c.id for c in plan.clusters], dtype=np.int64)
    size = np.array([c.size for c in plan.clusters], dtype=np.float64)
    cl = plan.samples["cluster"].to_numpy(np.int64)
    by_id = np.argsort(ids)
    pos = by_id[np.searchsorted(ids, cl, sorter=by_id)]
    k = len(ids)
    m = np.bincount(pos, minlength=k).astype(np.float64)
    fpc = np.ones(k) if replace else np.clip(1.0 - m / size, 0.0, 1.0)
    ddof1 = np.ones(k) if replace else np.divide(size, size - 1.0, out=np.ones(k), where=size > 1)
    mean = _stat(plan, "mean")
    total = _stat(plan, "total")
    total = np.where(np.isnan(total), mean * size, total)
    tail = _stat(plan, "tail")
    measured = design_is_measured(plan)
    in_place = metric == MODEL_METRIC
    tail_of_model = None
    if not measured and in_place:  # the model's tail where it has one: the same reasoning as floor_cov2's
        model_tail = _stat(plan, "model_tail")
        tail_of_model = np.isfinite(model_tail) & np.isfinite(tail)
        tail = np.where(tail_of_model, model_tail, tail)
    return _Design(
        k,
        [c.key for c in plan.clusters],
        size,
        _stat(plan, "cov"),
        mean,
        total,
        pos,
        m,
        fpc,
        ddof1,
        plan_design_values(plan),
        tail if np.any(np.isfinite(tail)) else None,
        plan_confidence(plan),
        measured,
        np.full(k, np.nan) if measured else _stat(plan, "model_cov"),
        in_place,
        _finite_samples(plan, "model") if in_place and not measured else None,
        None if measured else _stat(plan, "model_mean"),
        tail_of_model=tail_of_model,
    )


def design_is_measured(plan: Plan) -> bool:
    """Whether the plan's design metric is a measured time (or unrecorded: plans made before the
    workload recorded its metric are treated as before); False for a proxy such as warp
    instructions, whose equal values within a cluster say nothing of the simulated metric's spread."""
    metric = plan.workload.get("metric") if isinstance(plan.workload, Mapping) else None
    return not isinstance(metric, str) or metric in MEASURED_METRICS or metric == "none"


def plan_design_values(plan: Plan) -> np.ndarray | None:
    """The design metric's value of each sample, as the plan records it (format ≥ 1.1), or None."""
    return _finite_samples(plan, "x")


def _finite_samples(plan: Plan, column: str) -> np.ndarray | None:
    """A per-sample column of the plan where every value is a finite number, else None."""
    if column not in plan.samples.columns:
        return None
    v = plan.samples[column].to_numpy(np.float64)
    return v if np.all(np.isfinite(v)) else None


def _by_cluster(d: _Design, v: np.ndarray) -> np.ndarray:
    return np.bincount(d.pos, weights=v, minlength=d.k)


def _ratio_residuals(d: _Design, y: np.ndarray, x: np.ndarray | None) -> np.ndarray:
    """y − R̂_i·x with R̂_i = Σy/Σx of the sample's cluster; y − ȳ_i where x is unknown or sums to 0."""
    sy = _by_cluster(d, y)
    ybar = np.divide(sy, d.m, out=np.zeros(d.k), where=d.m > 0)
    if x is None:
        return y - ybar[d.pos]
    sx = _by_cluster(d, x)
    r = np.divide(sy, sx, out=np.zeros(d.k), where=sx != 0)
    return np.where(sx[d.pos] != 0, y - r[d.pos] * x, y - ybar[d.pos])


def _cluster_level(d: _Design, v: np.ndarray) -> np.ndarray:
    """Each cluster's mean of ``v`` estimated by the ratio to the design metric, μ_x·Σv/Σx, where
    the plan records the samples' design values; the plain sample mean elsewhere, and for a
    cluster of two or more draws whose spread is the features' model's (:meth:`_Design.floor_cov2`).

    A relative spread (a CoV) becomes an absolute one through the cluster's mean; a draw from the
    low end of a widely spread cluster gives a plain mean far below it (and an interval far too
    narrow), while its ratio to its own design value does not depend on where in the cluster it
    fell."""
    used = d.m > 0
    sv = _by_cluster(d, v)
    level = np.divide(sv, d.m, out=np.zeros(d.k), where=used)
    if d.x is not None:
        sx = _by_cluster(d, d.x)
        ok = used & (sx > 0) & np.isfinite(d.mean)
        if d.model_in_place and d.model_cov is not None:
            # where the model's spread stands in for the proxy's, the proxy does not follow the
            # metric, and the ratio of a few draws to it swings with the instructions drawn (short
            # kernels: instructions spread 1.28, cycles 0.07); draws enough to average take their mean
            ok &= ~((np.nan_to_num(d.model_cov) > 0) & (d.m >= 2))
        level = np.where(ok, np.divide(sv * np.nan_to_num(d.mean), sx, out=np.zeros(d.k), where=ok), level)
    return level


def _sample_var(d: _Design, v: np.ndarray) -> np.ndarray:
    """Within-cluster sample variance (ddof 1) of ``v``; 0 where a cluster has fewer than 2 draws."""
    s = _by_cluster(d, v)
    mean = np.divide(s, d.m, out=np.zeros(d.k), where=d.m > 0)
    dev = v - mean[d.pos]
    ss = _by_cluster(d, dev * dev)
    return np.divide(ss, d.m - 1.0, out=np.zeros(d.k), where=d.m >= 2)


def pooled_relative_variance(
    plan: Plan, values: np.ndarray, scale: np.ndarray | None = None
) -> tuple[float, float] | None:
    """``(V, ν)``: the within-cluster relative variance of ``values`` (one per sample), pooled
    over the information the sample holds (module docstring), and its degrees of freedom; None
    when the sample holds none.

    Sources, weighted by their degrees of freedom: every cluster with two or more draws (census
    clusters included), s_j²/ȳ_j² with m_j − 1; and collapsed strata: the single-draw clusters
    of one group (the kernel, and its shape or occupancy class where the plan grouped by them;
    three or more, whose design means differ), by the scatter of their values about the
    least-squares line y = a + b·μ_x, relative to their mean, with G − 2. When neither
    exists, single-draw clusters are collapsed in pairs by y/μ_x. Relative to the cluster's mean
    of ``scale`` (default: ``values``), squared."""
    d = _design(plan)
    return _pooled(d, np.asarray(values, np.float64), scale)


def _pooled(d: _Design, y: np.ndarray, scale: np.ndarray | None = None) -> tuple[float, float] | None:
    scale = y if scale is None else scale
    sbar = np.divide(_by_cluster(d, scale), d.m, out=np.zeros(d.k), where=d.m > 0)
    s2 = _sample_var(d, y)
    usable = (d.m >= 2) & (sbar != 0)
    parts = [(float(w), float(r)) for w, r in zip(d.m[usable] - 1.0, s2[usable] / sbar[usable] ** 2)]
    parts += [(g, r) for g, r, _ in _collapsed(d, sbar, alone=not parts)]
    if not parts:
        return None
    w = np.array([p[0] for p in parts])
    rel = np.array([p[1] for p in parts])
    return float(np.dot(w, rel) / w.sum()), float(w.sum())


def _group_of(key: str) -> str:
    """The group of a cluster key: the key without the value range a split appends (``name``,
    ``name grid=(..) block=(..)``, ``name sms=S waves=W``, each optionally `` [lo, hi]``).

    Collapsed strata stay within a group: launches of one kernel at different shapes or
    occupancy classes differ in cycles by what the design metric does not show (8 CTAs of a
    split-K GEMM against 32 of its unsplit form: the same instructions, 1.6 times the cycles),
    and a line through their design means would count that difference as within-cluster spread
    (intervals of ±12 to ±70% where the estimate was within 2%)."""
    return _RANGE_SUFFIX.sub("", key)


_RANGE_SUFFIX = re.compile(r" \[[^\]]*\]$")


def kernel_of(key: str) -> str:
    """The kernel name of a cluster key: without the value range and without the shape
    (``grid=(..) block=(..)``), occupancy class (``sms=S waves=W``) or context class
    (``reads=warm``) a grouping appends (:func:`simsample.sampling.grouping.group_launches`)."""
    return _GROUP_SUFFIX.sub("", _group_of(key))


_GROUP_SUFFIX = re.compile(
    r"( grid=\([^)]*\) block=\([^)]*\)| sms=\d+ waves=\d+)?"
    rf"( reads=(?:{'|'.join(CONTEXT_CLASSES)}))?$"
)


def _collapsed(
    d: _Design, ybar: np.ndarray, *, alone: bool, base: np.ndarray | None = None
) -> list[tuple[float, float, float]]:
    """Collapsed strata with the design metric as auxiliary variable (Hansen, Hurwitz and Madow;
    Isaki 1983): single-draw clusters of one group (:func:`_group_of`) are collapsed, and the scatter of their
    values about the least-squares line y = a + b·μ_x (three or more clusters, ddof 2) or of
    y/μ_x (two clusters) stands for the within-cluster relative variance: ``(dof, relative
    variance, the part of it that the members' design spread ``base`` (CoV_x²) explains)`` per
    collapsed group. When nothing else is
    available (``alone``), single-draw clusters of different kernels are collapsed together."""
    flat = np.ones(d.k, bool) if base is None else base <= 0
    # only clusters of equal design values: where the design metric has spread, a single draw's
    # distance from the line is mostly that spread, known already, and the noise of subtracting it
    # widened every cluster on profiles that are their own truth
    single = np.flatnonzero((d.m == 1) & (d.fpc > 0) & np.isfinite(d.mean) & (d.mean > 0) & (ybar != 0) & flat)
    if single.size < 2:
        return []
    by_kernel: dict[str, list[int]] = {}
    for i in single:
        by_kernel.setdefault(_group_of(d.key[i]), []).append(int(i))
    groups = [np.array(g) for g in by_kernel.values() if len(g) >= 3 and np.ptp(d.mean[g]) > 0]
    if not groups and alone:  # pairs: y/μ_x, biased upwards by any fixed cost, only as a last resort
        groups = [np.array(g) for g in by_kernel.values() if len(g) >= 2] or [single]
    rels, dofs, bases = [], [], []
    for g in groups:
        cov2 = np.zeros(g.size) if base is None else base[g]
        mu, y = d.mean[g], ybar[g]
        if g.size >= 3 and np.ptp(mu) > 0:
            b, a = np.polyfit(mu, y, 1)
            sse = float(np.sum((y - a - b * mu) ** 2))
            rels.append(sse / (g.size - 2) / float(np.mean(y)) ** 2)
            dofs.append(g.size - 2.0)
            # what the members' own design spread adds to the scatter, through the line's slope
            bases.append(float(np.mean(b * b * cov2 * mu * mu)) / float(np.mean(y)) ** 2)
        else:
            bases.append(float(np.mean(cov2)))
            r = y / mu
            rels.append(float(np.var(r, ddof=1)) / float(np.mean(r)) ** 2)
            dofs.append(g.size - 1.0)
    return list(zip(dofs, rels, bases))


@dataclass
class _Borrowed:
    """What a cluster drawn too few times to measure its own spread takes instead, per cluster.

    ``s2``: its within-cluster variance of the estimated metric, S_x²-part plus the pooled excess
    (:func:`_excess_pool`), in the metric's units; ``known``: the part of ``s2`` that the design
    metric's spread, known exactly from the plan, accounts for; ``dof``: the degrees of freedom
    of the estimated rest (infinite when nothing is estimated)."""

    s2: np.ndarray
    known: np.ndarray
    dof: np.ndarray  # per cluster: the degrees of freedom of the pool it borrows from
    #: per cluster: the degrees of freedom of all the clusters that measured a spread, also where
    #: they measured none at all (``dof`` is then infinite: nothing of ``s2`` is estimated)
    measured_dof: np.ndarray


def _excess_pool(
    d: _Design,
    y: np.ndarray,
    scale: np.ndarray,
    base: np.ndarray,
    *,
    collapse: bool = True,
    regress: bool = True,
    fallback: bool = True,
    only_flat: bool = False,
) -> tuple[float, float] | None:
    """``(δ, ν)``: the within-cluster relative variance of ``y`` that the design metric does not
    explain, pooled over the clusters that measured it, and its degrees of freedom; None when no
    cluster measured any.

    Where the plan records the sampled launches' design values, a cluster j of m_j draws gives
    the scatter of its y about the least-squares line in x through its own draws, relative to its
    ȳ_j², with m_j − 2 degrees of freedom (m_j − 1 where its draws share one x; a cluster of two
    draws of different x gives none): the part of y's spread that the design metric already
    shows, known exactly for every cluster (``base``: CoV_x²), is not counted twice, whatever the
    simulator's fixed cost per launch. Without recorded design values, s_j²/ȳ_j² (m_j − 1).
    Collapsed strata (:func:`_collapsed`) give theirs less what their members' design spread
    explains through the line's slope. On a profile that is its own truth (y = x) the excess is
    0 and a cluster drawn once keeps its exact design variance: the pool no longer lets a 1 ns
    fill kernel of CoV 31 widen every other cluster's interval; on trace features (equal
    instructions in a cluster) it is the textbook pooled relative variance. Pooled by degrees of
    freedom, ν = their sum. ``fallback``: where nothing else measured it, collapse single-draw
    clusters of different kernels (:func:`_collapsed`); ``only_flat``: only clusters of equal
    design values (``base`` 0) and collapsed strata speak."""
    sbar = np.divide(_by_cluster(d, scale), d.m, out=np.zeros(d.k), where=d.m > 0)
    ss, dof_c = _scatter(d, y, regress=regress)
    dof_c = np.where((sbar != 0) & ((base <= 0) if only_flat else True), dof_c, 0.0)
    use = dof_c > 0
    dof = list(dof_c[use])
    rel = list(ss[use] / dof_c[use] / sbar[use] ** 2)
    if collapse:
        for g_dof, g_rel, g_base in _collapsed(d, sbar, alone=fallback and not dof, base=base):
            dof.append(g_dof)
            rel.append(max(g_rel - g_base, 0.0))
    if not dof:
        return None
    nu, r = np.array(dof), np.array(rel)
    return float(np.dot(nu, r) / nu.sum()), float(nu.sum())


def _scatter(d: _Design, y: np.ndarray, *, regress: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Per cluster, the sum of squares of ``y`` about the least-squares line in the design metric
    through its draws, and its degrees of freedom (m − 2; m − 1 where the draws share one x or
    the plan records no design values, or without ``regress``: then about the mean; 0 for a
    cluster of two draws of different x, whose line passes through both)."""
    ok = d.m >= 2
    if d.x is None or not regress:
        return _sample_var(d, y) * np.maximum(d.m - 1.0, 0.0), np.where(ok, d.m - 1.0, 0.0)
    _, _, ss, flat = _line(d, d.x, y)
    return ss, np.where(ok, np.where(flat, d.m - 1.0, d.m - 2.0), 0.0)


def _line(d: _Design, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per cluster, the least-squares line of ``y`` on ``x`` through its draws (:func:`_group_line`)."""
    return _group_line(d.pos, d.k, d.m, x, y)


def _group_line(
    group: np.ndarray, k: int, n: np.ndarray, x: np.ndarray, y: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per group of samples (``group``: each sample's group of ``k``, ``n`` samples in each), the
    least-squares line of ``y`` on ``x``: ``(S_xx, slope, residual sum of squares, flat)``,
    ``flat`` where the group's samples share one x (no slope; the sum of squares is then about
    the mean)."""

    def total(v: np.ndarray) -> np.ndarray:
        return np.bincount(group, weights=v, minlength=k)

    xm = np.divide(total(x), n, out=np.zeros(k), where=n > 0)
    ym = np.divide(total(y), n, out=np.zeros(k), where=n > 0)
    dx, dy = x - xm[group], y - ym[group]
    sxx, sxy, syy = total(dx * dx), total(dx * dy), total(dy * dy)
    flat = ~(sxx > 1e-12 * np.maximum(total(x * x), 1e-300))
    slope = np.divide(sxy, sxx, out=np.zeros(k), where=~flat)
    return sxx, slope, np.where(flat, syy, np.maximum(syy - slope * sxy, 0.0)), flat


def _slope_bound(
    sxx: np.ndarray, slope: np.ndarray, ss: np.ndarray, n: np.ndarray, fits: np.ndarray, confidence: float
) -> np.ndarray:
    """The upper bound of |b| over the slope's interval at ``confidence``, |b̂| + t·se, t
    Student's one-sided at (1 + c)/2 with n − 2 degrees of freedom, where a line ``fits``
    (:func:`_group_line`'s sums); 0 elsewhere. Of |b|: cycles that fall as the model rises (a
    model wrong in sign) are no less spread for it."""
    dof = np.where(fits, n - 2.0, 0.0)
    se = np.sqrt(np.divide(ss, dof * sxx, out=np.zeros(len(sxx)), where=fits & (dof > 0)))
    t = special.stdtrit(np.maximum(dof, 1.0), 0.5 + confidence / 2)
    return np.where(fits, np.abs(slope) + t * se, 0.0)


def _borrow(d: _Design, y: np.ndarray, scale: np.ndarray, *, design_cov: bool) -> _Borrowed | None:
    """The variance a cluster drawn fewer than :data:`OWN_DRAWS` times takes (:class:`_Borrowed`):
    ȳ_i²·(CoV_x,i² + δ), CoV_x its design metric's spread (ddof 1, known exactly from the plan;
    0 without ``design_cov``), δ the pooled excess of :func:`_excess_pool`, ȳ_i the cluster's
    level (:func:`_cluster_level`). None where a cluster drawn once has neither."""
    sbar = _cluster_level(d, scale)
    cov2 = np.nan_to_num(d.cov) ** 2 * d.ddof1 if design_cov else np.zeros(d.k)
    single = (d.m == 1) & (d.fpc > 0)
    # every cluster drawn once has a known design spread: kernels are not collapsed across (their
    # ratios y/μ_x differ by whatever the draw hit in each, noise that dwarfed the design spread)
    known_all = design_cov and bool(np.all(cov2[single] > 0)) and not np.any(np.isnan(d.cov[single]))
    pool = _excess_pool(d, y, scale, cov2, fallback=not known_all)
    if pool is None:
        have_cov = design_cov and not np.any(np.isnan(d.cov[single]))
        if np.any(single) and (not have_cov or not np.any(cov2[single] > 0)):
            return None  # nothing to estimate a single draw's variance from
        if np.any(single & (cov2 <= 0)) and not d.measured:
            # a proxy design metric (warp instructions) equal across a cluster says nothing of its
            # cycles' spread, and nothing measured it: δ = 0 gave those clusters no variance, an
            # interval as if their cycles were all equal (where every cluster drawn once was such
            # a one: ±0.00%, none covering)
            return None
        delta, dof = 0.0, np.inf
    else:
        delta, dof = pool
    delta_c = np.full(d.k, delta)
    dof_c = np.full(d.k, dof if delta > 0 else np.inf)
    measured_c = np.full(d.k, dof)  # like with like below may take fewer: the evidence is all of them
    # like with like: a cluster of equal design values also borrows what clusters of equal design
    # values measured (and collapsed strata of such clusters), where that is larger: the spread a
    # cache context gives one launch of a GEMM is not what is left of a copy kernel's cycles once
    # its sizes explain them (hetero: ±1.3% from the copy's census, an error of 1.95%)
    flat_pool = _excess_pool(d, y, scale, cov2, fallback=False, only_flat=True) if design_cov else None
    if flat_pool is not None and flat_pool[0] > delta:  # the larger of the two: either may miss what the other saw
        flat = cov2 <= 0
        delta_c = np.where(flat, flat_pool[0], delta_c)
        dof_c = np.where(flat, flat_pool[1], dof_c)
    floor = d.floor_cov2() if design_cov else cov2
    return _Borrowed((floor + delta_c) * sbar**2, floor * sbar**2, dof_c, measured_c)


def _variance(
    plan: Plan,
    d: _Design,
    own: np.ndarray,
    borrowed: _Borrowed | None,
    *,
    design_cov: bool,
    own_draws: int = 2,
) -> tuple[float, float] | None:
    """Variance of the plan's estimator and its Welch–Satterthwaite degrees of freedom (module
    docstring), or None when the plan has no bound or it cannot be estimated.

    ``own``: per-sample values whose within-cluster variance is the estimator's (y for the
    expansion estimator, the ratio residuals for the ratio estimator, the linearised values of a
    ratio); ``borrowed``: what clusters drawn fewer than ``own_draws`` times take
    (:func:`_borrow`); ``design_cov``: a cluster's spread is at least the design metric's there
    (known exactly, so a term it decides counts as known)."""
    if plan.estimator.get("kind") != "stratified":
        return None
    if len(own) == 0:
        return 0.0, np.inf
    used = d.m > 0
    s2 = _sample_var(d, own)
    single = used & (d.m == 1) & (d.fpc > 0)
    few = used & (d.m >= 2) & (d.m < own_draws) & (d.fpc > 0)
    borrow = np.zeros(d.k, bool)
    known = np.zeros(d.k)  # the part of each cluster's s² that is known, not estimated
    if np.any(single | few):
        if borrowed is None:
            if np.any(single):
                return None
        else:
            # a cluster of a few draws keeps its own spread where that is the larger: the pool is
            # an average, and a cluster far more spread than the others would be understated
            # (its own spread, of one to three degrees of freedom, is part of the pooled estimate;
            # counted on its own, Student's t at so few degrees of freedom made an interval wider
            # when a smaller ε gave a cluster its second draw)
            # Where the design spread is known, a cluster of a few draws takes the model alone: its
            # own scatter is in the pool already, and the larger of two noisy figures made a plan
            # with a second draw wider than one without (a smaller ε, a wider interval).
            modelled = few & design_cov & ~np.isnan(d.cov)
            borrow = single | few
            if design_cov and not d.measured and np.any(few & _blind(d, borrowed)):
                return None
            s2 = np.where(modelled | single, borrowed.s2, np.where(few, np.maximum(borrowed.s2, s2), s2))
            known = np.where(borrow, borrowed.known, 0.0)
    modelled_own = np.zeros(d.k, bool)
    scatter_dof = np.zeros(d.k)
    if design_cov:
        # a sample of a skewed cluster usually misses its tail and underestimates its spread: the
        # design metric's spread is known exactly, and the simulated metric's is taken as at least that
        # (S_x² of the cluster, in y's units: see _cluster_level)
        multi = used & (d.m >= 2) & (d.fpc > 0) & ~borrow & ~np.isnan(d.cov) & ~np.isnan(d.mean)
        if np.any(multi):
            floor = d.floor_cov2() * _cluster_level(d, own) ** 2
            # what the design spread explains, known, plus the cluster's own scatter about its
            # line in x (the model of clusters of fewer draws, with the cluster's own excess):
            # on a profile its own truth the scatter is 0, and more draws only narrow the interval
            ss, dof_c = _scatter(d, own)
            line = _model_line(d, own)
            if line is not None:
                floor = np.where(line.fits, line.floor, floor)
                ss = np.where(line.fits, line.ss, ss)
                dof_c = np.where(line.fits, line.dof, dof_c)
            excess = np.divide(ss, dof_c, out=np.zeros(d.k), where=dof_c > 0)
            model = np.where(dof_c > 0, floor + excess, np.maximum(s2, floor))
            s2 = np.where(multi, model, s2)
            modelled_own = multi & (dof_c > 0)
            scatter_dof = dof_c
            known = np.where(multi, np.minimum(floor, s2), known)  # the part of s² the design spread accounts for
    terms = np.divide(d.size * d.size * s2 * d.fpc, d.m, out=np.zeros(d.k), where=used)
    var = float(terms.sum())
    share = np.divide(s2 - known, s2, out=np.zeros(d.k), where=s2 > 0)  # the estimated part of each term
    own_terms = used & (d.m >= 2) & ~borrow & (terms > 0) & (known < s2)
    own_dof = np.maximum(np.where(modelled_own, scatter_dof, d.m - 1.0), 1.0)
    den = float(np.sum((terms * share)[own_terms] ** 2 / own_dof[own_terms]))
    if borrowed is not None:
        for nu in np.unique(borrowed.dof[borrow]):  # each pool is one shared estimate: one term
            estimated = float(np.sum((terms * share)[borrow & (borrowed.dof == nu)]))
            if estimated > 0 and np.isfinite(nu):
                den += estimated**2 / nu
    dof = var * var / den if den > 0 else np.inf
    if borrowed is not None and np.any(own_terms):
        # the clusters measuring their own spread are the pool's donors too: one estimate counted
        # twice as if independent gave more degrees of freedom than all the draws hold (5.05 from
        # six draws); the Satterthwaite ν of a sum never exceeds the dof of its independent parts
        pools = borrowed.dof[borrow]
        pools = pools[np.isfinite(pools)]
        if pools.size:
            dof = min(dof, float(pools.max()))
    return var, dof


@dataclass
class _ModelLine:
    """Per cluster, the simulated cycles against the features' model of them over the cluster's
    draws (:func:`_model_line`): where it ``fits``, the spread the model explains (``floor``, in
    the cycles' units) and the residual sum of squares ``ss`` with its ``dof``."""

    fits: np.ndarray
    floor: np.ndarray
    ss: np.ndarray
    dof: np.ndarray


def _model_line(d: _Design, y: np.ndarray) -> _ModelLine | None:
    """The line of the cycles on the features' model through a cluster's draws, for the
    clusters of :data:`MODEL_LINE_DRAWS` or more draws (not a census) whose model spreads and
    whose draws record their model values (format 1.4); None where none does.

    The model's spread over every launch of the cluster stands for the cycles' (a tenth of a
    skewed population drawn at random misses its slow launches; the model sees them), but the
    model can spread far more than the cycles: over random's one cluster of every launch, 0.45
    against 0.13 on a training step, 0.59 against 0.13 on an iterative solver, and random's 95%
    intervals were 6.5 to 10 times its errors. The slope b of the cycles on the model, fitted
    over the draws, says how much of the model's spread the cycles follow: the cluster's spread
    is taken as b_up²·S_model² plus the draws' scatter about the line (m − 2 degrees of freedom),
    S_model² the model's variance over every launch (``stats.model_mean`` and ``model_cov``) and
    b_up the upper bound of |b| at the plan's confidence (|b̂| + t·se, t one-sided at
    (1 + c)/2), capped where the model's own relative spread puts it (never above what was
    taken before; the scatter is about the model's line, not the instructions'). With the
    fitted slope itself the intervals were sharp but covered 0.75 to 0.87 of some workloads'
    plans (a slope fitted on draws that missed the slow launches is too flat); its bound covers
    the slope's own uncertainty."""
    if d.xm is None or d.model_mean is None or d.model_cov is None:
        return None
    mm = np.nan_to_num(d.model_mean)
    mcov = np.nan_to_num(d.model_cov)
    sxx, slope, ss, flat = _line(d, d.xm, y)
    fits = (d.m >= MODEL_LINE_DRAWS) & (d.fpc > 0) & (mm > 0) & (mcov > 0) & ~flat
    if not np.any(fits):
        return None
    ss = np.where(fits, ss, 0.0)
    y_bar = np.divide(_by_cluster(d, y), d.m, out=np.zeros(d.k), where=d.m > 0)
    cap = np.divide(np.abs(y_bar), mm, out=np.zeros(d.k), where=fits)
    upper = np.minimum(_slope_bound(sxx, slope, ss, d.m, fits, d.confidence), cap)
    floor = upper * upper * (mcov * mm) ** 2 * d.ddof1
    return _ModelLine(fits, floor, ss, np.where(fits, d.m - 2.0, 0.0))


#: The least share of the model's spread a kernel's slope leaves a cluster (:func:`_kernel_model_slopes`):
#: cycles equal over draws the model spreads show no following, and the spread stays known.
MIN_MODEL_SCALE = 1e-6


def _kernel_model_slopes(d: _Design, y: np.ndarray) -> _Design:
    """``d`` with :attr:`_Design.model_scale` set: for each cluster of fewer than
    :data:`MODEL_LINE_DRAWS` draws whose spread is the features' model's, how much of that
    spread the cycles follow, from the line of the cycles on the model through every draw of its
    kernel, over all the kernel's clusters (the plan's samples record the model's value of each,
    format 1.4).

    A cluster drawn once cannot fit its own line (:func:`_model_line`), and took the model's
    relative spread, and its tail, as the cycles' whole: over the single-draw clusters of
    margin's plans on four trace workloads the cycles spread 0.56 to 0.71 of what the model does
    (a serving run's short decode launches: the model counts their instructions, the cycles are
    mostly latency). The launches of one kernel in its other clusters (other occupancy or context
    classes, drawn once each as well) show how it follows the model: the slope b of the cycles on
    the model over all of them, with five or more draws, bounded above at the plan's confidence
    (|b̂| + t·se, t one-sided at (1 + c)/2, n − 2 degrees of freedom) as for a cluster's own
    line, scales the model's spread S_model = model_cov·model_mean to b_up·S_model, never above
    what it was (a scale of at most 1). The between-cluster differences the model misses (a cold
    class above its warm one) are in the line's scatter and widen the bound; a kernel whose
    draws span little of the model (graph's BFS launches of one wave, 12,800 to 15,100 modelled
    cycles) leaves the bound above 1 and its clusters as they were."""
    if d.xm is None or d.model_mean is None or d.model_cov is None:
        return d
    mm = np.nan_to_num(d.model_mean)
    level = _cluster_level(d, y)
    target = (d.m < MODEL_LINE_DRAWS) & (d.fpc > 0) & (mm > 0) & (np.nan_to_num(d.model_cov) > 0) & (level > 0)
    if not np.any(target):
        return d
    # every kernel's line at once (one pass of sums per kernel: plans of thousands of kernels)
    kernel_codes, _ = pd.factorize(np.array([kernel_of(k) for k in d.key], dtype=object))
    kernel = kernel_codes[d.pos]
    nk = int(kernel_codes.max()) + 1
    n = np.bincount(kernel, minlength=nk).astype(np.float64)
    sxx, slope, ss, flat = _group_line(kernel, nk, n, d.xm, y)
    fits = (n >= MODEL_LINE_DRAWS) & ~flat  # not one modelled value
    upper = _slope_bound(sxx, slope, ss, n, fits, d.confidence)
    here = target & fits[kernel_codes]
    scale = np.ones(d.k)
    # a model's spread known stays known (a floor of 0 would read as nothing known: _blind)
    scale[here] = np.clip(upper[kernel_codes[here]] * mm[here] / level[here], MIN_MODEL_SCALE, 1.0)
    if np.all(scale >= 1.0):
        return d
    return with_fields(d, model_scale=scale)


def _blind(d: _Design, borrowed: _Borrowed) -> np.ndarray:
    """Per cluster: its features show no spread (equal proxy values, no model's), and the only
    spread measured in the whole plan is its own, of fewer than ``OWN_DRAWS`` draws (whether or
    not those draws differed: three draws of one layer type, which a deterministic simulator
    runs in exactly as many cycles each time, measure a spread of exactly 0).

    A cluster of two to four such draws with nothing else measured borrows only its own scatter:
    random's three draws of MacSim's 24 layers (equal warp instructions, no model of the cycles)
    often hit one layer type three times, and their Student interval at two degrees of freedom
    held the full run in 10 plans of 20 at 95%, missing by 30% at ±0.1%. Such a plan gets no
    interval, as one that drew such clusters once and measured nothing does."""
    measured = borrowed.measured_dof
    alone = measured <= d.m - 1  # its own draws are all the evidence (a flat cluster's m − 1)
    return (d.floor_cov2() <= 0) & alone & (measured < OWN_DRAWS - 1)


#: A cluster of fewer draws than this takes the pooled relative variance rather than its own:
#: one or two degrees of freedom make Student's t (and so the interval) many times wider, or an
#: unlucky pair of close values far too narrow; the pool shares the degrees of freedom of all.
OWN_DRAWS = 5

#: Fewest draws of a cluster whose slope of the cycles on the features' model is estimated
#: (:func:`_model_line`): below, the slope's bound at three degrees of freedom is too loose to
#: take anything off the model's spread, which then stands as it is.
MODEL_LINE_DRAWS = OWN_DRAWS


def _tail_half_width(d: _Design, y: np.ndarray, confidence: float) -> float:
    """The least half-width that holds the own tails of the clusters drawn once or a few times:
    √Σ_i (N_i·ȳ_i·q_i)², q_i how far from its mean the mean of the cluster's draws lands at the
    plan's confidence (``stats.tail``, recorded by the sampler for one to four draws; scaled by
    the ratio of normal quantiles at another confidence).

    One draw's estimate of a cluster is as skewed as the cluster: 19 launches of which 3 are 2.7
    standard deviations slow gave a normal 99% interval that missed whenever the draw hit one of
    them (Rodinia heartwall, 3 plans in 20). Where one cluster decides the total, its own tail
    does; independent clusters' deviations add in quadrature, as the normal interval adds their
    variances (where their tails are normal ones the two agree). The largest tail alone missed
    where two such clusters both drew high (the CUDA SDK's convolutionSeparable, two clusters of
    17: 94 of 100 fresh seeds covered at 99%, 99 with the sum)."""
    if d.tail is None:
        return 0.0
    single = (d.m >= 1) & (d.fpc > 0) & np.isfinite(d.tail)  # drawn once, or a few times (the samplers say)
    if not np.any(single):
        return 0.0
    level = _cluster_level(d, y)
    tail = d.tail
    if d.model_scale is not None and d.tail_of_model is not None:
        tail = np.where(d.tail_of_model, tail * d.model_scale, tail)
    scale = float(special.ndtri(0.5 + confidence / 2)) / float(special.ndtri(0.5 + d.confidence / 2))
    reach = d.size[single] * np.abs(level[single]) * tail[single]
    return float(np.sqrt(np.sum(reach * reach))) * scale


def _cluster_means_total(plan: Plan, y: np.ndarray) -> float:
    return float(np.dot(plan.samples["weight"].to_numpy(np.float64), y))


@np.errstate(over="ignore", invalid="ignore")  # a non-finite variance is refused in _finish
def estimate_total(
    plan: Plan,
    values: Mapping[int, float] | pd.Series,
    *,
    metric: str = "value",
    confidence: float = 0.95,
    own_draws: int | None = None,
    strict: bool | str = False,
) -> MetricEstimate:
    """Expansion estimate Σ w·y with its standard error and confidence interval (module docstring).

    ``own_draws``: clusters of fewer draws take the pooled relative variance (default
    :data:`OWN_DRAWS`; 2 gives the textbook stratified estimator, unbiased but, with one degree
    of freedom a cluster, of very wide intervals). ``strict``: a confidence that the plan's
    degrees of freedom cannot support is one user error (:class:`UnsupportedConfidence`) rather
    than a degenerate interval."""
    y = _sample_values(plan, values, metric)
    total = _cluster_means_total(plan, y)
    if plan.estimator.get("kind") != "stratified":
        return _audited(plan, metric, total, y, confidence, len(y), "total", _total_bounds(plan, y), strict=strict)
    d = _kernel_model_slopes(_design(plan, metric), y)
    var = _variance(
        plan,
        d,
        y,
        _borrow(d, y, y, design_cov=True),
        design_cov=True,
        own_draws=OWN_DRAWS if own_draws is None else own_draws,
    )
    return _finish(
        metric,
        total,
        var,
        confidence,
        len(y),
        "total",
        _total_bounds(plan, y),
        strict=strict,
        least=_tail_half_width(d, y, confidence),
    )


@np.errstate(over="ignore", invalid="ignore")  # a non-finite variance is refused in _finish
def estimate_ratio_total(
    plan: Plan,
    values: Mapping[int, float] | pd.Series,
    design_values: Mapping[int, float] | pd.Series | None = None,
    *,
    metric: str = "value",
    confidence: float = 0.95,
    strict: bool | str = False,
) -> MetricEstimate:
    """Separate ratio estimate Σ_i X_i·(Σ y / Σ x)_i of the total of ``values``, x the design metric.

    X_i is the cluster's design total (``stats.total`` of the plan); x of each sampled launch is
    the plan's recorded design value, or ``design_values`` by kernel id (needed for plans made
    before format 1.1). A cluster whose sampled x sum to 0 (or whose X_i is unknown) falls back
    to N_i·ȳ_i. The variance uses the ratio residuals e = y − R̂_i·x of clusters with two or
    more draws. A single-draw cluster borrows the pooled relative variance of y itself
    (:func:`pooled_relative_variance`), not of the residuals: where its design metric has no
    spread its residual varies exactly as y does, and a ratio through the origin fits a
    simulator's fixed launch cost badly, which would inflate pooled residuals tenfold."""
    y = _sample_values(plan, values, metric)
    if design_values is not None:
        x = _sample_values(plan, design_values, f"{metric} (design values)")
    else:
        x = plan_design_values(plan)
        if x is None:
            raise UserError(
                f"{metric}: the plan does not record the sampled launches' design-metric values "
                "(made before plan format 1.1); give them, or make the plan again"
            )
    d = _design(plan)
    sy, sx = _by_cluster(d, y), _by_cluster(d, x)
    used = d.m > 0
    ratio_ok = used & (sx != 0) & np.isfinite(d.total)
    r = np.divide(sy, sx, out=np.zeros(d.k), where=ratio_ok)
    ybar = np.divide(sy, d.m, out=np.zeros(d.k), where=used)
    total = float(np.sum(np.where(ratio_ok, d.total * r, d.size * ybar)[used]))
    if plan.estimator.get("kind") != "stratified":
        return _finish(metric, total, None, confidence, len(y), "total")
    resid = _ratio_residuals(d, y, x)
    resid = np.where(ratio_ok[d.pos], resid, y - ybar[d.pos])
    var = _variance(plan, d, resid, _borrow(d, y, y, design_cov=False), design_cov=False)
    return _finish(metric, total, var, confidence, len(y), "total", _total_bounds(plan, y), strict=strict)


@np.errstate(over="ignore", invalid="ignore")  # a non-finite variance is refused in _finish
def estimate_ratio(
    plan: Plan,
    numerator: Mapping[int, float] | pd.Series,
    denominator: Mapping[int, float] | pd.Series,
    *,
    metric: str = "ratio",
    confidence: float = 0.95,
    strict: bool | str = False,
) -> MetricEstimate:
    """Ratio of two estimated totals (e.g. IPC = instructions / cycles), R̂ = T̂_a / T̂_b, with its
    delta-method interval: Var(R̂) ≈ Var(T̂_z) / T̂_b², z = a − R̂·b per launch (Cochran §6.3).

    Clusters of enough draws give their own spread of z. A cluster drawn fewer times cannot, and
    z's spread there is bounded by those of a and b, each borrowed as its total's estimate
    borrows it (:func:`_borrow`): S_z ≤ S_a + R̂·S_b (correlation −1, the conservative end; the
    usual +1 of instructions and cycles gives |S_a − R̂·S_b|). Pooling z itself across clusters
    mixed kernels of different IPC into one spread (an IPC of 1.5 got a standard error of 3.47)."""
    a = _sample_values(plan, numerator, metric)
    b = _sample_values(plan, denominator, metric)
    ta, tb = _cluster_means_total(plan, a), _cluster_means_total(plan, b)
    if tb == 0:
        return MetricEstimate(metric, float("nan"), None, None, None, confidence, len(a), "ratio")
    r = ta / tb
    if plan.estimator.get("kind") != "stratified":
        return _audited(
            plan, metric, r, a - r * b, confidence, len(a), "ratio", _ratio_bounds(a, b), strict=strict, scale=tb
        )
    z = a - r * b
    d = _design(plan)
    var_d = _variance(plan, d, z, _ratio_borrow(d, a, b, r), design_cov=False, own_draws=OWN_DRAWS)
    var = None if var_d is None else (var_d[0] / (tb * tb), var_d[1])
    return _finish(metric, r, var, confidence, len(a), "ratio", _ratio_bounds(a, b), strict=strict)


def _ratio_borrow(d: _Design, a: np.ndarray, b: np.ndarray, r: float) -> _Borrowed | None:
    """What a cluster of too few draws takes for the spread of z = a − r·b.

    Where clusters of two or more draws measured z's own spread, its relative variance (to ā)
    pooled over them (:func:`_excess_pool`, without collapsed strata: the cluster means of z are
    not on any line in the design metric). Where none did, the bound (S_a + r·S_b)², S_a and
    S_b as the totals of a and b borrow them, the known part likewise, the degrees of freedom of
    the less certain of the two."""
    pool = _excess_pool(d, a - r * b, a, np.zeros(d.k), collapse=False, regress=False)
    if pool is not None:
        delta, dof = pool
        level = _cluster_level(d, a)
        return _Borrowed(delta * level**2, np.zeros(d.k), np.full(d.k, dof if delta > 0 else np.inf), np.full(d.k, dof))
    ba = _borrow(d, a, a, design_cov=True)
    bb = _borrow(d, b, b, design_cov=True)
    if ba is None or bb is None:
        return None
    s2 = (np.sqrt(ba.s2) + abs(r) * np.sqrt(bb.s2)) ** 2
    known = (np.sqrt(ba.known) + abs(r) * np.sqrt(bb.known)) ** 2
    return _Borrowed(
        s2, np.minimum(known, s2), np.minimum(ba.dof, bb.dof), np.minimum(ba.measured_dof, bb.measured_dof)
    )


#: Degrees of freedom beyond which the interval is normal (and no dof is reported).
NORMAL_DOF = 1000.0

#: The largest ratio of Student's t quantile to the normal one that an interval may carry: beyond
#: it the plan has too few degrees of freedom for that confidence (at one degree of freedom a 99%
#: interval is ±63.7 standard errors, [0, 219.6] for an IPC near 1.5), and the estimate says so
#: rather than print it.
MAX_T_RATIO = 4.0


def supported_confidence(dof: float) -> float:
    """The highest confidence at which Student's t at ``dof`` degrees of freedom stays within
    :data:`MAX_T_RATIO` times the normal quantile (1.0 at infinite dof)."""
    if not np.isfinite(dof):
        return 1.0
    lo, hi = 0.5, 1.0 - 1e-12
    for _ in range(60):
        mid = (lo + hi) / 2
        p = 0.5 + mid / 2
        if float(special.stdtrit(dof, p)) <= MAX_T_RATIO * float(special.ndtri(p)):
            lo = mid
        else:
            hi = mid
    return lo


def _check_supported(metric: str, dof: float, confidence: float) -> None:
    """One user error when ``confidence`` needs more degrees of freedom than the plan's draws give."""
    if not np.isfinite(dof):
        return
    p = 0.5 + confidence / 2
    q = float(special.stdtrit(max(dof, 1e-3), p))
    if q <= MAX_T_RATIO * float(special.ndtri(p)):
        return
    best = supported_confidence(dof)
    raise UnsupportedConfidence(
        f"{metric}: the plan's draws give {dof:.1f} degrees of freedom for the spread of its clusters, too few for a "
        f"{100 * confidence:g}% interval (±{q:.1f} standard errors); ask {100 * math.floor(best * 1000) / 1000:g}% or "
        "less (--confidence), or plan with more draws"
    )


class UnsupportedConfidence(UserError):
    """An interval asked at a confidence that the plan's degrees of freedom cannot support."""


def _finish(
    metric: str,
    est: float,
    var_dof: tuple[float, float] | None,
    confidence: float,
    n: int,
    kind: str,
    bounds: tuple[float, float] = (-np.inf, np.inf),
    *,
    strict: bool | str = False,
    least: float = 0.0,
    offset: float = 0.0,
) -> MetricEstimate:
    """The interval at ``confidence``, at least ``least`` on either side and widened by ``offset``
    (an audited projection's estimated bias), kept within ``bounds``: what the metric can be
    whatever the launches not simulated did (a count's total is at least what the simulated launches counted;
    a hit rate lies in [0, 1]). A symmetric interval of a skewed count otherwise reaches below
    zero. ``strict``: refuse (:class:`UnsupportedConfidence`, one line) an interval whose Student t
    quantile the plan's degrees of freedom make degenerate (:data:`MAX_T_RATIO`); ``"blank"``:
    give that estimate without an interval instead."""
    q = _z(confidence)
    if np.isinf(est):
        raise UserError(
            f"{metric}: the estimate overflows (beyond {np.finfo(np.float64).max:.3g}); check the values, or give "
            "them in larger units"
        )
    if (var_dof is not None and not np.isfinite(var_dof[0])) or not np.isfinite(least):
        # the values are summable (est is finite); what overflowed is a square of a spread, or a
        # tail's reach: the plan's (a hand-edited cov, model_cov, tail or model_tail: simsample
        # writes none near 1e154) or the values' own. An infinite reach printed [x, inf] at inf%.
        raise UserError(
            f"{metric}: the interval overflows (beyond {np.finfo(np.float64).max:.3g}); check the plan's cluster "
            "spreads (stats cov, model_cov, tail, model_tail) and the values, or give them in larger units"
        )
    if var_dof is None:
        return MetricEstimate(metric, est, None, None, None, confidence, n, kind)
    var, dof = var_dof
    if dof > NORMAL_DOF:  # Student's t within 0.1% of the normal quantile: reported as normal
        dof = np.inf
    se = float(np.sqrt(max(var, 0.0)))
    if np.isfinite(dof) and se > 0:
        if strict == "blank":
            try:
                _check_supported(metric, dof, confidence)
            except UnsupportedConfidence:
                return MetricEstimate(metric, est, se, None, None, confidence, n, kind, dof=float(dof))
        elif strict:
            _check_supported(metric, dof, confidence)
        q = float(special.stdtrit(dof, 0.5 + confidence / 2))
    lo, hi = bounds
    half = max(q * se + offset, least) if se > 0 else q * se + offset
    return MetricEstimate(
        metric,
        est,
        se,
        float(min(max(est - half, lo), est)),
        float(max(min(est + half, hi), est)),
        confidence,
        n,
        kind,
        dof=float(dof) if np.isfinite(dof) and se > 0 else None,
    )


def _audited(
    plan: Plan,
    metric: str,
    est: float,
    own: np.ndarray,
    confidence: float,
    n: int,
    kind: str,
    bounds: tuple[float, float],
    *,
    strict: bool | str,
    scale: float = 1.0,
) -> MetricEstimate:
    """A representative plan's estimate: without an audit, none of an interval; with one, the
    projection ± (|B̂| + t·se(B̂)) of :mod:`simsample.sampling.audit`, from the values ``own`` of
    each sample row (y of a total, z = a − R̂·b of a ratio, whose bound is then divided by
    ``scale``, T̂_b)."""
    s = plan.samples
    bound = audit_bound(plan.estimator, s["launch"].to_numpy(np.int64), s["cluster"].to_numpy(np.int64), own)
    if bound is None:
        return _finish(metric, est, None, confidence, n, kind)
    se = bound.std_error / abs(scale)
    e = _finish(
        metric,
        est,
        (se * se, bound.dof),
        confidence,
        n,
        kind,
        bounds,
        strict=strict,
        offset=abs(bound.bias) / abs(scale),
    )
    # a ratio's z = a − R̂·b sums to 0 over the predictions, so B_z = (R̂ − R)·T_b
    e.bias = bound.bias / scale
    return e


def no_interval_reason(plan: Plan) -> str:
    """Why an estimate of ``plan`` has no interval, in a few words for the estimate table (the
    case of too few degrees of freedom is said with its dof where it is printed).

    A plan that picks one representative per cluster (PKA, Sieve, Photon) draws nothing at random:
    its error is the representatives' bias, which no sampling distribution bounds. A stratified
    plan without an interval drew clusters once whose design metric shows no spread and measured
    the spread nowhere (no cluster drawn twice): a plan drawing a few clusters twice (margin does
    on trace features) gives one; or it drew such a cluster two to four times and measured the
    spread nowhere else (random's few draws of a small run, :func:`_blind`)."""
    if plan.estimator.get("kind") != "stratified":
        if has_audit(plan.estimator):
            return "none: the audit needs two draws or more"
        return "no bound (representative plan; plan it with audit=M for one)"
    drawn = [c for c in plan.clusters if 2 <= c.draws < c.size]  # those that measured a spread
    if (
        not design_is_measured(plan)  # as in _blind: a measured time's equal values are its spread
        and len(drawn) == 1
        and drawn[0].draws < OWN_DRAWS
        and not drawn[0].stats.get("cov")
        and not drawn[0].stats.get("model_cov")
    ):
        return f"none: {drawn[0].draws} draws of launches whose features show no spread are too few to measure it"
    return "none: no cluster drawn twice measured the spread"


def _total_bounds(plan: Plan, y: np.ndarray) -> tuple[float, float]:
    """A non-negative metric's total is at least the sum over the distinct launches simulated."""
    if y.size == 0 or float(y.min()) < 0:
        return (-np.inf, np.inf)
    _, first = np.unique(plan.samples["kernel_id"].to_numpy(), return_index=True)
    return (float(y[first].sum()), np.inf)


def _ratio_bounds(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """A ratio of non-negative totals is non-negative, and at most 1 where every launch's
    numerator is at most its denominator (hits of accesses)."""
    if a.size == 0 or float(a.min()) < 0 or float(b.min()) < 0:
        return (-np.inf, np.inf)
    return (0.0, 1.0 if bool(np.all(a <= b)) else np.inf)


def plan_confidence(plan: Plan, default: float = 0.95) -> float:
    """The confidence the plan states its bound at (``prediction.confidence``), else ``default``:
    an estimate is reported at the level its plan promised."""
    c = plan.prediction.get("confidence") if isinstance(plan.prediction, Mapping) else None
    return float(c) if isinstance(c, (int, float)) and 0 < float(c) < 1 else default


def estimate_results(
    plan: Plan,
    results: pd.DataFrame,
    *,
    metrics: Sequence[str] | None = None,
    ratios: Mapping[str, tuple[str, str]] | None = None,
    confidence: float | None = None,
) -> list[MetricEstimate]:
    """Estimates of every numeric metric column of ``results`` (indexed by or holding ``kernel_id``),
    then of each ratio ``name: (numerator, denominator)`` whose columns are present; at the
    plan's own confidence unless ``confidence`` is given (:func:`plan_confidence`).

    A confidence that a metric's degrees of freedom cannot support is refused in one line
    (:class:`UnsupportedConfidence`) where it was asked for; at the plan's own confidence that
    metric is given without an interval (its ``dof`` says why) and the others are estimated."""
    strict: bool | str = True
    if confidence is None:
        confidence = plan_confidence(plan)
        strict = "blank"
    df = results.set_index("kernel_id") if "kernel_id" in results.columns else results
    if metrics is None:
        metrics = [
            c for c in df.columns if pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c])
        ]
    out = [
        estimate_total(plan, df[m].astype(np.float64), metric=m, confidence=confidence, strict=strict) for m in metrics
    ]
    for name, (num, den) in (ratios or {}).items():
        if num in df.columns and den in df.columns:
            out.append(
                estimate_ratio(
                    plan,
                    df[num].astype(np.float64),
                    df[den].astype(np.float64),
                    metric=name,
                    confidence=confidence,
                    strict=strict,
                )
            )
    return out
