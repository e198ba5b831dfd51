"""The process entries checked once when a plan is written: the writer's column check (the
schema's rule for an entry) stands in for check_plan's entry-by-entry check only where that rule
is at least as strict; the refusals and their messages stay."""

from __future__ import annotations

import copy

import pytest

import simsample.planfile as planfile
from simsample.errors import UserError
from simsample.library import plan, read
from simsample.plan_checks import ENTRY_RULES, check_process_entries, entry_rules_suffice
from simsample.sampling.filters import LaunchFilter, attach_process, prepare
from tests.helpers import ROOT

EXAMPLE = ROOT / "examples" / "profile" / "train_step.pt.trace.json.gz"
pytestmark = pytest.mark.skipif(not EXAMPLE.exists(), reason="bundled example profile absent")


def _schema_rules() -> list:
    return copy.deepcopy(
        planfile.plan_schema()["properties"]["process"]["properties"]["samples"]["items"]["prefixItems"]
    )


def _plan_with_process():
    wl = read(EXAMPLE)
    prep = prepare(wl, [EXAMPLE], LaunchFilter(), first_launch=5)
    p = plan(prep.workload, "stem", seed=3)
    attach_process(p, prep)
    return p


def test_the_published_schema_says_at_least_what_check_plan_checks():
    assert entry_rules_suffice(_schema_rules())
    assert planfile._entry_columns_suffice()
    assert entry_rules_suffice([dict(r) for r in ENTRY_RULES])


@pytest.mark.parametrize(
    "loosen",
    [
        lambda r: r[1].update(minimum=0),  # launch number 0
        lambda r: r[0].update(type=["integer", "null"]),  # a kernel id may be null
        lambda r: r[3].pop("minimum"),  # a negative grid
        lambda r: r[0].pop("maximum"),  # beyond int64
        lambda r: r[2].update(type=["string", "integer"]),
        lambda r: r[4].update(type="number"),
        lambda r: r.pop(),  # eight positions
        lambda r: r.append({"type": "string"}),  # ten
    ],
)
def test_looser_rules_do_not_stand_in_for_the_check(loosen):
    rules = _schema_rules()
    loosen(rules)
    assert not entry_rules_suffice(rules)


def test_columns_give_what_the_entries_give():
    p = _plan_with_process()
    entries = p.process["samples"]
    cols = planfile.process_columns(entries, planfile.plan_schema())
    assert cols is not None and len(entries) > 100
    assert check_process_entries(entries, "p", columns=cols) == check_process_entries(entries, "p")


@pytest.mark.parametrize(
    "corrupt",
    [
        lambda e: e[0].__setitem__(1, 0),  # launch number 0
        lambda e: e[1].__setitem__(3, -1),  # negative grid_x
        lambda e: e[2].__setitem__(0, True),  # a bool as kernel id
        lambda e: e[0].__setitem__(2, 7),  # a number as name
        lambda e: e[3].append(1),  # ten values
        lambda e: e.append(list(e[0])),  # an entry twice
        lambda e: e[0].__setitem__(1, 2**63),  # beyond int64
    ],
)
def test_writing_refuses_bad_entries_with_the_same_message(tmp_path, monkeypatch, corrupt):
    """The same message as writing with the entries checked twice (as before)."""
    p = _plan_with_process()
    corrupt(p.process["samples"])
    messages = []
    for once in (False, True):
        monkeypatch.setattr(planfile, "_entry_columns_suffice", lambda once=once: once)
        with pytest.raises(UserError) as got:
            p.write(tmp_path / "p.json")
        messages.append(str(got.value))
        assert not (tmp_path / "p.json").exists()
    assert messages[0] == messages[1]


def test_a_looser_schema_keeps_the_second_check(monkeypatch, tmp_path):
    """Were the published rule looser than check_plan's, the writer would check again."""
    rules = _schema_rules()
    rules[1]["minimum"] = 0
    schema = copy.deepcopy(planfile.plan_schema())
    schema["properties"]["process"]["properties"]["samples"]["items"]["prefixItems"] = rules
    monkeypatch.setattr(planfile, "plan_schema", lambda: schema)
    planfile._entry_columns_suffice.cache_clear()
    try:
        assert not planfile._entry_columns_suffice()
        p = _plan_with_process()
        p.process["samples"][0][1] = 0
        monkeypatch.setattr(planfile, "validate_document", lambda *a, **k: None)
        with pytest.raises(UserError, match=r"process/samples/0: launch number 0"):
            p.write(tmp_path / "p.json")
    finally:
        planfile._entry_columns_suffice.cache_clear()
