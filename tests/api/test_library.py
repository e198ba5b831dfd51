"""The public Python API (``simsample.library``, re-exported by ``simsample``): its docstring
examples run as doctests on the bundled example data, and what a notebook relies on holds."""

from __future__ import annotations

import doctest
import subprocess
import sys

import numpy as np
import pytest

import simsample
from simsample import library
from simsample.errors import UserError
from tests.helpers import ROOT

PROFILE = ROOT / "examples" / "profile" / "train_step.pt.trace.json.gz"


def test_docstring_examples_run(monkeypatch):
    """The module's examples, a notebook session profile → plan → estimate → evaluate among them."""
    monkeypatch.chdir(ROOT)  # the examples name the bundled data by its path in the repository
    result = doctest.testmod(library, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, report=True)
    assert result.attempted >= 25
    assert result.failed == 0


def test_import_simsample_stays_light():
    """``import simsample`` and naming the API import neither pandas nor the plugins."""
    code = (
        "import sys, simsample; f = simsample.read; "
        "print(','.join(m for m in ('pandas', 'scipy', 'simsample.manager') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""


def test_public_names_resolve():
    for name in simsample.__all__:
        assert getattr(simsample, name) is not None
    assert "plan" in dir(simsample)
    with pytest.raises(AttributeError):
        simsample.no_such_name  # noqa: B018


def test_plan_resolves_parameters_the_internal_call_did_not():
    """``sampler.plan(workload, {}, 0)`` needs resolved parameters (a KeyError otherwise); the API
    resolves and validates them."""
    wl = simsample.read(PROFILE)
    p = simsample.plan(wl)
    assert p.sampler["name"] == "margin"
    assert p.sampler["params"]["eps"] == 0.05
    with pytest.raises(UserError, match="no parameter epsilon"):
        simsample.plan(wl, epsilon=0.1)
    with pytest.raises(UserError, match="eps"):
        simsample.plan(wl, eps=-1)
    with pytest.raises(UserError, match="no sampler named nope"):
        simsample.plan(wl, "nope")


def test_frames_hold_what_the_objects_hold():
    wl = simsample.read(PROFILE)
    launches = wl.to_dataframe()
    assert len(launches) == len(wl)
    launches.loc[0, "duration_ns"] = -1  # a copy: the workload is untouched
    assert wl.kernels["duration_ns"].iloc[0] != -1
    p = simsample.plan(wl, "stem", seed=2)
    frame = p.to_dataframe()
    assert len(frame) == len(p.samples)
    assert set(frame["cluster_key"]) <= {c.key for c in p.clusters}
    clusters = p.clusters_dataframe()
    assert clusters["size"].sum() == len(wl)
    assert int(clusters.loc[frame["cluster"].iloc[0], "draws"]) >= 1


def test_estimate_is_the_weighted_total_with_a_half_width():
    wl = simsample.read(PROFILE)
    p = simsample.plan(wl, "random", rate=0.05, seed=4)
    launches = wl.to_dataframe().set_index("kernel_id")
    results = launches.loc[p.sampled_ids, ["duration_ns"]].reset_index()
    results["cycles"] = results["duration_ns"] * 2
    est = simsample.estimate(p, results).to_dataframe()
    want = float(
        (p.samples["weight"].to_numpy() * launches.loc[p.samples["kernel_id"], "duration_ns"].to_numpy()).sum()
    )
    assert est.loc["duration_ns", "estimate"] == pytest.approx(want)
    assert est.loc["cycles", "estimate"] == pytest.approx(2 * want)
    row = est.loc["duration_ns"]
    assert row.half_width_pct == pytest.approx(100 * (row.ci_high - row.ci_low) / 2 / row.estimate)
    with pytest.raises(UserError, match="kernel_id"):
        simsample.estimate(p, results.drop(columns="kernel_id"))


def test_evaluate_defaults_to_margin_and_reports_the_interval_width():
    ev = simsample.evaluate(PROFILE, repeats=3)
    assert ev.sampler == "margin"
    frame = ev.to_dataframe()
    assert list(frame["sampler"]) == ["margin"]
    hw = frame["half_width_median_pct"].iloc[0]
    assert hw is not None and 0 < hw < 100
    scores = ev.results[0].scores
    assert hw == pytest.approx(100 * float(np.median([s.half_width for s in scores])))
    assert ev.to_json()["suite"]["half_width_median_pct"] == pytest.approx(hw)


def test_evaluate_sweeps_and_takes_workload_objects():
    wl = simsample.read(PROFILE)
    ev = simsample.evaluate([wl], "stem", repeats=2, sweep={"eps": [0.05, 0.25]})
    suite = ev.suite_dataframe()
    assert list(suite["eps"]) == [0.05, 0.25]
    assert len(ev.to_dataframe()) == 2


def test_read_a_folder_with_one_profile_inside(tmp_path):
    deep = tmp_path / "runs" / "step1"
    deep.mkdir(parents=True)
    (deep / PROFILE.name).write_bytes(PROFILE.read_bytes())
    (tmp_path / "runs" / "notes.txt").write_text("not a profile\n")
    wl = simsample.read(tmp_path / "runs")
    assert len(wl) == len(simsample.read(PROFILE))
    found, skipped = simsample.find_workloads([tmp_path])
    assert found == [deep]  # a folder of Kineto rank files is one workload
    assert len(skipped) == 1 and "notes.txt" in skipped[0]
    (tmp_path / "runs" / "step2").mkdir()
    (tmp_path / "runs" / "step2" / PROFILE.name).write_bytes(PROFILE.read_bytes())
    with pytest.raises(UserError, match="holds 2 workloads"):
        simsample.read(tmp_path / "runs")


def test_apply_and_collect_through_the_adapter(tmp_path):
    """apply() writes the sampled trace folder the command writes; collect() reads a real
    Accel-Sim log into the table estimate() takes."""
    from simsample.cli import run
    from tests.helpers import shared_path

    traces = ROOT / "examples" / "traces"
    features = tmp_path / "features.parquet"
    assert run(["profile", "features", "--sim", "accelsim", str(traces), "-o", str(features)]) == 0
    p = simsample.plan(simsample.read(features), "root", metric="warp_insts")
    plan_path = tmp_path / "plan.json"
    p.write(plan_path)
    out = simsample.apply(plan_path, traces, tmp_path / "sampled", sim="accelsim", warmup="none")
    listed = (out / "kernelslist.g").read_text().split()
    assert sorted(x for x in listed if x.startswith("kernel-")) == sorted(
        f"kernel-{k}.traceg.xz" for k in p.sampled_ids
    )
    with pytest.raises(UserError, match="no adapter named nosim"):
        simsample.apply(plan_path, traces, tmp_path / "other", sim="nosim")

    log = shared_path("simulators", "accelsim", "hetero", "full.out.gz")
    df = simsample.collect(log, sim="accelsim")
    assert len(df) == 56 and df["cycles"].sum() == 451_827
    assert {"kernel_id", "cycles", "instructions", "status"} <= set(df.columns)
