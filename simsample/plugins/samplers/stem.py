"""STEM (MICRO'25 §3.2–3.3): sample sizes from each kernel's time distribution, error-bounded.

Launches are grouped by kernel name without its argument list (or by name, grid and block);
each group is a cluster. The number of draws comes from the central limit theorem: the fewest
simulated nanoseconds such that the estimate lies within ±ε of the truth with the given
confidence. ``allocation=group`` (default) bounds each group by ε on its own (eq. 3, as the
published artifact does; by the paper's Theorem 3.1 the whole workload is then bounded by ε
too, usually far inside it). ``allocation=joint`` sizes all clusters together with the KKT
solution of the paper's Problem 1 (eq. 6 as derived in its appendix §8.1): ε of the workload's
total exactly, with the fewest samples. Each cluster gets between 1 (``min_draws``) and N_i
draws: a cluster whose launches all take the same time, or no time at all, still gets one, so
it is never dropped from the estimate.

By default launches are drawn without replacement (``replace=true`` draws i.i.d. as the paper
does) and sized as the paper sizes them, with the i.i.d. variance and clamped to the cluster:
the error then stays below ε, well inside it when a cluster is nearly enumerated. ``fpc=true``
sizes with the finite-population correction instead, which needs fewer draws from small
clusters and puts the error at ε. The estimator's interval always uses the correction when the
draw was without replacement.

On real profiles (``simsample evaluate``), the coverage of STEM's interval falls short where a
dominant kernel's times are skewed (a slow tail of early iterations) and its cluster gets a
handful of draws: the central limit theorem does not hold yet at that size. ROOT separates such
tails; ``min_draws=30`` (the usual rule of thumb) is the remedy within STEM.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from simsample.sdk import COMMON_PARAMS, Plan, Sampler, Workload, finish, group_ranges, hookimpl, prepare, size_clusters


class StemSampler(Sampler):
    name = "stem"
    version = "3"  # 3: stats.tail: the launches' own quantile, and for clusters drawn 2-4 times (2: recorded)
    description = "STEM: per-kernel clusters sized by the CLT/KKT error model (bounded error)"
    params = COMMON_PARAMS
    bounded = True

    def plan(self, workload: Workload, params: Mapping[str, Any], seed: int) -> Plan:
        metric, strata = prepare(workload, params, grouping=params["group"], by_value=False)
        ranges = group_ranges(strata)
        draws = size_clusters(ranges, params)
        return finish(self, workload, params, seed, metric, strata, ranges, draws)


@hookimpl
def register_samplers(register):
    register(StemSampler())
