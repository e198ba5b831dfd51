"""The hyfiss adapter: collect from real reports, apply (the run script), and an end-to-end run
against a stand-in HyFiSS that checks what the real one requires (a relative --configs path,
the 0-based --kernel_id)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from simsample.cli import run
from simsample.errors import PlanMismatchError, UserError
from simsample.plugins.samplers.random import RandomSampler
from simsample.workload import from_records
from tests.helpers import shared_path

pytest.importorskip("simsample_hyfiss")

from adapters.hyfiss.tests.test_hyfiss_app import APP, copy_app  # noqa: E402
from adapters.macsim.tests.test_macsim_reader import folder_hash  # noqa: E402
from simsample_hyfiss.apply import apply_plan, render_script  # noqa: E402
from simsample_hyfiss.collect import collect  # noqa: E402
from simsample_hyfiss.output import parse_summary  # noqa: E402
from simsample_hyfiss.reader import load_app  # noqa: E402

OUTPUTS = (*APP, "outputs")


def _plan(wl, count, seed=0):
    s = RandomSampler()
    return s.plan(wl, s.resolve_params({"count": count}), seed)


# --- collect ------------------------------------------------------------------------------------
def test_real_reports():
    s0 = parse_summary(shared_path(*OUTPUTS, "kernel-0-summary.txt"))
    assert (s0.index, s0.kernel, s0.status) == (0, 1, "ok")  # kernel-0 is app kernel 1
    assert s0.values == {"cycles": 3579, "sm_active_cycles": 3579, "execution_time_ns": 2473, "instructions": 640}
    df, _ = collect([shared_path(*OUTPUTS)])
    assert df.to_dict("list") == {
        "kernel_id": [1, 2],
        "cycles": [3579.0, 3761.0],
        "sm_active_cycles": [3579.0, 3761.0],
        "execution_time_ns": [2473.0, 2599.0],
        "instructions": [640.0, 2720.0],
        "status": ["ok", "ok"],
    }
    # the app folder itself works too (reports in outputs/)
    assert collect([shared_path(*APP)])[0]["cycles"].tolist() == [3579.0, 3761.0]


def _crashed(tmp_path: Path, how: str) -> Path:
    text = shared_path(*OUTPUTS, "kernel-1-summary.txt").read_text()
    if how == "zero":
        text = text.replace("* GPU_active_cycles: 3761", "* GPU_active_cycles: 0")
    elif how == "truncated":
        text = text[: text.index(" - Simulator Performance")]
    elif how == "nan":
        text = text.replace("* Kernel_execution_time (ns): 2599", "* Kernel_execution_time (ns): nan")
    d = tmp_path / "outputs"
    d.mkdir()
    (d / "kernel-1-summary.txt").write_text(text)
    return d


@pytest.mark.parametrize(
    "how, reason", [("zero", "GPU_active_cycles is 0"), ("truncated", "no 'Report Time' line"), ("nan", "is nan")]
)
def test_report_of_a_crashed_run(tmp_path, capsys, how, reason):
    d = _crashed(tmp_path, how)
    s = parse_summary(d / "kernel-1-summary.txt")
    assert s.status == "crashed" and reason in s.reason and s.values == {}
    before = folder_hash(d)
    capsys.readouterr()
    assert run(["collect", "--sim", "hyfiss", str(d)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: 1 of 1 kernel(s) have no usable result (kernel 2: crashed, ")
    assert "kernel-1-summary.txt is the report of a crashed run: " in err and reason in err
    assert folder_hash(d) == before


def test_estimate_refuses_a_crashed_kernel(tmp_path, capsys):
    d = _crashed(tmp_path, "zero")
    wl = load_app(shared_path(*APP)).workload
    plan = _plan(wl, 1, seed=0)
    while plan.sampled_ids != [2]:
        plan = _plan(wl, 1, seed=int(plan.sampler["seed"]) + 1)
    plan.write(tmp_path / "plan.json")
    capsys.readouterr()
    assert run(["estimate", "--sim", "hyfiss", "--plan", str(tmp_path / "plan.json"), str(d)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(
        "error: cannot estimate: 1 of 1 kernel(s) have no usable result (kernel 2: crashed, "
    )


def test_collect_and_estimate_against_a_plan(tmp_path, capsys):
    wl = load_app(shared_path(*APP)).workload
    plan = _plan(wl, 2)
    plan.write(tmp_path / "plan.json")
    capsys.readouterr()
    assert (
        run(
            [
                "collect",
                "--sim",
                "hyfiss",
                "--plan",
                str(tmp_path / "plan.json"),
                str(shared_path(*OUTPUTS)),
                "-o",
                str(tmp_path / "r.csv"),
            ]
        )
        == 0
    )
    df = pd.read_csv(tmp_path / "r.csv")
    assert df["kernel_id"].tolist() == [1, 2] and df["cycles"].tolist() == [3579, 3761]
    assert (
        run(
            ["estimate", "--sim", "hyfiss", "--plan", str(tmp_path / "plan.json"), str(shared_path(*OUTPUTS)), "--json"]
        )
        == 0
    )
    est = {e["metric"]: e for e in json.loads(capsys.readouterr().out)["estimates"]}
    assert est["cycles"]["estimate"] == pytest.approx(3579 + 3761)  # every launch simulated: exact
    assert est["cycles"]["std_error"] == 0.0
    assert est["ipc"]["estimate"] == pytest.approx((640 + 2720) / (3579 + 3761))


# --- apply --------------------------------------------------------------------------------------
def test_apply_writes_script_app_view_and_weights(tmp_path):
    app = copy_app(tmp_path)
    before = folder_hash(app)
    wl = load_app(app).workload
    plan = _plan(wl, 1, seed=3)
    k = plan.sampled_ids[0]
    out = tmp_path / "out"
    res = apply_plan(plan, out, traces=app, np_ranks=4, hyfiss_home="/opt/hyfiss", prune=True)
    assert folder_hash(app) == before
    assert res.kernels == [k]
    script = (out / "run_sampled.sh").read_text()
    assert os.access(out / "run_sampled.sh", os.X_OK)
    assert (
        f'simulate {k} {k - 1} synth_k{k} 2 || failed="$failed {k}"' in script
    )  # --kernel_id is K-1; 2 CTAs: at most 2 ranks
    assert '--configs "$configs"' in script and "os.path.relpath" in script
    assert "default_home=/opt/hyfiss" in script and 'NP="${NP:-4}"' in script
    assert subprocess.run(["bash", "-n", str(out / "run_sampled.sh")]).returncode == 0  # valid bash
    view = out / "app"
    assert (view / "configs" / "app.config").read_bytes() == (app / "configs" / "app.config").read_bytes()
    assert (view / "configs" / "issue.config").resolve() == (app / "configs" / "issue.config").resolve()
    assert sorted(p.name for p in (view / "sass_traces").iterdir()) == [f"kernel-{k}"]  # pruned
    assert (view / "sass_traces" / f"kernel-{k}").resolve() == (app / "sass_traces" / f"kernel-{k}").resolve()
    assert sorted(p.name for p in (view / "memory_traces").iterdir()) == [f"kernel-{k}"]
    assert (view / "outputs").is_dir() and not any((view / "outputs").iterdir())
    w = (out / "simsample-weights.csv").read_text().splitlines()
    assert w == ["kernel_id,weight,cluster,launch,trace", f"{k},2,0,{k - 1},kernel-{k}"]
    assert (out / "simsample-plan.json").read_text() == plan.dumps()
    # the app view reads as the same workload
    assert load_app(view, quiet=True).workload.kernels["kernel_id"].tolist() == [1, 2]


def test_apply_without_prune_links_whole_trace_folders(tmp_path):
    app = shared_path(*APP)
    plan = _plan(load_app(app).workload, 2)
    apply_plan(plan, tmp_path / "out", traces=app)
    assert (tmp_path / "out" / "app" / "sass_traces").is_symlink()
    assert "default_home=''" in (tmp_path / "out" / "run_sampled.sh").read_text()


def test_apply_refuses_a_kernel_without_memory_traces(tmp_path):
    app = copy_app(tmp_path)
    for p in (app / "memory_traces" / "kernel-2").iterdir():
        p.unlink()
    plan = _plan(load_app(app).workload, 2)
    with pytest.raises(UserError, match="divides by zero"):
        apply_plan(plan, tmp_path / "out", traces=app)
    assert not (tmp_path / "out").exists()


def test_apply_refuses_other_plans_and_foreign_app_configs(tmp_path):
    app = shared_path(*APP)
    other = from_records(
        {
            "kernel_id": [0, 1, 2],
            "name": ["a", "b", "c"],
            "grid_x": [1] * 3,
            "block_x": [1] * 3,
            "duration_ns": [1, 2, 3],
        },
        source="x",
        format="nsys",
    )
    with pytest.raises(PlanMismatchError):
        apply_plan(_plan(other, 1), tmp_path / "o1", traces=app)
    bad = tmp_path / "app.config"
    bad.write_text((app / "configs" / "app.config").read_text().replace("synth_k2", "other"))
    with pytest.raises(UserError, match="kernels differ"):
        apply_plan(_plan(load_app(app).workload, 1), tmp_path / "o2", traces=app, app_config=bad)


def test_profile_plan_applies_by_position(tmp_path, capsys):
    prof = from_records(
        {
            "kernel_id": [40, 41],
            "name": ["synth_k1", "synth_k2"],
            "grid_x": [2, 2],
            "block_x": [32, 32],
            "duration_ns": [100, 300],
        },
        source="prof.json",
        format="kineto",
    )
    plan = _plan(prof, 1, seed=1)
    res = apply_plan(plan, tmp_path / "out", traces=shared_path(*APP))
    assert res.kernels == [int(plan.samples["launch"].iloc[0]) + 1]
    assert "by launch position" in capsys.readouterr().err
    # reports are then matched to the profile's ids by position
    df, _ = collect([shared_path(*OUTPUTS)], plan)
    assert df["kernel_id"].tolist() == plan.sampled_ids and (df["status"] == "ok").all()


def test_script_quotes_what_it_is_given():
    s = render_script(
        kernels=[(1, "k; rm -rf /")],
        np_ranks=1,
        hyfiss_home="/a b/c",
        device_config="./DEV-Def/X.config",
        plan_name="p",
    )
    assert "simulate 1 0 'k; rm -rf /'" in s and "default_home='/a b/c'" in s


# --- end to end, with a stand-in HyFiSS ----------------------------------------------------------
FAKE_SIM = """\
#!/usr/bin/env python3
# stands in for gpu-simulator.x: checks its arguments like HyFiSS needs them, writes a rank report
import os, sys
a = sys.argv[1:]
configs, kid = a[a.index("--configs") + 1], int(a[a.index("--kernel_id") + 1])
assert not os.path.isabs(configs), "--configs must be relative"
assert os.path.isfile(os.path.join(configs, "app.config")), configs
assert os.path.isfile(a[a.index("--config_file") + 1])
ids = [l for l in open(os.path.join(configs, "app.config")) if l.startswith("-app_kernels_id")][0].split()[1].split(",")
assert 0 <= kid < len(ids)
out = os.path.join(configs, "..", "outputs")
open(os.path.join(out, "kernel-%d-rank-0.temp.txt" % kid), "w").write("GPU_active_cycles[]: %d\\n" % (1000 * (kid + 1)))
"""
FAKE_MERGE = """\
#!/usr/bin/env python3
# stands in for merge_report.py
import argparse, os
p = argparse.ArgumentParser(); p.add_argument("--dir")
p.add_argument("--kernel_id", type=int); p.add_argument("--np", type=int)
a = p.parse_args()
cyc = int(open(os.path.join(a.dir, "kernel-%d-rank-0.temp.txt" % a.kernel_id)).read().split()[1])
with open(os.path.join(a.dir, "kernel-%d-summary.txt" % a.kernel_id), "w") as f:
    f.write(" - SMs Performance: \\n       * GPU_active_cycles: %d\\n       * SM_active_cycles: %d\\n" % (cyc, cyc))
    f.write("       * Warp_instructions_executed: 64\\n       * Kernel_execution_time (ns): %d\\n" % (cyc // 2))
    f.write(" - Report Time: 2026-01-01 00:00:00\\n")
"""
FAKE_MPIRUN = """\
#!/usr/bin/env bash
# stands in for mpirun: mpirun -np N cmd...
[ "$1" = "-np" ] || exit 9
shift 2
exec "$@"
"""


def _fake_hyfiss(root: Path) -> Path:
    root.mkdir()
    (root / "DEV-Def").mkdir()
    (root / "DEV-Def" / "QV100.config").write_text("-gpgpu_num_clusters 1\n")
    for name, text in (("gpu-simulator.x", FAKE_SIM), ("merge_report.py", FAKE_MERGE), ("mpirun", FAKE_MPIRUN)):
        p = root / name
        p.write_text(textwrap.dedent(text))
        p.chmod(p.stat().st_mode | stat.S_IEXEC)
    return root


def test_end_to_end_with_a_stand_in_simulator(tmp_path, capsys, monkeypatch):
    app = copy_app(tmp_path)
    before = folder_hash(app)
    home = _fake_hyfiss(tmp_path / "hyfiss")
    plan = tmp_path / "plan.json"
    assert run(["plan", str(app), "--sampler", "random", "--param", "count=2", "-o", str(plan)]) == 0
    out = tmp_path / "sampled"
    assert (
        run(
            [
                "apply",
                "--sim",
                "hyfiss",
                "--plan",
                str(plan),
                "--traces",
                str(app),
                "--out",
                str(out),
                "--prune",
                "--np",
                "2",
                "--hyfiss",
                str(home),
            ]
        )
        == 0
    )
    monkeypatch.setenv("MPIRUN", str(home / "mpirun"))
    assert run(["run", "--sim", "hyfiss", "--sampled", str(out)]) == 0
    assert sorted(p.name for p in (out / "app" / "outputs").iterdir() if p.name.endswith("summary.txt")) == [
        "kernel-0-summary.txt",
        "kernel-1-summary.txt",
    ]
    capsys.readouterr()
    assert run(["collect", "--sim", "hyfiss", "--plan", str(plan), str(out), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["results"]
    assert [(r["kernel_id"], r["cycles"], r["execution_time_ns"]) for r in rows] == [(1, 1000, 500), (2, 2000, 1000)]
    assert folder_hash(app) == before  # the simulator wrote into OUT/app/outputs, not the app
    # a failing simulator: the script reports it and run exits 1
    (home / "gpu-simulator.x").write_text("#!/usr/bin/env bash\nexit 3\n")
    assert run(["run", "--sim", "hyfiss", "--sampled", str(out)]) == 1
    assert "exited with status 1" in capsys.readouterr().err
