"""Nsight Compute 2025.3 on an H200 (``tests/fixtures/ncu_h200``, README there): the long form
and the raw page of the same program, each as ``ncu --csv`` writes it to standard output (its
``==PROF==`` lines first), with the twelve metrics PKA clusters on."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import simsample
from simsample.cli import run
from simsample.plugins.samplers.pka import PKA_METRICS
from simsample.reading import detect_format

NCU = Path(__file__).resolve().parents[1] / "fixtures" / "ncu_h200"


@pytest.mark.parametrize("form", ["long", "raw"])
def test_both_forms_read_as_the_launches_ncu_profiled(form):
    f = NCU / f"{form}.csv.gz"
    assert detect_format(f) == "ncu"
    wl = simsample.read(f)
    assert wl.meta["ncu_form"] == form and wl.meta["launch_shape"] == "xyz"
    assert len(wl) == 38 and wl.kernels["name"].nunique() == 7
    assert wl.kernels["kernel_id"].tolist() == list(range(38))
    assert all(wl.kernels[m].notna().all() for m in PKA_METRICS)
    d = wl.kernels["duration_ns"].to_numpy()
    assert np.all((d > 1e3) & (d < 1e6))  # microseconds of a 512 x 512 program, in nanoseconds


def test_the_two_forms_agree_on_every_count():
    """Two runs of one program, one per form: the counters PKA reads are the same launch by
    launch (the durations are each run's own), and only the raw page describes the device."""
    long, raw = simsample.read(NCU / "long.csv.gz"), simsample.read(NCU / "raw.csv.gz")
    assert long.kernels["name"].tolist() == raw.kernels["name"].tolist()
    for col in ("grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z", *PKA_METRICS):
        assert np.array_equal(long.kernels[col].to_numpy(), raw.kernels[col].to_numpy()), col
    assert raw.meta["device_attributes"]["device__attribute_multiprocessor_count"] == 132
    assert "device_attributes" not in long.meta


def test_pka_plans_on_either_form(tmp_path):
    for form in ("long", "raw"):
        assert run(["plan", str(NCU / f"{form}.csv.gz"), "--sampler", "pka", "-o", str(tmp_path / f"{form}.json")]) == 0
