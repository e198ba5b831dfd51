"""The compiled Kineto extractor scanning one trace on several threads gives one scan's result.

A large trace is cut where elements of ``traceEvents`` seem to start (a ``{`` after ``}`` and a
comma), each part is scanned on its own thread and the parts are merged. A cut is only a guess:
it may fall inside a string, a nested value or a top-level value after the array, and a part that
began at one must never count. Whatever the cuts, the result must be exactly that of one scan:
the same columns, the same names coded in the same order of first appearance, the same memcpy
count and metadata, and the same refusals (a syntax error in any part, a top-level key written
twice across parts). The tests lower the bytes per part (``min_part``) so that small texts split.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simsample.errors import UserError
from simsample.io.files import read_all
from simsample.plugins.readers import kineto
from simsample.plugins.readers._kineto import decode as kd
from simsample.plugins.readers._kineto import native as kn
from tests.helpers import SHARED_DATA, kineto_traces, shared_path
from tests.readers.test_kineto_native import _MUTATIONS, traces

native = pytest.mark.skipif(not kn.AVAILABLE, reason=f"compiled extractor unavailable: {kn.REASON}")
_SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _scan(raw: bytes, threads: int, min_part: int = 1) -> dict[str, Any] | None:
    """The compiled extractor's own result (names as bytes, codes as written)."""
    return kn._native.extract(raw, kn._FIELDS, list(kd.META_KEYS), threads, min_part)


def _same_as_one_scan(raw: bytes, threads: int, min_part: int = 1) -> int:
    """Compares the split scan with one scan field by field; returns how many parts were merged
    (0 when both refused)."""
    one = _scan(raw, 1)
    split = _scan(raw, threads, min_part)
    if one is None:
        assert split is None, "a split scan took a text one scan refuses"
        return 0
    assert split is not None, "a split scan refused a text one scan takes"
    assert one["parts"] == 1
    assert set(one) == set(split)
    for key, want in one.items():
        got = split[key]
        if key == "parts":
            continue
        if isinstance(want, np.ndarray):
            assert got.dtype == want.dtype and np.array_equal(got, want), key
        elif key == "fields":
            assert len(got) == len(want)
            for (values, present), (want_values, want_present) in zip(got, want):
                assert np.array_equal(values, want_values) and present == want_present
        else:
            assert got == want, key
    return int(split["parts"])


# --- real traces ---------------------------------------------------------------------------------
@native
@pytest.mark.parametrize("path", kineto_traces() or [None], ids=lambda p: p.name if p else "none")
def test_real_traces_split_alike(path):
    if path is None:
        shared_path("profiles", "kineto")  # skips: no development data
    raw = read_all(path)
    parts = [_same_as_one_scan(raw, threads) for threads in (2, 3, 5, 8)]
    assert max(parts) > 1, "no real trace was split: the test would test nothing"


# --- generated traces ----------------------------------------------------------------------------
def _kernel(name: str, ts: int, extra: str = "") -> str:
    return (
        f'{{"ph": "X", "cat": "kernel", "name": {name}, "ts": {ts}, "dur": 3.5, '
        f'"args": {{"grid": [{ts % 7 + 1}, 1, 1], "block": [128, 1, 1], "stream": {ts % 3}{extra}}}}}'
    )


def _big_trace(events: int, *, top_after: str = "", top_before: str = "") -> bytes:
    """A trace whose every stretch holds what a cut can land in: strings and nested args values
    holding ``}, {``, CPU-side events, copies, names first met late and names written escaped."""
    out = []
    for i in range(events):
        kind = i % 6
        if kind == 0:
            out.append(_kernel(f'"k{i % 5}"', i))
        elif kind == 1:
            out.append(f'{{"ph": "X", "cat": "cpu_op", "name": "op}}, {{\\"cat\\": \\"kernel\\"}}, {{{i}", "ts": {i}}}')
        elif kind == 2:
            out.append(_kernel(f'"late{i // 60}"', i, extra=', "nested": [{"a": 1}, {"b": [{"c": "}, {"}]}]'))
        elif kind == 3:
            out.append(f'{{"ph": "X", "cat": "gpu_memcpy", "name": "copy", "ts": {i}, "dur": 1}}')
        elif kind == 4:
            out.append(_kernel('"k\\u0031"' if i % 4 else '"k1"', i))  # "k1", escaped or not: one name
        else:
            out.append(f'{{"ph": "i", "args": {{"x": [{{}}, {{}}], "s": "}}, {{ }},\\n{{"}}, "ts": {i}}}')
    body = ",\n  ".join(out)
    text = '{\n  "schemaVersion": 1,' + top_before + '\n  "traceEvents": [\n  ' + body + "\n  ]" + top_after + "\n}\n"
    return text.encode()


_DEVICES = ',\n  "deviceProperties": [{"id": 0, "name": "A100"}, {"id": 1, "name": "A100"}, {"id": 2, "name": "}, {"}]'


@native
@pytest.mark.parametrize("threads", [2, 3, 4, 5, 8])
def test_generated_trace_splits_alike(threads):
    raw = _big_trace(3000, top_after=_DEVICES + ',\n  "baseTimeNanoseconds": 1000')
    assert _same_as_one_scan(raw, threads) > 1
    got = _scan(raw, threads)
    assert got is not None and len(got["start_ns"]) == 1500 and got["memcpy"] == 500
    assert got["names"][:3] == [b"k0", b"late0", b"k1"]  # first appearance order across the parts


@native
def test_names_first_seen_in_a_later_part_come_after():
    first = ", ".join(_kernel('"a"', i) for i in range(200))
    second = ", ".join(_kernel('"b"' if i % 2 else '"\\u0061"', i) for i in range(200))
    raw = ('{"traceEvents": [' + first + ", " + second + "]}").encode()
    assert _same_as_one_scan(raw, 2) == 2
    got = _scan(raw, 2)
    assert got["names"] == [b"a", b"b"] and got["name_codes"].tolist() == [0] * 200 + [0, 1] * 100


@native
def test_a_cut_inside_a_string_is_passed_by():
    """The middle of the text is a string holding ``}, {``: the first part passes the cut by and
    reads to the end alone; the second part's scan, begun inside the string, does not count."""
    pad = "x}, {" * 400
    raw = ('{"traceEvents": [' + _kernel('"a"', 1) + ', {"name": "' + pad + '"}, ' + _kernel('"b"', 2) + "]}").encode()
    assert _same_as_one_scan(raw, 2) == 1


@native
def test_a_cut_beyond_the_array_is_passed_by():
    raw = _big_trace(6, top_after=',\n  "later": [' + ", ".join(['{"x": "}, {"}'] * 400) + "]")
    assert _same_as_one_scan(raw, 2) == 1
    assert _same_as_one_scan(raw, 8) == 1


@native
def test_empty_trace_events_split_alike():
    raw = ('{"traceEvents": [], "later": [' + ", ".join(['{"x": 1}'] * 400) + "]}").encode()
    assert _scan(raw, 1) is not None  # taken (no kernel: the Python side then asks the json module)
    assert _same_as_one_scan(raw, 4) == 1


@native
def test_a_syntax_error_in_a_later_part_is_refused():
    raw = _big_trace(2000)
    at = raw.index(b'"ts"', len(raw) * 3 // 4)
    broken = raw[:at] + b'"ts": 01, ' + raw[at:]  # a leading zero: no JSON
    assert _scan(broken, 1) is None and _scan(broken, 4) is None
    truncated = raw[: len(raw) * 7 // 8]
    assert _scan(truncated, 1) is None and _scan(truncated, 4) is None


@native
def test_a_top_level_key_before_and_after_the_array_is_refused():
    raw = _big_trace(2000, top_before=' "baseTimeNanoseconds": 5,', top_after=',\n  "baseTimeNanoseconds": 5')
    assert _scan(raw, 1) is None and _scan(raw, 4) is None
    once = _big_trace(2000, top_before=' "baseTimeNanoseconds": 5,', top_after=_DEVICES)
    assert _same_as_one_scan(once, 4) > 1
    assert _scan(once, 4)["meta"][list(kd.META_KEYS).index("baseTimeNanoseconds")] == b"5"


@native
def test_a_second_trace_events_after_the_array_is_refused():
    raw = _big_trace(2000, top_after=', "traceEvents": []')
    assert _scan(raw, 1) is None and _scan(raw, 4) is None


@native
def test_small_texts_are_not_split_by_default():
    raw = _big_trace(2000)
    assert len(raw) < kn.MIN_PART_BYTES
    assert kn._native.extract(raw, kn._FIELDS, list(kd.META_KEYS), 8)["parts"] == 1


# --- adversarial texts, cut anywhere -------------------------------------------------------------
_TRICKY_TEXT = st.sampled_from(["}, {", "},{", "}\n,\n{", '}, {"cat": "kernel"}', "]}, {", '\\"}, {', "x"])


@st.composite
def _tricky_traces(draw) -> bytes:
    """Events and top-level values full of what looks like element starts, names met in any
    order and written escaped or not, top-level keys before and after the array (sometimes twice),
    sometimes an empty array, sometimes a stray byte (a syntax error) anywhere."""
    events = []
    for i in range(draw(st.integers(0, 40))):
        kind = draw(st.integers(0, 4))
        name = draw(st.sampled_from(['"a"', '"\\u0061"', '"b"', '"c\\"}, {"', '"\\u00e9"', '"\u00e9"']))
        text = json.dumps(draw(_TRICKY_TEXT))
        if kind <= 1:
            extra = f', "note": {text}' if kind else ', "n": [{"x": [{}, {}]}, {"y": ' + text + "}]"
            events.append(_kernel(name, i, extra))
        elif kind == 2:
            events.append(f'{{"cat": "cpu_op", "name": {text}, "args": {{"s": {text}}}}}')
        elif kind == 3:
            events.append('{"cat": "Memcpy", "ph": "X"}')
        else:
            events.append("{}")
    sep = draw(st.sampled_from([", ", ",\n  ", ",", " ,\n\t"]))
    top_keys = ["baseTimeNanoseconds", "distributedInfo", "deviceProperties", "other"]
    values = ["7", '{"rank": 0, "x": "}, {"}', '[{"id": 0}, {"id": 1, "s": "}, {"}]', '[{}, {"a": "}, {"}]']

    before = draw(st.lists(st.sampled_from(range(4)), max_size=3, unique=True))
    after = draw(st.lists(st.sampled_from([k for k in range(4) if k not in before]), max_size=3, unique=True))
    if before and draw(st.integers(0, 5)) == 0:
        after.append(draw(st.sampled_from(before)))  # a key written twice: refused
    members = [[f'"{top_keys[k]}": {values[k]}' for k in keys] for keys in (before, after)]
    body = "[" + sep.join(events) + "]"
    members_all = [*members[0], f'"traceEvents": {body}', *members[1]]
    raw = ("{" + ", ".join(members_all) + "}").encode()
    if draw(st.integers(0, 5)) == 0:
        at = draw(st.integers(0, len(raw)))
        raw = raw[:at] + draw(_MUTATIONS) + raw[at + draw(st.integers(0, 2)) :]
    return raw


@native
@_SETTINGS
@given(raw=_tricky_traces(), threads=st.integers(2, 8))
def test_tricky_texts_split_alike(raw, threads):
    _same_as_one_scan(raw, threads)


@native
@_SETTINGS
@given(raw=traces(), threads=st.integers(2, 8))
def test_generated_traces_split_alike(raw, threads):
    _same_as_one_scan(raw, threads)


@native
@_SETTINGS
@given(raw=traces(), threads=st.integers(2, 8), at=st.floats(0, 1), cut=st.integers(0, 3), insert=_MUTATIONS)
def test_damaged_traces_split_alike(raw, threads, at, cut, insert):
    i = int(at * len(raw))
    _same_as_one_scan(raw[:i] + insert + raw[i + cut :], threads)


# --- threads chosen by the reader ----------------------------------------------------------------
def test_threads_share_the_cores_among_files(monkeypatch):
    monkeypatch.delenv(kn.THREADS_VARIABLE, raising=False)
    monkeypatch.setattr(kn, "usable_cpus", lambda: 4)
    assert kn.threads() == 4 and kn.threads(2) == 2 and kn.threads(3) == 1 and kn.threads(8) == 1
    monkeypatch.setattr(kn, "usable_cpus", lambda: 64)
    assert kn.threads() == 8
    monkeypatch.setenv(kn.THREADS_VARIABLE, "1")
    assert kn.threads() == 1
    monkeypatch.setenv(kn.THREADS_VARIABLE, "3")
    assert kn.threads(2) == 3
    monkeypatch.setenv(kn.THREADS_VARIABLE, "0")
    with pytest.raises(UserError, match=kn.THREADS_VARIABLE):
        kn.threads()


@native
def test_rank_files_read_at_once_share_the_cores(monkeypatch, tmp_path):
    """Two rank files read at the same time get half the cores each, not all of them each."""
    monkeypatch.delenv(kn.THREADS_VARIABLE, raising=False)
    monkeypatch.setattr(kn, "usable_cpus", lambda: 4)
    monkeypatch.setattr(kineto, "_workers", lambda paths: 2)
    asked = []
    read = kineto.read_file

    def spy(path, **kw):
        asked.append(kw.get("threads"))
        return read(path, **kw)

    monkeypatch.setattr(kineto, "read_file", spy)
    paths = []
    for rank in range(2):
        paths.append(tmp_path / f"rank{rank}.json")
        paths[-1].write_bytes(_big_trace(60))
    got = list(kineto._read_all(paths, [0, 1]))
    assert asked == [2, 2] and len(got) == 2


@native
def test_read_file_splits_alike(monkeypatch, tmp_path):
    """Through the reader (a mapped plain file, a compressed one read into memory): the same
    launches with every thread count, the file split where it may be."""
    import gzip

    monkeypatch.setattr(kn, "MIN_PART_BYTES", 4096)
    raw = _big_trace(3000, top_after=_DEVICES)
    plain = tmp_path / "t.json"
    plain.write_bytes(raw)
    packed = tmp_path / "t.json.gz"
    packed.write_bytes(gzip.compress(raw))
    for path in (plain, packed):
        one = kineto.read_file(path, threads=1)
        for threads in (2, 5):
            got = kineto.read_file(path, threads=threads)
            assert got["scan"]["engine"] == one["scan"]["engine"] == "native"
            assert list(got["arrays"]) == list(one["arrays"])
            for col, want in one["arrays"].items():
                if col == "name":
                    assert list(got["arrays"][col]) == list(want)
                else:
                    assert np.array_equal(got["arrays"][col], want), col
            assert got["meta"] == one["meta"] and got["memcpy"] == one["memcpy"]
