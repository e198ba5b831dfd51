"""The first samplers: random and explicit, and the profile → plan → estimate path."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from simsample.cli import run
from simsample.errors import UserError
from simsample.manager import get_host
from simsample.planfile import Plan
from simsample.sampling.estimate import estimate_total
from simsample.workload import from_records


@pytest.fixture
def wl():
    rng = np.random.default_rng(5)
    n = 500
    return from_records(
        {
            "name": rng.choice(["a", "b"], n),
            "grid_x": np.full(n, 2),
            "block_x": np.full(n, 64),
            "duration_ns": rng.integers(50, 150, n),
        },
        source="syn",
    )


def plan_with(wl, name, **params):
    s = get_host().sampler(name)
    return s.plan(wl, s.resolve_params(params), 0)


def test_random_by_rate_without_replacement(wl):
    p = plan_with(wl, "random", rate=0.1)
    assert len(p.samples) == 50 and p.samples["kernel_id"].is_unique
    assert np.allclose(p.samples["weight"], 10.0)
    assert p.clusters[0].size == 500 and p.clusters[0].draws == 50


def test_random_by_count_with_replacement_may_repeat(wl):
    p = plan_with(wl, "random", count=400, replace=True)
    assert len(p.samples) == 400
    assert p.samples["kernel_id"].nunique() < 400  # birthday: repeats are certain here
    assert p.estimator["replace"] is True
    assert p.prediction["sampled_launches"] == p.samples["kernel_id"].nunique()


def test_random_same_speedup_mode(wl):
    p = plan_with(wl, "random", speedup=20.0)
    values = wl.values()
    sampled = values[p.samples["launch"].to_numpy()].sum()
    assert sampled >= values.sum() / 20
    assert sampled - values[p.samples["launch"].to_numpy()[-1]] < values.sum() / 20 or len(p.samples) == 1


def test_random_estimate_is_unbiased_over_seeds(wl):
    s = get_host().sampler("random")
    truth = wl.values().sum()
    values = pd.Series(wl.values(), index=wl.kernels["kernel_id"].to_numpy())
    ests, covered = [], 0
    for seed in range(200):
        p = s.plan(wl, s.resolve_params({"rate": 0.05}), seed)
        e = estimate_total(p, values)
        ests.append(e.estimate)
        covered += e.ci_low <= truth <= e.ci_high
    assert abs(np.mean(ests) - truth) / truth < 0.01
    assert covered / 200 >= 0.88


def test_random_param_errors(wl):
    s = get_host().sampler("random")
    with pytest.raises(UserError, match="no parameter frobnicate"):
        s.resolve_params({"frobnicate": "1"})
    with pytest.raises(UserError, match="not a valid float"):
        s.resolve_params({"rate": "lots"})
    with pytest.raises(UserError, match="above the maximum"):
        s.resolve_params({"rate": "2"})


def test_explicit_csv(wl, tmp_path):
    (tmp_path / "s.csv").write_text("kernel_id,weight,cluster\n3,250,a\n7,250,b\n")
    p = plan_with(wl, "explicit", file=str(tmp_path / "s.csv"))
    assert p.sampled_ids == [3, 7]
    assert p.estimator["kind"] == "representative"
    assert "note" not in p.prediction


def test_explicit_reports_weights_that_do_not_sum(wl, tmp_path):
    (tmp_path / "s.csv").write_text("kernel_id,weight\n3,10\n")
    p = plan_with(wl, "explicit", file=str(tmp_path / "s.csv"))
    assert "weights sum to 10" in p.prediction["note"]


def test_explicit_refuses_unknown_ids(wl, tmp_path):
    (tmp_path / "s.json").write_text(json.dumps([{"kernel_id": 3, "weight": 1}, {"kernel_id": 9999, "weight": 1}]))
    with pytest.raises(UserError, match="not in syn: 9999"):
        plan_with(wl, "explicit", file=str(tmp_path / "s.json"))


def test_explicit_with_members_gives_an_interval(wl, tmp_path):
    ids = wl.kernels["kernel_id"].to_numpy()
    doc = {
        "weights": {"0": 250, "250": 250},
        "representatives": [
            {"id": 0, "cluster": "first half", "represents": [int(i) for i in ids[:250]]},
            {"id": 250, "cluster": "second half", "represents": [int(i) for i in ids[250:]]},
        ],
    }
    (tmp_path / "s.json").write_text(json.dumps(doc))
    p = plan_with(wl, "explicit", file=str(tmp_path / "s.json"))
    assert p.estimator["kind"] == "stratified"
    e = estimate_total(p, pd.Series(wl.values(), index=ids))
    assert e.estimate == 250 * wl.values()[0] + 250 * wl.values()[250]
    assert e.ci_low < e.estimate < e.ci_high


def test_cli_profile_plan_estimate(wl, tmp_path, capsys):
    wl.to_parquet(tmp_path / "w.parquet")
    assert (
        run(
            [
                "plan",
                str(tmp_path / "w.parquet"),
                "--sampler",
                "random",
                "--param",
                "rate=0.2",
                "--seed",
                "1",
                "-o",
                str(tmp_path / "p.json"),
            ]
        )
        == 0
    )
    plan = Plan.read(tmp_path / "p.json")
    vals = pd.DataFrame({"kernel_id": plan.sampled_ids, "cycles": [1000.0] * len(plan.sampled_ids)})
    vals.to_csv(tmp_path / "v.csv", index=False)
    capsys.readouterr()
    assert run(["estimate", "--plan", str(tmp_path / "p.json"), str(tmp_path / "v.csv"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    est = doc["estimates"][0]
    assert est["metric"] == "cycles" and est["estimate"] == pytest.approx(500 * 1000.0)
    # constant simulated values, but the design metric (durations) varies in the cluster: its
    # spread, scaled by the sample's ratio of cycles to durations, is the floor of the variance
    c = plan.clusters[0]
    n, m = c.size, len(plan.sampled_ids)
    scale = 1000.0 * c.stats["mean"] / plan.samples["x"].mean()
    floor = n * n * (1 - m / n) * (c.stats["cov"] * scale) ** 2 * n / (n - 1) / m
    assert est["std_error"] == pytest.approx(floor**0.5)


def test_cli_estimate_missing_values(wl, tmp_path, capsys):
    wl.to_parquet(tmp_path / "w.parquet")
    run(["plan", str(tmp_path / "w.parquet"), "--sampler", "random", "-o", str(tmp_path / "p.json")])
    (tmp_path / "v.csv").write_text("kernel_id,value\n0,1\n")
    capsys.readouterr()
    assert run(["estimate", "--plan", str(tmp_path / "p.json"), str(tmp_path / "v.csv")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: value: no value for") and err.count("\n") == 1


def test_cli_reports_weights_that_do_not_sum(wl, tmp_path, capsys):
    wl.to_parquet(tmp_path / "w.parquet")
    (tmp_path / "s.csv").write_text("kernel_id,weight\n3,10\n")
    assert (
        run(
            [
                "plan",
                str(tmp_path / "w.parquet"),
                "--sampler",
                "explicit",
                "--param",
                f"file={tmp_path / 's.csv'}",
                "-o",
                str(tmp_path / "p.json"),
            ]
        )
        == 0
    )
    assert "note: weights sum to 10, not to the 500 launches" in capsys.readouterr().err


def test_explicit_reads_samples_from_a_pipe(wl, tmp_path):
    import os
    import threading

    fifo = tmp_path / "samples.csv"
    os.mkfifo(fifo)

    def feed():
        with open(fifo, "w") as fh:
            fh.write("kernel_id,weight\n3,500\n")

    t = threading.Thread(target=feed)
    t.start()
    p = plan_with(wl, "explicit", file=str(fifo))
    t.join()
    assert p.sampled_ids == [3] and p.samples["weight"].tolist() == [500.0]


def test_random_same_speedup_mode_with_replacement(wl):
    p = plan_with(wl, "random", speedup=20.0, replace=True)
    values = wl.values()
    drawn = values[p.samples["launch"].to_numpy()]
    assert drawn.sum() >= values.sum() / 20  # reached the target (repeats counted) ...
    assert drawn.sum() - drawn.max() < values.sum() / 20  # ... and stopped right after it
    assert np.allclose(p.samples["weight"], len(wl) / len(p.samples))


def test_random_same_speedup_mode_on_all_zero_values():
    zero = from_records({"name": ["a"] * 50, "grid_x": [1] * 50, "block_x": [32] * 50, "duration_ns": [0] * 50})
    p = plan_with(zero, "random", speedup=10.0, replace=True)
    assert len(p.samples) == 1
