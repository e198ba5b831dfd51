"""Intervals you can bet on: what a cluster drawn once borrows, the degrees of freedom, ratios,
refusals, and more draws never widening the interval."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from simsample.errors import UserError
from simsample.manager import get_host
from simsample.planfile import Cluster, Plan
from simsample.sampling.draws import cluster_stats
from simsample.sampling.estimate import (
    MAX_T_RATIO,
    UnsupportedConfidence,
    estimate_ratio,
    estimate_results,
    estimate_total,
    supported_confidence,
)
from simsample.workload import from_records
from tests.helpers import estimate_cli


def make_plan(x, members, picks, *, names=None, kind="stratified"):
    """A plan over launches of design values ``x`` whose cluster i holds rows ``members[i]`` and
    drew rows ``picks[i]`` (without replacement)."""
    n = x.size
    names = names or ["k"] * n
    wl = from_records({"name": names, "grid_x": [1] * n, "block_x": [1] * n, "duration_ns": x})
    rows, weights, cl, clusters = [], [], [], []
    for cid, mem in members.items():
        p = list(picks[cid])
        rows += p
        weights += [len(mem) / len(p)] * len(p)
        cl += [cid] * len(p)
        clusters.append(
            Cluster(cid, f"{names[mem[0]]} [{cid}]", len(mem), len(p), cluster_stats(x[mem]), sorted(set(p)))
        )
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
        replace=False,
        error_bound=0.05,
        confidence=0.95,
    )


def by_id(values):
    return pd.Series(np.asarray(values, np.float64), index=np.arange(len(values)))


def exact_design_variance(x, members, picks):
    """Σ N²·S²·(1 − m/N)/m of the design metric: the estimator's true variance when y = x."""
    v = 0.0
    for cid, mem in members.items():
        n, m = len(mem), len(picks[cid])
        if n > 1:
            v += n * n * np.var(x[mem], ddof=1) * (1 - m / n) / m
    return v


def test_an_erratic_tiny_cluster_no_longer_widens_the_others():
    """A profile its own truth: a 1 ns-scale fill kernel of huge CoV, drawn many times, used to set
    the relative variance that heavy clusters drawn once borrowed (intervals of ±70% around
    errors of 0.2%). The spread it measures is what its design values already show: nothing is
    left over to borrow, and the heavy clusters keep their exact design variance."""
    rng = np.random.default_rng(0)
    heavy = [rng.normal(1e6, 2e3, 40) for _ in range(3)]
    fill = np.r_[np.ones(30), [4000.0, 9000.0]]  # CoV ~ 4
    x = np.concatenate(heavy + [fill])
    bounds = np.cumsum([0, 40, 40, 40, fill.size])
    members = {i: np.arange(bounds[i], bounds[i + 1]) for i in range(4)}
    picks = {0: [0], 1: [40], 2: [80], 3: list(range(120, 120 + 20)) + [150, 151]}
    plan = make_plan(x, members, picks, names=["a"] * 40 + ["b"] * 40 + ["c"] * 40 + ["fill"] * fill.size)
    e = estimate_total(plan, by_id(x))
    exact = exact_design_variance(x, members, picks)
    # the fill cluster's own spread (at least its design spread) and the heavy ones' design spread
    assert e.std_error**2 == pytest.approx(exact, rel=0.2)
    assert (e.ci_high - e.estimate) / x.sum() < 0.01  # was tens of percent with the old pool
    assert e.dof is None  # nothing estimated that the design does not know: the normal quantile


def test_a_fixed_launch_cost_is_not_counted_as_spread_nor_hides_it():
    """Cycles = a fixed cost + b·instructions + noise. A cluster whose instructions vary measures
    the noise as its scatter about the line through its draws; the clusters drawn once (equal
    instructions) borrow that, not the instructions' relative spread nor nothing."""
    rng = np.random.default_rng(3)
    x = np.r_[np.full(20, 1000.0), np.full(20, 5000.0), rng.integers(100, 900, 40).astype(float)]
    members = {0: np.arange(20), 1: np.arange(20, 40), 2: np.arange(40, 80)}
    noise = rng.normal(0, 150, x.size)
    y = 3000 + 2.0 * x + noise
    picks = {0: [3], 1: [25], 2: list(range(40, 52))}
    plan = make_plan(x, members, picks, names=["a"] * 20 + ["b"] * 20 + ["c"] * 40)
    e = estimate_total(plan, by_id(y))
    xc, yc = x[40:52], y[40:52]
    b, a = np.polyfit(xc, yc, 1)
    excess = np.sum((yc - a - b * xc) ** 2) / 10 / yc.mean() ** 2  # 12 draws, 10 dof
    single = sum(20 * 20 * excess * y[k] ** 2 * (1 - 1 / 20) for k in (3, 25))
    assert e.std_error**2 > single  # the two clusters drawn once take the pooled scatter
    assert e.dof is not None and e.dof >= 10 - 1e-9  # the pool's and cluster c's own degrees of freedom


def test_degrees_of_freedom_are_reported_and_match_the_quantile():
    x = np.r_[np.full(10, 100.0), np.full(10, 300.0), np.full(10, 50.0)]
    members = {0: np.arange(10), 1: np.arange(10, 20), 2: np.arange(20, 30)}
    y = x + np.tile([0.0, 9.0, 3.0, 7.0, 1.0], 6)
    plan = make_plan(x, members, {0: [0, 1, 2], 1: [10], 2: [20, 21]}, names=["a"] * 10 + ["b"] * 10 + ["c"] * 10)
    e = estimate_total(plan, by_id(y), confidence=0.95)
    assert e.dof is not None and 1 <= e.dof <= 3 + 1e-9  # the pool: 2 + 1 degrees of freedom
    assert (e.ci_high - e.estimate) / e.std_error == pytest.approx(stats.t.ppf(0.975, e.dof), rel=1e-9)
    assert e.to_json()["dof"] == pytest.approx(e.dof)


def test_a_confidence_the_plan_cannot_support_is_one_line():
    """One degree of freedom: a 99% interval would be ±63.7 standard errors ([0, 219.6] around an
    IPC near 1.5); asked strictly, it is refused in one line that says what would work."""
    x = np.r_[np.full(6, 100.0), np.full(6, 200.0)]
    members = {0: np.arange(6), 1: np.arange(6, 12)}
    y = x + np.array([0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], float)
    plan = make_plan(x, members, {0: [0, 1], 1: [6]}, names=["a"] * 6 + ["b"] * 6)
    loose = estimate_total(plan, by_id(y), confidence=0.99)
    assert loose.dof == pytest.approx(1.0)
    with pytest.raises(UnsupportedConfidence) as info:
        estimate_total(plan, by_id(y), confidence=0.99, strict=True)
    msg = str(info.value)
    assert "\n" not in msg and "1.0 degrees of freedom" in msg and "99% interval" in msg
    assert isinstance(info.value, UserError)
    best = supported_confidence(1.0)
    ok = estimate_total(plan, by_id(y), confidence=best - 1e-6, strict=True)  # what the message offers works
    assert ok.ci_low is not None
    df = pd.DataFrame({"kernel_id": np.arange(12), "cycles": y})
    with pytest.raises(UnsupportedConfidence):
        estimate_results(plan, df, confidence=0.99)


@settings(max_examples=40, deadline=None)
@given(st.floats(0.5, 500.0))
def test_supported_confidence_is_where_t_reaches_the_limit(dof):
    c = supported_confidence(dof)
    p = 0.5 + c / 2
    assert stats.t.ppf(p, dof) == pytest.approx(MAX_T_RATIO * stats.norm.ppf(p), rel=1e-4) or c > 0.999999
    assert supported_confidence(dof * 2) >= c


def test_cli_refuses_in_one_line_and_shows_the_dof(tmp_path):
    x = np.r_[np.full(6, 100.0), np.full(6, 200.0)]
    members = {0: np.arange(6), 1: np.arange(6, 12)}
    plan = make_plan(x, members, {0: [0, 1], 1: [6]}, names=["a"] * 6 + ["b"] * 6)
    plan.prediction["confidence"] = 0.99
    values = {0: 100, 1: 105, 6: 200}
    bad = estimate_cli(plan, values, tmp_path, "--confidence", "0.99")  # asked for
    assert bad.returncode == 1
    assert len(bad.stderr.strip().splitlines()) == 1 and "degrees of freedom" in bad.stderr
    # at the plan's own confidence (not asked): the estimate, and why there is no interval
    plain = estimate_cli(plan, values, tmp_path)
    assert plain.returncode == 0, plain.stderr
    assert "none: 1.0 dof, too few for 99%" in plain.stdout
    good = estimate_cli(plan, values, tmp_path, "--confidence", "0.8")
    assert good.returncode == 0, good.stderr
    assert "(t, 1.0 dof)" in good.stdout


def test_ratio_of_totals_with_its_delta_method_interval():
    """IPC of clusters drawn once, nothing measured twice: the spread of z = a − R·b is bounded by
    those of a and b, so the ratio's relative half-width is at most about the sum of the totals'."""
    rng = np.random.default_rng(5)
    x = np.r_[np.full(30, 1000.0), np.full(30, 4000.0), rng.uniform(100, 2000, 30)]
    members = {0: np.arange(30), 1: np.arange(30, 60), 2: np.arange(60, 90)}
    insts = x * 32
    cycles = 500 + 1.5 * x + rng.normal(0, 40, x.size)
    picks = {0: [1], 1: [31], 2: list(range(60, 72))}
    plan = make_plan(x, members, picks, names=["a"] * 30 + ["b"] * 30 + ["c"] * 30)
    r = estimate_ratio(plan, by_id(insts), by_id(cycles), metric="ipc", confidence=0.99)
    ta = estimate_total(plan, by_id(insts), confidence=0.99)
    tb = estimate_total(plan, by_id(cycles), confidence=0.99)
    assert r.estimate == pytest.approx(ta.estimate / tb.estimate)
    rel = (r.ci_high - r.ci_low) / 2 / r.estimate
    assert 0 < rel <= 1.5 * ((ta.ci_high - ta.estimate) / ta.estimate + (tb.ci_high - tb.estimate) / tb.estimate)
    true_ipc = insts.sum() / cycles.sum()
    assert r.ci_low <= true_ipc <= r.ci_high
    # launches whose a and b are proportional within each cluster measured twice: no spread at all
    plan2 = make_plan(x, members, {0: [1, 2], 1: [31, 32], 2: [60, 61]}, names=["a"] * 30 + ["b"] * 30 + ["c"] * 30)
    flat = estimate_ratio(plan2, by_id(insts), by_id(insts / 2), metric="ipc")
    assert flat.estimate == pytest.approx(2.0) and flat.std_error == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_more_draws_never_widen_the_interval_of_a_profile(seed):
    """The profile its own truth, clusters of design spread: the interval of a plan that draws
    more from a cluster (up to the point where its own spread takes over) is never wider."""
    rng = np.random.default_rng(seed)
    x = np.concatenate([rng.gamma(4.0, 100.0 * (i + 1), 12) for i in range(3)])
    members = {i: np.arange(12 * i, 12 * (i + 1)) for i in range(3)}
    names = ["a"] * 12 + ["b"] * 12 + ["c"] * 12
    last = None
    for m in range(1, 5):
        picks = {i: list(members[i][:m]) for i in range(3)}
        e = estimate_total(make_plan(x, members, picks, names=names), by_id(x), confidence=0.99)
        half = e.ci_high - e.estimate
        if last is not None:
            assert half <= last * (1 + 1e-9)
        last = half


def test_margin_spends_no_second_draws_on_measured_times():
    """Profiles (measured durations): margin's default plan is the one without second draws; on a
    proxy design metric, second draws go only to clusters whose design values are all equal."""
    rng = np.random.default_rng(2)
    n = 300
    names = rng.choice(["a", "b", "c", "d", "e", "f"], n)
    dur = np.where(np.isin(names, ["a", "b"]), 5000.0, rng.gamma(3.0, 300.0, n)).round()
    wl = from_records({"name": names, "grid_x": np.ones(n, int), "block_x": np.ones(n, int), "duration_ns": dur})
    s = get_host().sampler("margin")
    auto = s.plan(wl, s.resolve_params({}), 0)
    none = s.plan(wl, s.resolve_params({"pool_dof": "0"}), 0)
    assert auto.samples["kernel_id"].tolist() == none.samples["kernel_id"].tolist()
    assert auto.prediction["pool_draws"] == 0
    wl2 = from_records(
        {"name": names, "grid_x": np.ones(n, int), "block_x": np.ones(n, int), "duration_ns": dur, "warp_insts": dur}
    )
    proxy = s.plan(wl2, s.resolve_params({"metric": "warp_insts"}), 0)
    assert proxy.prediction["pool_draws"] > 0
    flat = {c.id for c in proxy.clusters if c.stats.get("std") == 0}
    raised = {c.id for c in proxy.clusters if c.draws == 2}
    assert raised and raised <= flat


def test_a_single_draw_of_a_skewed_cluster_holds_its_own_tail():
    """19 launches of which 2 are slow, one cluster drawn once (Rodinia heartwall's shape): the
    normal interval missed whenever the draw hit a slow one; the plan records how far a single
    draw lands at its confidence (``stats.tail``) and the interval reaches that far."""
    dur = np.r_[np.full(17, 100000.0), np.full(2, 100600.0)]
    wl = from_records({"name": ["k"] * 19, "grid_x": [1] * 19, "block_x": [1] * 19, "duration_ns": dur})
    s = get_host().sampler("margin")
    covered = slow = 0
    for seed in range(19):
        plan = s.plan(wl, s.resolve_params({}), seed)
        assert [c.draws for c in plan.clusters] == [1]
        tail = np.quantile(np.abs(dur - dur.mean()), 0.99, method="inverted_cdf") / dur.mean()
        assert plan.clusters[0].stats["tail"] == pytest.approx(tail)
        launch = int(plan.samples["launch"].iloc[0])
        e = estimate_total(plan, pd.Series([dur[launch]], index=[launch]), confidence=0.99)
        covered += e.ci_low <= dur.sum() <= e.ci_high
        plain = make_plan(dur, {0: np.arange(19)}, {0: [launch]})  # the same draw, no tail recorded
        p = estimate_total(plain, by_id(dur), confidence=0.99)
        if launch >= 17:
            slow += 1
            assert not p.ci_low <= dur.sum() <= p.ci_high  # what the normal interval alone did
    assert covered == 19 and slow > 0
