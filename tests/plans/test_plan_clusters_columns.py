"""A plan's clusters checked and written as columns, and the plan schema's validator generated
ahead of time: the same bytes and the same refusals as one ``json.dumps`` and one schema check
per cluster."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simsample.planfile as planfile
from simsample.errors import UserError
from simsample.manager import get_host
from simsample.plan_checks import check_plan
from simsample.plan_columns import cluster_columns, clusters_text
from simsample.planfile import VALIDATOR_MODULE, Cluster, Plan, plan_schema, validate_document, validator_source
from tests.helpers import ROOT
from tests.plans.test_plan import _plan, _reference_dumps, _workload


def _margin_plan(**params: str) -> Plan:
    """The default sampler's plan of 2,000 launches: 118 clusters, one draw each (247 at
    ``eps="0.02"``)."""
    s = get_host().sampler("margin")
    return s.plan(_workload(2000), s.resolve_params(params), 0)


def _reference_rows(clusters: list[Cluster]) -> bytes:
    """One ``json.dumps`` per cluster, one per line: the writer's text before the columns."""
    return ",\n".join("    " + json.dumps(c.to_json(), ensure_ascii=False, allow_nan=False) for c in clusters).encode()


_STAT = st.one_of(
    st.none(),
    st.floats(allow_nan=True, allow_infinity=True, min_value=None),
    st.floats(min_value=0.0, allow_nan=False, allow_infinity=False),
    st.integers(-(2**60), 2**60).map(float),
    st.integers(0, 2**60).map(np.float64),
)
_NAMES = ("mean", "std", "cov", "total", "tail")


@st.composite
def _clusters(draw) -> list[Cluster]:
    n = draw(st.integers(0, 12))
    reps_len = draw(st.one_of(st.none(), st.integers(0, 3)))  # None: lists of different lengths
    out = []
    for _ in range(n):
        keep = draw(st.lists(st.booleans(), min_size=4, max_size=4))
        names = ["mean"] + [k for k, on in zip(_NAMES[1:], keep) if on]
        stats = {k: draw(_STAT) for k in names}
        for k in ("std", "cov", "tail"):  # the schema's lower bound (a negative spread sends them to the schema)
            if isinstance(stats.get(k), float) and stats[k] < 0:
                stats[k] = -stats[k]
        m = reps_len if reps_len is not None else draw(st.integers(0, 4))
        out.append(
            Cluster(
                id=draw(st.one_of(st.integers(0, 2**63 - 1), st.integers(0, 10**6).map(np.int64))),
                key=draw(st.text(max_size=12)),
                size=draw(st.integers(1, 2**63 - 1)),
                draws=draw(st.integers(0, 2**40)),
                stats=stats,
                representatives=draw(st.lists(st.integers(-(2**63), 2**63 - 1), min_size=m, max_size=m)),
            )
        )
    return out


@settings(max_examples=150, deadline=None)
@given(clusters=_clusters())
def test_cluster_columns_write_the_bytes_of_one_json_dumps_per_cluster(clusters):
    """Keys with quotes, control characters and any Unicode; statistics missing, null, NaN or
    infinite (written as null), -0.0, integral and huge floats; ids at int64's bounds;
    representatives of equal and of different counts."""
    cols = cluster_columns(clusters, plan_schema())
    assert cols is not None
    assert clusters_text(cols) == _reference_rows(clusters)


@pytest.mark.parametrize(
    "change",
    [
        {"id": -1},
        {"id": True},
        {"id": 2.0},
        {"size": 0},
        {"draws": -3},
        {"key": 7},
        {"stats": {"mean": 1.0, "std": -0.5}},
        {"stats": {"mean": 1.0, "cov": -1e-9}},
        {"stats": {"mean": 1.0, "extra": True}},
        {"stats": {"mean": 1}},
        {"stats": {}},
        {"stats": {"std": 1.0, "mean": 2.0}},  # another order than the other clusters'
        {"representatives": [2**63]},
        {"representatives": (1, 2)},
        {"representatives": [1.5]},
    ],
)
def test_what_the_columns_cannot_vouch_for_goes_through_the_schema(tmp_path, change, monkeypatch):
    """Anything the column check does not accept is written and checked one cluster at a time as
    before: a refusal is the schema's own message, and an accepted plan's bytes are unchanged."""
    monkeypatch.setattr(planfile, "CLUSTER_COLUMNS_MIN", 0)
    plan = _margin_plan()
    c0 = plan.clusters[0]
    for k, v in change.items():
        setattr(c0, k, v)
    assert cluster_columns(plan.clusters, plan_schema()) is None
    path = tmp_path / "p.json"
    try:
        expected = _write_as_before(plan, str(path))
    except UserError as exc:
        with pytest.raises(UserError) as got:
            plan.write(path)
        assert str(got.value) == str(exc)
        assert not path.exists()
    else:
        plan.write(path)
        assert path.read_text() == expected


def _write_as_before(plan: Plan, source: str) -> str:
    """What writing did before the cluster columns: every cluster's object through the schema,
    the samples' rule on columns against those objects' ids, the cross-checks; the reference text."""
    doc = {**plan.to_json(samples=False), "samples": []}
    validate_document(doc, source=source)
    planfile._check_samples(plan.samples, [c["id"] for c in doc["clusters"]], source=source)
    check_plan(plan, source=source)
    return _reference_dumps(plan)


@pytest.mark.parametrize("columns_from", [0, 10**9])
def test_refusals_name_the_same_cluster_as_the_schema(tmp_path, monkeypatch, columns_from):
    """A negative spread in the 3rd cluster: the message names clusters/2/stats/std, as the
    schema check of every cluster did (and does, for plans of few clusters)."""
    monkeypatch.setattr(planfile, "CLUSTER_COLUMNS_MIN", columns_from)
    plan = _margin_plan()
    plan.clusters[2].stats["std"] = -1.0
    with pytest.raises(UserError, match=r"invalid plan at clusters/2/stats/std"):
        plan.write(tmp_path / "p.json")


@pytest.mark.parametrize("columns_from", [0, 128, 10**9])
def test_the_plans_of_many_clusters_are_the_reference_bytes(tmp_path, monkeypatch, columns_from):
    """A plan of a few hundred clusters (margin's plans at scale look like this), with missing
    and NaN statistics in some, written and read back, whether the clusters go as columns or as
    objects."""
    monkeypatch.setattr(planfile, "CLUSTER_COLUMNS_MIN", columns_from)
    plan = _margin_plan(eps="0.02")
    assert len(plan.clusters) >= 128
    for i, c in enumerate(plan.clusters):
        if i % 7 == 0:
            c.stats["tail"] = math.nan
        elif i % 5 == 0:
            c.stats.pop("cov", None)
    assert cluster_columns(plan.clusters, plan_schema()) is not None
    plan.write(tmp_path / "p.json")
    text = (tmp_path / "p.json").read_text()
    assert text == _reference_dumps(plan)
    assert Plan.read(tmp_path / "p.json").dumps() == text


# --- the validator generated ahead of time ---------------------------------------------------
def test_the_shipped_validator_is_generated_from_the_shipped_schema():
    """``python scripts/make_plan_validator.py`` regenerates it; a module made from another schema
    would not be used (the schema would be compiled in each process instead, 0.02 s)."""
    import fastjsonschema

    from simsample.io import _plan_validator as shipped

    assert shipped.SCHEMA == plan_schema(), "the plan schema changed: run python scripts/make_plan_validator.py"
    if shipped.VERSION != fastjsonschema.VERSION:
        pytest.skip(f"generated by fastjsonschema {shipped.VERSION}, {fastjsonschema.VERSION} installed")
    assert (ROOT / VALIDATOR_MODULE).read_text(encoding="utf-8") == validator_source(), (
        "out of date: run python scripts/make_plan_validator.py"
    )


def test_the_shipped_validator_is_the_one_used(monkeypatch):
    from simsample.io import _plan_validator as shipped

    planfile._compiled_validator.cache_clear()
    try:
        assert planfile._compiled_validator() is shipped.validate
        monkeypatch.setattr(shipped, "SCHEMA", {**shipped.SCHEMA, "title": "another schema"})
        planfile._compiled_validator.cache_clear()
        compiled = planfile._compiled_validator()
        assert compiled is not shipped.validate
        assert compiled.__name__ == shipped.validate.__name__  # compiled here from the shipped schema
    finally:
        planfile._compiled_validator.cache_clear()


@pytest.mark.parametrize(
    "mutate",
    [
        lambda d: d["workload"].update(fingerprint="xyz"),
        lambda d: d["sampler"].update(name=""),
        lambda d: d["prediction"].update(confidence=1.5),
        lambda d: d["clusters"][0]["stats"].update(std=-1.0),
        lambda d: d.update(extra=1),
        lambda d: None,
    ],
)
def test_the_shipped_validator_decides_as_a_freshly_compiled_one(mutate):
    import fastjsonschema

    from simsample.io import _plan_validator as shipped

    _, plan = _plan()
    doc = plan.to_json()
    mutate(doc)
    fresh = fastjsonschema.compile(plan_schema())
    outcomes = []
    for check in (shipped.validate, fresh):
        try:
            check(doc)
            outcomes.append(None)
        except fastjsonschema.JsonSchemaValueException as exc:
            outcomes.append((exc.message, exc.path, exc.rule))
    assert outcomes[0] == outcomes[1]


def test_the_generator_script_writes_the_module(tmp_path):
    import subprocess
    import sys

    out = tmp_path / "validator.py"
    script = ROOT / "scripts" / "make_plan_validator.py"
    subprocess.run([sys.executable, str(script), str(out)], check=True, capture_output=True, timeout=120)
    assert out.read_text(encoding="utf-8") == validator_source()
