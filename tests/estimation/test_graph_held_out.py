"""A second workload written after every default was chosen: breadth-first searches and PageRank
on one graph (``benchmarks/graph_workload.py``; fixtures in tests/fixtures/accelsim_graph,
README there), simulated in a real Accel-Sim in full and sampled.

The defaults (margin) were not changed for it. It found that the audit of the representative
samplers, drawn in proportion to warp instructions, misses where latency-bound launches of few
instructions carry the cycles; the audit now follows the cycles (``audit_by=cycles``), so for
the audit this workload is where the change was found, not a held-out check. The tests pin what
was measured.
"""

from __future__ import annotations

import pytest

from tests.helpers import (
    ROOT,
    assert_runs_hold,
    design_scores,
    full_run_design,
    recorded_runs_scores,
)

FIXTURES = ROOT / "tests" / "fixtures" / "accelsim_graph"


def _scores(sampler: str, seeds: range, **params) -> list[tuple[float, bool, float]]:
    """(error, covered, relative half-width) of each recorded run of ``sampler``."""
    return recorded_runs_scores(FIXTURES, "graph", sampler, seeds, **params)


def test_the_defaults_hold_the_full_run():
    """Margin version 6 (``donors_by=design``) on ``profile features``, ``apply``'s reuse warm-up
    (functional): measured 20 of 20 covering, mean |error| 0.37%, largest 1.02%, at ±2.9 to ±4.9%
    (one cluster of single-CTA searches drawn once decides the width: its warp instructions are
    26% apart, the features' model of its cycles, which counts their launch latency, 17%; it
    was ±4.4 to ±7.5% with the instructions' spread)."""
    scores = _scores("margin", range(20), donors_by="design")
    assert_runs_hold(scores, covered=18, mean_error=0.006, max_error=0.015, median_half=0.04)


def _design_coverage(sampler: str, audit_by: str) -> int:
    """Plans of seeds 0-19 with an audit of 16 whose 95% interval holds the full run's cycles
    (scored on the full run's own values of the sampled launches, as ``evaluate --truth`` does)."""
    scores = design_scores(full_run_design(FIXTURES, "graph"), sampler, audit=16, audit_by=audit_by)
    return sum(bool(s.covered) for s in scores)


@pytest.mark.parametrize("sampler", ["pka", "sieve", "photon"])
def test_an_audit_that_follows_the_cycles_holds_the_full_run(sampler):
    """Measured 20, 19 and 20 of 20 (PKA, Sieve, Photon; 100, 97 and 100 of 100 on seeds 20-119)."""
    assert _design_coverage(sampler, "cycles") >= 18


@pytest.mark.parametrize("sampler", ["sieve", "photon"])
def test_an_audit_by_warp_instructions_misses_the_latency_bound_launches(sampler):
    """What the change mended, pinned so that it stays explained: drawn in proportion to warp
    instructions, sixteen one-CTA ``frontier_count`` launches hold 18% of the cycles and 2% of the
    draw probability, and the audit covered 10 and 9 of 20 plans (0.42 and 0.41 of 100)."""
    assert _design_coverage(sampler, "cost") <= 12


@pytest.mark.parametrize(("sampler", "least"), [("pka", 10), ("sieve", 9), ("photon", 9)])
def test_audited_real_sampled_runs_hold_the_full_run(sampler, least):
    """Real sampled runs of the audited plans (16 draws following the cycles), seeds 0-9:
    measured PKA 10/10 (+27.5% at ±32%), Sieve 9/10 (−3.9%; seed 6 reports ±2.04% around
    −3.69%: its walk missed the launches that carry the error) and Photon 9/10 (+2.3%; seed 4
    +2.39% against ±2.12%)."""
    scores = _scores(sampler, range(10), audit=16)
    assert sum(c for _, c, _ in scores) >= least
