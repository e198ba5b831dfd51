"""The stratified estimator: its variance formula against enumeration of every possible sample."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from simsample.allocation import design_variance
from simsample.estimate import estimate_ratio, estimate_results, estimate_total
from simsample.manager import get_host
from simsample.plan import Cluster, Plan
from simsample.sampling import cluster_stats
from simsample.workload import from_records

POP = {0: np.array([3.0, 7.0, 8.0, 20.0]), 1: np.array([5.0, 5.0, 6.0])}


def population():
    values = np.r_[POP[0], POP[1]]
    n = values.size
    wl = from_records({"name": ["a"] * 4 + ["b"] * 3, "grid_x": [1] * n, "block_x": [1] * n, "duration_ns": values})
    members = {0: np.arange(4), 1: np.arange(4, 7)}
    return wl, values, members


def plan_from(wl, values, members, picks, *, replace, kind="stratified"):
    """A plan whose cluster i drew the launches ``picks[i]`` (row positions)."""
    rows, weights, cl, clusters = [], [], [], []
    for cid, mem in members.items():
        p = list(picks[cid])
        rows += p
        weights += [len(mem) / len(p)] * len(p)
        cl += [cid] * len(p)
        clusters.append(Cluster(cid, f"c{cid}", len(mem), len(p), cluster_stats(values[mem]), sorted(set(p))))
    return Plan.build(
        wl, get_host().sampler("stem"), {}, 0, metric="duration_ns", rows=rows, weights=weights,
        cluster_of_row=cl, clusters=clusters, kind=kind, replace=replace, error_bound=0.05, confidence=0.95,
    )


def by_id(values):
    return pd.Series(values, index=np.arange(values.size))


@pytest.mark.parametrize("replace", [False, True])
def test_variance_formula_against_enumeration_of_all_samples(replace):
    wl, values, members = population()
    m = {0: 2, 1: 2}
    per_cluster = []
    for cid, mem in members.items():
        if replace:
            per_cluster.append(list(itertools.product(mem, repeat=m[cid])))  # ordered i.i.d. draws
        else:
            per_cluster.append(list(itertools.combinations(mem, m[cid])))
    estimates, var_estimates = [], []
    for combo in itertools.product(*per_cluster):  # every sample is equally likely
        e = estimate_total(plan_from(wl, values, members, dict(enumerate(combo)), replace=replace), by_id(values))
        estimates.append(e.estimate)
        var_estimates.append(e.std_error**2)
    truth = values.sum()
    exact_var = np.var(estimates)  # the estimator's true variance over the design
    sizes = np.array([4, 3])
    stds = np.array([POP[0].std(), POP[1].std()])
    assert np.mean(estimates) == pytest.approx(truth)  # unbiased
    assert design_variance(np.array([2, 2]), sizes, stds, replace=replace) == pytest.approx(exact_var)
    assert np.mean(var_estimates) == pytest.approx(exact_var)  # the variance estimate is unbiased too


def test_single_sample_cluster_borrows_the_profile_cov():
    wl, values, members = population()
    plan = plan_from(wl, values, members, {0: [1], 1: [4, 5, 6]}, replace=False)
    e = estimate_total(plan, by_id(values))
    cov = POP[0].std() / POP[0].mean()
    # N²·(CoV·y)² scaled to the ddof-1 variance, times the finite-population correction
    expected = 16 * (cov * 7.0) ** 2 * (4 / 3) * (1 - 1 / 4)
    assert e.estimate == pytest.approx(4 * 7.0 + POP[1].sum())
    assert e.std_error**2 == pytest.approx(expected)
    assert e.ci_low == pytest.approx(e.estimate - 1.959964 * e.std_error, rel=1e-6)


def test_census_clusters_add_no_variance_and_representative_plans_no_interval():
    wl, values, members = population()
    full = plan_from(wl, values, members, {0: [0, 1, 2, 3], 1: [4, 5, 6]}, replace=False)
    e = estimate_total(full, by_id(values))
    assert e.estimate == values.sum() and e.std_error == 0.0
    rep = plan_from(wl, values, members, {0: [0], 1: [4]}, replace=False, kind="representative")
    assert estimate_total(rep, by_id(values)).ci_low is None


def test_coverage_of_the_interval_by_simulation():
    rng = np.random.default_rng(0)
    n = 4000
    names = rng.choice(["a", "b", "c"], n)
    dur = rng.gamma(2.0, 500.0, n).round()
    wl = from_records({"name": names, "grid_x": np.ones(n, int), "block_x": np.ones(n, int), "duration_ns": dur})
    s = get_host().sampler("stem")
    truth = dur.sum()
    covered = sum(
        (lambda e: e.ci_low <= truth <= e.ci_high)(estimate_total(s.plan(wl, s.resolve_params({"eps": 0.05}), seed), by_id(dur)))
        for seed in range(200)
    )
    assert 0.9 <= covered / 200 <= 0.99


def test_ratio_of_totals_and_results_table():
    wl, values, members = population()
    plan = plan_from(wl, values, members, {0: [0, 2], 1: [4, 6]}, replace=False)
    cycles = by_id(values * 10)
    insts = by_id(values * 20)
    r = estimate_ratio(plan, insts, cycles, metric="ipc")
    assert r.estimate == pytest.approx(2.0) and r.std_error == pytest.approx(0.0, abs=1e-12)
    df = pd.DataFrame({"kernel_id": np.arange(7), "cycles": values * 10, "insts": values * 20})
    out = estimate_results(plan, df, ratios={"ipc": ("insts", "cycles")})
    assert [e.metric for e in out] == ["cycles", "insts", "ipc"]
    assert out[0].estimate == pytest.approx(10 * estimate_total(plan, by_id(values)).estimate)


def test_few_draws_widen_the_interval_with_student_t():
    # three draws from one cluster: two degrees of freedom, q = t(0.975, 2) = 4.303
    wl, values, members = population()
    plan = plan_from(wl, values, members, {0: [0, 1, 3], 1: [4, 5, 6]}, replace=False)
    e = estimate_total(plan, by_id(values))
    assert (e.ci_high - e.estimate) / e.std_error == pytest.approx(4.302653, rel=1e-6)
    # two clusters with sampled variance: Welch–Satterthwaite degrees of freedom
    plan = plan_from(wl, values, members, {0: [0, 3], 1: [4, 6]}, replace=True)
    y = {0: values[[0, 3]], 1: values[[4, 6]]}
    v = [n * n * np.var(y[c], ddof=1) / 2 for c, n in ((0, 4), (1, 3))]
    dof = sum(v) ** 2 / sum(t * t / 1 for t in v)
    e = estimate_total(plan, by_id(values))
    from scipy import stats

    assert (e.ci_high - e.estimate) / e.std_error == pytest.approx(stats.t.ppf(0.975, dof), rel=1e-9)
