"""An audit beside a representative plan: a few launches drawn at random to bound its error.

PKA, Sieve and Photon stand one chosen launch for each cluster. Nothing in such a plan is drawn
at random, so no sampling distribution says how far its projection T̂ = Σ w·y can be from the
whole run: its error is the representatives' bias, which the plan alone cannot measure. An audit
measures it the way two-phase (double) sampling does (Cochran, *Sampling Techniques*, §12; Särndal,
Swensson and Wretman, *Model Assisted Survey Sampling*, §6.3, the difference estimator):

- the plan predicts every launch j: ŷ_j = share_j · y(representative of j's cluster), where the
  shares of a cluster's members sum to its weight w_c, so that Σ_j ŷ_j is exactly the projection;
- ``m`` draws land on launch j m·p_j times on average, p_j proportional to the launch's cycles,
  half as the projection puts them on it and half its own (:func:`audit_size`: a profile's
  durations, a trace's modelled cycles; where the cycles and the error are), mixed with a
  uniform share :data:`DEFENSIVE` so that every launch can be drawn (Hesterberg 1995, defensive
  mixtures): a launch the model calls free is not thereby outside the audit. ``audit_by=cost``
  draws in proportion to the cost column alone (warp instructions on a trace), as the samplers'
  previous versions did;
- the draws are systematic (Madow 1949; Cochran, chapters 8 and 9A): one random start, then
  steps of 1/m through the cumulated p_j of the launches ordered by cluster, then by design
  value, then by position. Every cluster, and every run of similar launches within one, that holds at least
  1/m of the probability is drawn for certain. Independent draws (with replacement) missed the
  few launches that carry a projection's error in a third to a half of plans (three short
  launches of thirty whose prediction is 25% off: each draw finds one with probability 0.08);
  ordered by design value, those launches sit together and a step lands among them;
- the Hansen–Hurwitz estimate of the projection's error B = Σ_j (ŷ_j − y_j) = T̂ − T is
  B̂ = (1/m)·Σ_r d_r, d_r = (ŷ_r − y_r)/p_r over the draws, unbiased whatever the
  representatives are (E[draws of j] = m·p_j);
- its variance is the successive-difference estimate of a systematic sample (Wolter,
  *Introduction to Variance Estimation*, chapter 8, its v₂ without the finite-population factor):
  Σ_r (d_r − d_{r−1})² / (2m(m − 1)), the draws taken in the order they were walked. The
  estimate of independent draws, s_d²/m, counts the spread *between* the clusters and runs the
  walk stratifies by as if a draw could land anywhere, and overstates the variance: over the
  trace workloads every interval it gave covered, 1–30% wider (16 draws) than the successive
  differences'. Against independent normal values the successive differences are a noisier
  estimate of the same variance (von Neumann 1941: the variance of the mean square successive
  difference is (3m − 4)σ⁴/(m − 1)²), worth 2(m − 1)²/(3m − 4) degrees of freedom rather than
  m − 1 (10.2 rather than 15 at 16 draws), and the t quantile takes those.

The point estimate stays the method's own projection (the papers' numbers, and Σ w·y as every
plan's weights mean it: the audit's samples carry weight 0). Its interval is
T̂ ± (|B̂| + t·se(B̂)): it holds the truth whenever B̂ lies within t·se(B̂) of B, at least as often
as the confidence says, and it is wide where the representatives are far off and narrow where
the audit finds them close. A ratio (IPC) takes the same bound on the linearised z = a − R̂·b.

The audit is opt-in (``audit=M`` on the representative samplers): it costs M simulated launches
drawn where the time is, and without it the plans are exactly the published methods'.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

#: Share of the audit's draw probability spread evenly over all launches (the rest in proportion
#: to the design metric): every launch can be drawn, and a launch whose design value understates
#: its cost by a large factor cannot make one draw's d_r unbounded.
DEFENSIVE = 0.05


def audit_probabilities(x: np.ndarray, *, defensive: float = DEFENSIVE) -> np.ndarray:
    """Each launch's probability of one audit draw: (1 − defensive)·x_j/Σx + defensive/N.

    Negative or non-finite design values count as 0; a workload whose design values are all 0
    is drawn uniformly."""
    x = np.asarray(x, dtype=np.float64)
    n = len(x)
    if n == 0:
        return np.empty(0)
    x = np.where(np.isfinite(x) & (x > 0), x, 0.0)
    total = float(x.sum())
    if total <= 0:
        return np.full(n, 1.0 / n)
    p = (1.0 - defensive) * (x / total) + defensive / n
    return p / p.sum()


#: A column of trace features that models each launch's cycles (the Accel-Sim adapter's launch
#: latency + waves x a warp's path): what the audit's draws follow where the cost column is a proxy.
MODEL_COLUMN = "predicted_cycles"

#: What the audit's draw probability follows (the ``audit_by`` parameter): ``cycles``, half the
#: projection's and half each launch's own cycles (:func:`audit_size`); ``cost``, the cost column
#: alone (the plans of the samplers' previous versions).
AUDIT_BY = ("cycles", "cost")


def audit_size(labels: np.ndarray, reps: np.ndarray, shares: np.ndarray, cycles: np.ndarray) -> np.ndarray:
    """The audit's size measure: half in proportion to what the projection puts on each launch,
    share_j·c(representative of j), half to the launch's own c_j, c a model of the cycles.

    Why: the error of launch j is ŷ_j − y_j, and a draw's d_j = (ŷ_j − y_j)/p_j is bounded only
    where p_j follows both: where c is the cycles themselves, |d_j| ≤ 2·max(T̂, T)/(1 − defensive)
    whatever the representatives (a model of the cycles keeps it near that). Warp instructions
    follow neither where a launch is bound by latency: on a graph workload, 16 one-CTA launches of
    64 warp instructions each carried 18% of the cycles and 2% of the draw probability (one of them
    24 times more of the cycles than of the probability), and Sieve's and Photon's 16-draw
    intervals covered 0.42 and 0.41 of plans. Each half is normalised on its own (the projection
    and the launches' own cycles weigh the same); a half whose total is 0 is left out, and a
    workload with neither is drawn uniformly (:func:`audit_probabilities`)."""
    labels = np.asarray(labels, dtype=np.int64)
    c = np.asarray(cycles, dtype=np.float64)
    c = np.where(np.isfinite(c) & (c > 0), c, 0.0)
    projected = np.asarray(shares, dtype=np.float64) * c[np.asarray(reps, dtype=np.int64)[labels]]
    projected = np.where(np.isfinite(projected) & (projected > 0), projected, 0.0)
    size = np.zeros(len(labels))
    for part in (projected, c):
        total = float(part.sum())
        if total > 0:
            size += part / total
    return size


def audit_rng(seed: int) -> np.random.Generator:
    """The audit's own stream of the plan's seed: drawing it leaves the sampler's choices, made
    with :func:`simsample.sampling.draws.rng` of the same seed, as they were without it."""
    return np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(1,)))


def audit_order(labels: np.ndarray, p: np.ndarray, position: np.ndarray | None = None) -> np.ndarray:
    """The launches in the order the systematic draws walk: by cluster, then draw probability
    (the design value, cleaned as :func:`audit_probabilities` cleans it), then position (like
    launches together, so that a run of them holding 1/m of the probability is drawn for
    certain). The plan records each audited launch's cluster and probability, so the order of
    its draws can be walked again where their variance is estimated."""
    p = np.asarray(p, dtype=np.float64)
    at = np.arange(len(p)) if position is None else np.asarray(position, dtype=np.int64)
    return np.lexsort((at, p, np.asarray(labels, dtype=np.int64)))


def draw_audit(p: np.ndarray, draws: int, gen: np.random.Generator, order: np.ndarray) -> np.ndarray:
    """``draws`` row positions, launch j drawn m·p_j times on average, systematically along
    ``order`` (:func:`audit_order`): one random start, then steps of 1/m through the cumulated
    probabilities."""
    if draws <= 0:
        return np.empty(0, dtype=np.int64)
    order = np.asarray(order, dtype=np.int64)
    edges = np.cumsum(p[order])
    points = (gen.random() + np.arange(draws)) / draws * edges[-1]
    return order[np.minimum(np.searchsorted(edges, points, side="right"), len(order) - 1)]


def member_shares(labels: np.ndarray, weights: np.ndarray, apportion: np.ndarray | None = None) -> np.ndarray:
    """Each launch's share of its cluster's projection, in units of its representative's value.

    The shares of cluster c sum to its weight w_c, so Σ_j share_j·y(rep of j) is the plan's
    projection. ``apportion`` (e.g. instructions, for plans weighted by instruction share: a
    member's predicted cycles scale with its instructions) divides w_c in proportion; without it,
    or where a cluster's apportioning values sum to 0, equally."""
    labels = np.asarray(labels, dtype=np.int64)
    weights = np.asarray(weights, dtype=np.float64)
    k = len(weights)
    counts = np.bincount(labels, minlength=k).astype(np.float64)
    equal = weights[labels] / counts[labels]
    if apportion is None:
        return equal
    a = np.where(np.isfinite(apportion) & (apportion > 0), np.asarray(apportion, dtype=np.float64), 0.0)
    sums = np.bincount(labels, weights=a, minlength=k)
    ok = sums[labels] > 0
    # the fraction first: w·a underflows to 0 for a tiny apportioning value that is all of its cluster's
    return np.where(ok, weights[labels] * (a / np.where(ok, sums[labels], 1.0)), equal)


def audit_record(
    rows: np.ndarray, labels: np.ndarray, shares: np.ndarray, p: np.ndarray, *, cluster: int
) -> dict[str, Any]:
    """The plan's ``estimator.audit``: per distinct audited launch (ascending), the cluster whose
    representative predicts it, its share and its draw probability; ``cluster`` is the id of the
    cluster that lists the audit's samples."""
    distinct = np.unique(rows)
    return {
        "cluster": int(cluster),
        "draws": int(len(rows)),
        "defensive": DEFENSIVE,
        "launches": [int(r) for r in distinct],
        "of": [int(labels[r]) for r in distinct],
        "share": [float(shares[r]) for r in distinct],
        "p": [float(p[r]) for r in distinct],
    }


@dataclass(frozen=True)
class AuditBound:
    """What the audit says of a projection's error B = T̂ − T."""

    bias: float  # B̂, the Hansen–Hurwitz estimate of T̂ − T
    std_error: float  # se(B̂)
    dof: float  # 2(m − 1)²/(3m − 4), the successive differences' degrees of freedom


def has_audit(estimator: Mapping[str, Any]) -> bool:
    """Whether a plan's estimator section carries an audit of at least one draw."""
    audit = estimator.get("audit") if isinstance(estimator, Mapping) else None
    return isinstance(audit, Mapping) and int(audit.get("draws") or 0) > 0


def audit_bound(
    estimator: Mapping[str, Any], launch: np.ndarray, cluster: np.ndarray, y: np.ndarray
) -> AuditBound | None:
    """The audit's estimate of the projection's error from the sample rows' values ``y`` (rows as
    the plan lists them: ``launch`` positions and ``cluster`` ids); None without an audit or with
    fewer than two draws (no spread to estimate)."""
    if not has_audit(estimator):
        return None
    audit = estimator["audit"]
    aid = int(audit["cluster"])
    rows = cluster == aid
    m = int(rows.sum())
    if m < 2:
        return None
    at = {int(x): i for i, x in enumerate(audit["launches"])}
    of = np.asarray(audit["of"], dtype=np.int64)
    share = np.asarray(audit["share"], dtype=np.float64)
    p = np.asarray(audit["p"], dtype=np.float64)
    rep_value = {int(c): float(v) for c, v in zip(cluster[~rows], y[~rows])}
    idx = np.array([at[int(x)] for x in launch[rows]], dtype=np.int64)
    predicted = share[idx] * np.array([rep_value[int(c)] for c in of[idx]])
    d = (predicted - y[rows]) / p[idx]
    walked = d[audit_order(of[idx], p[idx], launch[rows])]
    variance = float(np.sum(np.diff(walked) ** 2)) / (2.0 * m * (m - 1))
    return AuditBound(float(d.mean()), float(np.sqrt(variance)), successive_difference_dof(m))


def successive_difference_dof(m: int) -> float:
    """Degrees of freedom of the successive-difference variance of m draws: those of the
    chi-square with the same relative variance, 2(m − 1)²/(3m − 4) (1 at two draws, where it is
    the ordinary sample variance)."""
    return 2.0 * (m - 1) ** 2 / (3.0 * m - 4.0)
