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

from simsample._version import __version__
from simsample.errors import FormatError, PlanMismatchError, UserError
from simsample.io.files import atomic_write_bytes, check_input_file
from simsample.io.limits import read_bytes_limited
from simsample.plan_checks import check_plan, entry_rules_suffice
from simsample.plan_columns import (
    OPTIONAL_SAMPLE_FIELDS,
    SAMPLE_FIELDS,  # noqa: F401 - re-exported: a sample's keys, in the order written
    check_samples,
    cluster_columns,
    clusters_text,
    process_columns,
    process_text,
    sample_columns,
    sample_lines,
    sample_rules,
    samples_text,
)

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
#: 3: the optional ``estimator.audit`` of a representative plan (launches drawn at random beside
#: the representatives, listed as samples of weight 0; :mod:`simsample.sampling.audit`). Written
#: only by plans that have one.
PLAN_FORMAT_MINOR_AUDIT = 3
#: 4: each sample may carry ``model``, the features' model of the launch's cycles where the design
#: metric is a proxy of them (the estimator fits the cycles on it: :func:`simsample.sampling.estimate._model_line`).
#: Written only by plans that have it.
PLAN_FORMAT_MINOR_MODEL = 4
_KEY_ORDER = (
    "simsample_plan",
    "simsample_plan_minor",
    "created_by",
    "workload",
    "sampler",
    "estimator",
    "prediction",
    "clusters",
    "samples",
    "process",
)
#: Plans of at least this many clusters check and write them as columns
#: (:func:`simsample.plan_columns.cluster_columns`); below, one object each is faster (the
#: columns cost about 0.5 ms whatever their length, an object about 10 microseconds).
CLUSTER_COLUMNS_MIN = 128
#: A sample's keys are :data:`simsample.plan_columns.SAMPLE_FIELDS`, in that order; the ones the
#: schema does not require (``x``) are left out of a sample whose value is missing.
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
        model: np.ndarray | None = None,
    ) -> Plan:
        """Assemble a plan from sampled row positions of ``workload``.

        ``metric`` ``"none"`` marks a workload without any cost column (no speedup).
        ``kind`` is ``"stratified"`` (samples are random draws within clusters: the estimator
        gives a standard error) or ``"representative"`` (one chosen launch per cluster: no
        statistical bound). The predicted speedup is the metric's total over the metric summed
        over the distinct sampled launches.

        ``model``: the features' model of each launch's cycles (workload order), where the design
        metric is a proxy of them; each sample then records its value (format 1.4), so that the
        estimator can see how far the simulated cycles follow it.
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
            "sampled_launches": len(distinct),
            "speedup": speedup,
            "error_bound": error_bound,
            "confidence": confidence,
        }
        prediction.update(extra_prediction or {})
        samples = pd.DataFrame({"kernel_id": ids[rows], "launch": rows, "weight": weights, "cluster": cl})
        if x is not None and np.all(np.isfinite(x)):
            samples["x"] = x
            if model is not None:
                modelled = np.asarray(model, dtype=np.float64)[rows]
                if np.all(np.isfinite(modelled)):
                    samples["model"] = modelled
        return cls(
            workload=wl,
            sampler={"name": sampler.name, "version": str(sampler.version), "params": dict(params), "seed": int(seed)},
            estimator={"kind": kind, "replace": bool(replace)},
            prediction=prediction,
            clusters=sorted(clusters, key=lambda c: c.id),
            samples=samples,
        )

    def __repr__(self) -> str:
        """One line: the sampler, how many samples of how many launches, the bound asked
        (``repr`` of the dataclass would print every sample and cluster)."""
        params = self.sampler.get("params") or {}
        eps = f", eps={params['eps']}" if isinstance(params, Mapping) and params.get("eps") is not None else ""
        launches = self.workload.get("launches")
        of = f"{launches:,}" if isinstance(launches, int) else "?"
        return (
            f"<Plan {self.sampler.get('name', '?')}: {len(self.samples):,} samples of {of} launches, "
            f"{len(self.clusters):,} clusters{eps}>"
        )

    # --- facts -------------------------------------------------------------------------------
    @property
    def workload_clusters(self) -> list[Cluster]:
        """The clusters the workload was divided into: all of them but an audit's (whose one
        cluster spans every launch, drawn at random beside a representative plan; counting it
        with the others doubles the launches and the time)."""
        audit = self.estimator.get("audit") if isinstance(self.estimator, Mapping) else None
        if not isinstance(audit, Mapping):
            return list(self.clusters)
        return [c for c in self.clusters if c.id != int(audit["cluster"])]

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
            {
                "id": c.id,
                "key": c.key,
                "size": c.size,
                "draws": c.draws,
                **c.stats,
                "representatives": len(c.representatives),
            }
            for c in self.clusters
        ]
        return (
            pd.DataFrame(rows).set_index("id")
            if rows
            else pd.DataFrame(columns=["key", "size", "draws", "representatives"])
        )

    # --- serialisation -----------------------------------------------------------------------
    def _head(self, *, clusters: bool = True) -> tuple[dict[str, Any], Any]:
        """The document without its long lists (an empty sample list; the process section with an
        empty entry list where it has one; ``clusters=False``: an empty cluster list too), and the
        process entries (``None`` without them)."""
        doc: dict[str, Any] = {
            "simsample_plan": PLAN_FORMAT_VERSION,
            "simsample_plan_minor": self._minor(),
            "created_by": self.created_by,
            "workload": {k: _jsonable(v) for k, v in self.workload.items()},
            "sampler": _jsonable(self.sampler),
            "estimator": _jsonable(self.estimator),
            "prediction": {k: _jsonable(v) for k, v in self.prediction.items()},
            "clusters": [c.to_json() for c in self.clusters] if clusters else [],
            "samples": [],
        }
        entries = None
        if self.process is not None:
            proc = self.process
            if isinstance(proc, Mapping) and "samples" in proc:
                entries = proc["samples"]
                doc["process"] = {str(k): ([] if k == "samples" else _jsonable(v)) for k, v in proc.items()}
            else:
                doc["process"] = _jsonable(proc)
        return doc, entries

    def _minor(self) -> int:
        """The oldest minor format that holds what this plan has: plans keep their bytes until
        they use an addition."""
        if "model" in self.samples.columns:
            return PLAN_FORMAT_MINOR_MODEL
        if isinstance(self.estimator, Mapping) and self.estimator.get("audit") is not None:
            return PLAN_FORMAT_MINOR_AUDIT
        return PLAN_FORMAT_MINOR if self.process is None else PLAN_FORMAT_MINOR_PROCESS

    def to_json(self, *, samples: bool = True) -> dict[str, Any]:
        """The plan as a JSON-ready dict in canonical key order (``samples=False``: with an empty
        sample list, for writers that handle the samples as columns)."""
        doc, entries = self._head()
        if samples and len(self.samples):
            doc["samples"] = json.loads(b"[" + samples_text(self.samples, _REQUIRED_SAMPLE_FIELDS, indent="") + b"]")
        if entries is not None:
            doc["process"]["samples"] = _jsonable(entries)
        return doc

    def dumps(self) -> str:
        """Canonical text: nested objects indented, one line per cluster and per sample."""
        return self._text().decode("utf-8")

    def _prepare(self, check: str | None = None) -> tuple[dict[str, Any], Any, Any, Any]:
        """The document's head, the process entries, their columns and the clusters' columns
        (``None`` where the column checks cannot vouch for them: the head then lists the clusters
        as objects); with ``check`` (the source named in messages), after validating the plan
        against the schema (the long lists as columns)."""
        doc, entries = self._head(clusters=False)
        many = len(self.clusters) >= CLUSTER_COLUMNS_MIN
        clusters = cluster_columns(self.clusters, plan_schema()) if many else None
        if clusters is None:  # clusters the column check cannot vouch for: the schema reads them all
            doc["clusters"] = [c.to_json() for c in self.clusters]
        cols = process_columns(entries, plan_schema()) if entries is not None else None
        if check is not None:
            if (
                entries is not None and cols is None
            ):  # entries the column check cannot vouch for: the schema reads them all
                validate_document({**doc, "process": {**doc["process"], "samples": _jsonable(entries)}}, source=check)
            validate_document(doc, source=check)
            ids = clusters["id"].tolist() if clusters is not None else _cluster_ids(doc["clusters"])
            _check_samples(self.samples, ids, source=check)
        return doc, entries, cols, clusters

    def _text(self, prepared: tuple[dict[str, Any], Any, Any, Any] | None = None) -> bytes:
        """The canonical text as UTF-8 (of :meth:`_prepare`'s parts, when given)."""
        doc, entries, cols, clusters = prepared or self._prepare()
        parts = {"samples": samples_text(self.samples, _REQUIRED_SAMPLE_FIELDS)}
        if clusters is not None:
            parts["clusters"] = clusters_text(clusters)
        if entries:
            parts["process"] = (
                process_text(cols, indent=" " * 6)
                if cols is not None
                else _rows([_jsonable(e) for e in entries], " " * 6)
            )
        return _render(doc, parts)

    def write(self, path: str | Path) -> None:
        """Validate and write atomically (a failed validation writes nothing).

        The samples and the process entries (up to millions of them) are checked and formatted
        as columns (:mod:`simsample.plan_columns`), not as one Python object each: the rest of the
        document goes through the schema as usual, and the long lists through the schema's item
        rules applied to whole columns. The text is the same as :meth:`dumps` writes.
        """
        prepared = self._prepare(check=str(path))
        entry_columns = prepared[2] if _entry_columns_suffice() else None  # checked once, not twice
        check_plan(self, source=str(path), entry_columns=entry_columns)
        atomic_write_bytes(path, self._text(prepared))

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], *, source: str = "plan") -> Plan:
        """Build from a parsed document after checking its version and schema.

        The samples and process entries are checked as columns when their values have the types
        the schema asks for (what ``json.loads`` gives for a plan written by simsample); anything
        else, and any refusal, goes through the whole schema, whose message names the problem."""
        fast = _columns_of(doc)
        if fast is None:
            validate_document(doc, source=source)
            return cls._assemble(doc, _samples_frame(doc["samples"], doc.get("estimator") or {}, source), source)
        stub, cols = fast
        try:
            return cls._from_columns(doc, stub, cols, source)
        except UserError:
            validate_document(doc, source=source)  # the schema's own message, where it finds the problem
            raise

    @classmethod
    def _from_columns(
        cls, doc: Mapping[str, Any], stub: Mapping[str, Any], cols: Mapping[str, np.ndarray], source: str
    ) -> Plan:
        """Build from a document whose long lists passed the column checks' type rules: ``stub``
        (the document without them) through the schema, the sample columns through its item rule."""
        validate_document(stub, source=source)
        samples = pd.DataFrame(cols)
        _check_samples(samples, _cluster_ids(stub["clusters"]), source=source)
        return cls._assemble(doc, samples, source)

    @classmethod
    def _assemble(cls, doc: Mapping[str, Any], samples: pd.DataFrame, source: str) -> Plan:
        clusters = [Cluster(**c) for c in doc["clusters"]]
        _check_draws(samples, clusters, source)
        plan = cls(
            workload=dict(doc["workload"]),
            sampler=dict(doc["sampler"]),
            estimator=dict(doc["estimator"]),
            prediction=dict(doc["prediction"]),
            clusters=clusters,
            samples=samples,
            created_by=doc["created_by"],
            process=dict(doc["process"]) if doc.get("process") is not None else None,
        )
        check_plan(plan, source=source)  # what the schema cannot say: the parts agree (simsample.plan_checks)
        return plan

    @classmethod
    def read(cls, path: str | Path) -> Plan:
        """Read and validate a plan file; every problem is one :class:`UserError` line."""
        p = check_input_file(path)
        data = read_bytes_limited(p)
        typed = _decode_typed(data)
        if typed is not None:  # the samples decoded straight into columns; any refusal is redone below for its message
            doc, cols = typed
            stub = _columns_stub(doc)
            if stub is not None:
                try:
                    plan = cls._from_columns(doc, stub, cols, str(p))
                except UserError:
                    pass
                else:
                    if not plan.samples.empty:
                        return plan
        try:
            doc = _decode(data)
        except UnicodeDecodeError as exc:
            raise FormatError(p, f"not a text file ({exc})") from exc
        except json.JSONDecodeError as exc:
            raise FormatError(p, f"not valid JSON: {exc.msg}", line=exc.lineno) from exc
        except RecursionError:
            raise FormatError(
                p, "JSON nested too deeply to be a plan; give a plan written by 'simsample plan'"
            ) from None
        bad = _first_non_finite(doc)
        if bad is not None:
            raise FormatError(
                p,
                f"invalid plan at {bad[0]}: {bad[1]} is not a finite number (simsample never writes NaN or infinity: "
                "edited by hand?); make the plan again with 'simsample plan'",
            )
        plan = cls.from_json(doc, source=str(p))
        if plan.samples.empty:  # nothing to apply, run or estimate: every later step would say less
            raise FormatError(p, "the plan has no samples ('samples': []); make a new plan with 'simsample plan'")
        return plan


def _decode(data: bytes) -> Any:
    """The parsed document: by msgspec's decoder (about twice as fast as ``json.loads`` on the
    dicts of 10^5 samples, and the same values), or by ``json.loads`` wherever msgspec refuses
    (malformed JSON, ``NaN``, nesting), so that the messages and the rare extensions stay
    ``json.loads``'s."""
    try:
        import msgspec

        return msgspec.json.decode(data)
    except Exception:  # noqa: BLE001 - any refusal: json.loads decides, and names the problem
        return json.loads(data)


def _first_non_finite(doc: Any, where: str = "") -> tuple[str, float] | None:
    """Where ``doc`` holds ``NaN`` or an infinity, and the value: JSON readers take them,
    simsample never writes them (``allow_nan=False``), so a plan holding one was edited, and its
    numbers cannot be used (a cluster's NaN mean was drawn as a NaN share)."""
    if isinstance(doc, float):
        return None if math.isfinite(doc) else (where, doc)
    items = doc.items() if isinstance(doc, Mapping) else enumerate(doc) if isinstance(doc, list) else ()
    for k, v in items:
        found = _first_non_finite(v, f"{where}/{k}" if where else str(k))
        if found is not None:
            return found
    return None


def _columns_of(doc: Any) -> tuple[dict[str, Any], dict[str, np.ndarray]] | None:
    """A parsed document without its long lists (for the schema) and its samples as columns, when
    both long lists pass the column checks' type rules; ``None`` otherwise."""
    if not isinstance(doc, Mapping) or "samples" not in doc:
        return None
    cols = sample_columns(doc["samples"])
    stub = _columns_stub(doc) if cols is not None else None
    return None if stub is None else (stub, cols)


def _columns_stub(doc: Mapping[str, Any]) -> dict[str, Any] | None:
    """The document without its samples and process entries, for the schema, when the process
    entries pass the column checks' type rules and the schema's sample rule is one the column
    check applies; ``None`` otherwise."""
    schema = plan_schema()
    if not isinstance(doc.get("clusters"), list) or not sample_rules(schema)[1]:
        return None
    stub = {**doc, "samples": []}
    proc = doc.get("process")
    if isinstance(proc, Mapping) and "samples" in proc:
        if process_columns(proc["samples"], schema) is None:
            return None
        stub["process"] = {**proc, "samples": []}
    return stub


@lru_cache(maxsize=1)
def _sample_list_type() -> Any:
    """``list[Sample]`` for msgspec: a sample's fields with the types the schema gives them (no
    other field), decoded straight into small structs instead of one dict each."""
    import msgspec

    sample = msgspec.defstruct(
        "Sample",
        [
            ("kernel_id", int),
            ("launch", int),
            ("weight", float),
            ("cluster", int),
            *((f, float | msgspec.UnsetType, msgspec.UNSET) for f in OPTIONAL_SAMPLE_FIELDS),
        ],
        forbid_unknown_fields=True,
    )
    return list[sample]  # type: ignore[valid-type]


def _decode_typed(data: bytes) -> tuple[dict[str, Any], dict[str, np.ndarray]] | None:
    """A plan file's document (its ``samples`` left empty) and its samples as columns, decoded by
    msgspec with the sample's types; ``None`` for anything that does not decode so (a value of
    another type, a missing or extra field, a number beyond int64, malformed JSON), which then
    goes through ``json.loads`` and the whole schema."""
    from operator import attrgetter

    try:
        import msgspec

        top = msgspec.json.decode(data, type=dict[str, msgspec.Raw])
        if "samples" not in top:
            return None
        items = msgspec.json.decode(top["samples"], type=_sample_list_type())
        doc = {k: msgspec.json.decode(v) for k, v in top.items() if k != "samples"}
        n = len(items)
        cols = {
            f: np.fromiter(map(attrgetter(f), items), dtype=np.int64 if f != "weight" else np.float64, count=n)
            for f in ("kernel_id", "launch", "weight", "cluster")
        }
        optional = {f: list(map(attrgetter(f), items)) for f in OPTIONAL_SAMPLE_FIELDS}
    except Exception:  # noqa: BLE001 - any refusal: the full path decides, and names the problem
        return None
    for f, values in optional.items():  # columns where every sample has one
        if n and msgspec.UNSET not in values:
            cols[f] = np.array(values, dtype=np.float64)
    doc["samples"] = []
    return doc, cols


def _cluster_ids(clusters: Sequence[Any]) -> list[Any]:
    return [c["id"] for c in clusters if isinstance(c, Mapping) and "id" in c]


def _check_samples(samples: pd.DataFrame, ids: Sequence[Any], *, source: str) -> None:
    """The schema's rule for one sample applied to the sample columns (sample by sample, through
    the schema, when the rule is more than the column check applies); ``ids``: the plan's
    cluster ids (checked already)."""
    item, simple = sample_rules(plan_schema())
    if simple:
        check_samples(samples, ids, item, source=source)
        return
    lines = sample_lines(samples, _REQUIRED_SAMPLE_FIELDS)
    clusters = [{"id": i, "key": "", "size": 1, "draws": 0, "stats": {}, "representatives": []} for i in ids]
    stub = {"simsample_plan": PLAN_FORMAT_VERSION, **_stub_head(), "clusters": clusters}
    validate_document({**stub, "samples": [json.loads(t) for t in lines]}, source=source)


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
        raise FormatError(
            source, f"weight {w[i]} is not a finite number ≥ 0; make the plan again", record=f"sample {i}"
        )
    for f in OPTIONAL_SAMPLE_FIELDS:  # columns where every sample has one
        if items and all(s.get(f) is not None for s in items):
            cols[f] = np.array([s[f] for s in items], dtype=np.float64)
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
                f"cluster {c.id} lists {n} sample(s) but records {int(c.draws)} draw(s) (samples listed twice, or a "
                "damaged plan?); make the plan again",
            )


def _jsonable(v: Any) -> Any:
    if isinstance(v, Mapping):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, (str, type(None))):
        return v
    return _num(v)


#: json.dumps(v, ensure_ascii=False, allow_nan=False), without building an encoder per call.
_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False)


def _rows(items: Sequence[Any], indent: str) -> bytes:
    """Items as ``json.dumps`` writes each, one per line after ``indent``, joined by commas."""
    return ",\n".join(indent + _ENCODER.encode(v) for v in items).encode("utf-8")


def _render(doc: Mapping[str, Any], parts: Mapping[str, bytes]) -> bytes:
    """The canonical text of a document (stable key order, ``repr`` floats, no NaN; one line per
    cluster, per sample and per process entry), UTF-8. ``parts``: the text of the samples
    (``"samples"``) and of the process entries (``"process"``) already written one per line, with
    their indentation (they replace ``doc["samples"]`` and the process section's entries)."""
    out = [b"{"]
    keys = [k for k in _KEY_ORDER if k in doc] + [k for k in doc if k not in _KEY_ORDER]
    for i, key in enumerate(keys):
        comma = "," if i < len(keys) - 1 else ""
        value = doc[key]
        if key in ("clusters", "samples"):
            rows = parts[key] if key in parts else (_rows(value, "    ") if value else b"")
            if not rows:
                out.append(f'  "{key}": []{comma}'.encode())
                continue
            out += [f'  "{key}": ['.encode(), rows, f"  ]{comma}".encode()]
        elif key == "process" and isinstance(value, Mapping) and (value.get("samples") or "process" in parts):
            # one line per sampled launch, as for the samples
            head = json.dumps(
                {k: v for k, v in value.items() if k != "samples"}, indent=2, ensure_ascii=False, allow_nan=False
            )
            body = head[:-2] + (',\n  "samples": [' if len(value) > 1 else '\n  "samples": [')
            rows = parts["process"] if "process" in parts else _rows(value["samples"], " " * 6)
            out += [f'  "{key}": {body}'.replace("\n", "\n  ").encode(), rows, f"    ]\n  }}{comma}".encode()]
        else:
            body = json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False)
            body = body.replace("\n", "\n  ")
            out.append(f'  "{key}": {body}{comma}'.encode())
    out.append(b"}\n")
    return b"\n".join(out)


def dumps_document(doc: Mapping[str, Any], *, sample_lines: Sequence[str] | None = None) -> str:
    """Serialise a plan document canonically (stable key order, ``repr`` floats, no NaN).

    ``sample_lines``: the samples already written as JSON objects, one per line (they replace
    ``doc["samples"]``)."""
    parts = {}
    if sample_lines is not None:
        parts["samples"] = ",\n".join("    " + t for t in sample_lines).encode("utf-8")
    return _render(doc, parts).decode("utf-8")


@lru_cache(maxsize=1)
def _entry_columns_suffice() -> bool:
    """Whether the process entries' column check (the schema's rule for an entry) covers
    :func:`simsample.plan_checks.check_process_entries`' checks."""
    try:
        rules = plan_schema()["properties"]["process"]["properties"]["samples"]["items"]["prefixItems"]
    except (KeyError, TypeError):
        return False
    return entry_rules_suffice(rules)


@lru_cache(maxsize=1)
def plan_schema() -> dict[str, Any]:
    """The JSON Schema of the plan format, as shipped in the package."""
    text = resources.files("simsample").joinpath("schemas/plan.schema.json").read_text(encoding="utf-8")
    return json.loads(text)


#: Where the validator generated ahead of time lives (:func:`validator_source`).
VALIDATOR_MODULE = "simsample/io/_plan_validator.py"


@lru_cache(maxsize=1)
def _compiled_validator() -> Callable[[Any], Any]:
    """The plan schema compiled to Python code by fastjsonschema (about 20x faster than the
    reference validator on plans of 10^5 samples); the reference validator only runs when this
    one refuses a document, to name the best-matching problem.

    The code is generated ahead of time (:data:`VALIDATOR_MODULE`, from :func:`validator_source`):
    compiling the schema took 0.02 s of every process that writes or reads a plan. The module
    records the schema it was made from; where that is not the shipped schema (an edited
    schema, a module not regenerated), the schema is compiled here as before."""
    try:
        from simsample.io import _plan_validator as shipped
    except ImportError:  # pragma: no cover - a build without the generated module
        shipped = None
    if shipped is not None and shipped.SCHEMA == plan_schema():
        return shipped.validate
    import fastjsonschema

    return fastjsonschema.compile(plan_schema())


def validator_source() -> str:
    """The source of :data:`VALIDATOR_MODULE`: fastjsonschema's code for the plan schema, the name
    ``validate`` for its entry point, and the schema it was made from (``SCHEMA``).
    ``python scripts/make_plan_validator.py`` writes it; a test checks that it is up to date."""
    import fastjsonschema

    schema = plan_schema()
    code = fastjsonschema.compile_to_code(schema)
    name = fastjsonschema.compile(schema).__name__
    head = (
        "# The plan schema's validator, generated by fastjsonschema from simsample/schemas/plan.schema.json\n"
        "# by `python scripts/make_plan_validator.py` (do not edit; regenerate after changing the schema).\n"
        "# ruff: noqa\n"
    )
    return f"{head}{code}\n\nvalidate = {name}\nSCHEMA = {schema!r}\n"


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


def check_sample_columns(
    samples: pd.DataFrame, clusters: Sequence[Mapping[str, Any]], *, source: str = "plan"
) -> list[str]:
    """Check a plan's samples, held as columns, against the schema's rules for one sample, and
    return them written as JSON objects (one string each, as ``json.dumps`` writes them).

    The rules are read from the published schema, not restated here; a schema whose sample
    rules go beyond numbers with bounds (which this check applies to whole columns) is applied
    sample by sample instead, so the schema stays the contract either way.
    """
    _check_samples(samples, _cluster_ids(clusters), source=source)
    return sample_lines(samples, _REQUIRED_SAMPLE_FIELDS)


def _stub_head() -> dict[str, Any]:
    """The smallest valid document head around clusters and samples (to validate those alone)."""
    z = "0" * 32
    return {
        "created_by": "check",
        "workload": {
            "fingerprint": z,
            "shape_fingerprint": z,
            "source": "",
            "format": "",
            "launches": 0,
            "distinct_kernels": 0,
            "metric": "",
            "metric_total": 0,
        },
        "sampler": {"name": "check", "version": "0", "params": {}, "seed": 0},
        "estimator": {"kind": "stratified", "replace": False},
        "prediction": {"sampled_launches": 0, "speedup": None, "error_bound": None, "confidence": None},
    }
