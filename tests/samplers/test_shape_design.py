"""A design from traces that sees launch shapes: occupancy, waves, the name+occupancy grouping."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from simsample.cli import run as cli_run
from simsample.errors import UserError
from simsample.manager import get_host
from simsample.reading import load_workload
from simsample.sampling.grouping import group_launches, resolve_grouping
from simsample.workload import Workload, from_records
from simsample_accelsim.features import compute_features
from simsample_accelsim.occupancy import CycleModel, GpuConfig, ctas_per_sm, fit_model, shape_columns
from simsample_accelsim.synth import KernelSpec, write_workload
from tests.helpers import shared_path

QV100 = GpuConfig()
GEMM = "_Z10gemm_tiledPKfS0_Pfiii"


def _max_cta_reference(threads: int, regs: int, shmem: int, gpu: GpuConfig) -> int:
    """GPGPU-Sim's shader_core_config::max_cta, written out as the simulator does, one launch at a time."""
    padded = threads if threads % gpu.warp_size == 0 else (threads // gpu.warp_size + 1) * gpu.warp_size
    result = gpu.threads_per_sm // padded
    if shmem > 0:
        result = min(result, gpu.shmem // shmem)
    if regs > 0:
        result = min(result, gpu.registers // (padded * ((regs + 3) & ~3)))
    return min(result, gpu.max_ctas)


@given(st.integers(1, 1024), st.integers(0, 255), st.integers(0, 98304))
def test_ctas_per_sm_follows_the_simulators_rule(threads, regs, shmem):
    expected = max(_max_cta_reference(threads, regs, shmem, QV100), 1)
    got = ctas_per_sm(np.array([threads]), np.array([regs]), np.array([shmem]), QV100)
    assert int(got[0]) == expected


def _cta_lines(path: Path) -> list[int]:
    with gzip.open(path, "rt", errors="replace") as fh:
        return [int(m.group(1)) for line in fh if (m := re.search(r"CTA/core = (\d+), limited by", line))]


def test_ctas_per_sm_equals_what_accelsim_printed_for_hetero():
    d = shared_path("simulators", "accelsim", "hetero")
    printed = _cta_lines(d / "full.out.gz")
    assert printed  # the simulator prints it for the first kernel
    wl = compute_features(d, quiet=True)
    assert int(wl.kernels["ctas_per_sm"].iloc[0]) == printed[0] == 8  # 256 threads: limited by threads
    sgemm = wl.kernels[wl.kernels["name"].astype(str).str.contains("sgemm")]
    assert set(sgemm["ctas_per_sm"]) == {1}  # 64 KiB of shared memory each (the workload's README: "limited by: shmem")
    # waves: (8,8) = 64 CTAs in one wave, (16,10) = 160 CTAs in two, (22,20) = 440 CTAs in six
    assert dict(zip(sgemm["grid_x"] * sgemm["grid_y"], sgemm["waves"])) == {64: 1, 160: 2, 440: 6}


def test_config_files_set_the_gpu(tmp_path):
    cfg = tmp_path / "gpgpusim.config"
    cfg.write_text(
        "# a comment\n-gpgpu_n_clusters 40\n-gpgpu_n_cores_per_cluster 2\n-gpgpu_shader_core_pipeline 1024:32 \n"
        "-gpgpu_shmem_size 65536\n-gpgpu_kernel_launch_latency 3000\n"
    )
    later = tmp_path / "more.config"
    later.write_text("-gpgpu_n_clusters 20\n")
    gpu = GpuConfig.from_configs([cfg, later])
    assert (gpu.sms, gpu.threads_per_sm, gpu.shmem, gpu.launch_latency, gpu.registers) == (40, 1024, 65536, 3000, 65536)
    bad = tmp_path / "bad.config"
    bad.write_text("-gpgpu_shader_core_pipeline lots\n")
    with pytest.raises(UserError, match="THREADS:WARP_SIZE"):
        GpuConfig.from_configs([bad])
    with pytest.raises(UserError, match="cannot read"):
        GpuConfig.from_configs([tmp_path / "missing.config"])


def _split_k_folder(tmp_path: Path) -> Path:
    """One GEMM at two shapes of nearly equal instructions (8 CTAs of a 16-trip loop, 32 of a
    4-trip one), twice each, and a small kernel: what the decoder has between decode and prefill."""

    def gemm(ctas: int, iters: int) -> KernelSpec:
        return KernelSpec(
            GEMM,
            grid=(ctas, 1, 1),
            block=(128, 1, 1),
            shmem=32768,
            nregs=96,
            iters=iters,
            body=("LDG.E.128", "FFMA", "FFMA", "FFMA"),
        )

    small = KernelSpec(
        "_Z4reluPf", grid=(8, 1, 1), block=(128, 1, 1), nregs=16, body=("LDG.E", "FMNMX", "STG.E"), iters=1
    )
    folder = tmp_path / "splitk"
    write_workload(folder, [gemm(32, 4), small, gemm(8, 16), small, gemm(32, 4), gemm(8, 16)])
    return folder


def test_name_occupancy_separates_shapes_that_instructions_do_not(tmp_path):
    wl = compute_features(_split_k_folder(tmp_path), quiet=True)
    k = wl.kernels
    gemm = k[k["name"].astype(str) == GEMM]
    assert gemm["warp_insts"].nunique() == 2 and abs(gemm["warp_insts"].max() / gemm["warp_insts"].min() - 1) < 0.15
    by_name = group_launches(wl, "name")
    by_occupancy = group_launches(wl, "name+occupancy")
    assert by_name.count == 2 and by_occupancy.count == 3
    assert sorted(by_occupancy.keys) == sorted(
        [f"{GEMM} sms=32 waves=1", f"{GEMM} sms=8 waves=1", "_Z4reluPf sms=8 waves=1"]
    )
    assert resolve_grouping(wl, "auto") == "name+occupancy+context"
    plan = get_host().sampler("margin").plan(wl, get_host().sampler("margin").resolve_params({}), 0)
    assert plan.prediction["grouping"] == "name+occupancy+context"
    # the occupancy classes stay apart (each GEMM shape in its own clusters, whatever its context)
    shapes = {" ".join(c.key.split(" [")[0].split(" ")[:3]) for c in plan.clusters}
    assert shapes >= {f"{GEMM} sms=32 waves=1", f"{GEMM} sms=8 waves=1"}


def test_profiles_keep_the_name_grouping_and_refuse_occupancy_in_one_line(tmp_path, capsys):
    wl = from_records(
        {"name": ["a", "a", "b"], "grid_x": [1, 8, 1], "block_x": [32, 32, 32], "duration_ns": [5.0, 9.0, 3.0]}
    )
    assert resolve_grouping(wl, "auto") == "name"
    with pytest.raises(UserError, match="'sms_used' column"):
        group_launches(wl, "name+occupancy")
    csv = tmp_path / "k.csv"
    csv.write_text("Name,Duration\na,5\na,9\nb,3\n")
    rc = cli_run(
        [
            "plan",
            str(csv),
            "--format",
            "csv",
            "--columns",
            "name=Name,duration_ns=Duration",
            "--param",
            "group=name+shape",
            "-o",
            str(tmp_path / "p.json"),
        ]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 1 and len(err) == 1 and "group=name+shape needs" in err[0] and not (tmp_path / "p.json").exists()
    rc = cli_run(
        [
            "plan",
            str(csv),
            "--format",
            "csv",
            "--columns",
            "name=Name,duration_ns=Duration",
            "--param",
            "group=name+occupancy",
            "-o",
            str(tmp_path / "p.json"),
        ]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 1 and len(err) == 1 and "'sms_used'" in err[0]


def test_fit_model_recovers_the_costs_it_was_made_with():
    rng = np.random.default_rng(0)
    n = 40
    k = pd.DataFrame(
        {
            "grid_x": rng.integers(1, 400, n),
            "grid_y": 1,
            "grid_z": 1,
            "block_x": 128,
            "block_y": 1,
            "block_z": 1,
            "regs": 32,
            "shmem": 0,
            "warps": 0,
            "warp_insts": 0,
            "smsp__inst_executed_op_global_ld.sum": 0,
        }
    )
    ctas = k["grid_x"].to_numpy()
    k["warps"] = ctas * 4
    per_warp_insn, per_warp_ld = rng.integers(10, 200, n), rng.integers(1, 10, n)
    k["warp_insts"] = k["warps"] * per_warp_insn
    k["smsp__inst_executed_op_global_ld.sum"] = k["warps"] * per_warp_ld
    truth = CycleModel(per_insn=6.0, per_load=250.0)
    cycles = shape_columns(k, QV100, truth)["predicted_cycles"].to_numpy()
    fitted = fit_model(k, cycles, QV100)
    assert fitted.per_insn == pytest.approx(6.0, abs=0.05) and fitted.per_load == pytest.approx(250.0, rel=0.01)


def test_features_twice_to_the_same_output_reuse_the_cache(tmp_path, capsys):
    folder = _split_k_folder(tmp_path)
    out = tmp_path / "f.parquet"
    for _ in range(2):  # the cache folder the first run leaves beside the output is not an obstacle
        assert cli_run(["profile", "features", "--sim", "accelsim", str(folder), "-o", str(out)]) == 0
    assert (tmp_path / "f.parquet.cache").is_dir()
    cfg = tmp_path / "small.config"
    cfg.write_text("-gpgpu_n_clusters 4\n")
    assert cli_run(["profile", "features", "--sim", "accelsim", str(folder), "-o", str(out), "--config", str(cfg)]) == 0
    wl = Workload.from_parquet(out)
    # the GEMM holds 3 CTAs an SM (32 KiB of 96 KiB shared memory): 32 CTAs on 4 SMs are 3 waves
    assert wl.kernels["ctas_per_sm"].min() == 3 and wl.kernels["waves"].max() == 3
    assert wl.meta["features"]["gpu"]["sms"] == 4
    capsys.readouterr()


def test_loading_features_keeps_the_shape_columns(tmp_path):
    folder = _split_k_folder(tmp_path)
    out = tmp_path / "f.parquet"
    assert cli_run(["profile", "features", "--sim", "accelsim", str(folder), "-o", str(out)]) == 0
    wl = load_workload([out])
    for col in ("ctas_per_sm", "sms_used", "waves", "predicted_cycles"):
        assert wl.has(col)
