"""From per-launch simulator results to whole-workload estimates with confidence intervals.

For a stratified plan (random draws within clusters) the total is Σ_i N_i·ȳ_i and its variance
Σ_i N_i²·s_i²/m_i, times the finite-population correction (1 − m_i/N_i) when the plan drew
without replacement. A cluster sampled once has no sample variance; it borrows the profile's
coefficient of variation for that cluster (recorded in the plan), s_i = CoV_i·ȳ_i. A cluster
whose every launch was simulated contributes no variance. Plans that pick one representative
per cluster (PKA, Sieve, Photon) carry no statistical bound, and their estimates have none.

Ratio metrics (IPC, hit rates) are ratios of estimated totals; their standard error comes from
the linearised residuals y_a − R·y_b (delta method), stratum by stratum.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd
from scipy import stats

from simsample.errors import UserError
from simsample.plan import Plan


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
    return float(stats.norm.ppf(0.5 + confidence / 2))


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


def _stratified_variance(plan: Plan, y: np.ndarray) -> float | None:
    """Variance of Σ w·y under the plan's design, or None when the plan has no bound."""
    if plan.estimator.get("kind") != "stratified":
        return None
    replace = bool(plan.estimator.get("replace"))
    cl = plan.samples["cluster"].to_numpy()
    var = 0.0
    clusters = {c.id: c for c in plan.clusters}
    for cid in np.unique(cl):
        c = clusters[int(cid)]
        yi = y[cl == cid]
        m = len(yi)
        n = c.size
        fpc = 1.0 if replace else max(0.0, 1.0 - m / n)
        if fpc == 0.0:
            continue
        if m >= 2:
            s2 = float(np.var(yi, ddof=1))
        else:
            cov = c.stats.get("cov")
            if cov is None:
                return None
            s2 = (float(cov) * float(yi[0])) ** 2
        var += n * n * s2 / m * fpc
    return var


def _cluster_means_total(plan: Plan, y: np.ndarray) -> float:
    return float(np.dot(plan.samples["weight"].to_numpy(np.float64), y))


def estimate_total(
    plan: Plan, values: Mapping[int, float] | pd.Series, *, metric: str = "value", confidence: float = 0.95
) -> MetricEstimate:
    """Weighted total Σ w·y with its standard error and confidence interval."""
    y = _sample_values(plan, values, metric)
    total = _cluster_means_total(plan, y)
    var = _stratified_variance(plan, y)
    return _finish(metric, total, var, confidence, len(y), "total")


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
    var = None if var_d is None else var_d / (tb * tb)
    return _finish(metric, r, var, confidence, len(a), "ratio")


def _finish(metric: str, est: float, var: float | None, confidence: float, n: int, kind: str) -> MetricEstimate:
    z = _z(confidence)
    if var is None:
        return MetricEstimate(metric, est, None, None, None, confidence, n, kind)
    se = float(np.sqrt(max(var, 0.0)))
    return MetricEstimate(metric, est, se, est - z * se, est + z * se, confidence, n, kind)


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
