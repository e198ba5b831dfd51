"""STEM: grouping, the σ = 0 and zero-duration clusters, draws, and what a plan records."""

from __future__ import annotations

import numpy as np
import pytest

from simsample.errors import UserError
from simsample.manager import get_host
from simsample.planfile import Plan
from simsample.sampling.estimate import estimate_total
from simsample.sampling.grouping import group_launches
from simsample.workload import from_records


def wl_of(names, durations, **cols):
    n = len(names)
    rec = {
        "name": names,
        "grid_x": cols.pop("grid_x", np.ones(n, int)),
        "block_x": cols.pop("block_x", np.full(n, 128)),
        "duration_ns": durations,
    }
    rec.update(cols)
    return from_records(rec, source="test")


def stem(wl, seed=0, **params):
    s = get_host().sampler("stem")
    return s.plan(wl, s.resolve_params(params), seed)


def truth_series(wl):
    return wl.values().sum(), dict(zip(wl.kernels["kernel_id"].tolist(), wl.values().tolist()))


def test_grouping_strips_the_argument_list_not_at_the_first_parenthesis():
    names = [
        "void at::native::(anonymous namespace)::foo<float>(float*, int)",
        "void at::native::(anonymous namespace)::bar<float>(float*, int)",
        "void at::native::(anonymous namespace)::foo<float>(float*, long)",
    ]
    g = group_launches(wl_of(names, [1, 2, 3]), "name")
    assert g.count == 2
    assert g.codes[0] == g.codes[2] != g.codes[1]
    assert "void at::native::(anonymous namespace)::foo<float>" in g.keys


def test_grouping_by_name_and_shape():
    wl = wl_of(["k(int)"] * 4, [1, 2, 3, 4], grid_x=[1, 2, 1, 2], block_x=[64, 64, 64, 128])
    g = group_launches(wl, "name+shape")
    assert g.count == 3 and g.codes[0] == g.codes[2]
    assert g.keys[0] == "k grid=(1,1,1) block=(64,1,1)"


def test_identical_duration_cluster_still_gets_one_sample():
    # the artifact gives this cluster zero samples and drops its time (its 23% error on alexnet)
    rng = np.random.default_rng(0)
    names = ["wide"] * 400 + ["flat"] * 300
    dur = np.r_[rng.integers(100, 5000, 400), np.full(300, 777)]
    wl = wl_of(names, dur)
    for allocation in ("group", "joint"):
        plan = stem(wl, allocation=allocation)
        flat = next(c for c in plan.clusters if c.key == "flat")
        assert flat.draws == 1 and flat.stats["std"] == 0.0 and flat.stats["cov"] == 0.0
        s = plan.samples[plan.samples["cluster"] == flat.id]
        assert len(s) == 1 and s["weight"].iloc[0] == 300.0
        truth, vals = truth_series(wl)
        e = estimate_total(plan, vals)
        # the flat cluster's 300 × 777 is in the estimate, exactly
        wide = next(c for c in plan.clusters if c.key == "wide")
        assert e.estimate == pytest.approx(
            777 * 300
            + sum(vals[k] * 400 / wide.draws for k in plan.samples[plan.samples["cluster"] == wide.id]["kernel_id"])
        )


def test_zero_duration_launches_and_all_zero_clusters():
    # Kineto rounds to whole microseconds: launches of 0 ns, and kernels that always take 0
    names = ["zero"] * 50 + ["mixed"] * 100
    dur = np.r_[np.zeros(50), np.r_[np.zeros(20), np.full(80, 1000)]]
    wl = wl_of(names, dur)
    plan = stem(wl)
    zero = next(c for c in plan.clusters if c.key == "zero")
    assert zero.draws == 1 and zero.stats["mean"] == 0.0
    assert plan.samples[plan.samples["cluster"] == zero.id]["weight"].tolist() == [50.0]
    truth, vals = truth_series(wl)
    covered = 0
    for seed in range(200):
        e = estimate_total(stem(wl, seed), vals)
        assert np.isfinite(e.estimate) and e.std_error is not None
        covered += e.ci_low <= truth <= e.ci_high
    assert covered >= 0.9 * 200


def test_a_workload_of_zero_durations_only():
    wl = wl_of(["a", "b", "a"], [0, 0, 0])
    plan = stem(wl)
    assert [c.draws for c in plan.clusters] == [1, 1]
    assert plan.prediction["speedup"] is None and plan.prediction["predicted_error"] == 0.0
    assert estimate_total(plan, {0: 0.0, 1: 0.0, 2: 0.0}).estimate == 0.0


def test_draws_are_clamped_to_cluster_size_and_distinct_without_replacement():
    rng = np.random.default_rng(2)
    wl = wl_of(["k"] * 20, rng.integers(1, 100000, 20))  # CoV ≈ 0.6: eq. 3 asks for more than 20
    plan = stem(wl, eps=0.01)
    (c,) = plan.clusters
    assert c.draws == 20 and plan.samples["kernel_id"].is_unique
    assert np.allclose(plan.samples["weight"], 1.0)
    e = estimate_total(plan, truth_series(wl)[1])
    assert e.std_error == 0.0 and e.estimate == wl.values().sum()  # a census has no error


def test_replace_true_draws_iid():
    rng = np.random.default_rng(3)
    wl = wl_of(["k"] * 6, rng.integers(1, 100000, 6))
    counts = np.zeros(6)
    repeats = 0
    for seed in range(300):
        plan = stem(wl, seed, replace=True, eps=0.01)
        assert plan.estimator["replace"] is True
        (c,) = plan.clusters
        assert c.draws == 6 and len(plan.samples) == 6 and np.allclose(plan.samples["weight"], 1.0)
        repeats += not plan.samples["launch"].is_unique
        counts += np.bincount(plan.samples["launch"], minlength=6)
    assert repeats > 250  # 6 i.i.d. draws out of 6 are all distinct with probability 1.5%
    assert np.all(np.abs(counts / counts.sum() - 1 / 6) < 0.03)  # uniform marginals


def test_plan_records_what_the_estimator_needs(tmp_path):
    rng = np.random.default_rng(4)
    wl = wl_of(rng.choice(["a(int)", "b(int)", "c(int)"], 3000), rng.lognormal(8, 0.5, 3000).round())
    plan = stem(wl, eps=0.1, confidence=0.9)
    assert plan.estimator == {"kind": "stratified", "replace": False}
    assert plan.prediction["error_bound"] == 0.1 and plan.prediction["confidence"] == 0.9
    assert plan.prediction["predicted_error"] <= 0.1
    assert plan.sampler["params"]["eps"] == 0.1 and plan.sampler["version"] == "3"
    for c in plan.clusters:
        members = wl.values()[wl.kernels["name"].astype(str).str.startswith(c.key).to_numpy()]
        assert c.size == members.size and c.draws == (plan.samples["cluster"] == c.id).sum()
        assert c.stats["mean"] == pytest.approx(members.mean()) and c.stats["std"] == pytest.approx(members.std())
        assert c.stats["cov"] == pytest.approx(members.std() / members.mean())
        assert c.stats["total"] == pytest.approx(members.sum())
    plan.write(tmp_path / "p.json")
    back = Plan.read(tmp_path / "p.json")
    assert back.clusters == plan.clusters


def test_same_inputs_and_seed_give_byte_identical_plan_files(tmp_path):
    rng = np.random.default_rng(5)
    wl = wl_of(rng.choice(["a", "b"], 2000), rng.lognormal(8, 1, 2000).round())
    stem(wl, 11).write(tmp_path / "a.json")
    stem(wl, 11).write(tmp_path / "b.json")
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()


def test_joint_allocation_uses_fewer_samples_at_the_bound():
    rng = np.random.default_rng(6)
    names = rng.choice([f"k{i}" for i in range(30)], 50000)
    dur = rng.lognormal(8, 1.0, 50000).round()
    wl = wl_of(names, dur)
    g, j = stem(wl, allocation="group"), stem(wl, allocation="joint")
    assert j.prediction["sampled_launches"] < g.prediction["sampled_launches"]
    assert j.prediction["predicted_error"] == pytest.approx(0.05, rel=0.05)
    assert g.prediction["predicted_error"] < j.prediction["predicted_error"]


def test_empty_and_negative_metric_are_user_errors():
    with pytest.raises(UserError, match="no kernel launches"):
        stem(wl_of([], []))
    wl = wl_of(["a", "b"], [1, 2], score=[-1.0, 3.0])
    with pytest.raises(UserError, match="negative"):
        stem(wl, metric="score")


def test_min_draws_and_fpc_sizing():
    rng = np.random.default_rng(7)
    dur = rng.normal(10000, 300, 1000).round()  # narrow: eq. 3 asks for 1 or 2 draws
    wl = wl_of(["k"] * 1000, dur)
    assert stem(wl).clusters[0].draws <= 2
    assert stem(wl, min_draws=30).clusters[0].draws == 30
    wide = wl_of(["k"] * 400, rng.lognormal(8, 0.8, 400).round())
    paper, fpc = stem(wide), stem(wide, fpc=True)
    cov = paper.clusters[0].stats["cov"]
    assert paper.clusters[0].draws == min(400, int(np.ceil((1.959964 * cov / 0.05) ** 2)))
    assert fpc.clusters[0].draws < paper.clusters[0].draws  # the correction needs fewer
    assert fpc.prediction["predicted_error"] == pytest.approx(0.05, rel=0.02)
    assert paper.prediction["predicted_error"] < 0.05
