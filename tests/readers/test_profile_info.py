"""`simsample profile info` on timed and untimed workloads."""

from __future__ import annotations

import json

from simsample.cli import run
from simsample.workload import from_records


def test_untimed_workload_is_ranked_by_launches(tmp_path, capsys):
    wl = from_records(
        {
            "kernel_id": [1, 2, 3],
            "name": ["a", "b", "a"],
            "grid_x": [1, 2, 1],
            "block_x": [32, 32, 32],
            "duration_ns": [None] * 3,
        }
    )
    wl.to_parquet(tmp_path / "w.parquet")
    assert run(["profile", "info", str(tmp_path / "w.parquet"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["metric"] == "launches" and doc["total_time_ns"] is None
    assert [(k["name"], k["launches"]) for k in doc["top_kernels"]] == [("a", 2), ("b", 1)]


def test_timed_workload_summary(tmp_path, capsys):
    wl = from_records(
        {"name": ["a", "b", "a"], "grid_x": [1, 2, 1], "block_x": [32, 32, 32], "duration_ns": [10, 50, 30]}
    )
    wl.to_parquet(tmp_path / "w.parquet")
    assert run(["profile", "info", str(tmp_path / "w.parquet"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["launches"] == 3 and doc["total_time_ns"] == 90 and doc["distinct_kernels"] == 2
    top = doc["top_kernels"][0]
    assert top["name"] == "b" and top["share"] == 50 / 90
    assert doc["top_kernels"][1]["cov"] == 0.5  # a: 10 and 30 → mean 20, std 10
