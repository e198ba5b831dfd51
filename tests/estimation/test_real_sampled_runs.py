"""The defaults against real sampled Accel-Sim runs: margin's plan on trace features, ``apply``'s
reuse warm-up (functional), the sampled list simulated, and the estimate scored against the full
run of the same traces (fixtures in tests/fixtures/accelsim_sampled_runs, README there).

The full-run tests (test_held_out_workloads.py) score plans on the full run's cycles of the sampled
launches; these score what a user gets: cycles simulated after a functional warm-up, which differ
from the full run's. Each plan is made again here, so a change that makes margin draw other
launches fails first (the recorded runs would no longer be the plan's), and a change to the
estimator that loses coverage on real runs fails second.

The runs were made with margin version 6, whose second draws and spread draw followed the design
metric alone: its plans are made again with ``donors_by=design``. Version 7's own real runs are
in the held-out workloads' tests (moe, graph, solver, short kernels).
"""

from __future__ import annotations

import numpy as np
import pytest

import simsample
from tests.helpers import ROOT, score_sampled_run

WORKLOADS = ROOT / "tests" / "fixtures" / "accelsim_workloads"
RUNS = ROOT / "tests" / "fixtures" / "accelsim_sampled_runs"
SEEDS = range(20)


def _truth(name: str) -> float:
    full = simsample.collect(WORKLOADS / f"{name}-full.out.gz", sim="accelsim")
    return float(full["cycles"].sum())


def _scores(name: str) -> list[tuple[float, bool, float]]:
    """(error, covered, relative half-width) of the estimate of each recorded run (of margin
    version 6's plans: ``donors_by=design``)."""
    wl = simsample.read(WORKLOADS / f"{name}-features.parquet")
    truth = _truth(name)
    out = []
    for seed in SEEDS:
        plan = simsample.plan(wl, seed=seed, donors_by="design")
        out.append(score_sampled_run(plan, RUNS / name / f"seed-{seed:02d}.out.gz", truth))
    return out


@pytest.mark.parametrize("name", ["hetero", "chains", "training", "decoder"])
def test_real_sampled_runs_of_the_defaults_are_covered(name: str) -> None:
    scores = _scores(name)
    errors = np.abs([e for e, _, _ in scores])
    covered = sum(c for _, c, _ in scores)
    # measured: 20 of 20 on each workload, mean |error| 0.07-0.18%, largest 0.43%
    assert covered >= 18, f"{name}: {covered} of 20 intervals cover the full run"
    assert errors.mean() < 0.005 and errors.max() < 0.01
    # intervals that mean something: no wider than the plan's 5% bound, never zero-width
    half = np.array([h for _, _, h in scores])
    assert np.median(half) < 0.05 and half.min() > 0
