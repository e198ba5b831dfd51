"""Unit conversion, name-suffix stripping and launch ordering shared by the profile readers."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simsample.io.tables import (
    TIME_SCALE,
    decimal_to_ns,
    launch_table,
    nan_to_zero,
    narrow,
    narrow_whole,
    strip_corr_suffix,
    strip_corr_suffixes,
    to_ns,
)
from simsample.plugins.readers._kineto import scan as ks
from simsample.plugins.readers.ncu import unit_factor

UNITS = {"s": 9, "ms": 6, "us": 3, "ns": 0}


def _printed(ns: int, unit: str, extra_zeros: int = 0) -> str:
    """How a profiler prints ``ns`` in ``unit``: exactly, with enough decimals (and maybe more)."""
    digits = UNITS[unit]
    q = Decimal(ns).scaleb(-digits)
    return f"{q:.{digits + extra_zeros}f}"


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=0, max_value=2**50), st.sampled_from(sorted(UNITS)), st.integers(0, 3))
def test_to_ns_is_exact_for_whole_nanoseconds(ns, unit, extra):
    text = _printed(ns, unit, extra)
    assert decimal_to_ns(text, TIME_SCALE[unit]) == ns
    assert int(to_ns(np.array([float(text)]), TIME_SCALE[unit])[0]) == ns


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=10**15), min_size=1, max_size=50), st.sampled_from(sorted(UNITS)))
def test_to_ns_vectorised_matches_decimal(values, unit):
    texts = [_printed(v, unit) for v in values]
    got = to_ns(np.array([float(t) for t in texts]), TIME_SCALE[unit])
    assert got.dtype == np.int64
    assert got.tolist() == [decimal_to_ns(t, TIME_SCALE[unit]) for t in texts]


def test_to_ns_examples():
    assert to_ns(np.array([611.996748]), TIME_SCALE["ms"]).tolist() == [611996748]
    assert to_ns(np.array([1.830295]), TIME_SCALE["s"]).tolist() == [1830295000]
    assert to_ns(np.array([2.208]), TIME_SCALE["us"]).tolist() == [2208]
    assert decimal_to_ns("0.0000000005", TIME_SCALE["s"]) == 0  # half-even below a nanosecond
    assert decimal_to_ns("1,234.5", TIME_SCALE["us"]) == 1234500
    with pytest.raises(ValueError):
        decimal_to_ns("n/a", 1)


_name = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40)


@settings(max_examples=300, deadline=None)
@given(_name, st.integers(min_value=0, max_value=2**40))
def test_corr_suffix_is_removed(name, corr):
    stripped = strip_corr_suffix(name)
    assert strip_corr_suffix(f"{name} [{corr}]") == name or name.endswith("]")
    # stripping never touches a name without the suffix
    if not name.endswith("]"):
        assert stripped == name
    arr, ids = strip_corr_suffixes([f"{name} [{corr}]", name])
    if not name.endswith("]"):
        assert arr.to_pylist() == [name, name]
        assert ids.tolist() == [corr, -1]


def test_corr_suffix_examples():
    assert strip_corr_suffix("vectorAdd(float const *, float*, int) [1168]") == "vectorAdd(float const *, float*, int)"
    assert strip_corr_suffix("[CUDA memcpy HtoD]") == "[CUDA memcpy HtoD]"
    assert strip_corr_suffix("k<int [4]>(int) [12]") == "k<int [4]>(int)"
    assert strip_corr_suffix("k [x]") == "k [x]"
    arr, ids = strip_corr_suffixes(["a", "b"])
    assert ids is None and arr.to_pylist() == ["a", "b"]


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=-(10**15), max_value=10**15), st.integers(min_value=0, max_value=999))
def test_kineto_micros_to_ns_is_exact(whole, frac):
    text = f"{whole}.{frac:03d}"
    ip, _, fp = text.partition(".")
    got = ks.micros_to_ns([ip], [fp])
    assert int(got[0]) == decimal_to_ns(text, 1000)


def test_kineto_micros_to_ns_examples():
    assert ks.micros_to_ns(["4458676983543"], ["183"]).tolist() == [4458676983543183]
    assert ks.micros_to_ns(["1712195495505583"], [""]).tolist() == [1712195495505583000]
    assert ks.micros_to_ns(["10"], ["0"]).tolist() == [10000]
    assert ks.micros_to_ns(["1"], ["00049"]).tolist() == [1000]  # 0.49 ns rounds down
    assert ks.micros_to_ns(["1"], ["0005"]).tolist() == [1001]  # 0.5 ns rounds up
    assert ks.micros_to_ns(["-0"], ["5"]).tolist() == [-500]


@pytest.mark.parametrize(
    "unit,factor,base",
    [
        ("nsecond", 1, "nsecond"),
        ("usecond", 1e3, "nsecond"),
        ("msecond", 1e6, "nsecond"),
        ("second", 1e9, "nsecond"),
        ("Kbyte", 1e3, "byte"),
        ("Mbyte/second", 1e6, "byte/second"),
        ("Gbyte/usecond", 1e15, "byte/second"),
        ("Ghz", 1e9, "hz"),
        ("%", 1, "%"),
        ("register/thread", 1, "register/thread"),
        ("", 1, ""),
    ],
)
def test_ncu_units(unit, factor, base):
    f, b = unit_factor(unit)
    assert b == base
    assert f == pytest.approx(factor)


def test_narrow_and_launch_order():
    assert narrow(np.array([0, 255])).dtype == np.uint8
    assert narrow(np.array([0, 70000])).dtype == np.uint32
    assert narrow(np.array([-1, 5])).dtype == np.int32
    assert narrow(np.array([0, 2**40])).dtype == np.int64
    df = launch_table(
        {
            "name": ["c", "a", "b", "d"],
            "start_ns": np.array([30, 10, 10, 5]),
            "correlation": np.array([1, 9, 3, 2]),
        }
    )
    # by start, ties by correlation id
    assert df["name"].astype(str).tolist() == ["d", "b", "a", "c"]
    assert df["kernel_id"].tolist() == [0, 1, 2, 3]
    assert isinstance(df["name"].dtype, pd.CategoricalDtype)
    assert df["stream"].tolist() == [0, 0, 0, 0]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(st.integers(-(2**40), 2**40), st.floats(allow_infinity=True, allow_nan=True, width=64)), max_size=20
    )
)
def test_narrow_whole_is_narrow_of_whole_numbers(values):
    """The fast path of the readers' shape columns: narrow(int64) exactly, or None to let the
    checks that name the offending row run."""
    arr = np.array(values, dtype=np.float64)
    got = narrow_whole(arr)
    whole = arr.size > 0 and bool(np.isfinite(arr).all()) and bool((arr == np.floor(arr)).all())
    small = whole and arr.min() >= -(2**31) and arr.max() <= 2**32 - 1 and not (arr.min() < 0 and arr.max() > 2**31 - 1)
    if not small:
        assert got is None
        return
    ref = narrow(arr.astype(np.int64))
    assert got is not None and got.dtype == ref.dtype and np.array_equal(got, ref)


def test_nan_to_zero():
    finite = np.array([1.5, 0.0, -2.0])
    assert nan_to_zero(finite) is finite
    assert (
        nan_to_zero(np.array([np.nan, 1.0, np.inf])).tolist() == np.nan_to_num(np.array([np.nan, 1.0, np.inf])).tolist()
    )
