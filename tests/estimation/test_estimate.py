"""The stratified estimator: its variance formula against enumeration of every possible sample."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simsample.errors import UserError
from simsample.manager import get_host
from simsample.planfile import Cluster, Plan
from simsample.sampling.allocation import design_variance
from simsample.sampling.draws import cluster_stats
from simsample.sampling.estimate import estimate_ratio, estimate_ratio_total, estimate_results, estimate_total
from simsample.workload import from_records

POP = {0: np.array([3.0, 7.0, 8.0, 20.0]), 1: np.array([5.0, 5.0, 6.0])}


def population():
    values = np.r_[POP[0], POP[1]]
    n = values.size
    wl = from_records({"name": ["a"] * 4 + ["b"] * 3, "grid_x": [1] * n, "block_x": [1] * n, "duration_ns": values})
    members = {0: np.arange(4), 1: np.arange(4, 7)}
    return wl, values, members


def plan_from(wl, values, members, picks, *, replace, kind="stratified", spread=True):
    """A plan whose cluster i drew the launches ``picks[i]`` (row positions); ``spread=False``:
    the clusters do not record the design metric's spread (CoV)."""
    rows, weights, cl, clusters = [], [], [], []
    for cid, mem in members.items():
        p = list(picks[cid])
        rows += p
        weights += [len(mem) / len(p)] * len(p)
        cl += [cid] * len(p)
        stats = cluster_stats(values[mem])
        if not spread:
            stats = {k: v for k, v in stats.items() if k not in ("cov", "std")}
        clusters.append(Cluster(cid, f"c{cid}", len(mem), len(p), stats, sorted(set(p))))
    return Plan.build(
        wl,
        get_host().sampler("stem"),
        {},
        0,
        metric="duration_ns",
        rows=rows,
        weights=weights,
        cluster_of_row=cl,
        clusters=clusters,
        kind=kind,
        replace=replace,
        error_bound=0.05,
        confidence=0.95,
    )


def by_id(values):
    return pd.Series(values, index=np.arange(values.size))


@pytest.mark.parametrize("replace", [False, True])
def test_variance_formula_against_enumeration_of_all_samples(replace):
    """Without the design spread, the textbook estimator: unbiased, and so is its variance estimate."""
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
        # own_draws=2: each cluster's own variance, the textbook estimator whose unbiasedness this checks
        e = estimate_total(
            plan_from(wl, values, members, dict(enumerate(combo)), replace=replace, spread=False),
            by_id(values),
            own_draws=2,
        )
        estimates.append(e.estimate)
        var_estimates.append(e.std_error**2)
    truth = values.sum()
    exact_var = np.var(estimates)  # the estimator's true variance over the design
    sizes = np.array([4, 3])
    stds = np.array([POP[0].std(), POP[1].std()])
    assert np.mean(estimates) == pytest.approx(truth)  # unbiased
    assert design_variance(np.array([2, 2]), sizes, stds, replace=replace) == pytest.approx(exact_var)
    assert np.mean(var_estimates) == pytest.approx(exact_var)  # the variance estimate is unbiased too


def test_design_spread_is_a_floor_for_every_sampled_cluster():
    """With the design metric's spread known and the simulated metric equal to it, no sample can
    give a variance estimate below the exact design variance (a sample that misses a cluster's
    tail used to give a narrow interval); the estimate itself is unchanged."""
    wl, values, members = population()
    sizes = np.array([4, 3])
    stds = np.array([POP[0].std(), POP[1].std()])
    exact_var = design_variance(np.array([2, 2]), sizes, stds, replace=False)
    raised = 0
    for combo in itertools.product(itertools.combinations(members[0], 2), itertools.combinations(members[1], 2)):
        picks = dict(enumerate(combo))
        floored = estimate_total(plan_from(wl, values, members, picks, replace=False), by_id(values))
        plain = estimate_total(plan_from(wl, values, members, picks, replace=False, spread=False), by_id(values))
        assert floored.estimate == plain.estimate
        assert floored.std_error**2 >= exact_var * (1 - 1e-12)
        raised += plain.std_error**2 < exact_var
    assert raised > 0  # the samples {3, 7}, {7, 8}... of cluster 0 miss the 20: without the floor, too narrow


def test_single_sample_cluster_borrows_the_profile_cov():
    wl, values, members = population()
    plan = plan_from(wl, values, members, {0: [1], 1: [4, 5, 6]}, replace=False)
    e = estimate_total(plan, by_id(values))
    cov = POP[0].std() / POP[0].mean()
    # N²·(CoV·level)² scaled to the ddof-1 variance, times the finite-population correction; the
    # cluster's level is its design mean times the draw's ratio y/x (here 1): 9.5, not the draw's 7
    expected = 16 * (cov * POP[0].mean()) ** 2 * (4 / 3) * (1 - 1 / 4)
    assert e.estimate == pytest.approx(4 * 7.0 + POP[1].sum())
    assert e.std_error**2 == pytest.approx(expected)
    assert e.ci_high == pytest.approx(e.estimate + 1.959964 * e.std_error, rel=1e-6)
    # the normal interval reaches below what the simulated launches alone add up to (7, then 5,
    # 5 and 6): a total of non-negative values cannot be less, so the interval stops there
    assert e.estimate - 1.959964 * e.std_error < 23.0
    assert e.ci_low == pytest.approx(23.0)


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
        (lambda e: e.ci_low <= truth <= e.ci_high)(
            estimate_total(s.plan(wl, s.resolve_params({"eps": 0.05}), seed), by_id(dur))
        )
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
    plan = plan_from(wl, values, members, {0: [0, 1, 3], 1: [4, 5, 6]}, replace=False, spread=False)
    e = estimate_total(plan, by_id(values), own_draws=2)  # each cluster's own variance (textbook)
    assert (e.ci_high - e.estimate) / e.std_error == pytest.approx(4.302653, rel=1e-6)
    # two clusters with sampled variance: Welch–Satterthwaite degrees of freedom
    plan = plan_from(wl, values, members, {0: [0, 3], 1: [4, 6]}, replace=True, spread=False)
    y = {0: values[[0, 3]], 1: values[[4, 6]]}
    v = [n * n * np.var(y[c], ddof=1) / 2 for c, n in ((0, 4), (1, 3))]
    dof = sum(v) ** 2 / sum(t * t / 1 for t in v)
    e = estimate_total(plan, by_id(values), own_draws=2)
    from scipy import stats

    assert (e.ci_high - e.estimate) / e.std_error == pytest.approx(stats.t.ppf(0.975, dof), rel=1e-9)


def test_clusters_of_few_draws_take_the_pooled_relative_variance():
    # two clusters of two draws: by default neither relies on its own variance of one degree of
    # freedom alone; both take at least the relative variance pooled over the two (two degrees
    # of freedom)
    # (a plan without the draws' design values: the pool is of y's own relative spread)
    wl, values, members = population()
    plan = plan_from(wl, values, members, {0: [0, 3], 1: [4, 6]}, replace=True, spread=False)
    plan.samples = plan.samples.drop(columns="x")
    e = estimate_total(plan, by_id(values))
    textbook = estimate_total(plan, by_id(values), own_draws=2)
    y = {0: values[[0, 3]], 1: values[[4, 6]]}
    rel = np.mean([np.var(y[c], ddof=1) / y[c].mean() ** 2 for c in (0, 1)])
    # a cluster keeps its own spread where that is the larger, as part of the pooled estimate
    expected = sum(n * n * max(rel * y[c].mean() ** 2, np.var(y[c], ddof=1)) / 2 for c, n in ((0, 4), (1, 3)))
    assert e.estimate == textbook.estimate
    assert e.std_error**2 == pytest.approx(expected)
    from scipy import stats

    assert (e.ci_high - e.estimate) / e.std_error == pytest.approx(stats.t.ppf(0.975, 2), rel=1e-9)  # the pool's two
    # the textbook interval: Welch–Satterthwaite over two terms of one degree of freedom each
    assert textbook.std_error != pytest.approx(e.std_error)


# --- single-draw clusters: pooled and collapsed variance (the interval must not collapse) -------


def flat_population(sizes=(4, 6, 5), means=(100.0, 200.0, 400.0)):
    """Clusters of one kernel whose design metric has no spread (CoV 0), and a fourth with spread."""
    x = np.concatenate([np.full(n, m) for n, m in zip(sizes, means)] + [np.array([10.0, 20.0, 30.0, 40.0])])
    n = x.size
    wl = from_records({"name": ["k"] * n, "grid_x": [1] * n, "block_x": [1] * n, "duration_ns": x})
    bounds = np.cumsum((0, *sizes, 4))
    members = {i: np.arange(bounds[i], bounds[i + 1]) for i in range(len(sizes) + 1)}
    return wl, x, members


def test_single_draw_cluster_with_no_design_spread_borrows_the_pooled_relative_variance():
    wl, x, members = flat_population()
    y = x * 3.0 + np.arange(x.size) % 2 * 7.0  # the simulated metric varies where x does not
    plan = plan_from(wl, x, members, {0: [0], 1: [4], 2: [10], 3: [15, 16, 17]}, replace=False)
    e = estimate_total(plan, by_id(y), own_draws=2)
    # the cluster with three draws gives the relative variance the others borrow: what of its
    # spread the design metric's own spread there does not explain
    # (its scatter about the line in x through its draws, one degree of freedom)
    yc, xc = y[[15, 16, 17]], x[[15, 16, 17]]
    b, a = np.polyfit(xc, yc, 1)
    v_pool = np.sum((yc - a - b * xc) ** 2) / 1 / yc.mean() ** 2
    assert v_pool > 0
    expected = sum(n * n * v_pool * y[k] ** 2 * (1 - 1 / n) for n, k in ((4, 0), (6, 4), (5, 10)))
    # its own term: the design metric's spread (S_x² of all four, in y's units by ȳ/x̄ of the
    # draws) and its own scatter about its line in x
    xc = x[[15, 16, 17]]
    own = (
        np.var(x[15:19], ddof=1) * (yc.mean() / xc.mean()) ** 2 + v_pool * yc.mean() ** 2
    )  # S_x² part + its own scatter
    expected += 16 * own / 3 * (1 - 3 / 4)
    assert e.std_error**2 == pytest.approx(expected)
    assert e.std_error > 0.01 * e.estimate  # the old estimator gave 0 here


def test_collapsed_strata_when_no_cluster_has_two_draws():
    wl, x, members = flat_population()
    y = 500.0 + 2.0 * x + np.array([0.0] * 4 + [1500.0] * 6 + [0.0] * 5 + [0.0] * 4)
    plan = plan_from(wl, x, members, {0: [0], 1: [4], 2: [10], 3: [15]}, replace=False)
    e = estimate_total(plan, by_id(y))
    assert e.std_error > 0
    # three single-draw clusters of kernel k of equal design values within, whose design means
    # differ: scatter about a line (the fourth, whose design metric has spread, is not collapsed:
    # its draw's distance from the line is mostly that spread)
    mu = np.array([100.0, 200.0, 400.0])
    ys = y[[0, 4, 10]]
    b, a = np.polyfit(mu, ys, 1)
    excess = np.sum((ys - a - b * mu) ** 2) / 1 / ys.mean() ** 2
    cov2 = (np.std([10.0, 20.0, 30.0, 40.0]) / 25.0) ** 2 * 4 / 3
    # each cluster's level: its design mean times the draw's y/x (the draw itself where x has no spread)
    level = {0: y[0], 4: y[4], 10: y[10], 15: y[15] * 25.0 / x[15]}
    # added to each one's own CoV²
    expected = sum(
        n * n * (excess + c) * level[k] ** 2 * (1 - 1 / n)
        for n, k, c in ((4, 0, 0), (6, 4, 0), (5, 10, 0), (4, 15, cov2))
    )
    assert e.std_error**2 == pytest.approx(expected)


def test_no_information_about_a_single_draw_means_no_interval_rather_than_a_false_one():
    wl, x, members = flat_population(sizes=(4,), means=(100.0,))
    members = {0: members[0]}
    plan = plan_from(wl, x, members, {0: [1]}, replace=False)
    e = estimate_total(plan, by_id(x * 2))
    assert e.std_error is None and e.ci_low is None


def test_cross_metric_coverage_by_simulation():
    """Plans made on a design metric with many zero-spread clusters; the simulated metric has a
    fixed cost and noise that the design metric does not see. The interval must still hold."""
    rng = np.random.default_rng(1)
    n = 600
    shape = rng.integers(0, 12, n)
    x = (1000.0 * (1 + shape)).round()
    wl = from_records(
        {"name": [f"k{s % 3}" for s in shape], "grid_x": shape + 1, "block_x": np.ones(n, int), "duration_ns": x}
    )
    y = 5000.0 + 0.5 * x + rng.normal(0, 300.0, n)
    s = get_host().sampler("root")
    params = s.resolve_params({"eps": 0.05})
    truth = y.sum()
    results = [estimate_total(s.plan(wl, params, seed), by_id(y)) for seed in range(100)]
    covered = np.mean([e.ci_low <= truth <= e.ci_high for e in results])
    assert covered >= 0.93
    assert np.median([(e.ci_high - e.ci_low) / 2 / truth for e in results]) < 0.05


def test_values_must_be_finite_and_extra_rows_are_ignored():
    wl, values, members = population()
    plan = plan_from(wl, values, members, {0: [0, 2], 1: [4]}, replace=False)
    bad = by_id(values.copy())
    bad.iloc[2] = np.inf
    with pytest.raises(UserError, match=r"not a finite number \(2\)"):
        estimate_total(plan, bad, metric="cycles")
    more = pd.concat([by_id(values), pd.Series([1e9], index=[99])])  # e.g. a warm-up launch
    assert estimate_total(plan, more).estimate == estimate_total(plan, by_id(values)).estimate
    with pytest.raises(UserError, match="no value for 1 sampled kernel id"):
        estimate_total(plan, by_id(values).drop(4))


def test_ratio_estimator_uses_the_design_metric():
    wl, values, members = population()
    plan = plan_from(wl, values, members, {0: [0, 3], 1: [4, 6]}, replace=False)
    y = by_id(values * 4.0)  # proportional to the design metric: the ratio estimator is exact
    e = estimate_ratio_total(plan, y)
    assert e.estimate == pytest.approx(4.0 * values.sum())
    assert e.std_error == pytest.approx(0.0, abs=1e-9)
    assert estimate_total(plan, y).estimate != pytest.approx(4.0 * values.sum())
    # plans of format 1.0 have no design values: they must be given
    old = Plan.from_json(
        {**(d := plan.to_json()), "samples": [{k: v for k, v in s.items() if k != "x"} for s in d["samples"]]}
    )
    with pytest.raises(UserError, match="design-metric values"):
        estimate_ratio_total(old, y)
    assert estimate_ratio_total(old, y, by_id(values)).estimate == pytest.approx(e.estimate)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(1.0, 1e6), min_size=7, max_size=7), st.integers(0, 3), st.integers(4, 6))
def test_estimates_are_finite_and_the_interval_holds_the_estimate(ys, a, b):
    wl, values, members = population()
    plan = plan_from(wl, values, members, {0: [a], 1: [b]}, replace=False)
    for e in (estimate_total(plan, by_id(np.array(ys))), estimate_ratio_total(plan, by_id(np.array(ys)))):
        assert np.isfinite(e.estimate)
        assert e.ci_low is None or (np.isfinite(e.std_error) and e.ci_low <= e.estimate <= e.ci_high)


def test_single_draw_from_the_low_end_of_a_spread_cluster_keeps_its_interval():
    """The level a relative spread is scaled by is the cluster's design mean times the draw's
    y/x, not the draw itself: a draw from the low end of a cluster spread over three orders of
    magnitude used to give an interval a hundred times too narrow (Rodinia lud, one draw per
    cluster at ε = 2%: 4 of 10 intervals missed)."""
    x = np.array([1.0, 10.0, 100.0, 1000.0, 5.0, 5.0, 6.0])
    wl = from_records({"name": ["a"] * 4 + ["b"] * 3, "grid_x": [1] * 7, "block_x": [1] * 7, "duration_ns": x})
    members = {0: np.arange(4), 1: np.arange(4, 7)}
    low = estimate_total(plan_from(wl, x, members, {0: [0], 1: [4, 5, 6]}, replace=False), by_id(x))
    high = estimate_total(plan_from(wl, x, members, {0: [3], 1: [4, 5, 6]}, replace=False), by_id(x))
    exact = 16 * x[:4].var(ddof=1) * (1 - 1 / 4)  # the design variance of one draw from cluster 0
    assert low.std_error**2 == pytest.approx(exact) and high.std_error**2 == pytest.approx(exact)


# --- intervals in range, at the plan's confidence -------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.one_of(st.just(0.0), st.floats(1e-3, 1e6)), min_size=7, max_size=7),
    st.lists(st.one_of(st.just(0.0), st.floats(1e-6, 1.0)), min_size=7, max_size=7),
)
def test_intervals_stay_where_the_metric_can_be(counts, shares):
    wl, values, members = population()
    plan = plan_from(wl, values, members, {0: [1], 1: [4, 5]}, replace=False)
    y = np.array(counts)
    e = estimate_total(plan, by_id(y))
    if e.ci_low is not None:
        # a total of non-negative counts is at least what the simulated launches counted
        assert e.ci_low >= y[[1, 4, 5]].sum() - 1e-6 * max(1.0, e.estimate)
        assert e.ci_low <= e.estimate <= e.ci_high
    hits = y * np.array(shares)  # hits never exceed accesses, launch by launch
    r = estimate_ratio(plan, by_id(hits), by_id(y))
    if r.ci_low is not None and np.isfinite(r.estimate):
        assert 0.0 <= r.ci_low <= r.estimate <= r.ci_high <= 1.0


def test_estimate_reports_at_the_plans_confidence(tmp_path, capsys):
    from simsample.cli import run as cli_run

    wl, values, members = population()
    plan = plan_from(wl, values, members, {0: [1, 2], 1: [4, 5]}, replace=False)
    plan.prediction["confidence"] = 0.99
    plan.write(tmp_path / "plan.json")
    (tmp_path / "v.csv").write_text("kernel_id,cycles\n1,7\n2,8\n4,5\n5,5\n")
    assert cli_run(["estimate", "--plan", str(tmp_path / "plan.json"), str(tmp_path / "v.csv"), "--json"]) == 0
    import json

    doc = json.loads(capsys.readouterr().out)
    assert doc["estimates"][0]["confidence"] == 0.99
    assert (
        cli_run(
            [
                "estimate",
                "--plan",
                str(tmp_path / "plan.json"),
                str(tmp_path / "v.csv"),
                "--confidence",
                "0.9",
                "--json",
            ]
        )
        == 0
    )
    assert json.loads(capsys.readouterr().out)["estimates"][0]["confidence"] == 0.9
