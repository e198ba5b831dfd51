"""``simsample evaluate`` and its engine: scores, coverage, suites, sweeps, cross-hardware."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from simsample.cli import run
from simsample.errors import UserError
from simsample.manager import get_host
from simsample.reading import discover_profiles
from simsample.sampling.estimate import estimate_total
from simsample.sampling.evaluate import (
    evaluate_workload,
    harmonic_mean,
    score_plan,
    suite_summary,
    sweep_points,
)
from simsample.workload import from_records


def synthetic(seed=0, n=3000, scale=1.0, names=("k1(int)", "k2(int)", "k3(int)")):
    rng = np.random.default_rng(seed)
    name = rng.choice(list(names), n)
    dur = (rng.lognormal(8, 0.6, n) * scale).round()
    return from_records(
        {"name": name, "grid_x": np.ones(n, int), "block_x": np.full(n, 32), "duration_ns": dur}, source=f"syn{seed}"
    )


def test_scores_by_hand():
    wl = synthetic()
    s = get_host().sampler("stem")
    plan = s.plan(wl, s.resolve_params({}), 0)
    x = wl.values()
    ids = wl.kernels["kernel_id"].to_numpy()
    score = score_plan(plan, x, ids)
    launches = plan.samples["launch"].to_numpy()
    est = float((plan.samples["weight"].to_numpy() * x[launches]).sum())
    assert score.estimate == pytest.approx(est)
    assert score.error == pytest.approx(abs(est - x.sum()) / x.sum())
    assert score.speedup == pytest.approx(x.sum() / x[np.unique(launches)].sum())
    assert score.sampled_launches == np.unique(launches).size
    e = estimate_total(plan, pd.Series(x, index=ids))
    assert score.covered == (e.ci_low <= x.sum() <= e.ci_high)


def test_coverage_counts_the_repeats_whose_interval_holds_the_truth():
    wl = synthetic(1)
    s = get_host().sampler("random")
    params = s.resolve_params({"rate": 0.02})
    res = evaluate_workload(wl, s, params, 40)
    x = pd.Series(wl.values(), index=wl.kernels["kernel_id"].to_numpy())
    expected = []
    for seed in range(40):
        e = estimate_total(s.plan(wl, params, seed), x)
        expected.append(e.ci_low <= x.sum() <= e.ci_high)
    assert res.coverage == pytest.approx(np.mean(expected))
    assert 0 < res.coverage < 1 or res.coverage == np.mean(expected)
    assert [sc.seed for sc in res.scores] == list(range(40))


def test_later_seeds_score_the_plans_of_those_seeds():
    """``first_seed``: the plans of seeds 5..7, each scored as the run from seed 0 scores it."""
    wl = synthetic(1)
    s = get_host().sampler("random")
    params = s.resolve_params({"rate": 0.02})
    later = evaluate_workload(wl, s, params, 3, first_seed=5)
    whole = evaluate_workload(wl, s, params, 8)
    assert [sc.seed for sc in later.scores] == [5, 6, 7]
    assert later.scores == whole.scores[5:]


def test_representative_plans_have_no_coverage(tmp_path):
    wl = synthetic(2, n=50)
    (tmp_path / "s.csv").write_text("kernel_id,weight\n0,25\n1,25\n")
    s = get_host().sampler("explicit")
    res = evaluate_workload(wl, s, s.resolve_params({"file": str(tmp_path / "s.csv")}), 2)
    assert res.coverage is None and res.to_json()["coverage"] is None
    assert suite_summary([res])["coverage"] is None


def test_means():
    assert harmonic_mean([2.0, 4.0, 4.0]) == pytest.approx(3.0)
    assert harmonic_mean([2.0, None]) is None
    assert sweep_points(["eps=0.03,0.05", "replace=true,false"]) == [
        {"eps": "0.03", "replace": "true"},
        {"eps": "0.03", "replace": "false"},
        {"eps": "0.05", "replace": "true"},
        {"eps": "0.05", "replace": "false"},
    ]
    with pytest.raises(UserError):
        sweep_points(["eps"])


def write(tmp_path, name, wl):
    path = tmp_path / name
    wl.to_parquet(path)
    return path


def test_cli_json_has_exactly_the_documented_keys(tmp_path, capsys):
    a = write(tmp_path, "a.parquet", synthetic(3))
    b = write(tmp_path, "b.parquet", synthetic(4))
    assert run(["evaluate", str(a), str(b), "--sampler", "stem", "--repeat", "3", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert set(doc) == {"workloads", "suite"}
    assert len(doc["workloads"]) == 2
    for w in doc["workloads"]:
        assert set(w) == {
            "name",
            "launches",
            "sampler",
            "params",
            "error_mean_pct",
            "error_max_pct",
            "speedup_hmean",
            "sampled_launches_mean",
            "coverage",
            "half_width_median_pct",
            "refused",
            "fingerprint",
        }
        assert w["sampler"] == "stem" and w["launches"] == 3000 and w["params"]["eps"] == 0.05
        assert 0 <= w["coverage"] <= 1 and w["error_max_pct"] >= w["error_mean_pct"]
    assert set(doc["suite"]) == {"error_mean_pct", "speedup_hmean", "coverage", "half_width_median_pct"}
    assert doc["suite"]["error_mean_pct"] == pytest.approx(np.mean([w["error_mean_pct"] for w in doc["workloads"]]))
    assert doc["suite"]["speedup_hmean"] == pytest.approx(harmonic_mean([w["speedup_hmean"] for w in doc["workloads"]]))


def test_cli_sweep_and_table(tmp_path, capsys):
    a = write(tmp_path, "a.parquet", synthetic(5))
    assert run(["evaluate", str(a), "--sampler", "root", "--repeat", "2", "--sweep", "eps=0.05,0.25", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [w["params"]["eps"] for w in doc["workloads"]] == [0.05, 0.25]
    assert [s["params"] for s in doc["suite"]] == [{"eps": 0.05}, {"eps": 0.25}]
    assert doc["workloads"][1]["sampled_launches_mean"] <= doc["workloads"][0]["sampled_launches_mean"]
    assert run(["evaluate", str(a), "--sampler", "allegro", "--repeat", "2"]) == 0
    out = capsys.readouterr().out
    assert "allegro" in out and "suite" in out and "coverage" in out


def test_cli_folder_of_profiles(tmp_path, capsys):
    (tmp_path / "suite" / "sub").mkdir(parents=True)
    write(tmp_path / "suite", "a.parquet", synthetic(6))
    write(tmp_path / "suite" / "sub", "b.parquet", synthetic(7, n=500))
    (tmp_path / "suite" / "NOTES.md").write_text("not a profile\n")
    (tmp_path / "suite" / "broken.parquet").write_bytes(b"PAR1 but not really")
    found = discover_profiles([tmp_path / "suite"])
    assert [(p.name, in_folder) for p, in_folder in found] == [
        ("a.parquet", True),
        ("broken.parquet", True),
        ("b.parquet", True),
    ]
    assert (
        run(
            [
                "evaluate",
                str(tmp_path / "suite"),
                "--sampler",
                "random",
                "--repeat",
                "2",
                "--min-launches",
                "1000",
                "--json",
            ]
        )
        == 0
    )
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert [w["launches"] for w in doc["workloads"]] == [3000]
    assert captured.err.count("\n") == 1 and "skipped 3 input(s)" in captured.err  # one summary line
    assert (
        run(
            [
                "evaluate",
                str(tmp_path / "suite"),
                "--sampler",
                "random",
                "--repeat",
                "2",
                "--min-launches",
                "1000",
                "--verbose",
            ]
        )
        == 0
    )
    captured = capsys.readouterr()
    assert "skipped" in captured.err and "b.parquet: 500 launches" in captured.err
    assert "broken.parquet" in captured.err  # detected by its first bytes, unreadable: skipped
    assert "NOTES.md: not a format any reader recognises" in captured.err
    # named on the command line, the same file is an error
    assert run(["evaluate", str(tmp_path / "suite" / "broken.parquet"), "--sampler", "random"]) == 1


def test_cli_against_same_sequence_scores_other_times(tmp_path, capsys):
    a = write(tmp_path, "a.parquet", synthetic(8))
    b_wl = synthetic(8, scale=1.0)
    b_wl.kernels["duration_ns"] = (b_wl.kernels["duration_ns"] * 0.5).astype("int64")  # "faster GPU"
    b = write(tmp_path, "b.parquet", b_wl)
    assert run(["evaluate", str(a), "--sampler", "stem", "--repeat", "2", "--against", str(b), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["workloads"][0]["error_mean_pct"] < 5


def test_cli_against_refuses_another_launch_sequence(tmp_path, capsys):
    a = write(tmp_path, "a.parquet", synthetic(9))
    b = write(tmp_path, "b.parquet", synthetic(10))  # other kernel order
    assert run(["evaluate", str(a), "--sampler", "stem", "--repeat", "1", "--against", str(b)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1
    assert "is not the launch sequence of" in err


def test_cli_errors_are_one_line(tmp_path, capsys):
    a = write(tmp_path, "a.parquet", synthetic(11))
    assert run(["evaluate", str(a), "--sampler", "stem", "--param", "eps=lots"]) == 1
    assert run(["evaluate", str(tmp_path / "missing.parquet"), "--sampler", "stem"]) == 1
    assert run(["evaluate", str(a), "--sampler", "nosuch"]) == 1
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run(["evaluate", str(empty), "--sampler", "stem"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 4 and all(line.startswith("error: ") for line in err)
