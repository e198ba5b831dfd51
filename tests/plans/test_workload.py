"""Workload normalisation, validation, fingerprints and summaries."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simsample.errors import UserError
from simsample.workload import REQUIRED_COLUMNS, Workload, from_records


def _wl(n=6, **over):
    rec = {
        "name": ["k1", "k2", "k1", "k3", "k1", "k2"][:n],
        "grid_x": [4, 8, 4, 70000, 4, 8][:n],
        "block_x": [128, 256, 128, 32, 128, 256][:n],
        "duration_ns": [100, 200, 110, 5, 90, 210][:n],
    }
    rec.update(over)
    return from_records(rec, source="t")


def test_lean_dtypes():
    wl = _wl()
    k = wl.kernels
    assert isinstance(k["name"].dtype, pd.CategoricalDtype)
    assert k["grid_x"].dtype == np.uint32  # 70000 does not fit uint16
    assert k["block_x"].dtype == np.uint16
    assert k["kernel_id"].dtype == np.int32
    assert k["duration_ns"].dtype == np.int64
    assert list(k.columns[: len(REQUIRED_COLUMNS)]) == list(REQUIRED_COLUMNS)


def test_bytes_per_launch_is_small():
    n = 200_000
    rng = np.random.default_rng(1)
    wl = from_records(
        {
            "name": pd.Categorical.from_codes(rng.integers(0, 300, n), [f"kernel_{i}" for i in range(300)]),
            "grid_x": rng.integers(1, 5000, n),
            "block_x": rng.integers(32, 1024, n),
            "stream": rng.integers(0, 8, n),
            "start_ns": np.arange(n) * 1000,
            "duration_ns": rng.integers(1, 10**6, n),
        }
    )
    per_launch = wl.kernels.memory_usage(deep=True, index=False).sum() / n
    assert per_launch <= 120


def test_grid_size_does_not_overflow_narrow_dtypes():
    wl = from_records(
        {"name": ["a"], "grid_x": [65535], "grid_y": [65535], "grid_z": [2], "block_x": [1024], "duration_ns": [1]}
    )
    assert wl.grid_size()[0] == 65535 * 65535 * 2


@pytest.mark.parametrize(
    "change, message",
    [
        ({"duration_ns": [100, None, 110, 5, 90, 210]}, "no duration_ns"),
        ({"duration_ns": [100, -1, 110, 5, 90, 210]}, "negative duration_ns"),
        ({"kernel_id": [0, 1, 2, 2, 4, 5]}, "duplicate kernel_id 2"),
        ({"name": ["a", None, "b", "c", "d", "e"]}, "no kernel name"),
    ],
)
def test_validation_errors(change, message):
    with pytest.raises(UserError, match=message):
        _wl(**change)


def test_missing_required_columns():
    with pytest.raises(UserError, match="missing required column.*duration_ns"):
        Workload(pd.DataFrame({"kernel_id": [0], "name": ["a"]}), source="x")


def test_untimed_workload():
    wl = _wl(duration_ns=[None] * 6)
    assert not wl.timed
    assert wl.summary()["total_time_ns"] is None
    with pytest.raises(UserError, match="neither durations nor cycles"):
        wl.default_metric()


def test_fingerprint_is_stable_and_sensitive():
    a, b = _wl(), _wl()
    assert a.fingerprint == b.fingerprint
    assert _wl(grid_x=[4, 8, 4, 70000, 4, 9]).fingerprint != a.fingerprint
    assert _wl(name=["k1", "k2", "k1", "k3", "k1", "k4"]).fingerprint != a.fingerprint
    assert _wl(kernel_id=[1, 2, 3, 4, 5, 6]).fingerprint != a.fingerprint
    # durations are measurements, not identity
    assert _wl(duration_ns=[1, 2, 3, 4, 5, 6]).fingerprint == a.fingerprint


def test_fingerprint_ignores_category_order_and_dtype():
    a = _wl()
    k = a.kernels.copy()
    k["name"] = k["name"].cat.reorder_categories(list(reversed(k["name"].cat.categories)))
    k["grid_x"] = k["grid_x"].astype(np.int64)
    assert Workload(k).fingerprint == a.fingerprint


def test_shape_fingerprint_matches_mangled_and_demangled():
    mangled = from_records(
        {
            "kernel_id": [1, 2],
            "name": ["_Z4tinyPi", "_Z12sgemm_kernelPKfS0_Pfiii"],
            "grid_x": [1, 8],
            "block_x": [32, 128],
            "duration_ns": [None, None],
        }
    )
    demangled = from_records(
        {
            "name": ["tiny(int*)", "sgemm_kernel(float const*, float const*, float*, int, int, int)"],
            "grid_x": [1, 8],
            "block_x": [32, 128],
            "duration_ns": [5, 6],
        }
    )
    assert mangled.shape_fingerprint == demangled.shape_fingerprint
    assert mangled.fingerprint != demangled.fingerprint


def test_top_kernels_and_summary():
    wl = _wl()
    s = wl.summary()
    assert s == {"launches": 6, "distinct_kernels": 3, "total_time_ns": 715, "memcpy_count": 0}
    top = wl.top_kernels(2)
    assert list(top["name"]) == ["k2", "k1"]
    k1 = top[top["name"] == "k1"].iloc[0]
    assert k1["launches"] == 3 and k1["mean"] == 100
    assert k1["cov"] == pytest.approx(np.std([100, 110, 90]) / 100)


def test_parquet_round_trip(tmp_path):
    wl = _wl()
    wl.to_parquet(tmp_path / "w.parquet")
    back = Workload.from_parquet(tmp_path / "w.parquet")
    assert back.fingerprint == wl.fingerprint
    assert back.source == "t"
    pd.testing.assert_frame_equal(back.kernels, wl.kernels)


@settings(max_examples=50, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["a", "b", "c"]), st.integers(1, 2**31 - 1), st.integers(1, 1024), st.integers(0, 10**12)
        ),
        min_size=1,
        max_size=30,
    )
)
def test_normalisation_preserves_values(rows):
    names, grids, blocks, durs = zip(*rows)
    wl = from_records({"name": list(names), "grid_x": list(grids), "block_x": list(blocks), "duration_ns": list(durs)})
    assert list(wl.kernels["grid_x"].astype(np.int64)) == list(grids)
    assert list(wl.kernels["block_x"].astype(np.int64)) == list(blocks)
    assert list(wl.kernels["duration_ns"]) == list(durs)
    assert list(wl.kernels["name"].astype(str)) == list(names)
