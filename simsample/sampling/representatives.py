"""Plans of samplers that stand one chosen launch for each cluster (PKA, Sieve, Photon).

Such a plan has no statistical bound: one launch per cluster gives no sample variance, and the
choice is not random in the methods' own rules. An audit drawn beside it (``audit=M``) gives it
one (:mod:`simsample.sampling.audit`). Its estimator kind is ``"representative"``, its
error bound ``None``; the clusters still carry their profile statistics, so a reader can see how
much each cluster varies around the launch that stands for it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from simsample.planfile import Cluster, Plan
from simsample.plugin_base import Param
from simsample.sampling.audit import (
    AUDIT_BY,
    MODEL_COLUMN,
    audit_order,
    audit_probabilities,
    audit_record,
    audit_rng,
    audit_size,
    draw_audit,
    member_shares,
)
from simsample.workload import MEASURED_METRICS

if TYPE_CHECKING:
    from simsample.plugin_base import Sampler
    from simsample.workload import Workload


#: The ``audit`` parameter of the representative samplers: launches drawn at random beside the
#: representatives to bound their error (:mod:`simsample.sampling.audit`); 0 keeps the method's
#: own plan, without an interval.
AUDIT_PARAM = Param(
    "audit",
    int,
    0,
    "launches drawn at random beside the representatives (see audit_by) that give the plan an interval; 0: the "
    "method's own plan, without one",
    minimum=0,
)

#: The ``audit_by`` parameter that goes with :data:`AUDIT_PARAM`: what the audit's draws follow.
AUDIT_BY_PARAM = Param(
    "audit_by",
    str,
    "cycles",
    "what the audit's draw probability follows: cycles (half where the projection puts them, half each launch's "
    "own, by the features' predicted_cycles where the cost column is a proxy) or cost (the cost column alone, "
    "the samplers' previous versions)",
    choices=AUDIT_BY,
)


def grouped_stats(labels: np.ndarray, values: np.ndarray, n_clusters: int) -> dict[str, np.ndarray]:
    """Per-cluster count, mean, population std, CoV (0 when the mean is 0) and total, two-pass."""
    labels = np.asarray(labels, dtype=np.int64)
    values = np.asarray(values, dtype=np.float64)
    counts = np.bincount(labels, minlength=n_clusters).astype(np.float64)
    totals = np.bincount(labels, weights=values, minlength=n_clusters)
    safe = np.where(counts > 0, counts, 1.0)
    mean = totals / safe
    dev = values - mean[labels]
    std = np.sqrt(np.bincount(labels, weights=dev * dev, minlength=n_clusters) / safe)
    cov = np.divide(std, mean, out=np.zeros_like(std), where=mean > 0)
    return {"count": counts, "mean": mean, "std": std, "cov": cov, "total": totals}


def first_of_each(labels: np.ndarray, n_clusters: int) -> np.ndarray:
    """Row position of each cluster's first member in launch order."""
    first = np.full(n_clusters, -1, dtype=np.int64)
    uniq, idx = np.unique(labels, return_index=True)
    first[uniq] = idx
    return first


def relabel_by_first(labels: np.ndarray) -> tuple[np.ndarray, int]:
    """Labels renumbered 0..C-1 in the order clusters first appear (deterministic cluster ids)."""
    uniq, first, inv = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(len(uniq), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(uniq))
    return rank[inv.ravel()], len(uniq)


def representative_plan(
    workload: Workload,
    sampler: Sampler,
    params: Mapping[str, Any],
    seed: int,
    *,
    metric: str,
    values: np.ndarray,
    labels: np.ndarray,
    reps: np.ndarray,
    weights: np.ndarray,
    keys: Sequence[str],
    extra_prediction: Mapping[str, Any] | None = None,
    audit: int = 0,
    apportion: np.ndarray | None = None,
    audit_by: str = "cycles",
) -> Plan:
    """A plan with one representative (row ``reps[c]``, weight ``weights[c]``) per cluster ``c``.

    ``labels`` gives every launch row its cluster ``0..C-1``; every cluster must have members.
    ``audit``: launches drawn at random beside the representatives, in proportion to ``values``,
    that give the plan an interval (:mod:`simsample.sampling.audit`); they are listed with weight
    0 in one more cluster, and ``apportion`` (e.g. instructions, for plans weighted by instruction
    share) says how a cluster's projection divides among its members. ``audit_by``: what the
    draws follow (:data:`AUDIT_BY_PARAM`, :func:`simsample.sampling.audit.audit_size`).
    """
    labels = np.asarray(labels, dtype=np.int64)
    reps = np.asarray(reps, dtype=np.int64)
    weights = np.asarray(weights, dtype=np.float64)
    n_clusters = len(reps)
    if not (len(weights) == len(keys) == n_clusters):
        raise ValueError("reps, weights and keys differ in length")
    if np.any(weights <= 0) or not np.all(np.isfinite(weights)):
        raise ValueError("representative weights must be positive and finite")
    st = grouped_stats(labels, values, n_clusters)
    ids = workload.kernels["kernel_id"].to_numpy(np.int64)
    clusters = [
        Cluster(
            id=c,
            key=str(keys[c]),
            size=int(st["count"][c]),
            draws=1,
            stats={
                "mean": float(st["mean"][c]),
                "std": float(st["std"][c]),
                "cov": float(st["cov"][c]),
                "total": float(st["total"][c]),
            },
            representatives=[int(ids[reps[c]])],
        )
        for c in range(n_clusters)
    ]
    rows, row_weights, row_clusters = reps, weights, np.arange(n_clusters, dtype=np.int64)
    estimator_audit = None
    if audit > 0:
        shares = member_shares(labels, weights, apportion)
        if audit_by == "cost":
            size, follows = values, metric
        elif audit_by == "cycles":
            cycles = model_cycles(workload, metric, values)
            size = audit_size(labels, reps, shares, cycles)
            follows = f"the projection's and each launch's {metric if cycles is values else MODEL_COLUMN}"
        else:
            raise ValueError(f"audit_by must be one of {AUDIT_BY}, got {audit_by!r}")
        p = audit_probabilities(size)
        drawn = draw_audit(p, audit, audit_rng(seed), audit_order(labels, p))
        estimator_audit = audit_record(drawn, labels, shares, p, cluster=n_clusters)
        distinct = np.unique(drawn)
        clusters.append(
            Cluster(
                id=n_clusters,
                key=f"audit: {audit} draws in proportion to {follows}",
                size=len(labels),
                draws=int(audit),
                stats={"total": float(np.sum(values, where=np.isfinite(values)))},
                representatives=[int(ids[r]) for r in distinct],
            )
        )
        rows = np.concatenate([reps, drawn])
        row_weights = np.concatenate([weights, np.zeros(len(drawn))])
        row_clusters = np.concatenate([row_clusters, np.full(len(drawn), n_clusters, dtype=np.int64)])
    plan = Plan.build(
        workload,
        sampler,
        params,
        seed,
        metric=metric,
        rows=rows,
        weights=row_weights,
        cluster_of_row=row_clusters,
        clusters=clusters,
        kind="representative",
        replace=False,
        error_bound=None,
        confidence=None,
        extra_prediction=extra_prediction,
    )
    if estimator_audit is not None:
        plan.estimator["audit"] = estimator_audit
    return plan


def model_cycles(workload: Workload, metric: str, values: np.ndarray) -> np.ndarray:
    """Each launch's cycles as the audit's size measure knows them: the cost column where it is a
    measured time (a profile's durations, a simulator's cycles), else the features' model of the
    cycles (:data:`~simsample.sampling.audit.MODEL_COLUMN`) where they carry one, else the cost
    column (a proxy such as warp instructions, the best there is). A model column with a value
    that is no finite number (text, NaN) is no model: the cost column is returned, the same array.
    Margin's second draws weigh clusters by it too (``donors_by=cycles``)."""
    if metric not in MEASURED_METRICS and MODEL_COLUMN in workload.kernels.columns:
        try:
            model = workload.kernels[MODEL_COLUMN].to_numpy(np.float64)
        except (TypeError, ValueError):  # a column of that name that holds text: no model
            return values
        if np.all(np.isfinite(model)) and np.any(model > 0):
            return model
    return values


def resolve_metric(workload: Workload, metric: str) -> str:
    """The sampler's cost column: ``auto`` is the workload's default (cycles, else duration)."""
    return workload.default_metric() if metric == "auto" else metric
