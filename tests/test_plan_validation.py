"""The compiled plan check (fastjsonschema) never accepts what the JSON Schema rejects."""

from __future__ import annotations

import copy
import json

import jsonschema
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simsample.cli import run
from simsample.errors import UserError
from simsample.plan import _fast_validator, plan_schema, validate_document
from simsample.workload import from_records

_json_leaf = st.none() | st.booleans() | st.integers(-5, 5) | st.floats(-2, 2, allow_nan=False) | st.text(max_size=3)
_json = st.recursive(_json_leaf, lambda c: st.lists(c, max_size=2) | st.dictionaries(st.text(max_size=3), c, max_size=2), max_leaves=4)


@pytest.fixture(scope="module")
def plan_doc(tmp_path_factory):
    d = tmp_path_factory.mktemp("plan")
    n = 60
    wl = from_records({"name": ["a", "b", "c"] * (n // 3), "grid_x": [1] * n, "block_x": [32] * n, "duration_ns": np.arange(n) % 7 + 1})
    wl.to_parquet(d / "w.parquet")
    assert run(["plan", str(d / "w.parquet"), "--sampler", "stem", "-o", str(d / "p.json")]) == 0
    return json.loads((d / "p.json").read_text())


def _paths(doc, prefix=()):
    """Every location in the document (objects' keys and arrays' first items)."""
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(doc, list) and doc:
        yield from _paths(doc[0], (*prefix, 0))


def _schema_valid(doc) -> bool:
    return jsonschema.Draft202012Validator(plan_schema()).is_valid(doc)


def _fast_valid(doc) -> bool:
    try:
        _fast_validator()(doc)
        return True
    except Exception:
        return False


def test_valid_plan_passes_both(plan_doc):
    assert _schema_valid(plan_doc) and _fast_valid(plan_doc)
    validate_document(plan_doc)


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_compiled_check_accepts_only_what_the_schema_accepts(plan_doc, data):
    doc = copy.deepcopy(plan_doc)
    paths = [p for p in _paths(doc) if p]
    path = data.draw(st.sampled_from(paths))
    parent = doc
    for k in path[:-1]:
        parent = parent[k]
    if data.draw(st.booleans()) and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = data.draw(_json)
    if _fast_valid(doc):
        assert _schema_valid(doc), path
    if not _schema_valid(doc):
        with pytest.raises(UserError):
            validate_document(doc)
