"""K-means on launch embeddings with K chosen by the silhouette coefficient (``gcl-sampler.txt`` §3.4).

K runs over 2..``k_max`` (at most the number of distinct embeddings minus one: the silhouette
needs two clusters and a point left over); the K with the highest mean silhouette wins, and among
Ks whose score is within ``tolerance`` of the best the smallest is taken, as the paper prefers the
smaller K "when multiple values of K yield comparable silhouette scores". With fewer than three
distinct embeddings K is their count.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class Clustering:
    labels: np.ndarray
    k: int
    silhouettes: dict[int, float] = field(default_factory=dict)


def choose_k(
    embeddings: np.ndarray, *, k_max: int = 20, tolerance: float = 0.01, seed: int = 0, n_init: int = 10
) -> Clustering:
    """Cluster the rows of ``embeddings``; labels are 0..K-1."""
    from sklearn.cluster import KMeans
    from sklearn.metrics import silhouette_score

    x = np.asarray(embeddings, dtype=np.float64)
    n = len(x)
    if n == 0:
        return Clustering(np.zeros(0, np.int64), 0)
    distinct, inverse = np.unique(np.round(x, 6), axis=0, return_inverse=True)
    inverse = inverse.ravel()
    if len(distinct) < 3:
        return Clustering(inverse.astype(np.int64), len(distinct))
    scores: dict[int, float] = {}
    fits: dict[int, np.ndarray] = {}
    for k in range(2, min(k_max, len(distinct) - 1) + 1):
        labels = KMeans(n_clusters=k, random_state=seed % (2**32), n_init=n_init).fit_predict(x)
        if len(np.unique(labels)) < 2:
            continue
        scores[k] = float(silhouette_score(x, labels))
        fits[k] = labels
    if not scores:
        return Clustering(np.zeros(n, np.int64), 1)
    best = max(scores.values())
    k = min(k for k, s in scores.items() if s >= best - tolerance)
    return Clustering(fits[k].astype(np.int64), k, scores)
