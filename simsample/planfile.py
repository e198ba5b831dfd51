"""The plan file format: which launches to simulate, with which weights, and what the sampler promises.

A plan is a versioned JSON document validated against ``schemas/plan.schema.json`` (shipped in
the package). It is all an adapter needs: it carries the workload's fingerprints (so it cannot
be applied to other traces), the sampler's name, version, parameters and seed, the clusters
with their profile statistics (the estimator borrows a cluster's CoV when it was sampled once),
and the flat list of samples (with each sampled launch's value of the design metric, so that
the estimator can use it as auxiliary variable without the workload at hand).

Writing is atomic and canonical: the same plan always serialises to the same bytes, and a plan
read and written again is byte-identical.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import lazy_loader as lazy
import numpy as np

from simsample import __version__
from simsample.errors import FormatError, PlanMismatchError, UserError
from simsample.io.files import atomic_write_text, check_input_file
from simsample.io.limits import read_text_limited

pd = lazy.load("pandas")

if TYPE_CHECKING:
    from simsample.workload import Workload


class SamplerIdentity(Protocol):
    """What a plan records of the sampler that made it. A protocol rather than
    :class:`simsample.plugin_base.Sampler`, so that the plan does not depend on the plugin API (which
    depends on the plan)."""

    name: str
    version: str

#: Version of the plan format this package writes and the newest it reads.
PLAN_FORMAT_VERSION = 1
#: Compatible additions within the format version. 1: each sample may carry ``x``, the design
#: metric's value of the launch (the estimator's auxiliary variable); plans without it (1.0)
#: still read and estimate.
PLAN_FORMAT_MINOR = 1
#: 2: the optional ``process`` section (where the launches are in the process, the filters the
#: workload went through; :mod:`simsample.sampling.filters`). Written only by plans that have it,
#: so plans without it keep their bytes.
PLAN_FORMAT_MINOR_PROCESS = 2
_KEY_ORDER = ("simsample_plan", "simsample_plan_minor", "created_by", "workload", "sampler", "estimator", "prediction", "clusters", "samples",
              "process")
#: A sample's keys, in the order written; the ones the schema does not require (``x``) are
#: left out of a sample whose value is missing.
SAMPLE_FIELDS = ("kernel_id", "launch", "weight", "cluster", "x")
_REQUIRED_SAMPLE_FIELDS = ("kernel_id", "launch", "weight", "cluster")  # as the schema requires


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
    """A sampling plan. ``samples`` is a table with ``kernel_id``, ``launch``, ``weight``, ``cluster``
    and, when the plan has a design metric, ``x`` (that metric's value of the sampled launch)."""

    workload: dict[str, Any]
    sampler: dict[str, Any]
    estimator: dict[str, Any]
    prediction: dict[str, Any]
    clusters: list[Cluster]
    samples: pd.DataFrame
    created_by: str = field(default_factory=lambda: f"simsample {__version__}")
    #: where the launches are in the process and how the workload was filtered (format 1.2; None before)
    process: dict[str, Any] | None = None

    # --- construction ------------------------------------------------------------------------
    @classmethod
    def build(
        cls,
        workload: Workload,
        sampler: SamplerIdentity,
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
        x = None
        if metric == "none":  # the workload has no cost column: speedup unknown
            total, speedup = 0.0, None
        else:
            values = workload.values(metric)
            x = np.asarray(values, dtype=np.float64)[rows]
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
        if x is not None and np.all(np.isfinite(x)):
            samples["x"] = x
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

    @property
    def digest(self) -> str:
        """A short hash of the workload's fingerprint and the samples (kernel id, weight): what
        an estimate records of its plan, so that ``report`` can refuse an estimate of another
        plan of the same workload (another sampler or seed)."""
        import hashlib

        h = hashlib.sha256(str(self.workload.get("fingerprint")).encode())
        h.update(np.ascontiguousarray(self.samples["kernel_id"].to_numpy(np.int64)).tobytes())
        h.update(np.ascontiguousarray(self.samples["weight"].to_numpy(np.float64)).tobytes())
        return h.hexdigest()[:16]

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

    def to_dataframe(self) -> pd.DataFrame:
        """The samples, one row each, with their cluster's key (the kernel, and the value range of
        a split kernel), size and draws beside them: a plan to read or filter in a notebook."""
        c = self.clusters_dataframe()[["key", "size", "draws"]].add_prefix("cluster_")
        return self.samples.join(c, on="cluster")

    def clusters_dataframe(self) -> pd.DataFrame:
        """The clusters, one row each (indexed by id): key, launches, draws, the design metric's
        statistics over the members, and how many distinct launches represent it."""
        rows = [
            {"id": c.id, "key": c.key, "size": c.size, "draws": c.draws, **c.stats, "representatives": len(c.representatives)}
            for c in self.clusters
        ]
        return pd.DataFrame(rows).set_index("id") if rows else pd.DataFrame(columns=["key", "size", "draws", "representatives"])

    # --- serialisation -----------------------------------------------------------------------
    def to_json(self, *, samples: bool = True) -> dict[str, Any]:
        """The plan as a JSON-ready dict in canonical key order (``samples=False``: with an empty
        sample list, for writers that handle the samples as columns)."""
        rows = []
        if samples:
            fields = [f for f in SAMPLE_FIELDS if f in self.samples.columns]
            cols = [self.samples[f].to_numpy() for f in fields]
            rows = [
                {f: v for f, v in zip(fields, map(_num, values)) if v is not None or f in _REQUIRED_SAMPLE_FIELDS}
                for values in zip(*cols)
            ]
        doc = {
            "simsample_plan": PLAN_FORMAT_VERSION,
            "simsample_plan_minor": PLAN_FORMAT_MINOR if self.process is None else PLAN_FORMAT_MINOR_PROCESS,
            "created_by": self.created_by,
            "workload": {k: _jsonable(v) for k, v in self.workload.items()},
            "sampler": _jsonable(self.sampler),
            "estimator": _jsonable(self.estimator),
            "prediction": {k: _jsonable(v) for k, v in self.prediction.items()},
            "clusters": [c.to_json() for c in self.clusters],
            "samples": rows,
        }
        if self.process is not None:
            doc["process"] = _jsonable(self.process)
        return doc

    def dumps(self) -> str:
        """Canonical text: nested objects indented, one line per cluster and per sample."""
        return dumps_document(self.to_json())

    def write(self, path: str | Path) -> None:
        """Validate and write atomically (a failed validation writes nothing).

        The samples (up to millions of them) are checked and formatted as columns, not as one
        dict each: the rest of the document goes through the schema as usual, and the samples'
        columns through :func:`check_sample_columns`, which applies the schema's item rules to
        whole arrays. The text is the same as :meth:`dumps` writes.
        """
        doc = self.to_json(samples=False)
        validate_document(doc, source=str(path))
        lines = check_sample_columns(self.samples, doc["clusters"], source=str(path))
        atomic_write_text(path, dumps_document(doc, sample_lines=lines))

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
            process=dict(doc["process"]) if doc.get("process") is not None else None,
        )

    @classmethod
    def read(cls, path: str | Path) -> Plan:
        """Read and validate a plan file; every problem is one :class:`UserError` line."""
        p = check_input_file(path)
        try:
            doc = json.loads(read_text_limited(p))
        except UnicodeDecodeError as exc:
            raise FormatError(p, f"not a text file ({exc})") from exc
        except json.JSONDecodeError as exc:
            raise FormatError(p, f"not valid JSON: {exc.msg}", line=exc.lineno) from exc
        except RecursionError:
            raise FormatError(p, "JSON nested too deeply to be a plan; give a plan written by 'simsample plan'") from None
        plan = cls.from_json(doc, source=str(p))
        if plan.samples.empty:  # nothing to apply, run or estimate: every later step would say less
            raise FormatError(p, "the plan has no samples ('samples': []); make a new plan with 'simsample plan'")
        return plan


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
    if items and all(s.get("x") is not None for s in items):  # format 1.1: the design values
        cols["x"] = np.array([s["x"] for s in items], dtype=np.float64)
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


def dumps_document(doc: Mapping[str, Any], *, sample_lines: Sequence[str] | None = None) -> str:
    """Serialise a plan document canonically (stable key order, ``repr`` floats, no NaN).

    ``sample_lines``: the samples already written as JSON objects, one per line (they replace
    ``doc["samples"]``)."""
    if sample_lines is not None:
        doc = {**doc, "samples": sample_lines}
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
            texts = value if key == "samples" and sample_lines is not None else [json.dumps(v, ensure_ascii=False, allow_nan=False) for v in value]
            lines.extend(f"    {t}," for t in texts[:-1])
            lines.append(f"    {texts[-1]}")
            lines.append(f"  ]{comma}")
        elif key == "process" and isinstance(value, Mapping) and value.get("samples"):
            # one line per sampled launch, as for the samples
            head = json.dumps({k: v for k, v in value.items() if k != "samples"}, indent=2, ensure_ascii=False, allow_nan=False)
            rows = [json.dumps(s, ensure_ascii=False, allow_nan=False) for s in value["samples"]]
            body = head[:-2] + (',\n  "samples": [\n' if len(value) > 1 else '\n  "samples": [\n') + ",\n".join(f"    {r}" for r in rows) + "\n  ]\n}"
            body = body.replace("\n", "\n  ")
            lines.append(f'  "{key}": {body}{comma}')
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


@lru_cache(maxsize=1)
def _compiled_validator() -> Callable[[Any], Any]:
    """The plan schema compiled to Python code by fastjsonschema (about 20x faster than the
    reference validator on plans of 10^5 samples); the reference validator only runs when this
    one refuses a document, to name the best-matching problem."""
    import fastjsonschema

    return fastjsonschema.compile(plan_schema())


def validate_document(doc: Any, *, source: str = "plan") -> None:
    """Check the format version first (a newer plan gets its own message), then the schema."""
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
    import fastjsonschema

    try:
        _compiled_validator()(doc)
    except fastjsonschema.JsonSchemaValueException as fast_error:
        import jsonschema

        validator = jsonschema.Draft202012Validator(plan_schema())
        error = jsonschema.exceptions.best_match(validator.iter_errors(doc))
        if error is not None:  # else the two disagree, and the published schema's reading wins
            where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
            raise UserError(f"{source}: invalid plan at {where}: {error.message}") from fast_error
    ids = {c["id"] for c in doc["clusters"]}
    for s in doc["samples"]:
        if s["cluster"] not in ids:
            raise UserError(f"{source}: sample of kernel {s['kernel_id']} names unknown cluster {s['cluster']}")


_COLUMN_KEYWORDS = {"type", "minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum", "description"}


def check_sample_columns(samples: pd.DataFrame, clusters: Sequence[Mapping[str, Any]], *, source: str = "plan") -> list[str]:
    """Check a plan's samples, held as columns, against the schema's rules for one sample, and
    return them written as JSON objects (one string each, as ``json.dumps`` writes them).

    The rules are read from the published schema, not restated here; a schema whose sample
    rules go beyond numbers with bounds (which this check applies to whole columns) is applied
    sample by sample instead, so the schema stays the contract either way.
    """
    item = plan_schema()["properties"]["samples"]["items"]
    props = item.get("properties", {})
    fields = [f for f in SAMPLE_FIELDS if f in samples.columns]
    simple = (
        set(item) <= {"type", "required", "additionalProperties", "properties", "description"}
        and item.get("additionalProperties") is False
        and all(set(rule) <= _COLUMN_KEYWORDS and rule.get("type") in ("integer", "number") for rule in props.values())
        and list(props) == list(SAMPLE_FIELDS)
    )
    required = set(item.get("required", []))
    missing = [f for f in required if f not in samples.columns]
    if missing:
        raise UserError(f"{source}: invalid plan at samples/0: {missing[0]!r} is a required property")
    # Each field's text per sample: ``"name": value``, or nothing for an optional field whose
    # value is missing (NaN), which the sample then leaves out (as to_json does).
    parts: list[list[str]] = []
    present: dict[str, np.ndarray] = {}
    for f in fields:
        col = samples[f].to_numpy()
        if col.dtype.kind in "iu":
            vals = col.astype(np.int64).astype(str).tolist()
            present[f] = np.ones(col.size, dtype=bool)
        else:
            col = col.astype(np.float64)
            present[f] = np.isfinite(col) if f not in required else np.ones(col.size, dtype=bool)
            vals = [repr(x) if math.isfinite(x) else "null" for x in col.tolist()]
        if f in required or present[f].all():
            parts.append([f'"{f}": {v}' for v in vals])
        else:
            parts.append([f'"{f}": {v}' if ok else "" for v, ok in zip(vals, present[f].tolist())])
    lines = ["{" + ", ".join(p for p in row if p) + "}" for row in zip(*parts)]
    if not simple:
        stub = {"simsample_plan": PLAN_FORMAT_VERSION, **_stub_head(), "clusters": list(clusters)}
        validate_document({**stub, "samples": [json.loads(t) for t in lines]}, source=source)
    else:
        for f, rule in props.items():
            if f not in fields:
                continue
            col = samples[f].to_numpy()
            keep = present[f]
            if rule["type"] == "integer" and col.dtype.kind not in "iu":
                as_float = col.astype(np.float64)
                bad = keep & (~np.isfinite(as_float) | (as_float != np.floor(as_float)))
                if bad.any():
                    i = int(np.argmax(bad))
                    raise UserError(f"{source}: invalid plan at samples/{i}/{f}: {lines[i]} has a {f} that is not an integer")
            values = col.astype(np.float64)
            with np.errstate(invalid="ignore"):
                checks = [
                    (~np.isfinite(values), "is not a finite number"),
                    (values < rule["minimum"] if "minimum" in rule else None, f"is less than the minimum of {rule.get('minimum')}"),
                    (values <= rule["exclusiveMinimum"] if "exclusiveMinimum" in rule else None, f"is less than or equal to the minimum of {rule.get('exclusiveMinimum')}"),
                    (values > rule["maximum"] if "maximum" in rule else None, f"is greater than the maximum of {rule.get('maximum')}"),
                    (values >= rule["exclusiveMaximum"] if "exclusiveMaximum" in rule else None, f"is greater than or equal to the maximum of {rule.get('exclusiveMaximum')}"),
                ]
            for bad, what in checks:
                if bad is not None:
                    bad = bad & keep
                    if bad.any():
                        i = int(np.argmax(bad))
                        raise UserError(f"{source}: invalid plan at samples/{i}/{f}: {values[i]!r} {what}")
    known = np.array([c["id"] for c in clusters], dtype=np.int64)
    cl = samples["cluster"].to_numpy()
    unknown = ~np.isin(cl, known)
    if unknown.any():
        i = int(np.argmax(unknown))
        raise UserError(f"{source}: sample of kernel {int(samples['kernel_id'].iloc[i])} names unknown cluster {int(cl[i])}")
    return lines


def _stub_head() -> dict[str, Any]:
    """The smallest valid document head around clusters and samples (to validate those alone)."""
    z = "0" * 32
    return {
        "created_by": "check",
        "workload": {"fingerprint": z, "shape_fingerprint": z, "source": "", "format": "", "launches": 0, "distinct_kernels": 0, "metric": "", "metric_total": 0},
        "sampler": {"name": "check", "version": "0", "params": {}, "seed": 0},
        "estimator": {"kind": "stratified", "replace": False},
        "prediction": {"sampled_launches": 0, "speedup": None, "error_bound": None, "confidence": None},
    }
