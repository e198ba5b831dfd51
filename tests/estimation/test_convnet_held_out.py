"""A fourth workload written after the defaults were chosen, the first after margin version 7: a
residual convolutional network's inference over six batches and a short one
(``benchmarks/convnet_workload.py``; fixtures in tests/fixtures/accelsim_convnet, README there),
simulated in a real Accel-Sim in full and sampled.

Nothing was changed for the defaults (margin) on it; the tests pin what was measured
(docs/results/held-out-workloads.md, "A fourth workload written after the defaults"). The
estimator was changed on it: root's intervals missed here, and a cluster's spread is now at least
what the features' model of the cycles shows (``stats.model_cov``). For that change this
workload is where it was found, not a held-out check.
"""

from __future__ import annotations

import numpy as np
import pytest

import simsample
from simsample.sampling.evaluate import score_plan
from tests.helpers import (
    ROOT,
    assert_runs_hold,
    design_scores,
    full_run_design,
    recorded_runs_scores,
)

FIXTURES = ROOT / "tests" / "fixtures" / "accelsim_convnet"


@pytest.fixture(scope="module")
def design():
    """The features and the full run's cycles of each launch, as ``evaluate --truth`` reads them."""
    return full_run_design(FIXTURES, "convnet")


def test_the_defaults_plans_hold_the_full_runs_cycles(design):
    """Margin version 7 on the features, scored on the full run's own cycles, seeds 0-19:
    measured 20 of 20 covering, mean |error| 0.17%, median ±0.68% (4.1 times the error) at 7.36
    times fewer launches (200 later seeds: 1.00, 0.16%, ±0.78%). The width is one cluster's: six
    top-k launches, one CTA each, whose warp instructions are 39% apart, the features' model of
    their cycles 16.5% and their cycles 10%. With the instructions' spread it was ±1.62%, 9.8
    times the error."""
    scores = design_scores(design, "margin")
    errors = np.abs([s.error for s in scores])
    assert sum(bool(s.covered) for s in scores) >= 19
    assert errors.mean() < 0.004 and errors.max() < 0.012
    assert np.median([s.half_width for s in scores]) < 5 * errors.mean()


def test_root_by_name_holds_it_through_the_models_spread(design):
    """Root groups launches by kernel name: convolutions of three stages share clusters of nearly
    equal warp instructions (3,648 to 3,840) whose cycles are up to 1.5 times apart, each drawn
    once. The features' model of the cycles sees the shapes, and the estimator takes a cluster's
    spread to be at least the model's (``stats.model_cov``): measured 20 of 20 covering at 95%
    (1.00 of 200 later seeds), mean |error| 3.97% around ±17.5%."""
    scores = design_scores(design, "root")
    assert sum(bool(s.covered) for s in scores) >= 19
    assert np.median([s.half_width for s in scores]) < 5 * np.mean(np.abs([s.error for s in scores]))


def test_root_by_name_misses_without_the_model(design):
    """What the model's spread mended, pinned so that it stays explained: the same features
    without ``predicted_cycles`` give root's clusters only the warp instructions' spread (2%),
    and 13 of 20 plans covered (0.74 of 200 later seeds), errors of 4% around ±5.0%."""
    wl, truth, ids = design
    bare = simsample.Workload(
        wl.kernels.drop(columns=["predicted_cycles"]), source=wl.source, format=wl.format, meta=dict(wl.meta)
    )
    scores = [score_plan(simsample.plan(bare, "root", seed=s), truth, ids, metric="cycles") for s in range(20)]
    assert all("model_cov" not in c.stats for c in simsample.plan(bare, "root", seed=0).clusters)
    assert sum(bool(s.covered) for s in scores) <= 16


def test_root_grouped_by_shape_with_two_draws_holds_it(design):
    """``group=auto,min_draws=2`` (the calibration page's alternative for root on trace
    features): measured 20 of 20 covering, mean |error| 0.085%, median ±0.96% at 4.71 times."""
    scores = design_scores(design, "root", group="auto", min_draws=2)
    assert sum(bool(s.covered) for s in scores) >= 18
    assert np.mean(np.abs([s.error for s in scores])) < 0.002


def test_the_defaults_real_sampled_runs_hold_the_full_run():
    """Margin version 7 on ``profile features``, ``apply``'s reuse warm-up (functional), seeds
    0-19 simulated (``runs-margin7``): measured 20 of 20 covering, mean |error| 0.17%, largest
    0.32%, mean error +0.09%, median ±0.68% (±0.54% to ±1.47%; ±1.62% with the instructions'
    spread in place of the model's), 46 of 350 launches in detail,
    7.36 times fewer simulated cycles. Each plan is made again here, so a change that makes
    margin draw other launches fails first."""
    scores = recorded_runs_scores(FIXTURES, "convnet", "margin", range(20), runs="runs-margin7")
    assert_runs_hold(scores, covered=19, mean_error=0.003, max_error=0.006, median_half=0.01)


@pytest.mark.parametrize(("sampler", "least"), [("pka", 8), ("sieve", 10), ("photon", 10)])
def test_audited_real_sampled_runs_hold_the_full_run(sampler, least):
    """Real sampled runs of the representative samplers with an audit of 16 draws beside them
    (``audit=16``, the draws following the cycles), seeds 0-9 (``runs-audit``): measured PKA 8/10
    (−3.6% at a median ±9.1%; seeds 8 and 9 report ±3.2% and ±3.5%, the two plans of twenty
    whose audit also missed on the full run's own cycles), Sieve 10/10 (+6.2% at ±21.8%) and
    Photon 10/10 (+18.7% at ±25.5%)."""
    scores = recorded_runs_scores(FIXTURES, "convnet", sampler, range(10), runs="runs-audit", audit=16)
    assert sum(c for _, c, _ in scores) >= least


def test_roots_real_sampled_runs_hold_the_full_run():
    """Root (by name, 95%) in real sampled runs, seeds 0-9 (``runs-root``), estimated with the
    model's spread: measured 10 of 10 covering, errors −6.0% to +3.3% (mean |error| 3.3%) at
    ±16.4% to ±21.0%, 2.7 times fewer simulated cycles. Seeds 4 and 5 (−6.0% and −5.5%) are two
    of the plans whose intervals, ±5.0% without the model's spread, missed on the full run's own
    cycles."""
    scores = recorded_runs_scores(FIXTURES, "convnet", "root", range(10), runs="runs-root")
    assert sum(c for _, c, _ in scores) >= 9
    errors = np.abs([e for e, _, _ in scores])
    assert errors.mean() < 0.05 and np.median([h for _, _, h in scores]) < 0.25
