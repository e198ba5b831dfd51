"""collect / estimate / run: Accel-Sim's stdout into per-launch results and whole-workload estimates."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import pandas as pd
import pytest

from simsample.cli import run as cli_run
from simsample.errors import UserError
from simsample.planfile import Plan
from simsample_accelsim.collect import collect_logs, parse_log
from simsample_accelsim.run import build_command
from tests.helpers import shared_path


def acc(*parts: str) -> Path:
    return shared_path("simulators", "accelsim", *parts)


def test_full_run_reproduces_every_kernel(capsys):
    df = collect_logs([acc("hetero", "full.out.gz")])
    ref = json.loads(acc("hetero", "full_stats.json").read_text())["kernels"]
    assert len(df) == 56 and df["cycles"].sum() == 451_827
    assert df["kernel_id"].tolist() == [r["kernel_id"] for r in ref]
    assert df["cycles"].astype(int).tolist() == [r["gpu_sim_cycle"] for r in ref]
    assert df["instructions"].astype(int).tolist() == [r["gpu_sim_insn"] for r in ref]
    assert df["ipc"].round(4).tolist() == [r["gpu_ipc"] for r in ref]
    assert df["occupancy"].isna().all()  # "-nan%" in this build
    assert (df["status"] == "ok").all() and not df["projected"].any()
    # cumulative counters become per-kernel differences: they add up to the run's last values
    assert df["dram_reads"].iloc[0] == 8088 and df["l2_accesses"].iloc[0] == 24219 and df["l1_hits"].iloc[0] == 1719
    assert df["sim_seconds"].sum() == 323
    assert capsys.readouterr().err == ""


def test_tinytrace3_full_run():
    df = collect_logs([acc("tinytrace3", "run_full.out.gz")])
    assert df["cycles"].astype(int).tolist() == [5058, 10235, 5084]
    assert df["cycles"].sum() == 20377 and df["instructions"].sum() == 16_834_816


def test_sampled_run_maps_uids_to_kernel_ids():
    summary = parse_log(acc("hetero", "sampled.out.gz"))
    assert [r.uid for r in summary.runs] == list(range(1, 9))
    assert [r.trace_kernel_id for r in summary.runs] == [29, 30, 31, 32, 38, 39, 47, 54]
    df = collect_logs([acc("hetero", "sampled.out.gz")])
    assert df["kernel_id"].tolist() == [29, 30, 31, 32, 38, 39, 47, 54]
    assert df["uid"].tolist() == list(range(1, 9))
    assert df["cycles"].astype(int).tolist() == [6793, 8114, 5735, 9820, 20318, 6204, 12928, 6386]


def test_crashed_run_is_one_line_and_exit_1(capsys):
    rc = cli_run(["collect", "--sim", "accelsim", str(acc("tinytrace3", "run_cta1000.out.gz"))])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 1 and len(err) == 1
    assert "Assertion `m_num_cores_running > 0' failed" in err[0]
    assert "2 (incomplete)" in err[0] and "3 (failed)" in err[0]
    df = collect_logs([acc("tinytrace3", "run_cta1000.out.gz")], allow_incomplete=True)
    assert df.set_index("kernel_id")["status"].to_dict() == {1: "ok", 2: "incomplete", 3: "failed"}
    assert "2281 of 3000 CTAs" in capsys.readouterr().err


@pytest.fixture(scope="module")
def plans(tmp_path_factory):
    d = acc("hetero")
    tmp = tmp_path_factory.mktemp("plans")
    feats, folder_plan, feat_plan = tmp / "f.parquet", tmp / "folder.json", tmp / "features.json"
    ids = f"file={d / 'sampled_ids.json'}"
    assert cli_run(["plan", str(d), "--sampler", "explicit", "--param", ids, "-o", str(folder_plan)]) == 0
    assert cli_run(["profile", "features", "--sim", "accelsim", str(d), "-o", str(feats), "--jobs", "2"]) == 0
    assert cli_run(["plan", str(feats), "--sampler", "explicit", "--param", ids, "-o", str(feat_plan)]) == 0
    return folder_plan, feat_plan


def test_estimate_of_the_sampled_run_with_interval(plans, capsys):
    _, feat_plan = plans
    rc = cli_run(
        ["estimate", "--sim", "accelsim", "--plan", str(feat_plan), str(acc("hetero", "sampled.out.gz")), "--json"]
    )
    out = json.loads(capsys.readouterr().out)
    assert rc == 0
    est = {e["metric"]: e for e in out["estimates"]}
    assert est["cycles"]["estimate"] == 462_772  # Σ weight × cycles, 2.4% above the full run's 451,827
    assert est["cycles"]["ci_low"] < 451_827 < est["cycles"]["ci_high"]
    assert est["cycles"]["std_error"] > 0
    assert {"instructions", "ipc", "l1_hit_rate", "l2_hit_rate", "dram_reads"} <= set(est)
    assert math.isclose(est["ipc"]["estimate"], est["instructions"]["estimate"] / est["cycles"]["estimate"])


def test_estimate_from_a_folder_plan_has_no_bound_and_accepts_results_csv(plans, tmp_path, capsys):
    folder_plan, _ = plans
    csv = tmp_path / "results.csv"
    assert (
        cli_run(
            [
                "collect",
                "--sim",
                "accelsim",
                "--plan",
                str(folder_plan),
                str(acc("hetero", "sampled.out.gz")),
                "-o",
                str(csv),
            ]
        )
        == 0
    )
    assert pd.read_csv(csv)["kernel_id"].tolist() == [29, 30, 31, 32, 38, 39, 47, 54]
    capsys.readouterr()
    assert cli_run(["estimate", "--sim", "accelsim", "--plan", str(folder_plan), str(csv), "--json"]) == 0
    est = {e["metric"]: e for e in json.loads(capsys.readouterr().out)["estimates"]}
    assert est["cycles"]["estimate"] == 462_772 and est["cycles"]["ci_low"] is None


def test_sampled_launches_absent_from_the_log(plans, capsys):
    _, feat_plan = plans
    rc = cli_run(["estimate", "--sim", "accelsim", "--plan", str(feat_plan), str(acc("tinytrace3", "run_full.out.gz"))])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 1 and len(err) == 1 and "8 of 8 sampled launches without results" in err[0]


def _log(tmp_path: Path, blocks: list[str], tail: str = "GPGPU-Sim: *** exit detected ***\n") -> Path:
    p = tmp_path / "run.out.gz"
    with gzip.open(p, "wt") as fh:
        fh.write("".join(blocks) + tail)
    return p


def _kernel(uid: int, kid: int, cycles: int, insn: int, ctas: int, grid: int = 4, extra: str = "") -> str:
    return (
        f"Processing kernel ./kernel-{kid}.traceg\n-kernel name = _Z1kv\n-kernel id = {kid}\n-grid dim = ({grid},1,1)\n"
        f"launching kernel name: _Z1kv uid: {uid} cuda_stream_id: 0\n"
        f"kernel_name = _Z1kv \nkernel_launch_uid = {uid} \ngpu_sim_cycle = {cycles}\ngpu_sim_insn = {insn}\n"
        f"gpu_ipc = {insn / cycles:.4f}\ngpu_tot_issued_cta = {ctas}\ngpu_occupancy = 50.0% \n{extra}"
        f"\tL2_cache_stats_breakdown[GLOBAL_ACC_R][HIT] = {10 * uid}\n"
        f"\tL2_cache_stats_breakdown[GLOBAL_ACC_R][TOTAL_ACCESS] = {40 * uid}\n"
        f"total dram reads = {100 * uid}\n"
    )


def test_pkp_projection_replaces_cycles_and_keeps_simulated_values(tmp_path):
    pkp = "pkp_stop_cycle = 3000\npkp_projected_cycle = 9000\npkp_projected_insn = 3000\n"
    log = _log(tmp_path, [_kernel(1, 7, 5000, 1000, 4), _kernel(2, 9, 3000, 1000, 6, extra=pkp)])
    df = collect_logs([log]).set_index("kernel_id")
    assert df.loc[7, "status"] == "ok" and not df.loc[7, "projected"]
    row = df.loc[9]
    assert row["projected"] and row["status"] == "projected"
    assert (row["cycles"], row["instructions"], row["sim_cycles"], row["sim_insn"], row["pkp_stop_cycle"]) == (
        9000,
        3000,
        3000,
        1000,
        3000,
    )
    assert row["ipc"] == pytest.approx(3000 / 9000)
    # cumulative counters: the kernel's difference, scaled by the projection (3000 / 1000 instructions)
    assert row["l2_hits"] == 3 * 10 and row["l2_accesses"] == 3 * 40 and row["dram_reads"] == 3 * 100
    assert df.loc[7, "occupancy"] == 50.0


def test_limits_and_missing_traces_are_reported(tmp_path, capsys):
    log = _log(
        tmp_path,
        [_kernel(1, 1, 100, 10, 4), _kernel(2, 2, 50, 5, 5, grid=4)],
        tail="GPGPU-Sim: ** break due to reaching the maximum cycles (or instructions) **\n",
    )
    with pytest.raises(UserError) as exc:
        collect_logs([log])
    assert "did not finish" in str(exc.value) and "2 (incomplete)" in str(exc.value)
    missing = _log(
        tmp_path, [_kernel(1, 1, 100, 10, 4), "Processing kernel ./kernel-2.traceg\nunsupported binary version: 0\n"]
    )
    df = collect_logs([missing], allow_incomplete=True)
    assert df["kernel_id"].tolist() == [1]
    assert "kernel-2.traceg could not be read" in capsys.readouterr().err


def test_plan_from_another_source_maps_by_order(tmp_path, capsys):
    from adapters.accelsim.tests.test_accelsim_apply import make_plan
    from simsample.workload import from_records

    prof = from_records(
        {"name": ["a(int)", "b(int)", "a(int)"], "grid_x": [4, 4, 4], "block_x": [32] * 3, "duration_ns": [1, 2, 3]}
    )
    plan = make_plan(prof, [1, 2])
    log = _log(tmp_path, [_kernel(1, 2, 100, 10, 4), _kernel(2, 3, 200, 20, 8)])
    df = collect_logs([log], plan)
    assert df["kernel_id"].tolist() == [1, 2] and df["cycles"].tolist() == [100, 200]
    assert "by order" in capsys.readouterr().err


def test_not_a_log(tmp_path):
    p = tmp_path / "x.out"
    p.write_text("hello\n")
    with pytest.raises(UserError, match="not an Accel-Sim log"):
        collect_logs([p])


def test_run_builds_the_command_and_refuses_a_missing_binary(tmp_path, capsys):
    sampled = tmp_path / "s"
    sampled.mkdir()
    (sampled / "kernelslist.g").write_text("kernel-1.traceg\n")
    cfg = tmp_path / "gpgpusim.config"
    cfg.write_text("-gpgpu_n_clusters 80\n")
    cfg2 = tmp_path / "trace.config"
    cfg2.write_text("\n")
    fake = tmp_path / "accel-sim.out"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    cmd, cwd = build_command(sampled, fake, [cfg, cfg2], ["-gpgpu_max_cycle", "100"])
    assert cmd == [
        str(fake.resolve()),
        "-trace",
        "./kernelslist.g",
        "-config",
        str(cfg.resolve()),
        "-config",
        str(cfg2.resolve()),
        "-gpgpu_max_cycle",
        "100",
    ]
    assert cwd == sampled.resolve()
    rc = cli_run(
        [
            "run",
            "--sim",
            "accelsim",
            "--sampled",
            str(sampled),
            "--accelsim",
            str(tmp_path / "nope" / "accel-sim.out"),
            "--config",
            str(cfg),
            "-o",
            str(tmp_path / "log"),
        ]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 1 and len(err) == 1 and "Accel-Sim binary not found" in err[0]
    rc = cli_run(
        [
            "run",
            "--sim",
            "accelsim",
            "--sampled",
            str(sampled),
            "--accelsim",
            str(fake),
            "--config",
            str(cfg),
            "-o",
            "log.txt",
            "--dry-run",
        ]
    )
    out = capsys.readouterr().out
    assert rc == 0 and "-trace ./kernelslist.g" in out and f"cd {cwd}" in out
    # simulator flags after "--" reach the simulator (the dispatching command used to eat the "--")
    rc = cli_run(
        [
            "run",
            "--sim",
            "accelsim",
            "--sampled",
            str(sampled),
            "--accelsim",
            str(fake),
            "--config",
            str(cfg),
            "-o",
            "log.txt",
            "--dry-run",
            "--",
            "-pkp_enable",
            "1",
            "-pkp_threshold",
            "5",
        ]
    )
    out = capsys.readouterr().out
    assert rc == 0 and out.split(" > ")[0].endswith("-pkp_enable 1 -pkp_threshold 5")
    # a "simulator" that writes an incomplete log: the run is judged from the log, not its exit status
    fake.write_text("#!/bin/sh\necho 'Processing kernel ./kernel-1.traceg'\necho 'unsupported binary version: 0'\n")
    rc = cli_run(
        [
            "run",
            "--sim",
            "accelsim",
            "--sampled",
            str(sampled),
            "--accelsim",
            str(fake),
            "--config",
            str(cfg),
            "-o",
            str(tmp_path / "log.txt"),
        ]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 1 and "unsupported binary version" in err[-1] and (tmp_path / "log.txt").exists()
    assert Plan  # the plan type is what collect/estimate take


def test_estimate_leaves_out_counters_a_launch_lacks(tmp_path, capsys):
    """tinytrace3's first kernel has no L1/L2 section in the log: estimating a plan that samples
    it gives every other metric and names the ones left out (it used to refuse the whole estimate
    because the L1 hit rate of that launch is 0/0)."""
    traces = acc("tinytrace3")
    log = tmp_path / "full.out"
    log.write_bytes(gzip.decompress((traces / "run_full.out.gz").read_bytes()))
    (tmp_path / "s.csv").write_text("kernel_id,weight\n1,1\n2,1\n3,1\n")
    assert cli_run(["profile", "features", "--sim", "accelsim", str(traces), "-o", str(tmp_path / "f.parquet")]) == 0
    assert (
        cli_run(
            [
                "plan",
                str(tmp_path / "f.parquet"),
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
    capsys.readouterr()
    assert cli_run(["estimate", "--sim", "accelsim", "--plan", str(tmp_path / "p.json"), str(log), "--json"]) == 0
    out = capsys.readouterr()
    got = {e["metric"]: e["estimate"] for e in json.loads(out.out)["estimates"]}
    assert got["cycles"] == 5058 + 10235 + 5084
    assert "l1_hit_rate" not in got
