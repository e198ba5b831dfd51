"""Allegro: (name, grid, block) groups, the 30-sample floor, the m_th splitting rule, and the
cache context classes on trace features."""

from __future__ import annotations

import math

import numpy as np
import pytest

from simsample.errors import UserError
from simsample.manager import get_host
from simsample.plugins.samplers.allegro import m_min
from simsample.sampling.strata import Range
from simsample.workload import from_records


def allegro(wl, seed=0, **params):
    s = get_host().sampler("allegro")
    return s.plan(wl, s.resolve_params(params), seed)


def wl_of(names, durations, grid_x=None):
    n = len(names)
    return from_records(
        {
            "name": names,
            "grid_x": np.ones(n, int) if grid_x is None else grid_x,
            "block_x": np.full(n, 64),
            "duration_ns": durations,
        },
        source="test",
    )


def test_m_min_has_the_floor_of_30():
    assert m_min(Range(0, 0, 1000, 100.0, 1.0), 0.05, 1.96, 30) == 30
    assert m_min(Range(0, 0, 1000, 100.0, 50.0), 0.05, 1.96, 30) == math.ceil((1.96 * 50 / (0.05 * 100)) ** 2)
    assert m_min(Range(0, 0, 1000, 0.0, 0.0), 0.05, 1.96, 30) == 30  # all-zero cluster


def test_narrow_group_gets_30_draws_and_small_group_all_its_launches():
    rng = np.random.default_rng(0)
    names = ["big"] * 1000 + ["small"] * 12
    dur = np.r_[rng.normal(1000, 5, 1000).round(), rng.normal(1000, 5, 12).round()]
    plan = allegro(wl_of(names, dur))
    by_key = {c.key.split(" grid")[0]: c for c in plan.clusters}
    assert by_key["big"].draws == 30 and by_key["big"].size == 1000
    assert by_key["small"].draws == 12  # clamped: drawn without replacement
    assert plan.prediction["error_bound"] == 0.05


def test_groups_are_split_by_shape():
    n = 400
    plan = allegro(wl_of(["k"] * n, np.full(n, 100), grid_x=np.r_[np.ones(200, int), np.full(200, 2)]))
    assert len(plan.clusters) == 2
    assert {c.key for c in plan.clusters} == {"k grid=(1,1,1) block=(64,1,1)", "k grid=(2,1,1) block=(64,1,1)"}


def test_wide_group_is_split_until_m_min_is_below_m_th():
    rng = np.random.default_rng(1)
    dur = np.r_[rng.normal(1000, 20, 3000), rng.normal(9000, 150, 3000), rng.normal(30000, 500, 3000)].round()
    wl = wl_of(["k"] * dur.size, dur)
    plan = allegro(wl)
    assert len(plan.clusters) >= 3
    for c in plan.clusters:
        assert math.ceil((1.96 * c.stats["cov"] / 0.05) ** 2) <= 50 or c.stats["std"] == 0 or c.size == 1
        assert c.draws == min(max(math.ceil((1.96 * c.stats["cov"] / 0.05) ** 2), 30), c.size)
    # a high threshold keeps the group whole: m_min is then at most m_th
    cov = dur.std() / dur.mean()
    whole = allegro(wl, m_th=10**6)
    assert len(whole.clusters) == 1 and whole.clusters[0].draws == math.ceil((1.96 * cov / 0.05) ** 2)


def test_low_threshold_splits_to_identical_values():
    # m_th below the floor: every cluster with spread is split, down to identical values
    wl = wl_of(["k"] * 8, [1, 1, 2, 2, 4, 4, 8, 8])
    plan = allegro(wl, m_th=5)
    assert sorted(c.size for c in plan.clusters) == [2, 2, 2, 2]
    assert all(c.stats["std"] == 0 for c in plan.clusters)


def test_allegro_plan_is_reproducible(tmp_path):
    rng = np.random.default_rng(2)
    wl = wl_of(rng.choice(["a", "b"], 5000), rng.lognormal(8, 0.7, 5000).round())
    allegro(wl, 3).write(tmp_path / "a.json")
    allegro(wl, 3).write(tmp_path / "b.json")
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()


def _solver_like(cold: int = 2):
    """200 launches of one kernel and shape, equal warp instructions (the design metric of trace
    features), the first ``cold`` of them reading lines no recent launch touched."""
    n = 200
    return from_records(
        {
            "name": ["jacobi"] * n,
            "grid_x": np.full(n, 80),
            "block_x": np.full(n, 256),
            "duration_ns": np.zeros(n),
            "warp_insts": np.full(n, 30720.0),
            "warm_reads": np.r_[np.zeros(cold), np.ones(n - cold)],
        },
        source="test",
    )


def test_trace_features_split_each_group_by_cache_context():
    """Equal instructions cannot show that the first launches ran cold: on a workload with the
    context column each (name, grid, block) group is split by context class, so the cold ones
    are a cluster of their own (here censused) instead of two launches thirty draws of 200 miss
    seven times in ten."""
    wl = _solver_like()
    plan = allegro(wl, metric="warp_insts")
    keys = {c.key: (c.size, c.draws) for c in plan.clusters}
    assert keys == {
        "jacobi grid=(80,1,1) block=(256,1,1) reads=cold": (2, 2),
        "jacobi grid=(80,1,1) block=(256,1,1) reads=warm": (198, 30),
    }
    assert plan.sampler["params"]["context"] == "auto" and plan.prediction["grouping"] == "name+shape+context"
    # the paper's groups, as before, with context=off
    off = allegro(wl, metric="warp_insts", context="off")
    assert [(c.key, c.size, c.draws) for c in off.clusters] == [("jacobi grid=(80,1,1) block=(256,1,1)", 200, 30)]


def test_context_needs_its_column_and_leaves_profiles_as_they_were():
    wl = wl_of(["k"] * 100, np.full(100, 100.0))
    auto = allegro(wl)
    assert [c.key for c in auto.clusters] == ["k grid=(1,1,1) block=(64,1,1)"]
    assert auto.prediction["grouping"] == "name+shape"
    assert [c.key for c in allegro(wl, context="off").clusters] == [c.key for c in auto.clusters]
    with pytest.raises(UserError, match="'warm_reads' column, which context=on needs"):
        allegro(wl, context="on")


def test_a_grouping_that_splits_by_context_already_is_kept():
    wl = _solver_like()
    plan = allegro(wl, metric="warp_insts", group="name+context")
    assert sorted(c.key for c in plan.clusters) == ["jacobi reads=cold", "jacobi reads=warm"]
    assert plan.prediction["grouping"] == "name+context"


def test_context_on_and_off_win_over_the_grouping():
    """``off`` never splits by context, even a grouping that names it; ``on`` on a profile is
    refused in one line whatever the grouping, ``auto`` (by name there) included."""
    off = allegro(_solver_like(), metric="warp_insts", group="name+context", context="off")
    assert off.prediction["grouping"] == "name" and len(off.clusters) == 1
    profile = wl_of(["k"] * 100, np.full(100, 100.0))
    with pytest.raises(UserError, match="'warm_reads' column, which context=on needs"):
        allegro(profile, group="auto", context="on")


def test_the_command_and_the_api_split_alike_and_refuse_alike(tmp_path, capsys):
    """``plan --sampler allegro --param context=...`` writes the plan ``simsample.plan`` makes
    (same launches, same grouping), on the solver's trace features; ``context=on`` on a profile
    is the API's message, one line, and no plan file."""
    import json

    import simsample
    from simsample.cli import run
    from tests.helpers import ROOT

    features = ROOT / "tests" / "fixtures" / "accelsim_solver" / "solver-features.parquet"
    for context in ("auto", "off"):
        out = tmp_path / f"{context}.json"
        assert (
            run(["plan", str(features), "--sampler", "allegro", "--param", f"context={context}", "-o", str(out)]) == 0
        )
        written = json.loads(out.read_text())
        api = simsample.plan(simsample.read(features), "allegro", context=context)
        assert [s["kernel_id"] for s in written["samples"]] == api.samples["kernel_id"].tolist()
        assert written["prediction"]["grouping"] == api.prediction["grouping"]
    profile = ROOT / "tests" / "fixtures" / "kineto_h200" / "gnn.pt.trace.json.gz"
    with pytest.raises(UserError) as api_error:
        simsample.plan(profile, "allegro", context="on")
    capsys.readouterr()
    assert (
        run(["plan", str(profile), "--sampler", "allegro", "--param", "context=on", "-o", str(tmp_path / "x.json")])
        == 1
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: {api_error.value}"] and not (tmp_path / "x.json").exists()
