"""Building blocks shared by samplers: cluster statistics and seeded draws."""

from __future__ import annotations

import numpy as np

from simsample.planfile import Cluster


def rng(seed: int) -> np.random.Generator:
    """The generator every sampler uses, so the same seed gives the same plan everywhere."""
    return np.random.default_rng(np.random.SeedSequence(int(seed)))


def cluster_stats(values: np.ndarray) -> dict[str, float]:
    """Mean, population std, CoV (0 when the mean is 0) and total of a cluster's values."""
    v = np.asarray(values, dtype=np.float64)
    if v.size == 0:
        return {"mean": 0.0, "std": 0.0, "cov": 0.0, "total": 0.0}
    mean = float(v.mean())
    std = float(v.std())
    return {"mean": mean, "std": std, "cov": std / mean if mean > 0 else 0.0, "total": float(v.sum())}


def draw(members: np.ndarray, m: int, generator: np.random.Generator, *, replace: bool) -> np.ndarray:
    """``m`` members drawn uniformly (without replacement: m is clamped to the member count)."""
    members = np.asarray(members)
    if not replace:
        m = min(m, len(members))
    picks = generator.choice(len(members), size=m, replace=replace)
    return members[np.sort(picks)] if not replace else members[picks]


def make_cluster(
    cid: int, key: str, members: np.ndarray, picked: np.ndarray, values: np.ndarray, ids: np.ndarray
) -> Cluster:
    """A :class:`Cluster` for row positions ``members`` of which ``picked`` were drawn."""
    return Cluster(
        id=cid,
        key=key,
        size=int(len(members)),
        draws=int(len(picked)),
        stats=cluster_stats(values[members]),
        representatives=sorted({int(ids[p]) for p in picked}),
    )
