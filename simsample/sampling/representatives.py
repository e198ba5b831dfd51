"""Plans of samplers that stand one chosen launch for each cluster (PKA, Sieve, Photon).

Such a plan has no statistical bound: one launch per cluster gives no sample variance, and the
choice is not random in the methods' own rules. Its estimator kind is ``"representative"``, its
error bound ``None``; the clusters still carry their profile statistics, so a reader can see how
much each cluster varies around the launch that stands for it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from simsample.planfile import Cluster, Plan

if TYPE_CHECKING:
    from simsample.plugin_base import Sampler
    from simsample.workload import Workload


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
) -> Plan:
    """A plan with one representative (row ``reps[c]``, weight ``weights[c]``) per cluster ``c``.

    ``labels`` gives every launch row its cluster ``0..C-1``; every cluster must have members.
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
    return Plan.build(
        workload,
        sampler,
        params,
        seed,
        metric=metric,
        rows=reps,
        weights=weights,
        cluster_of_row=np.arange(n_clusters, dtype=np.int64),
        clusters=clusters,
        kind="representative",
        replace=False,
        error_bound=None,
        confidence=None,
        extra_prediction=extra_prediction,
    )


def resolve_metric(workload: Workload, metric: str) -> str:
    """The sampler's cost column: ``auto`` is the workload's default (cycles, else duration)."""
    return workload.default_metric() if metric == "auto" else metric
