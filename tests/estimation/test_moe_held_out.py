"""A workload written after every default was chosen: mixture-of-experts layers whose routing
changes the experts' GEMM grids every step (``benchmarks/moe_workload.py``; fixtures in
tests/fixtures/accelsim_moe, README there), simulated in a real Accel-Sim in full and sampled.

Nothing was chosen on it. The tests pin what was measured: the generator still writes the
simulated traces, each recorded sampled run is the plan made again here, and the intervals of
the defaults (margin, seeds 0–19) and of the audited representative samplers (seeds 0–9) hold the
full run.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers import ROOT, assert_runs_hold, recorded_runs_scores

FIXTURES = ROOT / "tests" / "fixtures" / "accelsim_moe"


def _scores(sampler: str, seeds: range, runs: str = "runs", **params) -> list[tuple[float, bool, float]]:
    """(error, covered, relative half-width) of each recorded run of ``sampler`` in ``runs``."""
    return recorded_runs_scores(FIXTURES, "moe", sampler, seeds, runs, **params)


def test_the_defaults_hold_the_full_run():
    """Margin version 6 (``donors_by=design``) on ``profile features``, ``apply``'s reuse warm-up
    (functional): measured 19 of 20 covering (seed 17: +0.08% against ±0.06%), mean |error|
    0.05%, largest 0.15%."""
    scores = _scores("margin", range(20), donors_by="design")
    assert_runs_hold(scores, covered=18, mean_error=0.003, max_error=0.005, median_half=0.01)


@pytest.mark.parametrize("sampler", ["pka", "sieve"])
def test_audited_representative_plans_hold_the_full_run(sampler):
    """An audit of 16 beside PKA and Sieve: every recorded interval holds the full run (measured
    10 of 10 each, around errors of +2.0 to +3.2% and −0.4%). Recorded with the audit drawn in
    proportion to the cost column (``audit_by=cost``, the samplers' previous versions)."""
    scores = _scores(sampler, range(10), audit=16, audit_by="cost")
    assert sum(c for _, c, _ in scores) >= 9


def test_photons_audit_misses_where_its_draws_see_little_of_the_error():
    """Photon's projection is 5.4% high on every seed, and its audit of 16 covers 8 of the 10
    recorded runs (0.86 of 100 plans on the full run's own cycles): the two misses are plans whose
    draws saw a small part of the error and reported ±4.3% and ±4.4%. Pinned as measured, so
    that a change losing more fails (docs/results/held-out-workloads.md says why it misses). These
    are the runs of the audit drawn in proportion to the cost column (``audit_by=cost``); the
    default now follows the cycles (the next test)."""
    scores = _scores("photon", range(10), audit=16, audit_by="cost")
    errors = np.array([e for e, _, _ in scores])
    assert np.all((errors > 0.05) & (errors < 0.06))
    assert sum(c for _, c, _ in scores) >= 8
    assert all(h < 0.05 for _, c, h in scores if not c)  # a miss is a narrow interval, not a wide one off centre


def test_photons_audit_that_follows_the_cycles_holds_the_full_run():
    """With the audit's draws following the cycles (the default, ``audit_by=cycles``), the four
    latency-bound expert GEMMs hold their share of the probability: the recorded runs of seeds 0-9
    (``runs-cycles``) cover 10 of 10, at ±10 to ±14% around +5.4% (0.86 → 1.00 of 100 plans on the
    full run's own cycles)."""
    scores = _scores("photon", range(10), runs="runs-cycles", audit=16)
    assert sum(c for _, c, _ in scores) >= 9
    assert all(0.05 < e < 0.06 for e, _, _ in scores)
