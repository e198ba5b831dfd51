"""ROOT (MICRO'25 §3.4): split each kernel's launches where its time distribution has peaks.

Starting from the name groups, a cluster C is split in two by 2-means on the launch times; the
children are sized with STEM's multi-cluster allocation, bounded by ε against their joint total
(eq. 8); the split is accepted when the children's sampled time Σ m_i·μ_i is below the
parent's m·μ (eq. 7; for a child, the parent's cost is what the split that created it
allocated, as in the published artifact); accepted children are split again. A cluster with one
launch or no spread is never split.

``split=exact`` (default) uses the exact one-dimensional 2-means (sort once, then each split is a
prefix-sum pass over a contiguous range of the sorted launches): deterministic and O(n) per
split. ``split=kmeans`` reproduces the artifact's scikit-learn KMeans on times normalised to
[0, 1]; it is slow (a k-means fit per split) and only practical on small workloads.

Once the clusters are fixed they are sized with the KKT allocation: the leaves of each group
together, to ε of the group's total (``allocation=group``, default; the artifact sizes each leaf
by the split that created it, which bounds every subtree by ε and costs at least as much), or
all leaves of the workload together (``allocation=joint``). Sizing follows STEM's ``fpc`` and
``min_draws``; with ``fpc=true`` ROOT's many small leaves need far fewer draws (on the
development profiles about twice the speedup at the same measured error).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from simsample.sdk import (
    COMMON_PARAMS,
    Param,
    Plan,
    Range,
    Sampler,
    Strata,
    Workload,
    allocate,
    exact_stats,
    finish,
    group_ranges,
    hookimpl,
    iid_sizing,
    pair_draws,
    prepare,
    sampled_time,
    single_cluster_draws,
    size_clusters,
    split_range,
    z_value,
)

SPLITS = ("exact", "kmeans")


class RootSampler(Sampler):
    name = "root"
    version = "3"  # 3: stats.tail: the launches' own quantile, and for clusters drawn 2-4 times (2: recorded)
    description = "ROOT: STEM with per-kernel clusters split hierarchically at the peaks of their times"
    params = COMMON_PARAMS + (
        Param(
            "split",
            str,
            "exact",
            "exact: exact 1-D 2-means; kmeans: scikit-learn KMeans on normalised times (the artifact; slow)",
            choices=SPLITS,
        ),
    )
    bounded = True

    def plan(self, workload: Workload, params: Mapping[str, Any], seed: int) -> Plan:
        metric, strata = prepare(workload, params, grouping=params["group"], by_value=True)
        leaves: list[Range] = []
        for r in group_ranges(strata):
            leaves.extend(root_tree(strata, r, params, seed))
        leaves = exact_stats(strata, leaves)
        draws = size_clusters(leaves, params)
        splits = len(leaves) - strata.groups
        return finish(self, workload, params, seed, metric, strata, leaves, draws, {"splits": splits})


def root_tree(strata: Strata, top: Range, params: Mapping[str, Any], seed: int) -> list[Range]:
    """Leaves of ROOT's recursion over one group, in ascending order of value.

    A cluster already at its fewest draws L = min(min_draws, N) is kept without computing a
    split: no split can pass the acceptance rule then, because each child i costs at least
    min(L, N_i)·μ_i ≥ L·(N_i/N)·μ_i, so the children together cost at least L·μ = τ_old.
    """
    z = z_value(params["confidence"])
    m0 = single_cluster_draws(top, params)
    # what every split reads, looked up once (margin tries thousands of splits per plan)
    eps, min_draws, method, replace = params["eps"], params["min_draws"], params["split"], iid_sizing(params)
    stack: list[tuple[Range, int]] = [(top, m0)]
    leaves: list[Range] = []
    while stack:
        c, m_old = stack.pop()
        size = c.hi - c.lo
        if size <= 1 or c.std == 0.0 or m_old <= min(min_draws, size):
            leaves.append(c)
            continue
        kids = split_range(strata, c, method, seed)
        if kids is None:
            leaves.append(c)
            continue
        left, right = kids
        means = [left.mean, right.mean]
        sizes = [left.hi - left.lo, right.hi - right.lo]
        # the draws alone, as Python ints, where the pair allows (the same numbers as allocate's)
        pair = pair_draws(*means, left.std, right.std, *sizes, eps=eps, z=z, replace=replace, lower=min_draws)
        if pair is None:
            alloc = allocate(means, [left.std, right.std], sizes, eps=eps, z=z, replace=replace, lower=min_draws)
            pair = int(alloc.draws[0]), int(alloc.draws[1])
        tau_old = m_old * c.mean
        tau_new = sampled_time(pair, means)
        if tau_new < tau_old:
            # right child pushed first so that the left one is explored (and emitted) first
            stack.append((kids[1], pair[1]))
            stack.append((kids[0], pair[0]))
        else:
            leaves.append(c)
    leaves.sort(key=lambda r: r.lo)
    return leaves


@hookimpl
def register_samplers(register):
    register(RootSampler())
