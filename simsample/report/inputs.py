"""Reading the JSON documents that ``estimate --json`` and ``evaluate --json`` print.

Those documents are the source of truth; the report reads them as they are and never recomputes
what they say. Each reader checks the shape the report relies on, so that a wrong file (a plan
given as an estimate, say) is one clear line naming the file and what was expected, and every
number the report shows for what it is: finite (JSON readers take ``NaN`` and ``Infinity``), of
the right type, within its range (a share in [0, 1], a confidence in (0, 1), counts whole and not
negative), an interval that holds its estimate. A hand-edited document that fails any of these
would otherwise be drawn as if it were a result.
"""

from __future__ import annotations

import json
import math
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


def _number(
    path: Path,
    where: str,
    value: Any,
    *,
    lo: float | None = None,
    hi: float | None = None,
    above: bool = False,
    below: bool = False,
    whole: bool = False,
) -> None:
    """Refuse ``value`` unless it is null or a finite number within [lo, hi] (``above``/``below``:
    strictly), whole with ``whole``; one line naming the file, the field and the range."""
    if value is None:
        return
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if ok and whole:
        ok = float(value).is_integer()
    if ok and lo is not None:
        ok = value > lo if above else value >= lo
    if ok and hi is not None:
        ok = value < hi if below else value <= hi
    if not ok:
        kind = "a whole number" if whole else "a finite number"
        bounds = ""
        if lo is not None and hi is not None:
            bounds = f" {'above' if above else 'from'} {lo:g} {'and below' if below else 'up to'} {hi:g}"
        elif lo is not None:
            bounds = f" {'above' if above else 'of at least'} {lo:g}"
        shown = json.dumps(value) if isinstance(value, (int, float, str, bool)) else type(value).__name__
        raise FormatError(
            path,
            f"{where} is {shown[:40]}; expected {kind}{bounds} or null (a hand-edited file?); write it again with "
            "simsample",
        )


def read_estimate(path: Path) -> dict[str, Any]:
    """``simsample estimate ... --json``: ``{"plan": {...}, "estimates": [{metric, estimate, ...}]}``."""
    what = "'simsample estimate ... --json'"
    doc = _read_json(path, what)
    if not isinstance(doc, dict) or not isinstance(doc.get("estimates"), list) or not isinstance(doc.get("plan"), dict):
        raise FormatError(path, f"expected an object with 'plan' and 'estimates', as written by {what}")
    made = doc["plan"]
    _number(path, "plan.samples", made.get("samples"), lo=0, whole=True)
    _number(path, "plan.confidence", made.get("confidence"), lo=0, hi=1, above=True, below=True)
    _number(path, "plan.error_bound", made.get("error_bound"), lo=0)
    excluded = made.get("excluded")
    if excluded is not None:
        if not isinstance(excluded, dict):
            raise FormatError(path, "plan.excluded: expected an object (launches, time_ns, share)")
        _number(path, "plan.excluded.share", excluded.get("share"), lo=0, hi=1)
        _number(path, "plan.excluded.launches", excluded.get("launches"), lo=0, whole=True)
        _number(path, "plan.excluded.time_ns", excluded.get("time_ns"), lo=0)
    for i, e in enumerate(doc["estimates"]):
        if (
            not isinstance(e, dict)
            or not isinstance(e.get("metric"), str)
            or not (e.get("estimate") is None or isinstance(e.get("estimate"), (int, float)))
        ):
            raise FormatError(
                path,
                f"estimates[{i}]: expected an object with 'metric' and a numeric 'estimate' (or null: not reported)",
            )
        at = f"estimates[{i}] ({e['metric'][:60]})"
        _number(path, f"{at}: estimate", e.get("estimate"))
        _number(path, f"{at}: std_error", e.get("std_error"), lo=0)
        _number(path, f"{at}: ci_low", e.get("ci_low"))
        _number(path, f"{at}: ci_high", e.get("ci_high"))
        _number(path, f"{at}: confidence", e.get("confidence"), lo=0, hi=1, above=True, below=True)
        _number(path, f"{at}: samples", e.get("samples"), lo=0, whole=True)
        _number(path, f"{at}: dof", e.get("dof"), lo=0, above=True)
        _number(path, f"{at}: bias", e.get("bias"))
        _number(path, f"{at}: half_width_pct", e.get("half_width_pct"), lo=0)
        if e.get("kind") is not None and e.get("kind") not in ("total", "ratio"):
            raise FormatError(path, f"{at}: kind {str(e.get('kind'))[:40]!r}; expected 'total' or 'ratio'")
        lo, est, hi = e.get("ci_low"), e.get("estimate"), e.get("ci_high")
        if lo is not None and hi is not None and not (lo <= hi and (est is None or lo <= est <= hi)):
            raise FormatError(
                path,
                f"{at}: the interval [{lo:g}, {hi:g}] does not hold the estimate "
                f"{est if est is None else format(est, 'g')} (a hand-edited file?); write it again with simsample",
            )
    return doc


#: the largest error, speedup or count an evaluation may report: no workload runs 10^30 times its
#: sample or holds 10^30 launches (an edited file's 1.7e308 also broke the charts' scales)
EVALUATION_MAX = 1e30

#: the numbers of an evaluation's workload and suite entries: (field, range keywords of :func:`_number`)
_EVALUATION_NUMBERS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("error_mean_pct", {"lo": 0, "hi": EVALUATION_MAX}),
    ("error_max_pct", {"lo": 0, "hi": EVALUATION_MAX}),
    ("speedup_hmean", {"lo": 0, "above": True, "hi": EVALUATION_MAX}),
    ("sampled_launches_mean", {"lo": 0, "hi": EVALUATION_MAX}),
    ("coverage", {"lo": 0, "hi": 1}),
    ("half_width_median_pct", {"lo": 0, "hi": EVALUATION_MAX}),
    ("launches", {"lo": 0, "whole": True, "hi": EVALUATION_MAX}),
)


def _check_evaluation_numbers(path: Path, where: str, entry: dict[str, Any]) -> None:
    for field, bounds in _EVALUATION_NUMBERS:
        _number(path, f"{where}.{field}", entry.get(field), **bounds)
    params = entry.get("params")
    if isinstance(params, dict):
        _number(path, f"{where}.params.confidence", params.get("confidence"), lo=0, hi=1, above=True, below=True)


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
        _check_evaluation_numbers(path, f"workloads[{i}]", w)
    suite = doc["suite"]
    if not isinstance(suite, (dict, list)) or (
        isinstance(suite, list) and not all(isinstance(s, dict) and isinstance(s.get("params"), dict) for s in suite)
    ):
        raise FormatError(path, "'suite' must be an object, or a list of objects with 'params' (a sweep)")
    if isinstance(suite, list) and not suite:
        raise FormatError(path, "'suite' is an empty sweep; evaluate again")
    for i, point in enumerate(suite if isinstance(suite, list) else [suite]):
        _check_evaluation_numbers(path, f"suite[{i}]" if isinstance(suite, list) else "suite", point)
    return doc


def check_estimate_plan(doc: dict[str, Any], plan: Any, path: Path, plan_path: Path) -> None:
    """Refuse an estimate made with another plan: its plan's digest (written by ``estimate
    --json``) or, for an estimate that has none, its sampler and sample count must match."""
    made = doc["plan"]
    mismatch = []
    if made.get("digest") is not None and made.get("digest") != plan.digest:
        mismatch.append(
            "its plan's samples differ"
            if made.get("fingerprint") == plan.workload.get("fingerprint")
            else "its plan is of another workload"
        )
    if made.get("sampler") is not None and made.get("sampler") != plan.sampler.get("name"):
        mismatch.append(f"sampler {made.get('sampler')!r}, not {plan.sampler.get('name')!r}")
    if isinstance(made.get("samples"), int) and made["samples"] != len(plan.samples):
        mismatch.append(f"{made['samples']} samples, not {len(plan.samples)}")
    if mismatch:
        raise FormatError(
            path,
            f"an estimate made with another plan than {plan_path} ({'; '.join(mismatch)}); give the estimate of this "
            "plan",
        )


def check_evaluation_plan(doc: dict[str, Any], plan: Any, path: Path, plan_path: Path) -> None:
    """Refuse an evaluation that does not include the plan's workload (where the evaluation
    records workload fingerprints: ``evaluate --json`` does)."""
    prints = [w.get("fingerprint") for w in doc["workloads"] if w.get("fingerprint")]
    if prints and plan.workload.get("fingerprint") not in prints:
        raise FormatError(
            path,
            f"an evaluation of other workloads than the one {plan_path} was made for; evaluate the profile the plan "
            "was made from",
        )
