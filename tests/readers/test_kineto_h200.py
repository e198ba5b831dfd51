"""PyTorch 2.11 profiles recorded on an H200 (``tests/fixtures/kineto_h200``, README there): a
newer Kineto layout than the development data's (CUDA 13, ``gpu_user_annotation`` and
``fwdbwd`` flow events, the ``cuda_driver`` category), read with the launch counts the recorder
counted, by every engine alike. ``tests/fixtures/kineto_h200_second`` holds six more workloads of
the same recorder, recorded the same way later."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from simsample.reading import detect_format, load_workload
from tests.helpers import ROOT, assert_kineto_engines_agree, benchmark_module

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
H200 = FIXTURES / "kineto_h200"
SECOND = FIXTURES / "kineto_h200_second"

#: GPU kernels per profile, as ``benchmarks/record_torch_profiles.py`` counted them when recording
KERNELS = {
    "gpt-train": 1604,
    "gpt-decode": 7825,
    "convnet-infer": 680,
    "lstm-train": 2400,
    "scientific": 1344,
    "vit-train": 1554,
    "encoder-dynamic": 1296,
    "recsys": 920,
    "gnn": 268,
}

#: the second set, likewise
KERNELS_SECOND = {
    "unet-denoise": 8068,
    "moe-train": 7036,
    "cg-solve": 5058,
    "conv3d-train": 412,
    "mlp-serve": 576,
    "jacobi-stencil": 1500,
}


def _path(name: str) -> Path:
    return (H200 if name in KERNELS else SECOND) / f"{name}.pt.trace.json.gz"


@pytest.mark.parametrize(("folder", "kernels"), [(H200, KERNELS), (SECOND, KERNELS_SECOND)])
def test_every_recorded_profile_is_listed(folder, kernels):
    assert sorted(p.name.split(".")[0] for p in folder.glob("*.pt.trace.json.gz")) == sorted(kernels)


@pytest.mark.parametrize("name", sorted(KERNELS) + sorted(KERNELS_SECOND))
def test_kernel_counts_and_order(name):
    f = _path(name)
    assert detect_format(f) == "kineto"
    wl = load_workload([f])
    assert len(wl) == {**KERNELS, **KERNELS_SECOND}[name]
    assert wl.kernels["kernel_id"].tolist() == list(range(len(wl)))
    assert (np.diff(wl.kernels["start_ns"].to_numpy()) >= 0).all()
    assert (wl.kernels["duration_ns"].to_numpy() > 0).all()
    assert wl.meta["gpu"] == "NVIDIA H200"


@pytest.mark.parametrize("name", ["gpt-train", "scientific", "gnn", "cg-solve", "mlp-serve"])
def test_every_engine_reads_the_same_launches(name):
    """The bulk engines and json.loads agree on a layout none of them was written against."""
    assert_kineto_engines_agree(_path(name))


def test_the_recorder_refuses_an_unknown_workload_before_writing(tmp_path, capsys):
    """``benchmarks/record_torch_profiles.py`` made these: an unknown ``--only`` name is one line
    naming the known ones, and nothing is written (no GPU or PyTorch needed to find out)."""
    mod = benchmark_module("record_torch_profiles.py")
    assert set(KERNELS) | set(KERNELS_SECOND) <= set(mod.WORKLOADS)
    with pytest.raises(SystemExit) as exc:
        mod.main([str(tmp_path / "out"), "--only", "gpt-train,gpt"])
    assert exc.value.code == 2
    assert "--only: no workload gpt (known: gpt-train," in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_the_recorder_names_the_trace_after_its_file():
    """``export_chrome_trace`` writes the path it exported to as ``traceName``, a path of the
    recording machine; the recorder replaces it with the file's own name and leaves the rest
    byte for byte (the fixtures hold what it writes)."""
    import gzip

    mod = benchmark_module("record_torch_profiles.py")
    kept = gzip.open(_path("mlp-serve")).read().decode()
    exported = kept.replace('"traceName": "mlp-serve.pt.trace.json"', '"traceName": "/data/p/mlp-serve.pt.trace.json"')
    assert exported != kept
    assert mod.named_trace(exported, "/data/p/mlp-serve.pt.trace.json", "mlp-serve.pt.trace.json") == kept
