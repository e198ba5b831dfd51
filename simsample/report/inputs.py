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


def _read_json(path: Path, what: str) -> Any:
    p = check_input_file(path)
    try:
        return json.loads(p.read_text(encoding="utf-8"))
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
        if not isinstance(e, dict) or not isinstance(e.get("metric"), str) or not isinstance(e.get("estimate"), (int, float)):
            raise FormatError(path, f"estimates[{i}]: expected an object with 'metric' and a numeric 'estimate'")
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
