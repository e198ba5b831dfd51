"""Metric declarations: what the estimate does with each column of a results table."""

from __future__ import annotations

import importlib
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simsample
from simsample.errors import UserTypeError, UserValueError
from simsample.sampling.metrics import (
    Metric,
    check_declarations,
    count,
    estimable,
    infer_metrics,
    looks_like_id,
    not_estimable,
    ratio,
)
from tests.helpers import ROOT

PROFILE = ROOT / "examples" / "profile" / "train_step.pt.trace.json.gz"


@pytest.fixture(scope="module")
def plan():
    return simsample.plan(simsample.read(PROFILE), "random", rate=0.05, seed=3)


def test_declarations_are_checked():
    with pytest.raises(UserValueError, match="kind 'sum'"):
        Metric("cycles", "sum")
    with pytest.raises(UserValueError, match="numerator and a denominator"):
        Metric("ipc", "ratio", numerator="instructions")
    with pytest.raises(UserValueError, match="only a ratio"):
        Metric("cycles", "count", numerator="x")
    with pytest.raises(UserTypeError):
        Metric("")
    with pytest.raises(UserValueError, match="declared twice"):
        check_declarations([count("cycles"), count("cycles")])
    with pytest.raises(UserValueError, match="names cycles, which is not a declared count"):
        check_declarations([count("instructions"), ratio("ipc", "instructions", "cycles")])
    with pytest.raises(UserTypeError, match="not a Metric"):
        check_declarations(["cycles"])
    for bad in ("cycles", count("cycles"), 3):
        with pytest.raises(UserTypeError, match="a list of Metric"):
            check_declarations(bad)
    assert repr(ratio("ipc", "instructions", "cycles")) == "<Metric ipc: ratio instructions/cycles>"


def test_a_table_without_declarations():
    df = pd.DataFrame(
        {
            "kernel_id": [1],
            "uid": [3],
            "launch": [2],
            "stream_id": [7],
            "cycles": [10.0],
            "name": ["k"],
            "ok": [True],
            "l2_hits": [4],
        }
    )
    assert [m.name for m in infer_metrics(df)] == ["cycles", "l2_hits"]
    assert all(m.kind == "count" for m in infer_metrics(df))
    for name in ("kernel_id", "uid", "launch", "stream_id", "status", "correlation_id", "kernel_index"):
        assert looks_like_id(name), name
    for name in ("cycles", "instructions", "dram_reads", "l2_hit_rate", "valid_bytes"):
        assert not looks_like_id(name), name


def test_a_count_printed_for_some_launches_only_is_left_out_with_its_ratios():
    decl = [
        count("cycles"),
        count("l1_hits"),
        count("l1_accesses"),
        ratio("l1_hit_rate", "l1_hits", "l1_accesses"),
        ratio("ipc", "instructions", "cycles"),
        count("instructions"),
        not_estimable("uid"),
        count("never"),
    ]
    df = pd.DataFrame(
        {
            "cycles": [1.0, 2.0],
            "instructions": [3.0, 4.0],
            "l1_hits": [1.0, np.nan],
            "l1_accesses": [2.0, 2.0],
            "uid": [1, 2],
            "never": [np.nan, np.nan],
        }
    )
    counts, ratios, left_out = estimable(df, check_declarations(decl))
    assert counts == ["cycles", "l1_accesses", "instructions"]
    assert ratios == {"ipc": ("instructions", "cycles")}
    assert left_out == ["l1_hits", "l1_hit_rate"]  # 'never' (no value at all) is dropped without a word


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.floats(0.01, 3.0), st.floats(0.01, 3.0))
def test_a_declared_ratio_is_the_ratio_of_the_estimated_totals(plan, seed, spread_insn, spread_cycles):
    ids = plan.sampled_ids
    rng = np.random.default_rng(seed)
    insn = rng.lognormal(10, spread_insn, len(ids))
    cyc = rng.lognormal(9, spread_cycles, len(ids))
    df = pd.DataFrame(
        {"kernel_id": ids, "instructions": insn, "cycles": cyc, "ipc": insn / cyc, "uid": range(len(ids))}
    )
    decl = [count("cycles"), count("instructions"), ratio("ipc", "instructions", "cycles"), not_estimable("uid")]
    est = simsample.estimate(plan, df, metrics=decl, confidence=0.9).to_dataframe()
    assert est.loc["ipc", "kind"] == "ratio" and "uid" not in est.index
    assert est.loc["ipc", "estimate"] == pytest.approx(
        est.loc["instructions", "estimate"] / est.loc["cycles", "estimate"], rel=1e-9
    )
    assert est.loc["ipc", "ci_low"] <= est.loc["ipc", "estimate"] <= est.loc["ipc", "ci_high"]


def test_the_old_plugin_module_name_still_imports_with_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import simsample.api

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mod = importlib.reload(simsample.api)
    assert any(issubclass(w.category, DeprecationWarning) and "simsample.sdk" in str(w.message) for w in caught)
    from simsample.plugin_base import Adapter

    assert mod.Adapter is Adapter


def test_what_is_left_out_is_said(plan):
    ids = plan.sampled_ids
    df = pd.DataFrame({"kernel_id": ids, "cycles": 1.0, "hits": [np.nan] + [1.0] * (len(ids) - 1), "accesses": 2.0})
    decl = [count("cycles"), count("hits"), count("accesses"), ratio("hit_rate", "hits", "accesses")]
    est = simsample.estimate(plan, df, metrics=decl, confidence=0.9)
    assert [e.metric for e in est.estimates] == ["cycles", "accesses"]
    assert est.left_out == ["hits", "hit_rate"] and est.to_json()["left_out"] == ["hits", "hit_rate"]
    assert "left_out" not in simsample.estimate(plan, df[["kernel_id", "cycles"]].copy(), confidence=0.9).to_json()
