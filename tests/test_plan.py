"""Plan format: schema, canonical bytes, versions, fingerprints."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simsample.errors import PlanMismatchError, UserError
from simsample.manager import get_host
from simsample.plan import PLAN_FORMAT_MINOR, PLAN_FORMAT_VERSION, Plan, plan_schema
from simsample.workload import from_records


def _workload(n=200, seed=0):
    rng = np.random.default_rng(seed)
    return from_records(
        {
            "name": rng.choice(["a", "b", "c"], n),
            "grid_x": rng.integers(1, 5, n),
            "block_x": np.full(n, 128),
            "duration_ns": rng.integers(0, 1000, n),
        },
        source="synthetic",
    )


def _plan(seed=0, **params):
    s = get_host().sampler("random")
    wl = _workload()
    return wl, s.plan(wl, s.resolve_params({"rate": "0.1", **params}), seed)


def test_write_read_write_is_byte_identical(tmp_path):
    _, plan = _plan()
    plan.write(tmp_path / "a.json")
    Plan.read(tmp_path / "a.json").write(tmp_path / "b.json")
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()


def test_same_seed_same_bytes_other_seed_other_plan(tmp_path):
    _plan(seed=3)[1].write(tmp_path / "a.json")
    _plan(seed=3)[1].write(tmp_path / "b.json")
    _plan(seed=4)[1].write(tmp_path / "c.json")
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert (tmp_path / "a.json").read_bytes() != (tmp_path / "c.json").read_bytes()


def test_plan_records_what_the_schema_requires(tmp_path):
    wl, plan = _plan()
    doc = plan.to_json()
    assert doc["simsample_plan"] == PLAN_FORMAT_VERSION
    assert doc["workload"]["fingerprint"] == wl.fingerprint
    assert doc["sampler"] == {"name": "random", "version": "1", "params": {"rate": 0.1, "count": None, "speedup": None, "replace": False, "metric": "auto"}, "seed": 0}
    assert set(doc["samples"][0]) == {"kernel_id", "launch", "weight", "cluster", "x"}
    assert doc["simsample_plan_minor"] == PLAN_FORMAT_MINOR
    design = wl.values(doc["workload"]["metric"])
    assert [s["x"] for s in doc["samples"]] == [float(design[s["launch"]]) for s in doc["samples"]]
    assert doc["prediction"]["sampled_launches"] == 20
    assert plan_schema()["properties"]["simsample_plan"]["type"] == "integer"


def test_newer_plan_version_is_refused(tmp_path):
    _, plan = _plan()
    doc = plan.to_json()
    doc["simsample_plan"] = PLAN_FORMAT_VERSION + 1
    (tmp_path / "p.json").write_text(json.dumps(doc))
    with pytest.raises(UserError, match="newer than this simsample reads"):
        Plan.read(tmp_path / "p.json")


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d["samples"][0].update(weight=-1), "samples/0/weight"),
        (lambda d: d.pop("clusters"), "clusters"),
        (lambda d: d["samples"][0].update(cluster=99), "unknown cluster 99"),
        (lambda d: d["workload"].update(fingerprint="xyz"), "fingerprint"),
    ],
)
def test_invalid_plans_are_refused_with_location(tmp_path, mutate, message):
    _, plan = _plan()
    doc = plan.to_json()
    mutate(doc)
    (tmp_path / "p.json").write_text(json.dumps(doc))
    with pytest.raises(UserError, match=message):
        Plan.read(tmp_path / "p.json")


def test_not_json_and_directory(tmp_path):
    (tmp_path / "p.json").write_text("{ not json")
    with pytest.raises(UserError, match="not valid JSON"):
        Plan.read(tmp_path / "p.json")
    with pytest.raises(UserError, match="is a directory"):
        Plan.read(tmp_path)


def test_fingerprint_mismatch():
    _, plan = _plan()
    other = _workload(seed=9)
    with pytest.raises(PlanMismatchError, match="make a plan for these inputs"):
        plan.check_workload(other)


def test_failed_write_leaves_nothing(tmp_path):
    _, plan = _plan()
    plan.samples.loc[0, "weight"] = float("nan")  # not valid JSON number → schema rejects
    with pytest.raises(UserError):
        plan.write(tmp_path / "p.json")
    assert list(tmp_path.iterdir()) == []


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(min_value=1e-6, max_value=1e12, allow_nan=False), min_size=1, max_size=20))
def test_weights_round_trip_exactly(tmp_path_factory, weights):
    tmp = tmp_path_factory.mktemp("rt")
    wl, plan = _plan()
    n = min(len(weights), len(plan.samples))
    plan.samples = plan.samples.iloc[:n].copy()
    plan.samples["weight"] = weights[:n]
    plan.write(tmp / "a.json")
    back = Plan.read(tmp / "a.json")
    assert list(back.samples["weight"]) == list(weights[:n])
    back.write(tmp / "b.json")
    assert (tmp / "a.json").read_bytes() == (tmp / "b.json").read_bytes()


def test_written_files_have_ordinary_permissions(tmp_path):
    import os

    _, plan = _plan()
    plan.write(tmp_path / "p.json")
    umask = os.umask(0)
    os.umask(umask)
    assert (tmp_path / "p.json").stat().st_mode & 0o777 == 0o666 & ~umask


def test_a_format_1_0_plan_without_design_values_still_reads_and_estimates(tmp_path):
    from simsample.estimate import estimate_total

    wl, plan = _plan()
    doc = plan.to_json()
    del doc["simsample_plan_minor"]
    for s in doc["samples"]:
        del s["x"]
    (tmp_path / "old.json").write_text(json.dumps(doc))
    old = Plan.read(tmp_path / "old.json")
    assert "x" not in old.samples.columns
    values = pd.Series(wl.values(doc["workload"]["metric"]), index=wl.kernels["kernel_id"].to_numpy())
    e = estimate_total(old, values)
    assert e.estimate == pytest.approx(estimate_total(plan, values).estimate)
    assert e.std_error is not None and e.std_error > 0
