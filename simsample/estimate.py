"""From per-launch simulator results to whole-workload estimates with confidence intervals.

For a stratified plan (random draws within clusters) the total is Σ_i N_i·ȳ_i and its variance
Σ_i N_i²·s_i²/m_i, times the finite-population correction (1 − m_i/N_i) when the plan drew
without replacement. A cluster sampled once has no sample variance; it borrows the profile's
coefficient of variation for that cluster (recorded in the plan), s_i = CoV_i·ȳ_i. A cluster
whose every launch was simulated contributes no variance. Plans that pick one representative
per cluster (PKA, Sieve, Photon) carry no statistical bound, and their estimates have none.

The interval is T̂ ± q·SE. With few draws per cluster the sample variances are themselves
noisy (a dominant kernel sized at three draws gives an SE with two degrees of freedom), so q is
Student's t quantile at the Welch–Satterthwaite degrees of freedom
ν = (Σ v_i)² / Σ v_i²/(m_i − 1), v_i each cluster's variance term; variance borrowed from the
profile counts as known (infinite degrees of freedom). With many draws ν is large and q is the
normal quantile (1.96 at 95%) of the paper's central limit theorem argument.

Ratio metrics (IPC, hit rates) are ratios of estimated totals; their standard error comes from
the linearised residuals y_a − R·y_b (delta method), stratum by stratum.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

import lazy_loader as lazy
import numpy as np

from simsample.errors import UserError
from simsample.plan import Plan

pd = lazy.load("pandas")
special = lazy.load("scipy.special", suppress_warning=True)  # ndtri and stdtrit: the norm and t quantiles of scipy.stats, bit for bit, without importing it


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

    def to_json(self) -> dict:
        return {k: (None if isinstance(v, float) and not np.isfinite(v) else v) for k, v in asdict(self).items()}


def _z(confidence: float) -> float:
    if not 0 < confidence < 1:
        raise UserError(f"confidence must be between 0 and 1, got {confidence}")
    return float(special.ndtri(0.5 + confidence / 2))


def _sample_values(plan: Plan, values: Mapping[int, float] | pd.Series, metric: str) -> np.ndarray:
    series = values if isinstance(values, pd.Series) else pd.Series(dict(values), dtype=np.float64)
    if series.index.has_duplicates:
        dup = series.index[series.index.duplicated()][0]
        raise UserError(f"{metric}: kernel id {dup} has more than one value")
    ids = plan.samples["kernel_id"].to_numpy()
    y = series.reindex(ids).to_numpy(dtype=np.float64)
    missing = np.unique(ids[np.isnan(y)])
    if missing.size:
        shown = ", ".join(str(int(m)) for m in missing[:10]) + (" ..." if missing.size > 10 else "")
        raise UserError(f"{metric}: no value for {missing.size} sampled kernel id(s): {shown}")
    return y


def _stratified_variance(plan: Plan, y: np.ndarray) -> tuple[float, float] | None:
    """Variance of Σ w·y under the plan's design and its Welch–Satterthwaite degrees of
    freedom, or None when the plan has no bound.

    Per cluster i with m_i sampled values (repeats counted when drawn with replacement) out of
    N_i launches: N_i²·s_i²/m_i, times (1 − m_i/N_i) when drawn without replacement, s_i² the
    sample variance (ddof 1). A cluster sampled once borrows the profile's CoV recorded in the
    plan: s_i = CoV_i·y (CoV is σ/μ over the members, so without replacement it is scaled to the
    ddof-1 variance, N_i/(N_i − 1)). Vectorised over samples with ``bincount``.
    """
    if plan.estimator.get("kind") != "stratified":
        return None
    if len(y) == 0:
        return 0.0, np.inf
    replace = bool(plan.estimator.get("replace"))
    ids = np.array([c.id for c in plan.clusters], dtype=np.int64)
    sizes = np.array([c.size for c in plan.clusters], dtype=np.float64)
    covs = np.array([np.nan if c.stats.get("cov") is None else float(c.stats["cov"]) for c in plan.clusters])
    cl = plan.samples["cluster"].to_numpy(np.int64)
    by_id = np.argsort(ids)
    pos = by_id[np.searchsorted(ids, cl, sorter=by_id)]  # index of each sample's cluster
    k = len(ids)
    m = np.bincount(pos, minlength=k).astype(np.float64)
    sums = np.bincount(pos, weights=y, minlength=k)
    used = m > 0
    mean = np.divide(sums, m, out=np.zeros(k), where=used)
    dev = y - mean[pos]
    ss = np.bincount(pos, weights=dev * dev, minlength=k)
    n = sizes
    fpc = np.ones(k) if replace else np.clip(1.0 - m / n, 0.0, 1.0)
    s2 = np.divide(ss, m - 1.0, out=np.zeros(k), where=m >= 2)
    single = used & (m == 1) & (fpc > 0)
    if np.any(single & np.isnan(covs)):
        return None
    ddof1 = np.ones(k) if replace else np.divide(n, n - 1.0, out=np.ones(k), where=n > 1)
    s2 = np.where(single, (np.nan_to_num(covs) * mean) ** 2 * ddof1, s2)
    terms = np.divide(n * n * s2 * fpc, m, out=np.zeros(k), where=used)
    var = float(terms.sum())
    sampled = used & (m >= 2) & (terms > 0)
    den = float(np.sum(terms[sampled] ** 2 / (m[sampled] - 1.0)))
    dof = var * var / den if den > 0 else np.inf
    return var, max(dof, 1.0)


def _cluster_means_total(plan: Plan, y: np.ndarray) -> float:
    return float(np.dot(plan.samples["weight"].to_numpy(np.float64), y))


def estimate_total(
    plan: Plan, values: Mapping[int, float] | pd.Series, *, metric: str = "value", confidence: float = 0.95
) -> MetricEstimate:
    """Weighted total Σ w·y with its standard error and confidence interval."""
    y = _sample_values(plan, values, metric)
    total = _cluster_means_total(plan, y)
    return _finish(metric, total, _stratified_variance(plan, y), confidence, len(y), "total")


def estimate_ratio(
    plan: Plan,
    numerator: Mapping[int, float] | pd.Series,
    denominator: Mapping[int, float] | pd.Series,
    *,
    metric: str = "ratio",
    confidence: float = 0.95,
) -> MetricEstimate:
    """Ratio of two estimated totals (e.g. IPC = instructions / cycles)."""
    a = _sample_values(plan, numerator, metric)
    b = _sample_values(plan, denominator, metric)
    ta, tb = _cluster_means_total(plan, a), _cluster_means_total(plan, b)
    if tb == 0:
        return MetricEstimate(metric, float("nan"), None, None, None, confidence, len(a), "ratio")
    r = ta / tb
    var_d = _stratified_variance(plan, a - r * b)
    var = None if var_d is None else (var_d[0] / (tb * tb), var_d[1])
    return _finish(metric, r, var, confidence, len(a), "ratio")


def _finish(
    metric: str, est: float, var_dof: tuple[float, float] | None, confidence: float, n: int, kind: str
) -> MetricEstimate:
    q = _z(confidence)
    if var_dof is None:
        return MetricEstimate(metric, est, None, None, None, confidence, n, kind)
    var, dof = var_dof
    if np.isfinite(dof):
        q = float(special.stdtrit(dof, 0.5 + confidence / 2))
    se = float(np.sqrt(max(var, 0.0)))
    return MetricEstimate(metric, est, se, est - q * se, est + q * se, confidence, n, kind)


def estimate_results(
    plan: Plan,
    results: pd.DataFrame,
    *,
    metrics: Sequence[str] | None = None,
    ratios: Mapping[str, tuple[str, str]] | None = None,
    confidence: float = 0.95,
) -> list[MetricEstimate]:
    """Estimates of every numeric metric column of ``results`` (indexed by or holding ``kernel_id``),
    then of each ratio ``name: (numerator, denominator)`` whose columns are present."""
    df = results.set_index("kernel_id") if "kernel_id" in results.columns else results
    if metrics is None:
        metrics = [c for c in df.columns if pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c])]
    out = [estimate_total(plan, df[m].astype(np.float64), metric=m, confidence=confidence) for m in metrics]
    for name, (num, den) in (ratios or {}).items():
        if num in df.columns and den in df.columns:
            out.append(
                estimate_ratio(plan, df[num].astype(np.float64), df[den].astype(np.float64), metric=name, confidence=confidence)
            )
    return out
