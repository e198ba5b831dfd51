"""Photon on Accel-Sim traces, whose PCs are offsets within each kernel.

Two real workloads with a full Accel-Sim run: ``short_kernels`` (written by
``benchmarks/short_kernels_workload.py``, its full run committed in
``tests/fixtures/accelsim_photon/``, see the README there) and the shared ``hetero`` traces.
Photon's clusters must never hold two kernel names there (blocks are keyed by their kernel, so
even short_kernels' three GEMM-like kernels written with the same code stay apart), and its plans
are scored against the full runs' cycles.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from simsample.cli import run
from simsample.plugins.samplers._photon import gpus
from simsample.plugins.samplers._photon.bbv import KERNEL_EXTRA, WarpFeatures, gpu_bbvs
from simsample.plugins.samplers.photon import match_launches
from simsample.reading import load_workload
from tests.helpers import shared_path

ROOT = Path(__file__).resolve().parents[3]
FIX = ROOT / "tests" / "fixtures" / "accelsim_photon"
#: sha256 of kernelslist.g followed by kernel-1.traceg .. kernel-35.traceg as the generator writes them
SHORT_SHA256 = "22af9a98b91b38c7bc92db1fce82361a696031b46eee1bd753002aefd776d226"


def generator():
    spec = importlib.util.spec_from_file_location(
        "short_kernels_workload", ROOT / "benchmarks" / "short_kernels_workload.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def short_features(tmp_path_factory):
    d = tmp_path_factory.mktemp("short")
    assert generator().main([str(d / "traces")]) == 0
    out = d / "features.parquet"
    assert run(["profile", "features", "--sim", "accelsim", str(d / "traces"), "-o", str(out)]) == 0
    return d / "traces", out


@pytest.fixture(scope="module")
def hetero_features(tmp_path_factory):
    traces = shared_path("simulators", "accelsim", "hetero")
    out = tmp_path_factory.mktemp("hetero") / "features.parquet"
    assert run(["profile", "features", "--sim", "accelsim", str(traces), "-o", str(out)]) == 0
    return traces, out


def photon_clusters(features: Path, *, per_kernel: bool = True) -> list[list[str]]:
    """The kernel names of every Photon cluster (as the sampler walks them, default parameters)."""
    wl = load_workload([features])
    n = len(wl)
    extras = wl.extras if per_kernel else {k: v for k, v in wl.extras.items() if k != KERNEL_EXTRA}
    f = WarpFeatures.from_extras(extras, n)
    assign, reps = match_launches(gpu_bbvs(f, n), f.warps(n), gpus.resident_warps("QV100"), 0.05)
    names = wl.kernels["name"].astype(str).to_numpy()
    return [sorted(set(names[assign == r])) for r in range(len(reps))]


def evaluate(capsys, features: Path, truth: Path, sampler: str, repeat: int = 3) -> dict:
    capsys.readouterr()
    args = [
        "evaluate",
        str(features),
        "--sampler",
        sampler,
        "--repeat",
        str(repeat),
        "--truth",
        str(truth),
        "--sim",
        "accelsim",
        "--json",
    ]
    assert run(args) == 0
    return json.loads(capsys.readouterr().out)["workloads"][0]


def test_generator_writes_the_simulated_traces(short_features):
    traces, _ = short_features
    h = hashlib.sha256((traces / "kernelslist.g").read_bytes())
    for i in range(1, 36):
        h.update((traces / f"kernel-{i}.traceg").read_bytes())
    assert h.hexdigest() == SHORT_SHA256


def test_short_kernels_keep_their_names_apart(short_features):
    _, features = short_features
    clusters = photon_clusters(features)
    assert all(len(names) == 1 for names in clusters)
    assert len(clusters) == 10  # one per kernel: the repeated launches of each still merge
    # keyed by the relative PC alone, five different short kernels of 64 warps fell into one cluster
    old = photon_clusters(features, per_kernel=False)
    assert max(len(names) for names in old) == 5


def test_short_kernels_cross_metric_error(capsys, short_features):
    _, features = short_features
    w = evaluate(capsys, features, FIX / "short_kernels_full.out.gz", "photon")
    assert w["launches"] == 35
    assert w["sampled_launches_mean"] == 10
    assert w["error_mean_pct"] == pytest.approx(0.236, abs=0.01)  # 4.735% when the kernels merged


def test_hetero_keeps_kernel_names_apart_and_its_error(capsys, hetero_features):
    traces, features = hetero_features
    assert all(len(names) == 1 for names in photon_clusters(features))
    w = evaluate(capsys, features, traces / "full.out.gz", "photon")
    assert w["launches"] == 56
    assert w["error_mean_pct"] == pytest.approx(1.416, abs=0.01)


def test_two_launches_of_one_kernel_merge_and_two_kernels_do_not(tmp_path):
    """End to end from traces: two short kernels of different code, the same warps and relative
    PCs (each a long block from PC 0 and its EXIT)."""
    from simsample_accelsim.synth import KernelSpec, write_workload

    a = KernelSpec(
        "_Z3addPf", grid=(16, 1, 1), block=(128, 1, 1), body=("LDG.E",) + ("FADD",) * 12 + ("STG.E",), iters=1
    )
    b = KernelSpec(
        "_Z3mulPf", grid=(16, 1, 1), block=(128, 1, 1), body=("LDG.E", "LDG.E") + ("FMUL",) * 14 + ("STG.E",), iters=1
    )
    write_workload(tmp_path / "t", [a, b, a, b, a], seed=0)
    out = tmp_path / "f.parquet"
    assert run(["profile", "features", "--sim", "accelsim", str(tmp_path / "t"), "-o", str(out)]) == 0
    assert photon_clusters(out) == [["_Z3addPf"], ["_Z3mulPf"]]
    assert photon_clusters(out, per_kernel=False) == [["_Z3addPf", "_Z3mulPf"]]
