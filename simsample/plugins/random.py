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

from simsample.api import Param, Sampler
from simsample.errors import UserError
from simsample.hookspecs import hookimpl
from simsample.plan import Plan
from simsample.sampling import draw, make_cluster, rng
from simsample.workload import Workload


class RandomSampler(Sampler):
    name = "random"
    version = "1"
    description = "uniform random launches, weight N/m (by rate, count, or target speedup)"
    params = (
        Param("rate", float, 0.1, "fraction of launches to draw: m = ceil(rate·N)", minimum=0.0, maximum=1.0),
        Param("count", int, None, "draw exactly this many launches (overrides rate)", minimum=1, nullable=True),
        Param("speedup", float, None, "draw until the sampled metric reaches total/speedup (overrides rate)", minimum=1.0, nullable=True),
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
            target = values.sum() / params["speedup"]
            order = g.permutation(n) if not params["replace"] else g.integers(0, n, size=8 * n)
            csum = np.cumsum(values[order])
            m = int(np.searchsorted(csum, target, side="left")) + 1
            picked = np.sort(order[: min(m, len(order))]) if not params["replace"] else order[:m]
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
        )


@hookimpl
def register_samplers(register):
    register(RandomSampler())
