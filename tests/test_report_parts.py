"""The report's per-kernel rollup and where it marks its own plan, checked on plans of the example profile."""

from __future__ import annotations

import pytest

import simsample
from simsample.io.names import strip_args
from simsample.report import plots
from simsample.report.content import _plan_point, kernel_rollup
from tests.helpers import ROOT

PROFILE = ROOT / "examples" / "profile" / "train_step.pt.trace.json.gz"


@pytest.fixture(scope="module")
def workload():
    return simsample.read(PROFILE)


def test_rollup_sums_to_the_plan(workload):
    p = simsample.plan(workload, "stem", seed=1)
    g = kernel_rollup(p)
    assert g["launches"].sum() == len(workload)
    assert g["draws"].sum() == sum(c.draws for c in p.clusters)
    assert g["time_share"].sum() == pytest.approx(1.0)
    assert g["variance_share"].sum() == pytest.approx(1.0)
    assert list(g["variance"]) == sorted(g["variance"], reverse=True)
    # a cluster's part: N²(1 − m/N)s²/m with s = CoV·mean, summed per kernel
    c = max(p.clusters, key=lambda c: c.size)
    s = c.stats["cov"] * c.stats["mean"]
    want = c.size**2 * (1 - c.draws / c.size) * s * s / c.draws
    assert 0 < want <= float(g["variance"].max()) * (1 + 1e-9)
    assert set(g["kernel"]) == {strip_args(str(n)) for n in workload.to_dataframe()["name"].unique()}


def _curve(sampler, points):
    return plots.Curve(sampler, [s for s, _ in points], [e for _, e in points], [None] * len(points), [f"eps={v}" for v in (0.05, 0.25)][: len(points)])


def test_the_plan_is_marked_at_its_evaluated_point_only_when_every_parameter_matches(workload):
    p = simsample.plan(workload, "stem", seed=1)
    params = p.sampler["params"]
    points = [{"params": {"eps": 0.05}}, {"params": {"eps": 0.25}}]
    curve = _curve("stem", [(2.0, 0.5), (9.0, 3.0)])
    same = [{"params": {**params, "eps": 0.05}}, {"params": {**params, "eps": 0.25}}]
    got = _plan_point(p, [curve], [points], [same])
    assert (got.speedup, got.error_pct, got.label) == (2.0, 0.5, "eps=0.05")
    # the evaluation used another confidence: not this plan's point; its predicted speedup instead
    other = [{"params": {**params, "eps": e, "confidence": 0.5}} for e in (0.05, 0.25)]
    got = _plan_point(p, [curve], [points], [other])
    assert got.error_pct is None and got.speedup == pytest.approx(p.prediction["speedup"])
    # another sampler's curve is never this plan's
    got = _plan_point(p, [_curve("root", [(2.0, 0.5)])], [points[:1]], [same[:1]])
    assert got.error_pct is None


def test_error_axis_scale_follows_the_errors():
    log = plots.error_vs_speedup([plots.Curve("a", [2.0, 8.0], [0.5, 5.0], [None, None], ["x", "y"])])
    assert 'data-yscale="log"' in log.svg
    census = plots.error_vs_speedup([plots.Curve("a", [1.0, 8.0], [0.0, 5.0], [None, None], ["x", "y"])])
    assert 'data-yscale="symlog"' in census.svg
