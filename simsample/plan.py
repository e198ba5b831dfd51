"""The plan: which launches to simulate, with which weights, and what the sampler promises.

A plan is a versioned JSON document validated against ``schemas/plan.schema.json`` (shipped in
the package). It is all an adapter needs: it carries the workload's fingerprints (so it cannot
be applied to other traces), the sampler's name, version, parameters and seed, the clusters
with their profile statistics (the estimator borrows a cluster's CoV when it was sampled once),
and the flat list of samples.

Writing is atomic and canonical: the same plan always serialises to the same bytes, and a plan
read and written again is byte-identical.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from simsample import __version__
from simsample.errors import FormatError, PlanMismatchError, UserError
from simsample.fileio import atomic_write_text, check_input_file

if TYPE_CHECKING:
    from simsample.api import Sampler
    from simsample.workload import Workload

#: Version of the plan format this package writes and the newest it reads.
PLAN_FORMAT_VERSION = 1
_KEY_ORDER = ("simsample_plan", "created_by", "workload", "sampler", "estimator", "prediction", "clusters", "samples")


@dataclass
class Cluster:
    """A group of launches that one or more samples stand for.

    ``size`` is the number of launches (N_i), ``draws`` the number of samples drawn (m_i, with
    repeats when drawing with replacement), ``stats`` the profile's statistics of the sampler's
    metric over the members (``mean``, ``std``, ``cov``, ``total``), ``representatives`` the
    distinct sampled kernel ids.
    """

    id: int
    key: str
    size: int
    draws: int
    stats: dict[str, float]
    representatives: list[int]

    def to_json(self) -> dict[str, Any]:
        return {
            "id": int(self.id),
            "key": str(self.key),
            "size": int(self.size),
            "draws": int(self.draws),
            "stats": {k: _num(v) for k, v in self.stats.items()},
            "representatives": [int(r) for r in self.representatives],
        }


def _num(v: Any) -> Any:
    if v is None:
        return None
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    f = float(v)
    if not math.isfinite(f):
        return None
    return f


@dataclass
class Plan:
    """A sampling plan. ``samples`` is a table with ``kernel_id``, ``launch``, ``weight``, ``cluster``."""

    workload: dict[str, Any]
    sampler: dict[str, Any]
    estimator: dict[str, Any]
    prediction: dict[str, Any]
    clusters: list[Cluster]
    samples: pd.DataFrame
    created_by: str = field(default_factory=lambda: f"simsample {__version__}")

    # --- construction ------------------------------------------------------------------------
    @classmethod
    def build(
        cls,
        workload: Workload,
        sampler: Sampler,
        params: Mapping[str, Any],
        seed: int,
        *,
        metric: str,
        rows: Sequence[int] | np.ndarray,
        weights: Sequence[float] | np.ndarray,
        cluster_of_row: Sequence[int] | np.ndarray,
        clusters: list[Cluster],
        kind: str = "stratified",
        replace: bool = False,
        error_bound: float | None = None,
        confidence: float | None = None,
        extra_prediction: Mapping[str, Any] | None = None,
    ) -> Plan:
        """Assemble a plan from sampled row positions of ``workload``.

        ``metric`` ``"none"`` marks a workload without any cost column (no speedup).
        ``kind`` is ``"stratified"`` (samples are random draws within clusters: the estimator
        gives a standard error) or ``"representative"`` (one chosen launch per cluster: no
        statistical bound). The predicted speedup is the metric's total over the metric summed
        over the distinct sampled launches.
        """
        rows = np.asarray(rows, dtype=np.int64)
        weights = np.asarray(weights, dtype=np.float64)
        cl = np.asarray(cluster_of_row, dtype=np.int64)
        if not (len(rows) == len(weights) == len(cl)):
            raise ValueError("rows, weights and cluster_of_row differ in length")
        order = np.lexsort((cl, rows))
        rows, weights, cl = rows[order], weights[order], cl[order]
        ids = workload.kernels["kernel_id"].to_numpy(np.int64)
        distinct = np.unique(rows)
        if metric == "none":  # the workload has no cost column: speedup unknown
            total, speedup = 0.0, None
        else:
            values = workload.values(metric)
            total = float(values.sum())
            simulated = float(values[distinct].sum()) if len(distinct) else 0.0
            speedup = total / simulated if simulated > 0 else None
        summary = workload.summary()
        wl = {
            "fingerprint": workload.fingerprint,
            "shape_fingerprint": workload.shape_fingerprint,
            "source": workload.source,
            "format": workload.format,
            "launches": summary["launches"],
            "distinct_kernels": summary["distinct_kernels"],
            "total_time_ns": summary["total_time_ns"],
            "metric": metric,
            "metric_total": total,
        }
        prediction = {
            "sampled_launches": int(len(distinct)),
            "speedup": speedup,
            "error_bound": error_bound,
            "confidence": confidence,
        }
        prediction.update(extra_prediction or {})
        samples = pd.DataFrame(
            {"kernel_id": ids[rows], "launch": rows, "weight": weights, "cluster": cl}
        )
        return cls(
            workload=wl,
            sampler={"name": sampler.name, "version": str(sampler.version), "params": dict(params), "seed": int(seed)},
            estimator={"kind": kind, "replace": bool(replace)},
            prediction=prediction,
            clusters=sorted(clusters, key=lambda c: c.id),
            samples=samples,
        )

    # --- facts -------------------------------------------------------------------------------
    @property
    def sampled_ids(self) -> list[int]:
        """Distinct sampled kernel ids in launch order (what the simulator must run)."""
        s = self.samples.drop_duplicates("kernel_id").sort_values("launch")
        return [int(k) for k in s["kernel_id"]]

    def weights_by_id(self) -> pd.DataFrame:
        """One row per distinct sampled kernel id: summed weight and its cluster, launch order."""
        g = self.samples.groupby("kernel_id", sort=False).agg(
            launch=("launch", "first"), weight=("weight", "sum"), cluster=("cluster", "first")
        )
        return g.sort_values("launch").reset_index()

    def check_workload(self, workload: Workload, *, what: str = "workload") -> None:
        """Refuse a workload whose fingerprint is not the one the plan was made for."""
        if workload.fingerprint != self.workload.get("fingerprint"):
            raise PlanMismatchError(
                f"plan was made for workload {self.workload.get('fingerprint')} "
                f"({self.workload.get('launches')} launches from {self.workload.get('source') or '?'}), "
                f"but {what} {workload.source or ''} has fingerprint {workload.fingerprint} "
                f"({len(workload)} launches): make a plan for these inputs"
            )

    # --- serialisation -----------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """The plan as a JSON-ready dict in canonical key order."""
        samples = [
            {"kernel_id": int(k), "launch": int(p), "weight": _num(w), "cluster": int(c)}
            for k, p, w, c in zip(
                self.samples["kernel_id"].to_numpy(),
                self.samples["launch"].to_numpy(),
                self.samples["weight"].to_numpy(),
                self.samples["cluster"].to_numpy(),
            )
        ]
        return {
            "simsample_plan": PLAN_FORMAT_VERSION,
            "created_by": self.created_by,
            "workload": {k: _jsonable(v) for k, v in self.workload.items()},
            "sampler": _jsonable(self.sampler),
            "estimator": _jsonable(self.estimator),
            "prediction": {k: _jsonable(v) for k, v in self.prediction.items()},
            "clusters": [c.to_json() for c in self.clusters],
            "samples": samples,
        }

    def dumps(self) -> str:
        """Canonical text: nested objects indented, one line per cluster and per sample."""
        return dumps_document(self.to_json())

    def write(self, path: str | Path) -> None:
        """Validate and write atomically (a failed validation writes nothing)."""
        doc = self.to_json()
        validate_document(doc, source=str(path))
        atomic_write_text(path, dumps_document(doc))

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], *, source: str = "plan") -> Plan:
        """Build from a parsed document after checking its version and schema."""
        validate_document(doc, source=source)
        samples = _samples_frame(doc["samples"], doc.get("estimator") or {}, source)
        clusters = [Cluster(**c) for c in doc["clusters"]]
        _check_draws(samples, clusters, source)
        return cls(
            workload=dict(doc["workload"]),
            sampler=dict(doc["sampler"]),
            estimator=dict(doc["estimator"]),
            prediction=dict(doc["prediction"]),
            clusters=clusters,
            samples=samples,
            created_by=doc["created_by"],
        )

    @classmethod
    def read(cls, path: str | Path) -> Plan:
        """Read and validate a plan file; every problem is one :class:`UserError` line."""
        p = check_input_file(path)
        try:
            doc = json.loads(p.read_text(encoding="utf-8"))
        except UnicodeDecodeError as exc:
            raise FormatError(p, f"not a text file ({exc})") from exc
        except json.JSONDecodeError as exc:
            raise FormatError(p, f"not valid JSON: {exc.msg}", line=exc.lineno) from exc
        except RecursionError:
            raise FormatError(p, "JSON nested too deeply to be a plan; give a plan written by 'simsample plan'") from None
        return cls.from_json(doc, source=str(p))


def _samples_frame(items: Sequence[Mapping[str, Any]], estimator: Mapping[str, Any], source: str) -> pd.DataFrame:
    """The samples of a plan document as a table, refusing what the schema lets through but no
    plan can hold: a number beyond int64, a weight that is NaN, infinite or negative."""
    cols: dict[str, np.ndarray] = {}
    for key, dtype in (("kernel_id", np.int64), ("launch", np.int64), ("weight", np.float64), ("cluster", np.int64)):
        try:
            cols[key] = np.array([s[key] for s in items], dtype=dtype)
        except (OverflowError, ValueError, TypeError):
            for i, s in enumerate(items):
                try:
                    np.array([s[key]], dtype=dtype)
                except (OverflowError, ValueError, TypeError):
                    raise FormatError(source, f"{key} {s[key]!r} is out of range", record=f"sample {i}") from None
            raise
    w = cols["weight"]
    bad = ~np.isfinite(w) | (w < 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise FormatError(source, f"weight {w[i]} is not a finite number ≥ 0; make the plan again", record=f"sample {i}")
    return pd.DataFrame(cols)


def _check_draws(samples: pd.DataFrame, clusters: Sequence[Cluster], source: str) -> None:
    """No cluster may list more samples than it records draws: a plan whose samples were listed
    twice (by a script, or a hand edit) would otherwise be applied with summed weights."""
    counts = samples["cluster"].value_counts().to_dict()
    for c in clusters:
        n = int(counts.get(c.id, 0))
        if n > int(c.draws):
            raise FormatError(
                source,
                f"cluster {c.id} lists {n} sample(s) but records {int(c.draws)} draw(s) (samples listed twice, or a damaged "
                "plan?); make the plan again",
            )


def _jsonable(v: Any) -> Any:
    if isinstance(v, Mapping):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, (str, type(None))):
        return v
    return _num(v)


def dumps_document(doc: Mapping[str, Any]) -> str:
    """Serialise a plan document canonically (stable key order, ``repr`` floats, no NaN)."""
    lines = ["{"]
    keys = [k for k in _KEY_ORDER if k in doc] + [k for k in doc if k not in _KEY_ORDER]
    for i, key in enumerate(keys):
        comma = "," if i < len(keys) - 1 else ""
        value = doc[key]
        if key in ("clusters", "samples"):
            if not value:
                lines.append(f'  "{key}": []{comma}')
                continue
            lines.append(f'  "{key}": [')
            for j, item in enumerate(value):
                sep = "," if j < len(value) - 1 else ""
                lines.append("    " + json.dumps(item, ensure_ascii=False, allow_nan=False) + sep)
            lines.append(f"  ]{comma}")
        else:
            body = json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False)
            body = body.replace("\n", "\n  ")
            lines.append(f'  "{key}": {body}{comma}')
    lines.append("}")
    return "\n".join(lines) + "\n"


@lru_cache(maxsize=1)
def plan_schema() -> dict[str, Any]:
    """The JSON Schema of the plan format, as shipped in the package."""
    text = resources.files("simsample").joinpath("schemas/plan.schema.json").read_text(encoding="utf-8")
    return json.loads(text)


def validate_document(doc: Any, *, source: str = "plan") -> None:
    """Check the format version first (a newer plan gets its own message), then the schema."""
    import jsonschema

    if not isinstance(doc, Mapping) or "simsample_plan" not in doc:
        raise UserError(f"{source}: not a simsample plan (no 'simsample_plan' version field)")
    version = doc["simsample_plan"]
    if not isinstance(version, int) or isinstance(version, bool):
        raise UserError(f"{source}: plan format version must be an integer, got {version!r}")
    if version > PLAN_FORMAT_VERSION:
        raise UserError(
            f"{source}: plan format {version} is newer than this simsample reads "
            f"(up to {PLAN_FORMAT_VERSION}); upgrade simsample"
        )
    validator = jsonschema.Draft202012Validator(plan_schema())
    error = jsonschema.exceptions.best_match(validator.iter_errors(doc))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
        raise UserError(f"{source}: invalid plan at {where}: {error.message}")
    ids = {c["id"] for c in doc["clusters"]}
    for s in doc["samples"]:
        if s["cluster"] not in ids:
            raise UserError(f"{source}: sample of kernel {s['kernel_id']} names unknown cluster {s['cluster']}")
