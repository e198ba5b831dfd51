"""Reading the JSON documents that ``estimate --json`` and ``evaluate --json`` print.

Those documents are the source of truth; the report reads them as they are and never recomputes
what they say. Each reader checks only the shape the report relies on, so that a wrong file
(a plan given as an estimate, say) is one clear line naming the file and what was expected.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from simsample.errors import FormatError
from simsample.io.files import check_input_file
from simsample.io.limits import read_text_limited


def _read_json(path: Path, what: str) -> Any:
    p = check_input_file(path)
    try:
        return json.loads(read_text_limited(p))
    except UnicodeDecodeError as exc:
        raise FormatError(p, f"not a text file; expected the JSON output of {what}") from exc
    except json.JSONDecodeError as exc:
        raise FormatError(p, f"not valid JSON ({exc.msg}); expected the output of {what}", line=exc.lineno) from exc


def read_estimate(path: Path) -> dict[str, Any]:
    """``simsample estimate ... --json``: ``{"plan": {...}, "estimates": [{metric, estimate, ...}]}``."""
    what = "'simsample estimate ... --json'"
    doc = _read_json(path, what)
    if not isinstance(doc, dict) or not isinstance(doc.get("estimates"), list) or not isinstance(doc.get("plan"), dict):
        raise FormatError(path, f"expected an object with 'plan' and 'estimates', as written by {what}")
    for i, e in enumerate(doc["estimates"]):
        if not isinstance(e, dict) or not isinstance(e.get("metric"), str) or not (e.get("estimate") is None or isinstance(e.get("estimate"), (int, float))):
            raise FormatError(path, f"estimates[{i}]: expected an object with 'metric' and a numeric 'estimate' (or null: not reported)")
    return doc


def read_evaluation(path: Path) -> dict[str, Any]:
    """``simsample evaluate ... --json``: ``{"workloads": [...], "suite": {...} or [{params, ...}]}``."""
    what = "'simsample evaluate ... --json'"
    doc = _read_json(path, what)
    if not isinstance(doc, dict) or not isinstance(doc.get("workloads"), list) or "suite" not in doc:
        raise FormatError(path, f"expected an object with 'workloads' and 'suite', as written by {what}")
    if not doc["workloads"]:
        raise FormatError(path, "no workloads in this evaluation")
    for i, w in enumerate(doc["workloads"]):
        if not isinstance(w, dict) or not isinstance(w.get("sampler"), str) or not isinstance(w.get("params"), dict):
            raise FormatError(path, f"workloads[{i}]: expected an object with 'sampler' and 'params'")
    suite = doc["suite"]
    if not isinstance(suite, (dict, list)) or (isinstance(suite, list) and not all(isinstance(s, dict) and isinstance(s.get("params"), dict) for s in suite)):
        raise FormatError(path, "'suite' must be an object, or a list of objects with 'params' (a sweep)")
    return doc


def check_estimate_plan(doc: dict[str, Any], plan: Any, path: Path, plan_path: Path) -> None:
    """Refuse an estimate made with another plan: its plan's digest (written by ``estimate
    --json``) or, for an estimate that has none, its sampler and sample count must match."""
    made = doc["plan"]
    mismatch = []
    if made.get("digest") is not None and made.get("digest") != plan.digest:
        mismatch.append("its plan's samples differ" if made.get("fingerprint") == plan.workload.get("fingerprint") else "its plan is of another workload")
    if made.get("sampler") is not None and made.get("sampler") != plan.sampler.get("name"):
        mismatch.append(f"sampler {made.get('sampler')!r}, not {plan.sampler.get('name')!r}")
    if isinstance(made.get("samples"), int) and made["samples"] != len(plan.samples):
        mismatch.append(f"{made['samples']} samples, not {len(plan.samples)}")
    if mismatch:
        raise FormatError(path, f"an estimate made with another plan than {plan_path} ({'; '.join(mismatch)}); give the estimate of this plan")


def check_evaluation_plan(doc: dict[str, Any], plan: Any, path: Path, plan_path: Path) -> None:
    """Refuse an evaluation that does not include the plan's workload (where the evaluation
    records workload fingerprints: ``evaluate --json`` does)."""
    prints = [w.get("fingerprint") for w in doc["workloads"] if w.get("fingerprint")]
    if prints and plan.workload.get("fingerprint") not in prints:
        raise FormatError(path, f"an evaluation of other workloads than the one {plan_path} was made for; evaluate the profile the plan was made from")
