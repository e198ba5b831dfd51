"""The compiled Kineto extractor (simsample._kineto_events) against the Python paths.

The json-module path of the Kineto reader defines the semantics, and the typed decoder gives the
same arrays; the compiled extractor must give exactly those (names, categories in order of first
appearance, every nanosecond, metadata, memcpy count) on every real trace, on generated traces
(key order, whitespace, escapes, optional args, CPU-side events of any shape), and on hand-written
edge cases. Whatever it does not take exactly (a number with an exponent, a lone surrogate in a
kernel name, malformed JSON) it must refuse, so that the Python paths read the file or name the
error; a fuzz test checks that it never accepts a text those paths reject.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simsample.errors import FormatError
from simsample.io.files import read_all
from simsample.plugins.readers._kineto import decode as kd
from simsample.plugins.readers._kineto import native as kn
from simsample.plugins.readers._kineto import scan as ks
from simsample.plugins.readers.kineto import read_file
from simsample.reading import load_workload
from tests.helpers import SHARED_DATA, kineto_traces, shared_path

native = pytest.mark.skipif(not kn.AVAILABLE, reason=f"compiled extractor unavailable: {kn.REASON}")
_SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def test_extension_present_when_required():
    """CI sets SIMSAMPLE_REQUIRE_NATIVE=1: the compiled extractor must be built and picked there."""
    if os.environ.get("SIMSAMPLE_REQUIRE_NATIVE", "") in ("", "0"):
        pytest.skip("SIMSAMPLE_REQUIRE_NATIVE is not set")
    from simsample import _kineto_events  # noqa: F401  (ImportError here: the extension was not built)

    if not os.environ.get("SIMSAMPLE_PURE_PYTHON"):
        assert kn.AVAILABLE, kn.REASON
        f = shared_path("profiles", "kineto", "hta", "trace_filter", "sampled_rank-0.json.gz")
        assert read_file(f)["scan"]["engine"] == "native"


# --- comparing results ---------------------------------------------------------------------------
def _reference(raw: bytes) -> dict[str, Any] | str:
    """The json-module path's result for a trace text, or the type of the error it raised."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "trace.json"
        path.write_bytes(raw)
        try:
            return read_file(path, fast=False)
        except Exception as exc:  # the reference may fail in any way; the extractor must refuse then
            return type(exc).__name__


def _same_as_reference(got: tuple[dict[str, Any], dict[str, Any], int], ref: dict[str, Any]) -> None:
    arrays, meta, memcpy = got
    want = ref["arrays"]
    assert list(arrays) == list(want)
    assert list(map(str, arrays["name"])) == list(map(str, want["name"]))
    for col in arrays:
        if col != "name":
            assert arrays[col].dtype == np.int64 and np.array_equal(arrays[col], want[col]), col
    assert memcpy == ref["memcpy"]
    assert meta == _floats(ref["meta"])


def _floats(value: Any) -> Any:
    """A value from the json-module path with its floats, kept there as their text, as floats."""
    if isinstance(value, ks.FloatText):
        return float(value)
    if isinstance(value, dict):
        return {k: _floats(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_floats(v) for v in value]
    return value


def _identical(a: tuple[dict[str, Any], dict[str, Any], int], b: tuple[dict[str, Any], dict[str, Any], int]) -> None:
    """Exactly the same (arrays, meta, memcpy), categories in the same order."""
    assert list(a[0]) == list(b[0])
    for col in a[0]:
        x, y = a[0][col], b[0][col]
        if col == "name":
            assert list(x.categories) == list(y.categories) and np.array_equal(x.codes, y.codes)
        else:
            assert x.dtype == y.dtype and np.array_equal(x, y), col
    assert a[1] == b[1] and a[2] == b[2]


# --- real traces ---------------------------------------------------------------------------------
@native
@pytest.mark.parametrize("path", kineto_traces() or [None], ids=lambda p: p.name if p else "none")
def test_real_traces_equal_the_python_paths(path):
    if path is None:
        shared_path("profiles", "kineto")  # skips: no development data
    part = read_file(path)
    assert part["scan"]["engine"] == "native"
    _same_as_reference((part["arrays"], part["meta"], part["memcpy"]), read_file(path, fast=False))
    if kd.AVAILABLE:
        _identical((part["arrays"], part["meta"], part["memcpy"]), kd.decode(read_all(path)))


# --- generated traces ----------------------------------------------------------------------------
class Num(str):
    """A JSON number written exactly as this text."""


class Obj(list):
    """A JSON object as a list of (key, value) pairs, in any order."""


def _dump(value: Any, layout: tuple[str, str, str, bool]) -> str:
    """JSON text of a value with the given whitespace (item separator, key separator, padding
    inside brackets) and escaping of non-ASCII characters."""
    item, colon, pad, ascii_only = layout
    if isinstance(value, Num):
        return str(value)
    if isinstance(value, str) or value is None or isinstance(value, bool):
        return json.dumps(value, ensure_ascii=ascii_only)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Obj):
        inner = item.join(_dump(k, layout) + colon + _dump(v, layout) for k, v in value)
        return "{" + pad + inner + pad + "}" if value else "{}"
    inner = item.join(_dump(v, layout) for v in value)
    return "[" + pad + inner + pad + "]" if value else "[]"


_LAYOUTS = st.tuples(
    st.sampled_from([",", ", ", ",\n  ", ",\r\n\t", " ,\n      "]),
    st.sampled_from([":", ": ", " : ", ":\t"]),
    st.sampled_from(["", " ", "\n    ", "\n"]),
    st.booleans(),
)
_INT64 = st.integers(-(2**63), 2**63 - 1)


@st.composite
def _decimal(draw) -> Num:
    """Decimal microseconds as Kineto writes them: integers or fractions of any length, up to
    times whose nanoseconds come close to the int64 limit."""
    whole = draw(st.one_of(st.integers(0, 10**13), st.integers(0, 9 * 10**15)))
    text = ("-" if draw(st.integers(0, 9)) == 0 else "") + str(whole)
    if draw(st.booleans()):
        text += "." + draw(st.text("0123456789", min_size=1, max_size=12))
    return Num(text)


_NAMES = st.one_of(
    st.sampled_from(
        [
            "volta_sgemm_128x32_tn",
            "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float> >(int)",
            "",
        ]
    ),
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=24),
    st.text('a\\"/\b\f\n\r\t\x00\x1f\u00e9\u2028\U0001f600<>{}[]', max_size=12),
)
_JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), _INT64, _decimal(), st.text(max_size=8)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.lists(st.tuples(st.text(max_size=6), inner), max_size=3).map(Obj)
    ),
    max_leaves=8,
)
_OPTIONAL = ["stream", "correlation", "registers per thread", "shared memory", "device"]
_EXTRA_ARGS = ["External id", "queued", "context", "blocks per SM", "est. achieved occupancy %"]


@st.composite
def _kernel(draw) -> Obj:
    args = [
        ("grid", draw(st.lists(_INT64, min_size=3, max_size=3))),
        ("block", draw(st.lists(st.integers(0, 1024), min_size=3, max_size=3))),
    ]
    args += [(k, draw(_INT64)) for k in _OPTIONAL if draw(st.booleans())]
    args += [(k, draw(_JSON)) for k in _EXTRA_ARGS if draw(st.integers(0, 3)) == 0]
    fields = [
        ("cat", draw(st.sampled_from(["kernel", "Kernel", "KERNEL", "kErnel"]))),
        ("ts", draw(_decimal())),
        ("dur", draw(_decimal())),
        ("args", Obj(draw(st.permutations(args)))),
        ("pid", draw(st.integers(0, 9))),
        ("tid", draw(_JSON)),
    ]
    if draw(st.booleans()):
        fields.append(("ph", "X"))
    if draw(st.integers(0, 9)):
        fields.append(("name", draw(_NAMES)))
    return Obj(draw(st.permutations(fields)))


@st.composite
def _other_event(draw) -> Obj:
    fields: list[tuple[str, Any]] = [
        ("ph", draw(st.sampled_from(["X", "i", "f", "s", "M"]))),
        ("ts", draw(_JSON)),
        ("args", draw(_JSON)),
    ]
    cat = draw(
        st.sampled_from(
            ["cpu_op", "cuda_runtime", "gpu_memcpy", "gpu_memset", "Memcpy", "Memset", "memcpy", "kernel", "", None]
        )
    )
    if cat == "kernel":
        fields[0] = ("ph", draw(st.sampled_from(["i", "f", "s", "B"])))  # not a complete event: no launch
    if cat is not None:
        fields.append(("cat", cat))
    fields += [(k, draw(_JSON)) for k in ("name", "dur", "id", "bp") if draw(st.booleans())]
    return Obj(draw(st.permutations(fields)))


@st.composite
def traces(draw) -> bytes:
    """A whole trace text: kernels among CPU-side events, top-level metadata in any order."""
    events = draw(st.lists(st.one_of(_kernel(), _other_event()), max_size=12))
    events.append(draw(_kernel()))  # at least one kernel: else the extractor defers to the json module
    events = draw(st.permutations(events))
    top: list[tuple[str, Any]] = [("schemaVersion", 1), ("traceEvents", events)]
    top.append(("deviceProperties", [Obj([("id", 0), ("name", draw(_NAMES)), ("totalGlobalMem", draw(_INT64))])]))
    if draw(st.booleans()):
        top.append(("distributedInfo", Obj([("rank", draw(st.integers(0, 7))), ("world_size", 8)])))
    if draw(st.booleans()):
        top.append(("baseTimeNanoseconds", draw(st.one_of(st.integers(0, 2**60), _decimal()))))
    if draw(st.booleans()):
        top.append(("traceName", draw(_JSON)))
    text = _dump(Obj(draw(st.permutations(top))), draw(_LAYOUTS))
    return (draw(st.sampled_from(["", " ", "\n"])) + text + draw(st.sampled_from(["", "\n", " \r\n"]))).encode("utf-8")


@native
@_SETTINGS
@given(raw=traces())
def test_generated_traces_equal_the_python_paths(raw):
    got = kn.extract(raw)
    assert got is not None  # every generated trace is one the extractor takes
    ref = _reference(raw)
    assert isinstance(ref, dict), ref
    _same_as_reference(got, ref)
    decoded = kd.decode(raw)
    if decoded is not None:
        _identical(got, decoded)


_MUTATIONS = st.sampled_from(
    [
        b"",
        b",",
        b"]",
        b"}",
        b'"',
        b"\\",
        b"\x01",
        b"e5",
        b"E-1",
        b".",
        b"-",
        b"0",
        b"\xff",
        b"\xe9",
        b" ",
        b"{",
        b"[",
        b"nul",
    ]
)


@native
@_SETTINGS
@given(raw=traces(), at=st.floats(0, 1), cut=st.integers(0, 3), insert=_MUTATIONS)
def test_extractor_refuses_what_the_python_paths_reject(raw, at, cut, insert):
    """A trace damaged anywhere (bytes removed, a stray byte inserted): the extractor gives the
    json-module path's result or refuses; it never reads a text that path rejects."""
    i = int(at * len(raw))
    damaged = raw[:i] + insert + raw[i + cut :]
    got = kn.extract(damaged)
    if got is not None:
        ref = _reference(damaged)
        assert isinstance(ref, dict), f"accepted a text the json module path rejects ({ref})"
        _same_as_reference(got, ref)


# --- hand-written edge cases ---------------------------------------------------------------------
def _trace(*events: str, top: str = "") -> bytes:
    return ('{"traceEvents": [' + ", ".join(events) + "]" + top + "}").encode()


def _k(
    name: str = '"k"',
    ts: str = "1",
    dur: str = "2",
    args: str = '"grid": [1, 1, 1], "block": [32, 1, 1]',
    cat: str = '"kernel"',
    more: str = "",
) -> str:
    return f'{{"ph": "X", "cat": {cat}, "name": {name}, "ts": {ts}, "dur": {dur}, "args": {{{args}}}{more}}}'


def _check(raw: bytes) -> tuple[dict[str, Any], dict[str, Any], int]:
    got = kn.extract(raw)
    assert got is not None
    ref = _reference(raw)
    assert isinstance(ref, dict), ref
    _same_as_reference(got, ref)
    return got


@native
def test_escaped_and_unicode_names():
    names = [
        r'"q\"uote"',
        r'"back\\slash"',
        r'"sl\/ash"',
        r'"ctl\b\f\n\r\t"',
        r'"caf\u00e9"',
        '"caf\u00e9 raw"',
        r'"smile \ud83d\ude00"',
        r'"nul\u0000"',
        '"\u2028"',
    ]
    got = _check(_trace(*[_k(name=n, ts=str(i)) for i, n in enumerate(names)]))
    assert list(map(str, got[0]["name"])) == [json.loads(n) for n in names]


@native
def test_one_category_per_name_however_it_is_escaped():
    got = _check(_trace(_k(name='"ab"'), _k(name=r'"a\u0062"'), _k(name='"c"'), _k(name=r'"\u0061b"')))
    assert list(got[0]["name"].categories) == ["ab", "c"]
    assert got[0]["name"].codes.tolist() == [0, 0, 1, 0]


@native
@pytest.mark.parametrize(
    "text,ns",
    [
        ("0", 0),
        ("12", 12000),
        ("-3", -3000),
        ("1.5", 1500),
        ("-1.5", -1500),
        ("-0.0005", -1),
        ("0.00049", 0),
        ("0.00050", 1),
        ("1.99995", 2000),
        ("4458676983543.183", 4458676983543183),
        ("1712195495505582.9884", 1712195495505582988),
        ("1.123456789", 1123),
        ("-0", 0),
        ("0.0", 0),
        ("9223372036854775.807", 9223372036854775807),
    ],
)
def test_times_convert_exactly(text, ns):
    got = _check(_trace(_k(ts=text, dur=text)))
    assert got[0]["start_ns"].tolist() == [ns] and got[0]["duration_ns"].tolist() == [ns]


@native
@pytest.mark.parametrize(
    "text", ["1e3", "1.5E-2", "1E+2", "9223372036854775.808", "-9223372036854775.809", "123456789012345678901"]
)
def test_numbers_outside_the_fast_path_are_left_to_python(text, tmp_path):
    raw = _trace(_k(ts=text))
    assert kn.extract(raw) is None
    p = tmp_path / "t.json"
    p.write_bytes(raw)
    part = read_file(p)
    assert part["scan"]["engine"] != "native"


@native
def test_optional_args_defaults_and_sparse_columns():
    full = (
        '"grid": [1, 2, 3], "block": [4, 5, 6], "stream": 7, "correlation": 8, "registers per thread": 9, '
        '"shared memory": 10, "device": 11'
    )
    got = _check(_trace(_k(args=full), _k(args='"grid": [1, 1, 1], "block": [1, 1, 1]')))[0]
    assert (
        got["stream"].tolist() == [7, 0]
        and got["correlation"].tolist() == [8, -1]
        and got["device"].tolist() == [11, 0]
    )
    assert got["regs"].tolist() == [9, 0] and got["shmem"].tolist() == [10, 0]
    assert [got[c].tolist() for c in ("grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z")] == [
        [1, 1],
        [2, 1],
        [3, 1],
        [4, 1],
        [5, 1],
        [6, 1],
    ]
    bare = _check(_trace(_k()))[0]
    assert "regs" not in bare and "shmem" not in bare and bare["correlation"].tolist() == [-1]


@native
@pytest.mark.parametrize(
    "raw",
    [
        _trace(_k(args='"grid": [1, 1], "block": [1, 1, 1]')),  # grid of two
        _trace(_k(args='"grid": [1, 1, 1, 1], "block": [1, 1, 1]')),
        _trace(_k(args='"grid": [1.0, 1, 1], "block": [1, 1, 1]')),
        _trace(_k(args='"grid": [1, 1, 1]')),  # no block
        _trace(_k(args='"grid": [1, 1, 1], "block": [1, 1, 1], "stream": 7.0')),  # a float where an integer belongs
        _trace(_k(args='"grid": [1, 1, 1], "block": [1, 1, 1], "stream": "7"')),
        _trace(_k(args='"grid": [1, 1, 1], "block": [1, 1, 1], "device": null')),
        _trace(_k(args='"grid": [1, 1, 1], "block": [1, 1, 1], "stream": 9223372036854775808')),
        _trace(_k(args='"grid": [1, 1, 1], "grid": [1, 1, 1], "block": [1, 1, 1]')),  # a repeated key
        _trace('{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1}'),  # no args
        _trace(
            '{"ph": "X", "cat": "kernel", "name": "k", "dur": 1, "args": {"grid": [1, 1, 1], "block": [1, 1, 1]}}'
        ),  # no ts
        _trace(_k(ts='"1"')),
        _trace(_k(name="5")),
        _trace(_k(name=r'"\ud800"')),  # a lone surrogate
        _trace(_k(name='"X"')).replace(b"X", b"\xff"),  # a name that is not UTF-8
        _trace(_k(more=', "ph": "X"')),
        _trace(_k(cat=r'"\u212aernel"')),  # Kelvin sign: Unicode-lowercases to "kernel"
        _trace(_k(cat="7")),
        _trace(
            '{"ph": null, "cat": "kernel", "name": "k", "ts": 1, "dur": 1, "args": {"grid": [1, 1, 1], '
            '"block": [1, 1, 1]}}'
        ),
        _trace(_k(), "5"),  # an event that is not an object
        _trace('{"ph": "i", "cat": "kernel", "ts": 1}'),  # no kernel launch at all
        _trace(),
        b"[" + _k().encode() + b"]",  # a bare event array
        _trace(_k(), top=', "traceEvents": []'),
        _trace(_k(), top=', "baseTimeNanoseconds": NaN'),
        _trace(_k(), top=', "x": [' + "[" * 600 + "]" * 600 + "]"),  # nested deeper than the walker goes
        _trace(_k()) + b"x",
        _trace(_k())[:-1],
        _trace(_k() + ","),  # a trailing comma
        _trace(_k(name='"tab\there"')),  # a raw control character in a string
        _trace(_k(more=', "x": 01')),  # a leading zero
        _trace(_k(more=r', "x": "\x"')),  # an invalid escape
        _trace(_k(more=r', "x": "\u12G4"')),
        b"\xef\xbb\xbf" + _trace(_k()),  # a byte-order mark
    ],
)
def test_refused_inputs(raw):
    """Each of these is refused; the Python paths then read the file or name the error."""
    assert kn.extract(raw) is None


def _outcome(path: Path, engine: str | None) -> tuple[str, Any]:
    """What reading a file gives: its launches and metadata, or the error message."""
    try:
        part = read_file(path, engine=engine)
    except FormatError as exc:
        return "error", str(exc)
    arrays = {k: list(map(str, v)) if k == "name" else v.tolist() for k, v in part["arrays"].items()}
    return "read", (arrays, part["meta"], part["memcpy"])


@native
def test_refused_inputs_read_or_fail_as_without_the_extractor(tmp_path):
    """A file the extractor refuses gives what the Python paths gave before it existed: the same
    launches, or the same error."""
    cases = {
        "exponent": _trace(_k(ts="1.4e1")),
        "lone_surrogate": _trace(_k(name=r'"\ud800x"')),
        "cpu_nan": _trace(_k(), '{"ph": "X", "cat": "cpu_op", "args": {"v": NaN}}'),
        "kelvin": _trace(_k(cat=r'"\u212aernel"')),
        "bare_array": b"[" + _k().encode() + b"]",
        "no_grid": _trace('{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1, "args": {"block": [1, 1, 1]}}'),
        "no_args": _trace('{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1}'),
        "truncated": _trace(*[_k(ts=str(i)) for i in range(200)])[:-300],
        "trailing_comma": _trace(_k(), _k() + ","),
        "no_kernel": _trace('{"ph": "X", "cat": "cpu_op", "name": "k", "ts": 1, "dur": 1}'),
    }
    outcomes = {}
    for label, raw in cases.items():
        p = tmp_path / f"{label}.json"
        p.write_bytes(raw)
        outcomes[label] = _outcome(p, None)
        assert outcomes[label] == _outcome(p, "decode"), label
    assert outcomes["exponent"][0] == outcomes["lone_surrogate"][0] == outcomes["kelvin"][0] == "read"
    assert "args.grid" in outcomes["no_grid"][1] and "args.grid" in outcomes["no_args"][1]
    assert "truncated JSON" in outcomes["truncated"][1]


@native
def test_categories_phases_memcpy_and_base_time():
    raw = _trace(
        _k(cat='"Kernel"'),
        _k(cat='"KERNEL"', ts="5"),
        _k(cat=r'"\u006bernel"', ts="6"),
        '{"cat": "kernel", "ph": "i", "ts": 3}',
        '{"cat": "gpu_memcpy", "ph": "X"}',
        '{"cat": "Memset", "ph": "f"}',
        '{"cat": "memcpy"}',
        '{"cat": "kernel", "name": "no ph", "ts": 9, "dur": 1, "args": {"grid": [1, 1, 1], "block": [1, 1, 1]}}',
        '{"name": 5, "ph": 7, "args": [], "ts": "x"}',
        top=(
            ', "baseTimeNanoseconds": 1000000, "deviceProperties": [{"name": "GPU", "clock": 1.5}], '
            '"distributedInfo": {"rank": 3}'
        ),
    )
    arrays, meta, memcpy = _check(raw)
    assert memcpy == 2
    assert arrays["start_ns"].tolist() == [1001000, 1005000, 1006000, 1009000]
    assert meta == {
        "deviceProperties": [{"name": "GPU", "clock": 1.5}],
        "distributedInfo": {"rank": 3},
        "baseTimeNanoseconds": 1000000,
    }
    floating = _check(_trace(_k(), top=', "baseTimeNanoseconds": 1.5'))
    assert floating[0]["start_ns"].tolist() == [1000]  # only an integer base time is added


@native
def test_whitespace_of_any_kind():
    raw = b'\r\n\t {\t"traceEvents"\r\n:\n[\n\t' + _k().replace(", ", ",\r\n\t  ").encode() + b"\n\t]\r\n}\r\n\t "
    _check(raw)


@native
def test_buffers_other_than_bytes():
    raw = _trace(_k())
    for buf in (bytearray(raw), memoryview(raw)):
        got = kn.extract(buf)
        assert got is not None and got[0]["start_ns"].tolist() == [1000]
    with pytest.raises(TypeError):
        kn.extract(memoryview(raw)[::2])


@native
def test_plain_and_compressed_files_read_alike(tmp_path):
    import gzip

    raw = _trace(*[_k(name=f'"k{i % 3}"', ts=f"{i}.25") for i in range(50)])
    plain, packed = tmp_path / "t.json", tmp_path / "t.json.gz"
    plain.write_bytes(raw)
    packed.write_bytes(gzip.compress(raw))
    a, b = read_file(plain), read_file(packed)
    assert a["scan"]["engine"] == b["scan"]["engine"] == "native"
    _identical((a["arrays"], a["meta"], a["memcpy"]), (b["arrays"], b["meta"], b["memcpy"]))
    assert read_file(plain, engine="decode")["scan"]["engine"] == "decode"


_SMALLEST_STREAM = _trace(_k(args='"grid": [1, 1, 1], "block": [32, 1, 1], "stream": -9223372036854775808'), _k(ts="5"))


def test_smallest_int64_is_a_value_not_a_missing_field():
    """The typed decoder once marked absent args with -2**63, so a stream id of -2**63 became the
    default 0; every engine now keeps it (the decoder here, the compiled extractor below)."""
    decoded = kd.decode(_SMALLEST_STREAM)
    assert decoded is not None
    assert decoded[0]["stream"].tolist() == [-(2**63), 0]


@native
def test_smallest_int64_is_a_value_in_the_compiled_extractor_too():
    arrays, _, _ = _check(_SMALLEST_STREAM)
    assert arrays["stream"].tolist() == [-(2**63), 0]
