"""Cluster statistics in a plan file: spreads are never negative.

The estimator squares ``std`` and multiplies by ``cov`` and ``tail``; a hand-edited or corrupted plan
with a negative spread would otherwise give a plausible-looking interval instead of a refusal.
"""

from __future__ import annotations

import json

import pytest

import simsample
from simsample.errors import UserError
from tests.helpers import ROOT

EXAMPLE = ROOT / "examples" / "profile" / "train_step.pt.trace.json.gz"


@pytest.fixture(scope="module")
def plan_document(tmp_path_factory: pytest.TempPathFactory) -> dict:
    wl = simsample.read(EXAMPLE)
    path = tmp_path_factory.mktemp("plan") / "plan.json"
    simsample.plan(wl, seed=0).write(path)
    return json.loads(path.read_text())


@pytest.mark.parametrize("stat", ["std", "cov", "tail", "model_cov", "model_tail"])
def test_negative_spread_is_refused(plan_document: dict, stat: str, tmp_path) -> None:
    doc = json.loads(json.dumps(plan_document))
    # model_cov and model_tail are recorded on trace features only: the profile's plan gets one to spoil
    cluster = next((c for c in doc["clusters"] if stat in c["stats"]), doc["clusters"][0])
    cluster["stats"][stat] = -1.0
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(UserError, match=rf"clusters/{doc['clusters'].index(cluster)}/stats/{stat}.*minimum of 0"):
        simsample.Plan.read(bad)


def test_zero_spread_and_negative_mean_are_read(plan_document: dict, tmp_path) -> None:
    # A spread of zero is a cluster of equal launches; the mean and total of a metric carry no sign
    # rule (a user's design metric may be signed).
    doc = json.loads(json.dumps(plan_document))
    doc["clusters"][0]["stats"]["std"] = 0.0
    doc["clusters"][0]["stats"]["mean"] = -3.0
    ok = tmp_path / "ok.json"
    ok.write_text(json.dumps(doc))
    assert len(simsample.Plan.read(ok).samples) == len(doc["samples"])
