"""``every-nth``: every n-th launch of each kernel, from an offset drawn from the seed.

Systematic sampling within strata: the launches of each kernel (by name) form a cluster, and of
its launches in order the ones at positions ``offset, offset + n, offset + 2n, ...`` are
simulated, with ``offset`` drawn from the seed for each kernel. Each sample then stands for
``size / draws`` launches of its kernel, so the weights add up to the workload's launch count.
The estimator treats the draws as random within each cluster (plan kind ``stratified``), which is
fair when a kernel's cost does not follow a period of length n.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from simsample.sdk import Param, Plan, Sampler, UserError, Workload, make_cluster, resolve_metric, rng


class EveryNth(Sampler):
    name = "every-nth"
    version = "1"
    description = "every n-th launch of each kernel, from an offset drawn from the seed"
    params = (
        Param("n", int, 10, "simulate one launch in n of each kernel", minimum=1),
        Param(
            "metric", str, "auto", "per-launch cost column for the plan's statistics: auto = cycles, else duration_ns"
        ),
    )

    def plan(self, workload: Workload, params: Mapping[str, Any], seed: int) -> Plan:
        if len(workload) == 0:
            raise UserError(f"{workload.source or 'the workload'} has no kernel launches to sample")
        metric = resolve_metric(workload, params["metric"])
        values = workload.values(metric)
        ids = workload.kernels["kernel_id"].to_numpy(np.int64)
        names = workload.kernels["name"].astype(str).to_numpy()
        step, generator = params["n"], rng(seed)
        rows, weights, cluster_of_row, clusters = [], [], [], []
        # clusters in the order kernels first appear, so that cluster ids do not depend on names
        _, first = np.unique(names, return_index=True)
        for cid, name in enumerate(names[np.sort(first)]):
            members = np.flatnonzero(names == name)
            offset = int(generator.integers(min(step, len(members))))
            picked = members[offset::step]
            clusters.append(make_cluster(cid, name, members, picked, values, ids))
            rows += picked.tolist()
            weights += [len(members) / len(picked)] * len(picked)
            cluster_of_row += [cid] * len(picked)
        return Plan.build(
            workload,
            self,
            params,
            seed,
            metric=metric,
            rows=rows,
            weights=weights,
            cluster_of_row=cluster_of_row,
            clusters=clusters,
            kind="stratified",
        )
