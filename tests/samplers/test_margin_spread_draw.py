"""Margin's one more draw in the heaviest cluster of equal design values (``spread_draw``, version 6).

Where second draws apply (a proxy design metric such as warp instructions), margin adds one draw
to the flat cluster whose draws each stand for the largest part of the total, when that draw
costs at most a fifth of the plan's sampled time. On measured times (profiles) nothing changes:
the plans are those of version 5, draw for draw.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simsample.manager import get_host
from simsample.plugins.samplers.margin import SPREAD_DRAW_COST, SPREAD_DRAW_SHARE, spread_draw
from simsample.reading import load_workload
from simsample.workload import from_records
from tests.helpers import ROOT, SHARED_DATA


def _margin():
    return get_host().sampler("margin")


def _draws(plan) -> dict[str, int]:
    return {c.key: c.draws for c in plan.clusters}


def _proxy_workload():
    """Five kernels of equal warp instructions each (flat clusters: the proxy design metric shows
    none of the spread their simulated cycles may have), of which "fill" (20 launches of 4,000
    instructions) holds the largest part of the total per draw, and "attn", whose instructions
    differ (300 launches), takes most of the plan's draws."""
    rng = np.random.default_rng(5)
    spec = {"fill": (20, 4000.0), "gemm": (30, 900.0), "relu": (40, 100.0), "norm": (25, 300.0), "copy": (60, 50.0)}
    names = np.concatenate([[k] * n for k, (n, _) in spec.items()] + [["attn"] * 300])
    insts = np.concatenate([[v] * n for _, (n, v) in spec.items()] + [rng.gamma(1.5, 800.0, 300).round() + 1])
    order = rng.permutation(names.size)
    n = names.size
    return from_records(
        {
            "name": names[order],
            "grid_x": np.ones(n, int),
            "block_x": np.ones(n, int),
            "duration_ns": insts[order] * 2.0,
            "warp_insts": insts[order],
        }
    )


def test_the_extra_draw_lands_in_the_heaviest_flat_cluster():
    s = _margin()
    wl = _proxy_workload()
    params = {"metric": "warp_insts", "group": "name"}
    before = s.plan(wl, s.resolve_params({**params, "spread_draw": "0"}), 3)
    after = s.plan(wl, s.resolve_params(params), 3)
    assert before.prediction["spread_draws"] == 0 and after.prediction["spread_draws"] == 1
    assert after.sampler["params"]["spread_draw"] is None  # the choice is recorded (none: the default rule)
    assert after.sampler["version"] == "8"
    old, new = _draws(before), _draws(after)
    changed = [k for k in old if old[k] != new[k]]
    assert len(changed) == 1 and new[changed[0]] == old[changed[0]] + 1
    flat = [c for c in before.clusters if c.stats["std"] == 0 and c.draws < c.size]
    heaviest = max(flat, key=lambda c: c.size * c.stats["mean"] / c.draws)
    assert changed == [heaviest.key] and heaviest.key.startswith("fill")
    assert after.prediction["sampled_launches"] == before.prediction["sampled_launches"] + 1


def test_the_extra_draw_is_bought_only_below_its_cost_bound():
    s = _margin()
    wl = _proxy_workload()
    params = {"metric": "warp_insts", "group": "name"}
    base = s.plan(wl, s.resolve_params({**params, "spread_draw": "0"}), 3)
    sampled = sum(c.draws * c.stats["mean"] for c in base.clusters)
    share = next(c.stats["mean"] for c in base.clusters if c.key == "fill") / sampled
    assert share < SPREAD_DRAW_COST  # so the default buys it (the first test)
    just_below = s.plan(wl, s.resolve_params({**params, "spread_draw": str(share * 0.99)}), 3)
    just_above = s.plan(wl, s.resolve_params({**params, "spread_draw": str(min(1.0, share * 1.01))}), 3)
    assert just_below.prediction["spread_draws"] == 0
    assert just_above.prediction["spread_draws"] == 1


def test_no_extra_draw_where_the_variance_is_spread_over_several_clusters():
    """Two flat clusters of equal weight: neither holds two thirds of the variance, the pool of
    their pairs is the right measure, and a third draw in one would only narrow it (MacSim layers,
    training: real sampled runs missed with it)."""
    sizes = np.array([20, 20, 40], dtype=np.float64)
    draws = np.array([2, 2, 10])
    means = np.array([1000.0, 1000.0, 500.0])
    stds = np.array([0.0, 0.0, 80.0])
    assert np.array_equal(spread_draw(draws, sizes, means, stds, 1.0), draws)
    heavier = np.array([3000.0, 1000.0, 500.0])  # the first now holds (3·20000)² / ((3·20000)² + 20000²) = 0.9
    assert spread_draw(draws, sizes, heavier, stds, 1.0).tolist() == [3, 2, 10]


def test_no_extra_draw_where_second_draws_do_not_apply():
    """``pool_dof=0`` (no second draws) means no extra draw either: the rule rests on them."""
    s = _margin()
    wl = _proxy_workload()
    plan = s.plan(wl, s.resolve_params({"metric": "warp_insts", "group": "name", "pool_dof": "0"}), 1)
    assert plan.prediction["spread_draws"] == 0 and plan.prediction["pool_draws"] == 0


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(1, 50), st.integers(0, 60), st.floats(0.0, 1e6), st.booleans()),
        min_size=1,
        max_size=12,
    ),
    st.floats(0.0, 1.0),
)
def test_spread_draw_adds_at_most_one_draw_within_its_bound(rows, cost):
    sizes = np.array([r[0] for r in rows], dtype=np.float64)
    draws = np.array([min(r[1], r[0]) for r in rows], dtype=np.int64)
    means = np.array([r[2] for r in rows])
    stds = np.array([0.0 if r[3] else 1.0 for r in rows])
    out = spread_draw(draws, sizes, means, stds, cost)
    diff = out - draws
    assert set(diff.tolist()) <= {0, 1} and diff.sum() <= 1
    if diff.sum():
        i = int(np.flatnonzero(diff)[0])
        assert stds[i] == 0 and 1 <= draws[i] < sizes[i]  # a flat cluster, drawn, not a census
        assert means[i] <= cost * float(np.sum(draws * means)) * (1 + 1e-12)
        eligible = (stds == 0) & (draws >= 1) & (draws < sizes)
        per_draw = sizes * means / np.maximum(draws, 1)
        assert per_draw[i] >= per_draw[eligible].max() * (1 - 1e-12)
        terms = np.where(eligible, (sizes * means) ** 2 * (1 / np.maximum(draws, 1) - 1 / sizes), 0.0)
        assert terms[i] >= SPREAD_DRAW_SHARE * terms.sum() * (1 - 1e-9)
    assert np.array_equal(spread_draw(draws, sizes, means, stds, 0.0), draws)


def _profiles() -> list:
    """The bundled example profile and a few development profiles (those present)."""
    out = [ROOT / "examples" / "profile" / "train_step.pt.trace.json.gz"]
    for rel in (
        "profiles/nvprof/magus/devid_rodinia/traces/traces_rodinia_heartwall.csv",
        "profiles/nvprof/magus/devid_poly/traces/traces_poly_3dconv.csv",
        "profiles/nvprof/magus/devid_cudasdk80/traces/traces_cudasdk_lineOfSight.csv",
    ):
        if (SHARED_DATA / rel).is_file():
            out.append(SHARED_DATA / rel)
    return out


@pytest.mark.parametrize("path", _profiles(), ids=lambda p: p.name)
def test_plans_on_profiles_keep_version_5_draws(path):
    """Measured durations: margin's default plan is the one without the extra draw (the rule of
    version 5), cluster for cluster and launch for launch, at several ε and seeds."""
    s = _margin()
    wl = load_workload([path])
    for eps, seed in ((0.05, 0), (0.05, 1), (0.02, 2)):
        new = s.plan(wl, s.resolve_params({"eps": str(eps)}), seed)
        old = s.plan(wl, s.resolve_params({"eps": str(eps), "spread_draw": "0"}), seed)
        assert new.prediction["spread_draws"] == 0
        assert _draws(new) == _draws(old)
        assert new.samples["kernel_id"].tolist() == old.samples["kernel_id"].tolist()


def test_the_bundled_trace_example_keeps_its_recorded_plan(tmp_path):
    """The tutorial's plan on the example traces (trace features: second draws apply) is the one
    its recorded Accel-Sim run simulated: one more draw there would cost 28% of its sampled time,
    above :data:`SPREAD_DRAW_COST`."""
    pytest.importorskip("simsample_accelsim")
    from simsample.cli import run
    from simsample.workload import Workload

    feats = tmp_path / "features.parquet"
    assert run(["profile", "features", "--sim", "accelsim", str(ROOT / "examples" / "traces"), "-o", str(feats)]) == 0
    wl = Workload.from_parquet(feats)
    s = _margin()
    new = s.plan(wl, s.resolve_params({}), 0)
    old = s.plan(wl, s.resolve_params({"spread_draw": "0"}), 0)
    assert new.prediction["pool_draws"] > 0 and new.prediction["spread_draws"] == 0
    assert new.samples["kernel_id"].tolist() == old.samples["kernel_id"].tolist()
    forced = s.plan(wl, s.resolve_params({"spread_draw": "1", "donors_by": "design"}), 0)
    assert forced.prediction["spread_draws"] == 1  # by warp instructions it would apply at a looser bound
    assert SPREAD_DRAW_COST < 0.28
    # version 7 weighs the flat clusters by the features' model of the cycles, by which none holds
    # two thirds of their variance: no draw at any bound, and the plan is version 6's
    assert s.plan(wl, s.resolve_params({"spread_draw": "1"}), 0).prediction["spread_draws"] == 0
    design = s.plan(wl, s.resolve_params({"donors_by": "design"}), 0)
    assert new.prediction["donors_by"] == "cycles" and design.prediction["donors_by"] == "design"
    assert new.samples["kernel_id"].tolist() == design.samples["kernel_id"].tolist()
