"""Uniform random sampling: the baseline every other sampler is compared with.

The STEM paper draws 10% of launches for Rodinia and 0.1% for CASIO and Huggingface (with
replacement in its artifact); Allegro's baseline instead draws until the sampled time reaches
T/speedup, so that both methods are compared at the same speedup (``speedup=...``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from simsample.sdk import (
    Param,
    Plan,
    Sampler,
    UserError,
    Workload,
    draw,
    hookimpl,
    make_cluster,
    model_cycles,
    rng,
    spread_stats,
)

#: The confidence the tail of a few draws is recorded at: a random plan states none, and its
#: estimates are made at the estimator's default, 95%.
TAIL_CONFIDENCE = 0.95


class RandomSampler(Sampler):
    name = "random"
    # 4: the tail of up to four draws and the features' model's spread (model_cov, model_tail) recorded;
    # 3: stats.tail: the launches' own quantile, and for clusters drawn 2-4 times (2: recorded)
    version = "4"
    description = "uniform random launches, weight N/m (by rate, count, or target speedup)"
    params = (
        Param("rate", float, 0.1, "fraction of launches to draw: m = ceil(rate·N)", minimum=0.0, maximum=1.0),
        Param("count", int, None, "draw exactly this many launches (overrides rate)", minimum=1, nullable=True),
        Param(
            "speedup",
            float,
            None,
            "draw until the sampled metric reaches total/speedup (overrides rate)",
            minimum=1.0,
            nullable=True,
        ),
        Param("replace", bool, False, "draw with replacement (the STEM artifact's i.i.d. draw)"),
        Param("metric", str, "auto", "per-launch cost column: auto = cycles, else duration_ns"),
    )

    def plan(self, workload: Workload, params: Mapping[str, Any], seed: int) -> Plan:
        n = len(workload)
        if n == 0:
            raise UserError(f"{workload.source or 'workload'} has no kernel launches to sample")
        metric = workload.default_metric() if params["metric"] == "auto" else params["metric"]
        values = workload.values(metric)
        ids = workload.kernels["kernel_id"].to_numpy(np.int64)
        g = rng(seed)
        members = np.arange(n)
        if params["speedup"] is not None:
            picked = _draw_until(values, values.sum() / params["speedup"], g, replace=params["replace"])
        else:
            if params["count"] is not None:
                m = params["count"]
            else:
                if params["rate"] <= 0:
                    raise UserError("parameter rate must be above 0")
                m = max(1, math.ceil(params["rate"] * n))
            if not params["replace"] and m > n:
                m = n
            picked = draw(members, m, g, replace=params["replace"])
        m = len(picked)
        cluster = make_cluster(0, "all launches", members, picked, values, ids)
        model = model_cycles(workload, metric, values)
        # what the estimator needs to see the cycles' spread (not a proxy's) and a few draws' tail
        # (a tail over sets of distinct launches: none for draws with replacement)
        tail_m = 0 if params["replace"] else m
        cluster.stats.update(spread_stats(values, tail_m, TAIL_CONFIDENCE, None if model is values else model))
        return Plan.build(
            workload,
            self,
            params,
            seed,
            metric=metric,
            rows=picked,
            weights=np.full(m, n / m),
            cluster_of_row=np.zeros(m, dtype=np.int64),
            clusters=[cluster],
            kind="stratified",
            replace=params["replace"],
            model=None if model is values else model,
        )


def _draw_until(values: np.ndarray, target: float, g: np.random.Generator, *, replace: bool) -> np.ndarray:
    """Uniform draws, in order, until their summed values reach ``target`` (Allegro's baseline).

    Without replacement this is a prefix of one permutation; with replacement draws come in
    chunks sized from the expected need, so memory follows the sample, not the workload.
    """
    n = len(values)
    if not replace:
        order = g.permutation(n)
        m = int(np.searchsorted(np.cumsum(values[order]), target, side="left")) + 1
        return np.sort(order[: min(m, n)])
    mean = float(values.mean())
    chunk = max(1024, int(2 * target / mean)) if mean > 0 else 1  # all zero: target 0, one draw
    drawn: list[np.ndarray] = []
    reached = 0.0
    while True:
        part = g.integers(0, n, size=chunk)
        csum = reached + np.cumsum(values[part])
        k = int(np.searchsorted(csum, target, side="left"))
        if k < chunk:
            drawn.append(part[: min(k + 1, chunk)])
            return np.concatenate(drawn)
        drawn.append(part)
        reached = float(csum[-1])


@hookimpl
def register_samplers(register):
    register(RandomSampler())
