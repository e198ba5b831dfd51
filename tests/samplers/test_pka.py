"""PKA principal kernel selection: k selection, representatives, variants, two-level mode."""

from __future__ import annotations

import numpy as np
import pytest

from simsample.errors import UserError
from simsample.planfile import Plan
from simsample.plugins.samplers.pka import PKA_METRICS, PKASampler
from simsample.workload import from_records

# per-instruction proportions of the count metrics (index into PKA_METRICS), launch-independent
_SHARE = {0: 0.30, 1: 0.10, 2: 0.01, 3: 0.08, 4: 0.03, 5: 0.002, 6: 0.05, 7: 0.02, 8: 0.001, 9: 1.0}


def make_wl(names, inst, cycles, *, grid=None, ratio=None, detailed=None):
    """Launches whose 12 metrics follow their instruction counts (plus grid size and divergence)."""
    n = len(names)
    inst = np.asarray(inst, dtype=np.float64)
    grid = np.full(n, 80) if grid is None else np.asarray(grid)
    ratio = np.full(n, 32.0) if ratio is None else np.asarray(ratio, dtype=float)
    rec = {
        "name": names,
        "grid_x": grid,
        "block_x": np.full(n, 128),
        "duration_ns": np.asarray(cycles),
        "cycles": np.asarray(cycles),
    }
    for i, m in enumerate(PKA_METRICS):
        if i in _SHARE:
            col = np.round(inst * _SHARE[i])
        elif m.endswith(".ratio"):
            col = ratio
        else:
            col = grid.astype(float)
        if detailed is not None:
            col = col.astype(float).copy()
            col[detailed:] = np.nan
        rec[m] = col
    return from_records(rec, source="test")


def plan_of(wl, seed=0, **params):
    s = PKASampler()
    p = s.resolve_params(params)
    s.check_workload(wl, p)
    return s.plan(wl, p, seed)


def rel_error(plan, wl):
    x = wl.values(plan.workload["metric"])
    est = float(np.dot(plan.samples["weight"], x[plan.samples["launch"]]))
    return abs(est - x.sum()) / x.sum()


def heartwall(n=20):
    short = 10_000
    inst = np.array([short] + [1500 * short + 1000 * i for i in range(1, n)], dtype=np.int64)
    return make_wl(["heartwall_kernel"] * n, inst, inst // 2)


def three_groups():
    """Three behaviours, interleaved; first launches of each group are typical of it."""
    g = np.random.default_rng(0)
    kinds = np.tile([0, 1, 2], 10)
    base_inst = np.array([1e5, 1e6, 5e6])[kinds]
    inst = base_inst * (1 + 0.001 * g.standard_normal(30))
    cpi = np.array([1.0, 3.0, 0.5])[kinds]  # durations not proportional to instructions
    names = np.array(["a", "b", "c"])[kinds]
    return make_wl(list(names), inst, (inst * cpi).astype(np.int64))


# --- k selection -----------------------------------------------------------------------------


def test_smallest_k_within_target_error_is_chosen():
    wl = three_groups()
    plan = plan_of(wl)
    errs = plan.prediction["k_errors"]
    assert plan.prediction["k"] == 3 and len(errs) == 3  # the sweep stops at the first k that meets it
    assert errs[0] > 0.05 and errs[1] > 0.05 and errs[2] < 0.05
    assert plan.prediction["profile_error"] == pytest.approx(rel_error(plan, wl))
    assert sorted(c.size for c in plan.clusters) == [10, 10, 10]
    assert plan.sampled_ids == [0, 1, 2]  # first launch of each cluster
    # a lax target takes k = 1
    assert plan_of(wl, target_error=1.0).prediction["k"] == 1


def test_least_error_k_when_the_target_is_never_met():
    wl = three_groups()
    plan = plan_of(wl, target_error=0.0, k_max=5)
    errs = plan.prediction["k_errors"]
    assert len(errs) == 5
    assert plan.prediction["k"] == int(np.argmin(errs)) + 1
    assert plan.prediction["profile_error"] == min(errs)


def test_k_never_exceeds_launches_or_distinct_points():
    wl = make_wl(["a"] * 4, [100, 100, 200, 200], [1, 1, 9, 9])
    plan = plan_of(wl, target_error=0.0)
    assert len(plan.prediction["k_errors"]) == 2
    assert plan.prediction["k"] == 2 and rel_error(plan, wl) == 0


def test_weights_are_cluster_sizes_and_plan_is_unbounded(tmp_path):
    wl = three_groups()
    plan = plan_of(wl)
    assert list(plan.samples["weight"]) == [10.0, 10.0, 10.0]
    assert plan.estimator["kind"] == "representative"
    assert plan.prediction["error_bound"] is None
    plan.write(tmp_path / "p.json")
    again = Plan.read(tmp_path / "p.json")
    assert again.sampled_ids == plan.sampled_ids
    assert all(c.stats["cov"] >= 0 for c in again.clusters)


def test_center_and_random_representatives():
    wl = three_groups()
    center = plan_of(wl, representative="center")
    inst = wl.values("smsp__inst_executed.sum")
    for _cluster, rep in zip(center.clusters, center.sampled_ids):
        members = np.flatnonzero(wl.kernels["name"].to_numpy() == wl.kernels["name"].iloc[rep])
        # with every metric proportional to instructions, the centre is the median-most count
        assert abs(inst[rep] - inst[members].mean()) == pytest.approx(
            np.min(np.abs(inst[members] - inst[members].mean()))
        )
    a = plan_of(wl, seed=1, representative="random")
    b = plan_of(wl, seed=1, representative="random")
    assert a.dumps() == b.dumps()
    picks = {tuple(plan_of(wl, seed=s, representative="random", n_init=1).sampled_ids) for s in range(4)}
    assert len(picks) > 1


# --- heartwall (STEM paper §4.2) -------------------------------------------------------------


def test_heartwall_stem_variant_first_launch_misestimates_by_99_9_percent():
    wl = heartwall()
    plan = plan_of(wl, variant="stem")
    # without standardisation one principal component is kept, so only k = 1 is tried
    assert plan.prediction["principal_components"] == 1
    assert plan.prediction["k_errors"] == [pytest.approx(0.9993, abs=5e-4)]
    assert plan.sampled_ids == [0]
    assert rel_error(plan, wl) == pytest.approx(0.9993, abs=5e-4)


def test_heartwall_stem_variant_random_representative_drops_the_error():
    wl = heartwall()
    errors = [rel_error(plan_of(wl, seed=s, variant="stem", representative="random"), wl) for s in range(40)]
    assert np.mean(errors) < 0.3769  # the paper's hand-tuned PKA on heartwall: 37.69%
    assert np.median(errors) == pytest.approx(0.0527, abs=2e-3)


def test_heartwall_paper_method_isolates_the_short_launch():
    wl = heartwall()
    plan = plan_of(wl)
    assert plan.prediction["k"] == 2
    assert sorted(c.size for c in plan.clusters) == [1, 19]
    assert plan.sampled_ids == [0, 1]
    assert rel_error(plan, wl) < 0.05


# --- two-level -------------------------------------------------------------------------------


@pytest.mark.parametrize("classifier", ["sgd", "gnb", "mlp"])
def test_two_level_labels_the_rest_by_name_and_shape(classifier):
    g = np.random.default_rng(2)
    kinds = g.integers(0, 3, 300)
    kinds[:3] = [0, 1, 2]
    inst = np.array([1e5, 1e6, 5e6])[kinds] * (1 + 0.001 * g.standard_normal(300))
    cycles = (inst * np.array([1.0, 3.0, 0.5])[kinds]).astype(np.int64)
    names = list(np.array(["a", "b", "c"])[kinds])
    grid = np.array([10, 200, 50])[kinds]
    wl = make_wl(names, inst, cycles, grid=grid, detailed=60)
    plan = plan_of(wl, detailed_first=60, classifier=classifier)
    assert plan.prediction["detailed_launches"] == 60
    assert all(r < 60 for r in plan.samples["launch"])
    sizes = {wl.kernels["name"].iloc[int(r)]: c.size for r, c in zip(plan.samples["launch"], plan.clusters)}
    assert sizes == {k: int((np.array(names) == k).sum()) for k in "abc"}
    assert rel_error(plan, wl) < 0.05


def test_two_level_needs_metrics_only_for_the_first_launches():
    wl = make_wl(["a"] * 10, [1e5] * 10, [10] * 10, detailed=4)
    s = PKASampler()
    with pytest.raises(UserError, match="needs column"):
        s.check_workload(wl, s.resolve_params({}))
    s.check_workload(wl, s.resolve_params({"detailed_first": 4}))
    with pytest.raises(UserError, match="first 5 launches"):
        s.check_workload(wl, s.resolve_params({"detailed_first": 5}))
    plan = s.plan(wl, s.resolve_params({"detailed_first": 4}), 0)
    assert plan.clusters[0].size == 10 and plan.sampled_ids == [0]


# --- errors ----------------------------------------------------------------------------------


def test_missing_metrics_are_named_with_how_to_get_them():
    wl = from_records(
        {"name": ["k"], "grid_x": [1], "block_x": [32], "duration_ns": [5], "smsp__inst_executed.sum": [9]},
        source="nsys.sqlite",
    )
    s = PKASampler()
    with pytest.raises(UserError) as exc:
        s.check_workload(wl, s.resolve_params({}))
    msg = str(exc.value)
    assert "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum" in msg and "launch__grid_size" in msg
    assert "smsp__inst_executed.sum," not in msg.split("lacks")[0]  # present columns are not named missing
    assert "ncu" in msg and "simsample profile features" in msg


def test_single_launch_and_constant_metrics():
    one = make_wl(["a"], [100], [7])
    plan = plan_of(one)
    assert plan.sampled_ids == [0] and plan.prediction["k"] == 1
    same = make_wl(["a"] * 5, [100] * 5, [7, 8, 9, 7, 7])
    plan = plan_of(same)
    assert plan.prediction["k"] == 1 and list(plan.samples["weight"]) == [5.0]
