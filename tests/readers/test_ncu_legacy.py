"""Metric names of early Nsight Compute releases are also available under their current names."""

from __future__ import annotations

import numpy as np

from simsample.manager import get_host
from simsample.plugins.readers.ncu import add_legacy_aliases
from simsample.reading import load_workload
from tests.helpers import shared_path


def test_aliases_added_only_where_the_current_name_is_absent():
    one, two = np.array([1.0]), np.array([2.0])
    metrics = {
        "smsp__inst_executed_sum": one,
        "smsp__thread_inst_executed_per_inst_executed": two,
        "launch__grid_size": one,
        "sm__cycles_elapsed_avg": one,
        "sm__cycles_elapsed.avg": two,  # current name present: kept as it is
    }
    added = add_legacy_aliases(metrics)
    assert added == {
        "smsp__inst_executed.sum": "smsp__inst_executed_sum",
        "smsp__thread_inst_executed_per_inst_executed.ratio": "smsp__thread_inst_executed_per_inst_executed",
    }
    assert metrics["smsp__inst_executed.sum"] is one
    assert metrics["sm__cycles_elapsed.avg"] is two
    assert "launch__grid_size" in metrics and "launch__grid.size" not in metrics


def test_real_legacy_file_feeds_sieve_without_renaming():
    path = shared_path("profiles", "ncu", "microgpusim", "nsight_vectoradd_100_32_metrics_all.csv")
    wl = load_workload([path])
    assert wl.kernels["smsp__inst_executed.sum"].equals(wl.kernels["smsp__inst_executed_sum"])
    assert wl.meta["legacy_metric_names"]["smsp__inst_executed.sum"] == "smsp__inst_executed_sum"
    sieve = get_host().sampler("sieve")
    params = sieve.resolve_params({})
    sieve.check_workload(wl, params)
    plan = sieve.plan(wl, params, 0)
    assert plan.prediction["sampled_launches"] >= 1
