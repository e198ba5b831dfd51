"""A third workload written after every default was chosen: an iterative solver's time loop of
498 launches (``benchmarks/solver_workload.py``; fixtures in tests/fixtures/accelsim_solver,
README there), simulated in a real Accel-Sim in full and sampled.

The defaults (margin) were not changed for it. It found that Allegro's groups, split on the
design metric alone, could not see the two cold relaxation steps among 200 equal ones; Allegro
splits by cache context on trace features since (``context=auto``), so for Allegro this workload
is where the change was found, not a held-out check. The tests pin what was measured.
"""

from __future__ import annotations

from tests.helpers import (
    ROOT,
    assert_runs_hold,
    design_scores,
    full_run_design,
    recorded_runs_scores,
)

FIXTURES = ROOT / "tests" / "fixtures" / "accelsim_solver"


def test_the_defaults_hold_the_full_run():
    """Margin version 6 (``donors_by=design``) on ``profile features``, ``apply``'s reuse warm-up
    (functional), seeds 0-19: measured 20 of 20 covering, mean |error| 0.07%, largest 0.18%,
    median ±0.48%, 27 of 498 launches simulated (17.2 times fewer cycles)."""
    scores = recorded_runs_scores(FIXTURES, "solver", "margin", range(20), donors_by="design")
    assert_runs_hold(scores, covered=19, mean_error=0.002, max_error=0.004, median_half=0.008)


def _allegro_coverage(context: str, seeds: range) -> int:
    """Plans whose 95% interval holds the full run's cycles, scored on the full run's own values
    of the sampled launches (as ``evaluate --truth`` does)."""
    scores = design_scores(full_run_design(FIXTURES, "solver"), "allegro", seeds, context=context)
    return sum(bool(s.covered) for s in scores)


def test_allegro_split_by_cache_context_holds_the_full_run():
    """Seeds 0-19: measured 19 of 20 (92 of 100 on seeds 20-119)."""
    assert _allegro_coverage("auto", range(20)) >= 17


def test_allegro_on_the_papers_groups_alone_misses_the_cold_steps():
    """What the change mended, pinned so that it stays explained: 200 relaxation steps of equal
    instructions in one group, two of them cold (+16% cycles); thirty draws miss both in seven
    plans of ten and the interval, from the draws alone, then misses the total: measured 11 of 20
    (47 of 100 on seeds 20-119)."""
    assert _allegro_coverage("off", range(20)) <= 14


def test_allegro_real_sampled_runs_split_by_context():
    """Real sampled runs of Allegro's plans (version 4, split by context), seeds 0-4: measured 4
    of 5 covering, every error between −0.05% and −0.01% around ±0.03 to ±0.05%; seed 4 is
    −0.052% against ±0.036%, the functional warm-up's own small offset, which no interval from
    the draws can hold at that width."""
    scores = recorded_runs_scores(FIXTURES, "solver", "allegro", range(5))
    assert sum(c for _, c, _ in scores) >= 4
    assert all(-0.001 < e < 0 for e, _, _ in scores)
