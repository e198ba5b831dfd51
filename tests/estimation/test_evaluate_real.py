"""The stratified samplers on real profiles from the development data (skipped when absent)."""

from __future__ import annotations

import numpy as np
import pytest

from simsample.errors import UserError
from simsample.manager import get_host
from simsample.sampling.evaluate import evaluate_workload
from tests.helpers import shared_path


def load(*parts):
    from simsample.reading import load_workload

    path = shared_path(*parts)
    files = sorted(p for p in path.iterdir() if p.is_file()) if path.is_dir() else [path]
    try:
        return load_workload(files[:1])
    except UserError as exc:  # the reader for this format is not installed
        if "unrecognised" in str(exc):
            pytest.skip(str(exc))
        raise


def test_resnet50_with_zero_duration_launches():
    # Kineto rounds to whole microseconds: this trace has hundreds of 0 µs launches, on which the
    # published artifact divides by zero
    wl = load("profiles", "kineto", "kineto-resnet50", "resnet50_num_workers_0")
    assert (wl.values() == 0).sum() > 100
    host = get_host()
    results = {}
    for name in ("stem", "root", "allegro"):
        s = host.sampler(name)
        r = evaluate_workload(wl, s, s.resolve_params({}), 3)
        assert r.error_max_pct < 5.0
        assert all(np.isfinite(sc.estimate) for sc in r.scores)
        results[name] = r
    # ResNet-50's convolution kernels have several peaks: ROOT must simulate less than STEM
    assert results["root"].speedup_hmean > results["stem"].speedup_hmean


def test_lud_plans_cover_the_truth():
    wl = load("profiles", "nvprof", "gpuperfpredict-k40c", "lud-8192-run1.csv.xz")
    s = get_host().sampler("root")
    r = evaluate_workload(wl, s, s.resolve_params({}), 20)
    assert r.error_mean_pct < 5.0 and r.coverage >= 0.8
