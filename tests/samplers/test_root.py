"""ROOT: exact 1-D two-means, the acceptance rule, the recursion, and plans."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simsample.manager import get_host
from simsample.plugins.samplers.root import root_tree
from simsample.sampling.allocation import allocate, sampled_time, z_value
from simsample.sampling.strata import group_ranges, iid_sizing, make_range, prepare
from simsample.sampling.twomeans import best_cut, kmeans_cut, within_ss
from simsample.workload import from_records


def brute_force_2means(values: np.ndarray) -> float:
    """Least within-cluster sum of squares over every partition into two non-empty sets."""
    n = len(values)
    best = np.inf
    for mask in itertools.product([False, True], repeat=n - 1):  # first value fixed left
        m = np.array((False,) + mask)
        if m.all() or not m.any():
            continue
        best = min(best, within_ss(values[m]) + within_ss(values[~m]))
    return best


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, 50), min_size=2, max_size=10))
def test_exact_two_means_equals_brute_force(vals):
    x = np.sort(np.array(vals, dtype=float))
    k = best_cut(x)
    if x[0] == x[-1]:
        assert k is None
        return
    assert 1 <= k < len(x) and x[k - 1] < x[k]  # a cut between distinct values
    assert within_ss(x[:k]) + within_ss(x[k:]) == pytest.approx(brute_force_2means(x), abs=1e-6)


def test_exact_two_means_is_exact_on_large_values():
    # nanosecond times around 1e9 with a small spread: no cancellation in the prefix sums
    x = np.sort(np.r_[np.full(50, 1e9), np.full(50, 1e9 + 7)])
    assert best_cut(x) == 50


def test_kmeans_split_finds_the_obvious_cut():
    x = np.sort(np.r_[np.linspace(10, 12, 40), np.linspace(100, 110, 25)])
    assert kmeans_cut(x, seed=0) == 40 == best_cut(x)
    assert kmeans_cut(np.full(5, 3.0), seed=0) is None


def bimodal(n_low=200, n_high=200, seed=0):
    rng = np.random.default_rng(seed)
    dur = np.r_[rng.normal(1000, 10, n_low), rng.normal(20000, 200, n_high)].round()
    rng.shuffle(dur)
    n = len(dur)
    return from_records(
        {
            "name": ["void gemm<float>(float*, int)"] * n,
            "grid_x": np.ones(n, int),
            "block_x": np.full(n, 256),
            "duration_ns": dur,
        },
        source="bimodal",
    )


def params(**kw):
    return get_host().sampler("root").resolve_params(kw)


def test_acceptance_rule_on_a_bimodal_kernel():
    wl = bimodal()
    p = params()
    _, strata = prepare(wl, p, grouping="name", by_value=True)
    (top,) = group_ranges(strata)
    z = z_value(0.95)
    # eq. 7: the parent's sampled time; eq. 8: the children's after the KKT allocation
    iid = iid_sizing(p)  # the paper's sizes unless fpc=true
    assert iid is True
    m_old = allocate([top.mean], [top.std], [top.size], eps=0.05, z=z, replace=iid).draws[0]
    cut = top.lo + best_cut(strata.xs[top.lo : top.hi])
    kids = [make_range(strata, 0, top.lo, cut), make_range(strata, 0, cut, top.hi)]
    alloc = allocate([k.mean for k in kids], [k.std for k in kids], [k.size for k in kids], eps=0.05, z=z, replace=iid)
    tau_old, tau_new = m_old * top.mean, sampled_time(alloc.draws, [k.mean for k in kids])
    assert tau_new < tau_old  # so ROOT must accept the split
    leaves = root_tree(strata, top, p, seed=0)
    assert len(leaves) >= 2
    assert {(leaf.lo, leaf.hi) for leaf in leaves[:1]} == {(kids[0].lo, kids[0].hi)} or leaves[0].hi <= kids[0].hi
    assert max(strata.xs[leaves[0].lo : leaves[0].hi]) < 5000 < min(strata.xs[leaves[-1].lo : leaves[-1].hi])


def test_split_is_rejected_when_it_does_not_save_time():
    # a tight unimodal kernel: one draw is enough already, nothing to gain
    rng = np.random.default_rng(1)
    n = 300
    wl = from_records(
        {
            "name": ["k"] * n,
            "grid_x": np.ones(n, int),
            "block_x": np.ones(n, int),
            "duration_ns": rng.normal(5000, 5, n).round(),
        }
    )
    p = params()
    _, strata = prepare(wl, p, grouping="name", by_value=True)
    (top,) = group_ranges(strata)
    assert root_tree(strata, top, p, seed=0) == [top]


def test_recursion_stops_at_single_members_and_identical_values():
    wl = from_records({"name": ["k"] * 6, "grid_x": [1] * 6, "block_x": [1] * 6, "duration_ns": [7, 7, 7, 7, 7, 7]})
    p = params()
    _, strata = prepare(wl, p, grouping="name", by_value=True)
    (top,) = group_ranges(strata)
    assert root_tree(strata, top, p, seed=0) == [top]


def multimodal_workload(seed=0, n=30000):
    rng = np.random.default_rng(seed)
    k = rng.integers(0, 12, n)
    peaks = rng.integers(0, 3, n)
    dur = (1000.0 * (k + 1) * (1 + 4 * peaks) * rng.lognormal(0, 0.03, n)).round()
    return from_records(
        {
            "name": [f"kernel_{i}(float*)" for i in k],
            "grid_x": np.ones(n, int),
            "block_x": np.full(n, 128),
            "duration_ns": dur,
        },
        source="multimodal",
    )


@pytest.mark.parametrize("allocation", ["group", "joint"])
def test_root_beats_stem_on_multimodal_kernels(allocation):
    wl = multimodal_workload()
    host = get_host()
    stem, root = host.sampler("stem"), host.sampler("root")
    ps = stem.plan(wl, stem.resolve_params({"allocation": allocation}), 0)
    pr = root.plan(wl, root.resolve_params({"allocation": allocation}), 0)
    assert pr.prediction["speedup"] > 3 * ps.prediction["speedup"]
    assert len(pr.clusters) >= 3 * 12
    assert pr.prediction["predicted_error"] <= 0.05


def test_kmeans_variant_also_separates_the_peaks():
    wl = multimodal_workload(n=3000)
    x = wl.values()
    root = get_host().sampler("root")
    for split in ("kmeans", "exact"):
        plan = root.plan(wl, root.resolve_params({"split": split}), 0)
        assert len(plan.clusters) >= 36
        ranges = [c.key.rsplit("[", 1)[1].rstrip("]").split(", ") for c in plan.clusters]
        assert all(float(hi) < 2 * float(lo) for lo, hi in ranges)  # no cluster spans two peaks
    assert x.size == 3000


def test_same_inputs_and_seed_give_byte_identical_plans(tmp_path):
    wl = multimodal_workload(n=5000)
    root = get_host().sampler("root")
    p = root.resolve_params({})
    root.plan(wl, p, 7).write(tmp_path / "a.json")
    root.plan(wl, p, 7).write(tmp_path / "b.json")
    root.plan(wl, p, 8).write(tmp_path / "c.json")
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert (tmp_path / "a.json").read_bytes() != (tmp_path / "c.json").read_bytes()


def test_plan_records_clusters_with_value_ranges():
    wl = bimodal()
    plan = get_host().sampler("root").plan(wl, params(), 0)
    assert plan.sampler["name"] == "root" and plan.estimator == {"kind": "stratified", "replace": False}
    assert len(plan.clusters) >= 2 and all("[" in c.key for c in plan.clusters)
    assert sum(c.size for c in plan.clusters) == len(wl)
    assert plan.prediction["splits"] == len(plan.clusters) - 1


@pytest.mark.parametrize("integral", [True, False])
def test_strata_order_is_a_stable_sort_by_group_then_value(integral):
    from simsample.sampling.grouping import Grouping
    from simsample.sampling.strata import build_strata

    rng = np.random.default_rng(3)
    n = 5000
    codes = rng.integers(0, 7, n)
    values = rng.integers(0, 40, n).astype(float)  # many ties
    if not integral:
        values += 0.5
    strata = build_strata(values, Grouping(codes=codes, keys=[str(i) for i in range(7)]), by_value=True)
    expected = np.lexsort((np.arange(n), values, codes))
    assert strata.order.tolist() == expected.tolist()
    assert np.array_equal(strata.xs, values[expected])
    assert strata.bounds.tolist() == [0, *np.cumsum(np.bincount(codes, minlength=7)).tolist()]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 1000), min_size=2, max_size=40))
def test_split_statistics_match_direct_computation(vals):
    from simsample.sampling.twomeans import split_stats

    x = np.sort(np.array(vals, dtype=float))
    found = split_stats(x)
    if found is None:
        assert x[0] == x[-1]
        return
    k, lm, ls, rm, rs = found
    assert (lm, rm) == pytest.approx((x[:k].mean(), x[k:].mean()), rel=1e-9, abs=1e-9)
    assert (ls, rs) == pytest.approx((x[:k].std(), x[k:].std()), rel=1e-6, abs=1e-6)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, 30), min_size=2, max_size=30), st.sampled_from([1, 2, 3, 4, 7]))
def test_blocked_split_matches_the_unblocked_computation(vals, block):
    import simsample.sampling.twomeans as tm

    x = np.sort(np.array(vals, dtype=float))
    old = tm.BLOCK
    try:
        tm.BLOCK = block
        found = tm.split_stats(x)
        ss = tm.centred_ss(x, float(x.mean()))
    finally:
        tm.BLOCK = old
    assert ss == pytest.approx(within_ss(x), abs=1e-6)
    if found is None:
        assert x[0] == x[-1]
        return
    k, lm, ls, rm, rs = found
    one = best_cut(x)  # in one block
    best = brute_force_2means(x) if len(x) <= 12 else within_ss(x[:one]) + within_ss(x[one:])
    assert within_ss(x[:k]) + within_ss(x[k:]) == pytest.approx(best, abs=1e-6)
    assert (lm, ls, rm, rs) == pytest.approx((x[:k].mean(), x[:k].std(), x[k:].mean(), x[k:].std()), abs=1e-6)
