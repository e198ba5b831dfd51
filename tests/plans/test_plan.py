"""Plan format: schema, canonical bytes, versions, fingerprints."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simsample.errors import PlanMismatchError, UserError
from simsample.manager import get_host
from simsample.planfile import PLAN_FORMAT_MINOR, PLAN_FORMAT_VERSION, Plan, plan_schema
from simsample.workload import from_records


def _workload(n=200, seed=0):
    rng = np.random.default_rng(seed)
    return from_records(
        {
            "name": rng.choice(["a", "b", "c"], n),
            "grid_x": rng.integers(1, 5, n),
            "block_x": np.full(n, 128),
            "duration_ns": rng.integers(0, 1000, n),
        },
        source="synthetic",
    )


def _plan(seed=0, **params):
    s = get_host().sampler("random")
    wl = _workload()
    return wl, s.plan(wl, s.resolve_params({"rate": "0.1", **params}), seed)


def test_write_read_write_is_byte_identical(tmp_path):
    _, plan = _plan()
    plan.write(tmp_path / "a.json")
    Plan.read(tmp_path / "a.json").write(tmp_path / "b.json")
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()


def test_same_seed_same_bytes_other_seed_other_plan(tmp_path):
    _plan(seed=3)[1].write(tmp_path / "a.json")
    _plan(seed=3)[1].write(tmp_path / "b.json")
    _plan(seed=4)[1].write(tmp_path / "c.json")
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert (tmp_path / "a.json").read_bytes() != (tmp_path / "c.json").read_bytes()


def test_plan_records_what_the_schema_requires(tmp_path):
    wl, plan = _plan()
    doc = plan.to_json()
    assert doc["simsample_plan"] == PLAN_FORMAT_VERSION
    assert doc["workload"]["fingerprint"] == wl.fingerprint
    assert doc["sampler"] == {
        "name": "random",
        "version": "4",
        "params": {"rate": 0.1, "count": None, "speedup": None, "replace": False, "metric": "auto"},
        "seed": 0,
    }
    assert set(doc["samples"][0]) == {"kernel_id", "launch", "weight", "cluster", "x"}
    assert doc["simsample_plan_minor"] == PLAN_FORMAT_MINOR
    design = wl.values(doc["workload"]["metric"])
    assert [s["x"] for s in doc["samples"]] == [float(design[s["launch"]]) for s in doc["samples"]]
    assert doc["prediction"]["sampled_launches"] == 20
    assert plan_schema()["properties"]["simsample_plan"]["type"] == "integer"


def test_newer_plan_version_is_refused(tmp_path):
    _, plan = _plan()
    doc = plan.to_json()
    doc["simsample_plan"] = PLAN_FORMAT_VERSION + 1
    (tmp_path / "p.json").write_text(json.dumps(doc))
    with pytest.raises(UserError, match="newer than this simsample reads"):
        Plan.read(tmp_path / "p.json")


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d["samples"][0].update(weight=-1), "samples/0/weight"),
        (lambda d: d.pop("clusters"), "clusters"),
        (lambda d: d["samples"][0].update(cluster=99), "unknown cluster 99"),
        (lambda d: d["workload"].update(fingerprint="xyz"), "fingerprint"),
    ],
)
def test_invalid_plans_are_refused_with_location(tmp_path, mutate, message):
    _, plan = _plan()
    doc = plan.to_json()
    mutate(doc)
    (tmp_path / "p.json").write_text(json.dumps(doc))
    with pytest.raises(UserError, match=message):
        Plan.read(tmp_path / "p.json")


def test_not_json_and_directory(tmp_path):
    (tmp_path / "p.json").write_text("{ not json")
    with pytest.raises(UserError, match="not valid JSON"):
        Plan.read(tmp_path / "p.json")
    with pytest.raises(UserError, match="is a directory"):
        Plan.read(tmp_path)


def test_fingerprint_mismatch():
    _, plan = _plan()
    other = _workload(seed=9)
    with pytest.raises(PlanMismatchError, match="make a plan for these inputs"):
        plan.check_workload(other)


def test_failed_write_leaves_nothing(tmp_path):
    _, plan = _plan()
    plan.samples.loc[0, "weight"] = float("nan")  # not valid JSON number → schema rejects
    with pytest.raises(UserError):
        plan.write(tmp_path / "p.json")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("weight, shown", [(float("nan"), "nan"), (float("inf"), "inf"), (-2.5, "-2.5")])
def test_bad_weight_message_shows_the_value_as_written(tmp_path, weight, shown):
    """A refused weight is named as the plan file holds it, on one line with the field's path
    (NumPy's repr ``np.float64(nan)`` once leaked into the message)."""
    _, plan = _plan()
    doc = json.loads(plan.dumps())
    doc["samples"][0]["weight"] = weight
    path = tmp_path / "p.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(UserError) as err:
        Plan.read(path)
    message = str(err.value)
    assert "\n" not in message and "np." not in message
    assert "samples/0/weight" in message and f" {shown} " in message


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(min_value=1e-6, max_value=1e12, allow_nan=False), min_size=1, max_size=20))
def test_weights_round_trip_exactly(tmp_path_factory, weights):
    tmp = tmp_path_factory.mktemp("rt")
    _, plan = _plan()
    n = min(len(weights), len(plan.samples))
    plan.samples = plan.samples.iloc[:n].copy()
    plan.samples["weight"] = weights[:n]
    plan.write(tmp / "a.json")
    back = Plan.read(tmp / "a.json")
    assert list(back.samples["weight"]) == list(weights[:n])
    back.write(tmp / "b.json")
    assert (tmp / "a.json").read_bytes() == (tmp / "b.json").read_bytes()


def test_written_files_have_ordinary_permissions(tmp_path):
    import os

    _, plan = _plan()
    plan.write(tmp_path / "p.json")
    umask = os.umask(0)
    os.umask(umask)
    assert (tmp_path / "p.json").stat().st_mode & 0o777 == 0o666 & ~umask


# --- the compiled validator reads the schema exactly as the reference validator does ------------
_JSON_LEAF = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**40), max_value=2**40),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=5),
    st.just("0" * 32),
)
_JSON = st.recursive(
    _JSON_LEAF,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)


def _paths(doc, prefix=()):
    """Every (path, value) of a JSON document, containers included."""
    yield prefix, doc
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _paths(v, (*prefix, i))


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_compiled_validator_agrees_with_the_reference_one(data):
    """Mutate a real plan document at a random place (replace a value, drop or add a key) and
    check that the compiled schema and jsonschema give the same verdict: the compiled one is the
    fast path for every written and read plan, the published schema is the contract."""
    import copy

    import fastjsonschema
    import jsonschema

    from simsample.planfile import _compiled_validator

    doc = copy.deepcopy(_DOC)
    paths = [p for p, _ in _paths(doc) if p]
    path = data.draw(st.sampled_from(paths))
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    action = data.draw(st.sampled_from(["replace", "drop", "add"]))
    if action == "replace":
        parent[path[-1]] = data.draw(_JSON)
    elif action == "drop" and isinstance(parent, dict):
        del parent[path[-1]]
    elif isinstance(parent, dict):
        parent[data.draw(st.text(max_size=6))] = data.draw(_JSON)
    reference = not list(jsonschema.Draft202012Validator(plan_schema()).iter_errors(doc))
    try:
        _compiled_validator()(doc)
        compiled = True
    except fastjsonschema.JsonSchemaValueException:
        compiled = False
    assert compiled == reference, (path, action)


_DOC = json.loads(_plan(seed=3)[1].dumps())


# --- samples checked and written as columns ---------------------------------------------------
@pytest.mark.parametrize("sampler, params", [("random", {"rate": "0.3"}), ("stem", {}), ("root", {}), ("allegro", {})])
def test_written_plan_is_dumps_text_and_satisfies_the_published_schema(tmp_path, sampler, params):
    """The columnar writer gives exactly the text of the dict-based serialiser, and the file it
    writes passes the reference validator: the schema stays the contract."""
    import jsonschema

    s = get_host().sampler(sampler)
    plan = s.plan(_workload(2000, seed=5), s.resolve_params(params), 7)
    plan.write(tmp_path / "p.json")
    text = (tmp_path / "p.json").read_text()
    assert text == plan.dumps()
    jsonschema.Draft202012Validator(plan_schema()).validate(json.loads(text))


_COLUMN_VALUE = st.one_of(
    st.integers(min_value=-5, max_value=5),
    st.floats(min_value=-3, max_value=3),
    st.sampled_from([0.0, -0.0, 1e-300, 2.5, float("nan"), float("inf"), 2**53]),
)


@settings(max_examples=300, deadline=None)
@given(
    field=st.sampled_from(["kernel_id", "launch", "weight", "cluster", "x"]),
    values=st.lists(_COLUMN_VALUE, min_size=1, max_size=6),
)
def test_column_check_agrees_with_the_schema(field, values):
    """Put arbitrary numbers in one sample column: the columnar check refuses exactly the plans
    the reference validator refuses (integers that are not, bounds, non-finite numbers); the
    optional design value ``x`` is left out of a sample where it is missing (NaN)."""
    import jsonschema
    import pandas as pd

    from simsample.planfile import check_sample_columns

    n = len(values)
    cols = {
        "kernel_id": np.arange(n),
        "launch": np.arange(n),
        "weight": np.ones(n),
        "cluster": np.zeros(n, dtype=np.int64),
        "x": np.full(n, 3.5),
    }
    ints = all(isinstance(v, int) for v in values)
    cols[field] = np.array(values, dtype=np.int64 if ints and field not in ("weight", "x") else np.float64)
    frame = pd.DataFrame(cols)
    clusters = [
        {"id": int(c), "key": "k", "size": 1, "draws": 1, "stats": {}, "representatives": []}
        for c in set(frame["cluster"].tolist())
        if np.isfinite(c) and float(c).is_integer()
    ]
    try:
        lines = check_sample_columns(frame, clusters)
        ours = True
    except UserError:
        ours = False
    # the reference: the same numbers as JSON would carry them (non-finite numbers cannot be JSON)
    finite = field == "x" or all(np.isfinite(float(v)) for v in frame[field])  # a missing x is left out
    if finite:
        items = [
            {
                f: (int(frame[f][i]) if frame[f].dtype.kind in "iu" else float(frame[f][i]))
                for f in cols
                if not (f == "x" and not np.isfinite(frame[f][i]))
            }
            for i in range(n)
        ]
        schema = plan_schema()["properties"]["samples"]
        reference = not list(jsonschema.Draft202012Validator(schema).iter_errors(items))
        reference = reference and all(it["cluster"] in {c["id"] for c in clusters} for it in items)
    else:
        reference = False
    assert ours == reference
    if ours:
        assert [json.loads(t) for t in lines] == items


def test_a_format_1_0_plan_without_design_values_still_reads_and_estimates(tmp_path):
    from simsample.sampling.estimate import estimate_total

    wl, plan = _plan()
    doc = plan.to_json()
    del doc["simsample_plan_minor"]
    for s in doc["samples"]:
        del s["x"]
    (tmp_path / "old.json").write_text(json.dumps(doc))
    old = Plan.read(tmp_path / "old.json")
    assert "x" not in old.samples.columns
    values = pd.Series(wl.values(doc["workload"]["metric"]), index=wl.kernels["kernel_id"].to_numpy())
    e = estimate_total(old, values)
    assert e.estimate == pytest.approx(estimate_total(plan, values).estimate)
    assert e.std_error is not None and e.std_error > 0


# --- the columnar writer and reader against a straightforward reference ------------------------
EXAMPLE = (
    __import__("pathlib").Path(__file__).resolve().parents[2] / "examples" / "profile" / "train_step.pt.trace.json.gz"
)


def _reference_jsonable(v):
    """The serialiser's rules as first written: numbers through ``float``/``int``, NaN as null."""
    import math
    from collections.abc import Mapping

    if isinstance(v, Mapping):
        return {str(k): _reference_jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_reference_jsonable(x) for x in v]
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    f = float(v)
    return f if math.isfinite(f) else None


def _reference_dumps(plan) -> str:
    """A plan's canonical text, one ``json.dumps`` per sample, cluster and process entry: what the
    columnar writer must reproduce byte for byte."""

    def dumps(v, **kw):
        return json.dumps(v, ensure_ascii=False, allow_nan=False, **kw)

    fields = [f for f in ("kernel_id", "launch", "weight", "cluster", "x") if f in plan.samples.columns]
    samples = [
        {f: v for f, v in zip(fields, map(_reference_jsonable, row)) if v is not None or f != "x"}
        for row in zip(*(plan.samples[f].to_numpy() for f in fields))
    ]
    doc = {
        "simsample_plan": PLAN_FORMAT_VERSION,
        "simsample_plan_minor": PLAN_FORMAT_MINOR if plan.process is None else 2,
        "created_by": plan.created_by,
        "workload": _reference_jsonable(plan.workload),
        "sampler": _reference_jsonable(plan.sampler),
        "estimator": _reference_jsonable(plan.estimator),
        "prediction": _reference_jsonable(plan.prediction),
        "clusters": [c.to_json() for c in plan.clusters],
        "samples": samples,
    }
    if plan.process is not None:
        doc["process"] = _reference_jsonable(plan.process)
    lines = ["{"]
    for i, (key, value) in enumerate(doc.items()):
        comma = "," if i < len(doc) - 1 else ""
        if key in ("clusters", "samples"):
            body = "[" + ",".join(f"\n    {dumps(v)}" for v in value) + "\n  ]" if value else "[]"
        elif key == "process" and value.get("samples"):
            head = dumps({k: v for k, v in value.items() if k != "samples"}, indent=2)
            rows = ",".join(f"\n    {dumps(r)}" for r in value["samples"])
            body = (head[:-2] + ("," if len(value) > 1 else "") + '\n  "samples": [' + rows + "\n  ]\n}").replace(
                "\n", "\n  "
            )
        else:
            body = dumps(value, indent=2).replace("\n", "\n  ")
        lines.append(f'  "{key}": {body}{comma}')
    return "\n".join([*lines, "}"]) + "\n"


def _example_plans():
    """Plans of the bundled profile by several samplers and seeds, with and without filters."""
    from simsample.library import plan as make_plan
    from simsample.library import read
    from simsample.sampling.filters import LaunchFilter, attach_process, prepare

    wl = read(EXAMPLE)
    cases = [
        ("margin", 0, LaunchFilter(), None),
        ("stem", 7, LaunchFilter(), None),
        ("root", 3, LaunchFilter(), None),
        ("random", 11, LaunchFilter(), None),
        ("margin", 3, LaunchFilter(exclude="sgemm"), 5),
        ("stem", 3, LaunchFilter(time_range="20ms-60ms"), None),
    ]
    for sampler, seed, flt, first in cases:
        prep = prepare(wl, [EXAMPLE], flt, first_launch=first)
        p = make_plan(prep.workload, sampler, seed=seed)
        attach_process(p, prep)
        yield f"{sampler}-{seed}", p


@pytest.mark.skipif(not EXAMPLE.exists(), reason="bundled example profile absent")
def test_columnar_writer_is_byte_identical_to_the_reference(tmp_path):
    """The writer that builds the samples' and process entries' text from columns gives the
    bytes of one ``json.dumps`` per item, on real plans (several samplers and seeds, filtered and
    windowed plans with their process sections); a plan read back writes the same bytes again."""
    for name, p in _example_plans():
        reference = _reference_dumps(p)
        assert p.dumps() == reference, name
        p.write(tmp_path / f"{name}.json")
        assert (tmp_path / f"{name}.json").read_text() == reference, name
        back = Plan.read(tmp_path / f"{name}.json")
        assert back.dumps() == reference, name
        pd.testing.assert_frame_equal(back.samples, p.samples.reset_index(drop=True), check_dtype=False)
        assert back.process == json.loads(reference)["process"]


@settings(max_examples=60, deadline=None)
@given(
    weights=st.lists(st.floats(min_value=1e-300, max_value=1e300, allow_nan=False), min_size=1, max_size=30),
    xs=st.lists(
        st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-(2**60), 2**60).map(float)),
        min_size=1,
        max_size=30,
    ),
    ids=st.lists(st.integers(-(2**63), 2**63 - 1), min_size=1, max_size=30),
)
def test_columnar_text_of_odd_numbers_matches_json_dumps(weights, xs, ids):
    """Floats of every magnitude (``repr``'s switch to exponents, -0.0, integral floats past
    2^53), missing design values (NaN: the sample is written without ``x``) and kernel ids at the
    ends of int64 come out as ``json.dumps`` writes them."""
    _, p = _plan()
    n = min(len(weights), len(xs), len(ids), len(p.samples))
    s = p.samples.iloc[:n].copy()
    s["weight"] = weights[:n]
    s["x"] = xs[:n]
    s["kernel_id"] = np.array(ids[:n], dtype=np.int64)
    p.samples = s
    p.clusters = [c for c in p.clusters if c.id in set(s["cluster"])]
    assert p.dumps() == _reference_dumps(p)


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_column_reader_refuses_what_the_schema_refuses_with_its_message(data):
    """Change one value of a sample or of a process entry to any JSON value: reading the
    document through the column checks gives the same plan, or the same one-line refusal, as
    reading it through the whole schema one item at a time."""
    import copy

    from simsample import planfile

    doc = copy.deepcopy(_PROCESS_DOC)
    part = data.draw(st.sampled_from(["samples", "process"]))
    items = doc["samples"] if part == "samples" else doc["process"]["samples"]
    i = data.draw(st.integers(0, len(items) - 1))
    key = data.draw(st.sampled_from(list(items[i]) if part == "samples" else list(range(len(items[i])))))
    if data.draw(st.booleans()):
        items[i][key] = data.draw(_JSON)
    elif part == "samples":
        del items[i][key]
    else:
        items[i].append(data.draw(_JSON))

    def outcome(read):
        try:
            plan = read(doc)
        except UserError as exc:
            return str(exc)
        return plan.dumps()

    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "plan.json"
        path.write_text(json.dumps(doc))
        fast = outcome(lambda d: Plan.from_json(d, source=str(path)))
        from_file = outcome(lambda d: Plan.read(path))  # the samples decoded straight into columns
        slow_columns, typed = planfile._columns_of, planfile._decode_typed
        try:
            planfile._columns_of = lambda d: None
            planfile._decode_typed = lambda data: None
            slow = outcome(lambda d: Plan.from_json(d, source=str(path)))
            slow_file = outcome(lambda d: Plan.read(path))
        finally:
            planfile._columns_of, planfile._decode_typed = slow_columns, typed
    assert fast == slow
    assert from_file == slow_file


def _process_doc():
    from simsample.sampling.filters import LaunchFilter, attach_process, prepare

    wl, p = _plan(seed=5)
    prep = prepare(wl, [], LaunchFilter(), first_launch=3)
    attach_process(p, prep)
    return json.loads(p.dumps())


_PROCESS_DOC = _process_doc()


@settings(max_examples=200, deadline=None)
@given(
    doc=st.recursive(
        st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False), st.text()),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
        max_leaves=12,
    )
)
def test_plan_files_parse_as_json_loads_parses_them(doc):
    """The fast decoder a plan file goes through gives ``json.loads``'s values (big integers,
    every float, any text), so nothing downstream can tell which parser read the file."""
    from simsample.planfile import _decode

    for text in (json.dumps(doc), json.dumps(doc, ensure_ascii=False)):
        data = text.encode("utf-8", "surrogatepass")
        try:
            expected = json.loads(data)
        except ValueError:
            continue
        got = _decode(data)
        assert got == expected and json.dumps(got) == json.dumps(expected)


@settings(max_examples=200, deadline=None)
@given(
    floats=st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64), max_size=40),
    ints=st.lists(st.integers(-(2**63), 2**63 - 1), max_size=40),
    texts=st.lists(st.text(max_size=8), max_size=20),
)
def test_column_text_is_repr_and_json_dumps(floats, ints, texts):
    """Each column's text, as the writer builds it with NumPy, is what Python writes: ``repr``
    for floats (every magnitude, -0.0, integral floats past 2^53), ``str`` for int64, and
    ``json.dumps(..., ensure_ascii=False)`` for names (quotes, escapes, non-ASCII)."""
    from simsample.io import json_columns as jc

    assert jc.decode(jc.float_text(np.array(floats, dtype=np.float64))) == [repr(f) for f in floats]
    assert jc.decode(jc.int_text(np.array(ints, dtype=np.int64))) == [str(i) for i in ints]
    clean = [t for t in texts if not any(0xD800 <= ord(c) <= 0xDFFF for c in t)]  # NUL included: JSON escapes it
    assert jc.decode(jc.string_text(clean)) == [json.dumps(t, ensure_ascii=False) for t in clean]
