"""Allegro (MLArchSys'24 §IV): per (name, grid, block) group, split until a few draws suffice.

Each group gets m_min = max(⌈(z·σ/(ε·μ))²⌉, 30) draws (the floor of 30 is the paper's rule of
thumb for the central limit theorem). If m_min exceeds the threshold m_th (default 50), the group
is split in two by one-dimensional 2-means on its launch times and each half is treated the same
way, recursively (Algorithm 1). Every cluster is then sampled m_min times, at most its size when
drawing without replacement (the default; ``replace=true`` draws i.i.d. as the paper's
prototype), with weight N/m. Each cluster is bounded by ε on its own, so the whole is too.

A cluster of one launch, or whose launches all take the same time, is never split; a cluster
whose mean is 0 gets the floor (all its launches when it is smaller).

On trace features (``context=auto`` where the workload has the ``warm_reads`` column) each group
is split by cache context class as well (``name+shape+context``). The paper splits on measured
times, which carry the caches a launch met; a trace's design metric (warp instructions or the
shape model's cycles) is equal for a cold launch and a warm one, so a group of 200 equal
relaxation steps whose first two ran cold was never split, thirty draws missed both in seven
plans of ten, and the interval, measured on the draws alone, missed the total with them (47
of 100 plans covered on the held-out ``solver`` workload; 92 split by context).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from simsample.sdk import (
    CONTEXT_COLUMN,
    CONTEXT_SUFFIX,
    GROUPINGS,
    Param,
    Plan,
    Range,
    Sampler,
    Strata,
    UserError,
    Workload,
    exact_stats,
    finish,
    group_ranges,
    hookimpl,
    prepare,
    resolve_grouping,
    split_range,
    z_value,
)


def m_min(r: Range, eps: float, z: float, floor: int) -> int:
    """⌈(z·σ/(ε·μ))²⌉, at least ``floor`` (the paper's eq. 2)."""
    if r.mean <= 0 or r.std == 0:
        return floor
    return max(math.ceil((z * r.std / (eps * r.mean)) ** 2), floor)


class AllegroSampler(Sampler):
    name = "allegro"
    version = "4"  # 4: context=auto splits groups by cache context on trace features; 3: stats.tail
    description = "Allegro: (name, grid, block) groups split by 1-D k-means until m_min ≤ m_th; ≥ 30 draws each"
    params = (
        Param("eps", float, 0.05, "error bound ε: a fraction of the total (0.05 = 5%)", minimum=1e-6, maximum=1.0),
        Param("confidence", float, 0.95, "confidence level of the bound", minimum=0.5, maximum=0.999999),
        Param("m_th", int, 50, "split a cluster while its m_min is above this", minimum=1),
        Param("min_samples", int, 30, "floor of m_min (the CLT rule of thumb)", minimum=1),
        Param(
            "group",
            str,
            "name+shape",
            "group launches by name, grid and block (the paper) or by name only",
            choices=GROUPINGS,
        ),
        Param(
            "context",
            str,
            "auto",
            "also split groups by cache context class (warm_reads): auto = where the workload has that "
            "column (trace features, whose design metric cannot show the caches a launch meets); off = "
            "never, whatever the grouping",
            choices=("auto", "on", "off"),
        ),
        Param("replace", bool, False, "draw with replacement (the paper's prototype)"),
        Param(
            "split",
            str,
            "exact",
            "exact 1-D 2-means, or kmeans: scikit-learn KMeans on normalised times",
            choices=("exact", "kmeans"),
        ),
        Param("metric", str, "auto", "per-launch cost column: auto = cycles, else duration_ns"),
    )
    bounded = True

    def plan(self, workload: Workload, params: Mapping[str, Any], seed: int) -> Plan:
        grouping = allegro_grouping(workload, params)
        metric, strata = prepare(workload, params, grouping=grouping, by_value=True)
        z = z_value(params["confidence"])
        leaves: list[Range] = []
        draws: list[int] = []
        for top in group_ranges(strata):
            for leaf in exact_stats(strata, allegro_tree(strata, top, params, z, seed)):
                leaves.append(leaf)
                draws.append(m_min(leaf, params["eps"], z, params["min_samples"]))
        return finish(
            self,
            workload,
            params,
            seed,
            metric,
            strata,
            leaves,
            np.asarray(draws, dtype=np.int64),
            {"splits": len(leaves) - strata.groups, "grouping": grouping},
        )


def allegro_grouping(workload: Workload, params: Mapping[str, Any]) -> str:
    """The ``group`` parameter (``auto`` resolved for this workload), split by context class as
    ``context`` says: ``on`` always (a workload without the column is refused in one line),
    ``auto`` where the workload has the column, ``off`` never, whatever the grouping."""
    if params["context"] == "on" and not workload.has(CONTEXT_COLUMN):
        raise UserError(
            f"{workload.source or 'workload'} has no {CONTEXT_COLUMN!r} column, which context=on needs; "
            "plan on trace features (`simsample profile features`) or choose context=auto"
        )
    group = resolve_grouping(workload, params["group"]) if params["group"] == "auto" else params["group"]
    split = group.endswith(CONTEXT_SUFFIX)
    if params["context"] == "off":
        return group[: -len(CONTEXT_SUFFIX)] if split else group
    if not split and (params["context"] == "on" or workload.has(CONTEXT_COLUMN)):
        return group + CONTEXT_SUFFIX
    return group


def allegro_tree(strata: Strata, top: Range, params: Mapping[str, Any], z: float, seed: int) -> list[Range]:
    """Algorithm 1's CLUSTER_KERNEL over one group: leaves in ascending order of value."""
    stack = [top]
    leaves: list[Range] = []
    while stack:
        c = stack.pop()
        if c.size <= 1 or c.std == 0.0 or m_min(c, params["eps"], z, params["min_samples"]) <= params["m_th"]:
            leaves.append(c)
            continue
        kids = split_range(strata, c, params["split"], seed)
        if kids is None:
            leaves.append(c)
            continue
        stack.append(kids[1])
        stack.append(kids[0])
    leaves.sort(key=lambda r: r.lo)
    return leaves


@hookimpl
def register_samplers(register):
    register(AllegroSampler())
