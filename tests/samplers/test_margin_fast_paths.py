"""The fast paths of the stratified samplers' hot loop give the bits the general code gives.

margin plans 10^6 launches through thousands of small splits and allocations; the faster code
for them (one-block splits, the two-cluster allocation, the sum of two products, range
statistics without wrappers, the memo of what a range gave, the name grouping by table) must
change no plan: each is compared with the code it replaces, value
by value and bit for bit, and whole plans with every fast path swapped back for the old code.
"""

from __future__ import annotations

import math
import struct

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simsample.plugins.samplers.margin as margin_module
import simsample.plugins.samplers.root as root_module
from simsample.library import plan
from simsample.sampling import allocation, grouping, strata, twomeans
from simsample.workload import from_records
from tests.helpers import SHARED_DATA

EXAMPLE = "examples/profile/train_step.pt.trace.json.gz"


def bits(value) -> tuple:
    """A value's exact bits (floats by their IEEE bytes, so that −0.0 and 0.0 differ)."""
    if isinstance(value, (list, tuple)):
        return tuple(bits(v) for v in value)
    if isinstance(value, np.ndarray):
        return (value.dtype.str, value.tobytes())
    if isinstance(value, float):
        return ("f", struct.pack("<d", value))
    return (type(value).__name__, value)


sorted_values = st.one_of(
    st.lists(st.integers(0, 20), min_size=2, max_size=300),
    st.lists(st.integers(0, 10**12), min_size=2, max_size=300),
    st.lists(st.floats(0, 1e9, allow_nan=False, allow_infinity=False), min_size=2, max_size=300),
    st.lists(st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False), min_size=2, max_size=60),
).map(lambda v: np.sort(np.asarray(v, dtype=np.float64)))


@settings(max_examples=400, deadline=None)
@given(sorted_values)
def test_one_block_split_is_the_blocked_pass_bit_for_bit(x):
    found = twomeans.split_stats(x)
    if x[0] == x[-1]:
        assert found is None
        return
    assert bits(found) == bits(twomeans._split_blocked(x, x.size))


def test_one_block_split_on_large_and_tied_clusters():
    rng = np.random.default_rng(7)
    for n in (2, 7, 8, 9, 127, 128, 129, 1000, 20_000, twomeans.BLOCK):
        for x in (rng.gamma(2.0, 1000.0, n).round(), rng.integers(0, 3, n).astype(float), rng.lognormal(8, 2, n)):
            x = np.sort(x)
            if x[0] != x[-1]:
                assert bits(twomeans.split_stats(x)) == bits(twomeans._split_blocked(x, n)), n


clusters = st.tuples(
    st.one_of(st.just(0.0), st.floats(1e-3, 1e9)),  # mean
    st.one_of(st.just(0.0), st.floats(1e-6, 1e7)),  # std
    st.integers(1, 10**7),  # size
)


@settings(max_examples=600, deadline=None)
@given(
    st.tuples(clusters, clusters),
    st.floats(1e-4, 1.0),
    st.sampled_from([1.959963984540054, 2.5758293035489004, 3.090232306167813, 1.2]),
    st.booleans(),
    st.integers(1, 40),
)
def test_two_cluster_allocation_is_the_general_small_one(pair, eps, z, replace, lower):
    means, stds, sizes = ([c[i] for c in pair] for i in range(3))
    general = allocation._allocate_small(means, stds, sizes, eps=eps, z=z, replace=replace, lower=float(lower))
    fast = allocation.allocate(means, stds, sizes, eps=eps, z=z, replace=replace, lower=lower)
    for field in ("continuous", "draws", "feasible", "total", "variance"):
        assert bits(getattr(fast, field)) == bits(getattr(general, field)), field
    assert allocation.small_draws(means, stds, sizes, eps=eps, z=z, replace=replace, lower=lower) == (
        general.draws.tolist()
    )
    pair = allocation.pair_draws(*means, *stds, *sizes, eps=eps, z=z, replace=replace, lower=lower)
    assert pair is None or list(pair) == general.draws.tolist()
    assert (pair is None) == (
        allocation._allocate_pair(means, stds, sizes, eps=eps, z=z, replace=replace, lower=lower) is None
    )


def test_two_cluster_allocation_covers_every_branch():
    """Both at their bounds, the interior (breakpoints), the lower bounds already enough."""
    seen = set()
    for args in (
        ([1000.0, 2000.0], [500.0, 900.0], [3, 4], 0.001),  # at the sizes
        ([1000.0, 2000.0], [50.0, 300.0], [100, 50], 0.05),  # interior
        ([1000.0, 2000.0], [1.0, 2.0], [100, 50], 0.3),  # one draw each is enough
    ):
        means, stds, sizes, eps = args
        fast = allocation._allocate_pair(means, stds, sizes, eps=eps, z=3.09, replace=False, lower=1.0)
        general = allocation._allocate_small(means, stds, sizes, eps=eps, z=3.09, replace=False, lower=1.0)
        assert bits(fast.continuous) == bits(general.continuous) and bits(fast.draws) == bits(general.draws)
        seen.add(tuple(fast.draws.tolist()))
    assert seen == {(3, 4), (9, 19), (1, 1)}


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 10**6), st.integers(1, 10**6), st.floats(0, 1e12), st.floats(0, 1e12))
def test_sampled_time_of_two_is_numpys_sum(d0, d1, m0, m1):
    reference = float(np.sum(np.asarray([d0, d1], dtype=np.float64) * np.asarray([m0, m1], dtype=np.float64)))
    assert bits(allocation.sampled_time(np.array([d0, d1]), [m0, m1])) == bits(reference)


def old_range_stats(s: strata.Strata, lo: int, hi: int) -> tuple[float, float]:
    """make_range's statistics as they were computed before (seg.mean(), centred_ss)."""
    seg = s.xs[lo:hi]
    mean = float(seg.mean())
    if seg[0] == seg[-1] and s.by_value:
        return float(seg[0]), 0.0
    return mean, math.sqrt(max(twomeans.centred_ss(seg, mean) / seg.size, 0.0))


@settings(max_examples=200, deadline=None)
@given(sorted_values, st.booleans())
def test_range_statistics_are_the_two_pass_ones(x, by_value):
    s = strata.Strata(
        values=x, order=np.arange(x.size), xs=x, bounds=np.array([0, x.size]), keys=["k"], by_value=by_value
    )
    for lo, hi in ((0, x.size), (0, 1), (x.size // 2, x.size)):
        if hi > lo:
            r = strata.make_range(s, 0, lo, hi)
            assert bits((r.mean, r.std)) == bits(old_range_stats(s, lo, hi))
            again = strata.make_range(s, 0, lo, hi)  # from the memo: equal, and a new object
            assert again == r and again is not r


def test_memo_entries_are_functions_of_the_range():
    x = np.sort(np.random.default_rng(3).gamma(2.0, 100.0, 500).round())
    s = strata.Strata(values=x, order=np.arange(x.size), xs=x, bounds=np.array([0, x.size]), keys=["k"], by_value=True)
    top = strata.make_range(s, 0, 0, x.size)
    first = strata.split_range(s, top, "exact", 0)
    assert ("split", 0, x.size) in s.memo
    second = strata.split_range(s, strata.make_range(s, 0, 0, x.size), "exact", 5)
    assert first == second and first[0] is not second[0]
    assert bits(twomeans.split_stats(x)) == bits(s.memo[("split", 0, x.size)])


def test_name_grouping_table_is_the_factorisation():
    names = pd.Categorical(
        ["b(int)", "a", "b(float)", "a", "c<1>(x)", "b(int)"],
        categories=["zz_unused", "b(int)", "a", "b(float)", "c<1>(x)"],
    )
    wl = from_records({"name": names, "grid_x": [1] * 6, "block_x": [1] * 6, "duration_ns": [1.0] * 6})
    found = grouping.group_launches(wl, "name")
    cats = [grouping.strip_args(str(c)) for c in wl.kernels["name"].cat.categories]
    uniq = sorted(set(cats))
    remap = np.array([uniq.index(c) for c in cats], dtype=np.int64)
    used, codes = grouping._compress(remap[wl.kernels["name"].cat.codes.to_numpy().astype(np.int64)])
    assert found.codes.dtype == codes.dtype and found.codes.tolist() == codes.tolist()
    assert found.keys == [uniq[u] for u in used]


class Forgetful(dict):
    """A memo that keeps nothing: every range computed again, as before the memo."""

    def __setitem__(self, key, value):
        pass


@pytest.fixture
def old_paths(monkeypatch):
    """Every fast path swapped back for the code it replaced."""

    def reference_sampled_time(draws, means):
        return float(np.sum(np.asarray(draws, dtype=np.float64) * np.asarray(means, dtype=np.float64)))

    build = strata.build_strata

    def forgetful_build(*args, **kwargs):
        s = build(*args, **kwargs)
        s.memo = Forgetful()
        return s

    monkeypatch.setattr(twomeans, "_split_one_block", lambda x, n: twomeans._split_blocked(x, n))
    monkeypatch.setattr(allocation, "_allocate_pair", lambda *a, **k: None)
    monkeypatch.setattr(root_module, "pair_draws", lambda *a, **k: None)
    monkeypatch.setattr(root_module, "sampled_time", reference_sampled_time)
    monkeypatch.setattr(margin_module, "sampled_time", reference_sampled_time)
    monkeypatch.setattr(strata, "_range_stats", old_range_stats)
    monkeypatch.setattr(strata, "build_strata", forgetful_build)


def synthetic(n: int, seed: int):
    rng = np.random.default_rng(seed)
    kernels = [f"k{i}" for i in range(12)]
    names = rng.choice(kernels, n)
    scale = np.array([float(k[1:]) + 1 for k in names])
    dur = np.where(rng.random(n) < 0.1, rng.lognormal(9, 1.0, n), rng.gamma(4.0, 300.0, n) * scale).round() + 1
    return from_records({"name": names, "grid_x": [1] * n, "block_x": [1] * n, "duration_ns": dur})


CASES = [
    ("margin", {}),
    ("margin", {"eps": 0.01}),
    ("margin", {"eps": 0.2, "pool": True}),
    ("margin", {"max_skew": 0.2}),
    ("root", {}),
    ("root", {"replace": True, "min_draws": 3}),
    ("stem", {}),
    ("allegro", {}),
]


def plans_of(workloads, seeds) -> list[str]:
    return [
        plan(wl, sampler, seed=seed, **params).dumps()
        for wl in workloads
        for sampler, params in CASES
        for seed in seeds
    ]


def compare_with_old_paths(request, workloads, seeds):
    now = plans_of(workloads, seeds)
    request.getfixturevalue("old_paths")
    before = plans_of(workloads, seeds)
    assert len(now) == len(before) and all(a == b for a, b in zip(now, before))
    assert len(set(now)) > len(CASES)  # the cases made different plans: the comparison can fail


def test_plans_are_the_bytes_of_the_old_paths(request):
    compare_with_old_paths(request, [synthetic(4000, 0), EXAMPLE], (0, 1))


@pytest.mark.slow
def test_plans_are_the_bytes_of_the_old_paths_on_more_workloads(request):
    resnet = SHARED_DATA / "profiles" / "kineto" / "kineto-resnet50"
    profiles = [str(p) for p in sorted(resnet.glob("*/*.pt.trace.json.gz"))]  # when the data are here
    compare_with_old_paths(request, [synthetic(20_000, 1), synthetic(60_000, 2), *profiles], (0, 1, 2))


def test_draws_weights_and_representatives_of_a_plan():
    """What draw_plan now builds in bulk (weights N/m, cluster ids, sorted distinct ids)."""
    wl = synthetic(5000, 4)
    p = plan(wl, "margin", seed=2, eps=0.02)
    samples = p.samples
    for c in p.clusters:
        mine = samples[samples["cluster"] == c.id]
        assert len(mine) == c.draws
        assert bits(mine["weight"].to_numpy()) == bits(np.full(c.draws, c.size / c.draws))
        assert c.representatives == np.unique(mine["kernel_id"].to_numpy()).tolist()


def test_collector_is_paused_only_for_the_block():
    import gc

    assert gc.isenabled()
    with margin_module.collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), margin_module.collector_paused():
        raise RuntimeError("a refusal inside the split loop")
    assert gc.isenabled()  # re-enabled whatever happened inside
    gc.disable()
    try:
        with margin_module.collector_paused():
            pass
        assert not gc.isenabled()  # a collector the caller turned off stays off
    finally:
        gc.enable()
