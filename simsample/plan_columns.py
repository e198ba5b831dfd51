"""A plan's long lists as columns: its samples and its process entries, checked and written whole.

A plan of a large workload lists 10^5 to 10^6 samples (and as many process entries). Checked and
written one Python object at a time (a dict per sample through the schema validator, then
``json.dumps``) they cost seconds; here each list is handled as NumPy columns: the schema's rule
for one item is applied to whole columns, and the text is built by
:mod:`simsample.io.json_columns`. The rest of the document (clusters, parameters, filters) is
small and goes through the schema and ``json.dumps`` as before.

Every check here is a fast path of the published schema, never a second contract: a list that
does not fit it (an unexpected type, a schema rule these checks do not apply) returns ``None`` or
raises, and the caller then validates the whole document with the schema, whose message the user
gets. The text is byte-identical to ``json.dumps`` of each item (the plan's tests compare them).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from operator import itemgetter
from typing import Any

import numpy as np

from simsample.errors import UserError
from simsample.io import json_columns as jc

#: A sample's keys, in the order written.
SAMPLE_FIELDS = ("kernel_id", "launch", "weight", "cluster", "x", "model")
#: The keys a sample may leave out (format 1.1's design value ``x``, 1.4's ``model`` of the
#: cycles): a column only where every sample has one.
OPTIONAL_SAMPLE_FIELDS = SAMPLE_FIELDS[4:]
#: The schema keywords the column check of a sample's field applies.
_COLUMN_KEYWORDS = {"type", "minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum", "description"}
#: JSON Schema types of a process entry's positions, as Python types (``bool`` is no integer).
_PY_TYPES = {"integer": int, "null": type(None), "string": str}
_ENTRY_KEYWORDS = {"type", "minimum", "maximum", "description"}
#: The mixes of types a process entry's column may hold for :func:`process_text`.
_WRITABLE = ({int}, {str}, {type(None)}, {int, type(None)})


# --- samples ---------------------------------------------------------------------------------
def sample_rules(schema: Mapping[str, Any]) -> tuple[Mapping[str, Any], bool]:
    """The schema's rule for one sample and whether the column check can apply it (numbers with
    bounds only; otherwise the samples go through the schema one by one)."""
    item = schema["properties"]["samples"]["items"]
    props = item.get("properties", {})
    simple = (
        set(item) <= {"type", "required", "additionalProperties", "properties", "description"}
        and item.get("additionalProperties") is False
        and all(set(rule) <= _COLUMN_KEYWORDS and rule.get("type") in ("integer", "number") for rule in props.values())
        and list(props) == list(SAMPLE_FIELDS)
    )
    return item, simple


def sample_fields(samples: Any) -> list[str]:
    return [f for f in SAMPLE_FIELDS if f in samples.columns]


def _present(samples: Any, f: str, required: set[str]) -> np.ndarray:
    col = samples[f].to_numpy()
    if f in required or col.dtype.kind in "iu":
        return np.ones(col.size, dtype=bool)
    return np.isfinite(col.astype(np.float64))


def check_samples(samples: Any, cluster_ids: Sequence[int], item: Mapping[str, Any], *, source: str) -> None:
    """Apply the schema's rule for one sample (``item``, a simple one: see :func:`sample_rules`)
    to the sample columns, and refuse a sample naming a cluster the plan does not have. A missing
    optional value (NaN ``x``) is no error: the sample is written without it."""
    props = item.get("properties", {})
    required = set(item.get("required", []))
    missing = [f for f in item.get("required", []) if f not in samples.columns]
    if missing:
        raise UserError(f"{source}: invalid plan at samples/0: {missing[0]!r} is a required property")
    fields = sample_fields(samples)
    for f, rule in props.items():
        if f not in fields:
            continue
        col = samples[f].to_numpy()
        keep = _present(samples, f, required)
        if rule["type"] == "integer" and col.dtype.kind not in "iu":
            as_float = col.astype(np.float64)
            with np.errstate(invalid="ignore"):
                bad = keep & (~np.isfinite(as_float) | (as_float != np.floor(as_float)))
            if bad.any():
                i = int(np.argmax(bad))
                raise UserError(
                    f"{source}: invalid plan at samples/{i}/{f}: {_sample_line(samples, i)} has a {f} that is not an "
                    "integer"
                )
        values = col.astype(np.float64)
        with np.errstate(invalid="ignore"):
            checks = [
                (~np.isfinite(values), "is not a finite number"),
                (
                    values < rule["minimum"] if "minimum" in rule else None,
                    f"is less than the minimum of {rule.get('minimum')}",
                ),
                (
                    values <= rule["exclusiveMinimum"] if "exclusiveMinimum" in rule else None,
                    f"is less than or equal to the minimum of {rule.get('exclusiveMinimum')}",
                ),
                (
                    values > rule["maximum"] if "maximum" in rule else None,
                    f"is greater than the maximum of {rule.get('maximum')}",
                ),
                (
                    values >= rule["exclusiveMaximum"] if "exclusiveMaximum" in rule else None,
                    f"is greater than or equal to the maximum of {rule.get('exclusiveMaximum')}",
                ),
            ]
        for bad, what in checks:
            if bad is not None:
                bad = bad & keep
                if bad.any():
                    i = int(np.argmax(bad))
                    raise UserError(
                        f"{source}: invalid plan at samples/{i}/{f}: {_shown(col[i])} {what}; make the plan again"
                    )
    known = np.asarray(list(cluster_ids), dtype=np.int64)
    cl = samples["cluster"].to_numpy()
    unknown = ~np.isin(cl, known)
    if unknown.any():
        i = int(np.argmax(unknown))
        raise UserError(
            f"{source}: sample of kernel {int(samples['kernel_id'].iloc[i])} names unknown cluster {int(cl[i])}"
        )


def _sample_cells(samples: Any, required: Sequence[str]) -> list[jc.Cell]:
    """One row's cells per sample: ``{"kernel_id": 1, ...}``; integer columns as integers, the
    others as floats (``null`` for a missing required value, which a checked plan never has; the
    optional field left out where missing)."""
    cells: list[jc.Cell] = []
    for i, f in enumerate(sample_fields(samples)):
        prefix = ("{" if i == 0 else ", ") + f'"{f}": '
        col = samples[f].to_numpy()
        if col.dtype.kind in "iu":
            cells += [prefix.encode(), jc.int_text(col.astype(np.int64))]
            continue
        values = col.astype(np.float64)
        text = jc.float_text(values)
        finite = np.isfinite(values)
        if f in required:
            if not finite.all():
                null = np.zeros((len(values), max(4, text.shape[1])), dtype=np.uint8)
                null[:, -text.shape[1] :] = text
                null[~finite] = 0
                null[~finite, :4] = np.frombuffer(b"null", dtype=np.uint8)
                text = null
            cells += [prefix.encode(), text]
        elif finite.all():
            cells += [prefix.encode(), text]
        else:
            cells.append((prefix.encode(), text, finite))
    if not cells:
        return [b"{}"]
    cells.append(b"}")
    return cells


def samples_text(samples: Any, required: Sequence[str], *, indent: str = "    ") -> bytes:
    """The samples as ``json.dumps`` writes each, one per line after ``indent``, joined by commas
    (no trailing newline; empty for no samples)."""
    n = len(samples)
    if n == 0:
        return b""
    return indent.encode() + jc.rows_bytes(_sample_cells(samples, required), n, separator=b",\n" + indent.encode())


def _shown(value: Any) -> str:
    """A value as the user wrote it (``nan``, ``inf``, ``-1.5``, ``12``), never NumPy's repr
    (``np.float64(nan)``), which names no number a plan file holds."""
    v = value.item() if isinstance(value, np.generic) else value
    return repr(v) if isinstance(v, (int, float)) else str(v)


def _sample_line(samples: Any, i: int) -> str:
    return samples_text(samples.iloc[i : i + 1], ("kernel_id", "launch", "weight", "cluster"), indent="").decode()


def sample_lines(samples: Any, required: Sequence[str]) -> list[str]:
    """Each sample's JSON text (a list of strings, for callers that want them one by one)."""
    text = samples_text(samples, required, indent="").decode()
    return text.split(",\n") if text else []


def sample_columns(items: Any) -> dict[str, np.ndarray] | None:
    """The columns of a parsed ``samples`` list when every sample is an object with the required
    keys (and no other key than a sample may have) whose values are JSON numbers of the type the
    field takes (integers for ids and positions); ``None`` otherwise (the schema then names the
    problem). ``x`` and ``model`` become columns only when every sample has them (a format 1.0
    plan has neither; ``model`` is written from format 1.4 on, where the features model the cycles)."""
    if type(items) is not list:
        return None
    if not items:
        return {
            f: np.zeros(0, dtype=np.int64 if f in ("kernel_id", "launch", "cluster") else np.float64)
            for f in SAMPLE_FIELDS[:4]
        }
    if set(map(type, items)) != {dict}:
        return None
    shapes = set(map(tuple, items))
    if not all(set(s) <= set(SAMPLE_FIELDS) and set(SAMPLE_FIELDS[:4]) <= set(s) for s in shapes):
        return None
    cols: dict[str, np.ndarray] = {}
    for f in SAMPLE_FIELDS[:4]:
        values = list(map(itemgetter(f), items))
        types = set(map(type, values))
        if f == "weight":
            if not types <= {int, float}:
                return None
            if int in types and any(type(v) is int and abs(v) > 2**53 for v in values):
                return None  # an integer a float cannot hold: the schema and the converter decide
            cols[f] = np.array(values, dtype=np.float64)
        else:
            if types != {int} or min(values) < -(2**63) or max(values) > 2**63 - 1:
                return None
            cols[f] = np.array(values, dtype=np.int64)
    for f in OPTIONAL_SAMPLE_FIELDS:
        have = [f in s for s in shapes]
        if all(have):
            values = list(map(itemgetter(f), items))
            types = set(map(type, values))
            if not types <= {int, float} or (int in types and any(type(v) is int and abs(v) > 2**53 for v in values)):
                return None
            cols[f] = np.array(values, dtype=np.float64)
            if not np.isfinite(cols[f]).all():
                return None
        elif any(have) and not all(  # some have it: still each must be a number
            type(s[f]) in (int, float) and math.isfinite(s[f]) for s in items if f in s
        ):
            return None
    return cols


# --- the process section's entries -----------------------------------------------------------
def _entry_rules(schema: Mapping[str, Any]) -> list[Mapping[str, Any]] | None:
    """The schema's rule for each position of a process entry, when the column check can apply it."""
    try:
        item = schema["properties"]["process"]["properties"]["samples"]["items"]
    except KeyError:
        return None
    rules = item.get("prefixItems")
    if (
        not isinstance(rules, list)
        or not set(item) <= {"type", "minItems", "maxItems", "prefixItems", "items", "description"}
        or item.get("type") != "array"
        or item.get("minItems") != len(rules)
        or item.get("maxItems") != len(rules)
        or any(not set(r) <= _ENTRY_KEYWORDS for r in rules)
    ):
        return None
    return rules


def process_columns(entries: Any, schema: Mapping[str, Any]) -> list[tuple] | None:
    """The process entries as columns (one tuple per position) when every entry is a list of the
    values the schema allows at each position; ``None`` otherwise (the schema then names the
    problem)."""
    rules = _entry_rules(schema)
    if rules is None or type(entries) is not list:
        return None
    if not entries:
        return [() for _ in rules]
    if set(map(type, entries)) != {list} or set(map(len, entries)) != {len(rules)}:
        return None
    cols = list(zip(*entries))
    for col, rule in zip(cols, rules):
        kinds = rule.get("type")
        kinds = [kinds] if isinstance(kinds, str) else list(kinds or [])
        if not kinds or any(k not in _PY_TYPES for k in kinds):
            return None
        types = set(map(type, col))
        if not types <= {_PY_TYPES[k] for k in kinds} or types not in _WRITABLE:
            return None
        if int in types:
            ints = col if types == {int} else [v for v in col if type(v) is int]
            lo, hi = min(ints), max(ints)
            if ("minimum" in rule and lo < rule["minimum"]) or ("maximum" in rule and hi > rule["maximum"]):
                return None
            if lo < -(2**63) or hi > 2**63 - 1:
                return None
    return cols


def process_text(cols: Sequence[tuple], *, indent: str) -> bytes:
    """Process entries (checked columns: integers, integers or null, strings) as ``json.dumps``
    writes each list, one per line after ``indent``, joined by commas."""
    n = len(cols[0]) if cols else 0
    if n == 0:
        return b""
    cells: list[jc.Cell] = []
    for i, col in enumerate(cols):
        cells.append(b"[" if i == 0 else b", ")
        types = set(map(type, col))
        if types == {str}:
            cells.append(jc.string_text(col))
        elif types == {int}:
            cells.append(jc.int_text(np.array(col, dtype=np.int64)))
        elif types == {type(None)}:
            cells.append(b"null")
        else:  # integers and nulls
            known = np.array([v is not None for v in col])
            ints = jc.int_text(np.array([0 if v is None else v for v in col], dtype=np.int64))
            width = max(4, ints.shape[1])
            text = np.zeros((n, width), dtype=np.uint8)
            text[:, width - ints.shape[1] :] = ints
            text[~known] = 0
            text[~known, :4] = np.frombuffer(b"null", dtype=np.uint8)
            cells.append(text)
    cells.append(b"]")
    return indent.encode() + jc.rows_bytes(cells, n, separator=b",\n" + indent.encode())


# --- clusters --------------------------------------------------------------------------------
#: A cluster's keys, in the order written (:meth:`simsample.planfile.Cluster.to_json`).
CLUSTER_FIELDS = ("id", "key", "size", "draws", "stats", "representatives")
_INT_FIELDS = ("id", "size", "draws")
#: The Python types of a statistic the column check takes (what the samplers put there); any
#: other (an integer, a bool, a NumPy scalar of another kind) sends the clusters to the schema.
_STAT_TYPES = {float, np.float64, type(None)}
_NUMBER_OR_NULL = ["number", "null"]


def _cluster_rules(schema: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The schema's rule for one cluster, when the column check can apply all of it: integers
    with bounds (``id``, ``size``, ``draws``), a string (``key``), an object of numbers or nulls
    with lower bounds (``stats``), an array of integers with bounds (``representatives``)."""
    item = schema["properties"]["clusters"].get("items", {})
    props = item.get("properties", {})
    if (
        not set(item) <= {"type", "required", "additionalProperties", "properties", "description"}
        or item.get("additionalProperties") is not False
        or list(props) != list(CLUSTER_FIELDS)
        or any(not set(props[f]) <= _ENTRY_KEYWORDS or props[f].get("type") != "integer" for f in _INT_FIELDS)
        or props["key"] != {"type": "string"}
    ):
        return None
    stats, reps = props["stats"], props["representatives"]
    stat_rules = [*stats.get("properties", {}).values(), stats.get("additionalProperties")]
    if (
        not set(stats) <= {"type", "description", "properties", "additionalProperties"}
        or stats.get("type") != "object"
        or any(
            not isinstance(r, Mapping)
            or not set(r) <= {"type", "minimum", "description"}
            or r["type"] != _NUMBER_OR_NULL
            for r in stat_rules
        )
        or not set(reps) <= {"type", "items", "description"}
        or reps.get("type") != "array"
        or not set(reps.get("items", {"x": 0})) <= _ENTRY_KEYWORDS
        or reps["items"].get("type") != "integer"
    ):
        return None
    return props


def _int_column(values: list, rule: Mapping[str, Any]) -> np.ndarray | None:
    """Integers (``int`` or NumPy integers, never ``bool``) within the rule's bounds and int64, as
    an int64 array; ``None`` for anything else."""
    if not values:
        return np.zeros(0, dtype=np.int64)
    if not set(map(type, values)) <= {int, np.int64, np.int32, np.uint32, np.int16, np.uint16, np.int8, np.uint8}:
        return None
    lo, hi = int(min(values)), int(max(values))
    if lo < max(rule.get("minimum", -(2**63)), -(2**63)) or hi > min(rule.get("maximum", 2**63 - 1), 2**63 - 1):
        return None
    return np.array(values, dtype=np.int64)


def _merged_order(shapes: set[tuple]) -> tuple | None:
    """One order of the statistics' names in which every cluster's names appear in their own
    order (``None`` when there is none, or a cluster has no statistic)."""
    if not shapes or not all(shapes):
        return None
    keys = list(dict.fromkeys(k for t in sorted(shapes, key=len, reverse=True) for k in t))
    before: dict[Any, set] = {k: set() for k in keys}
    for t in shapes:
        for a, b in zip(t, t[1:]):
            before[b].add(a)
    order: list = []
    while keys:
        ready = next((k for k in keys if before[k] <= set(order)), None)
        if ready is None:
            return None
        order.append(ready)
        keys.remove(ready)
    return tuple(order)


def cluster_columns(clusters: Sequence[Any], schema: Mapping[str, Any]) -> dict[str, Any] | None:
    """A plan's clusters (:class:`simsample.planfile.Cluster` objects) as columns, when each one
    written as :meth:`~simsample.planfile.Cluster.to_json` writes it fits the schema's rule for a
    cluster and the values have the types this check knows; ``None`` otherwise: the caller then
    writes and validates them one object at a time, as before, and the schema names any problem.

    The columns: ``id``, ``size``, ``draws`` (int64), ``key`` (strings), ``stat_keys`` (the
    statistics' names in the order written: every cluster's names are that sequence with some
    left out, never the first), ``stats`` (per name, float64 values with NaN for null, and where
    the name is present), ``representatives`` (one list of Python integers per cluster)."""
    props = _cluster_rules(schema)
    if props is None:
        return None
    cols: dict[str, Any] = {}
    for f in _INT_FIELDS:
        col = _int_column([getattr(c, f) for c in clusters], props[f])
        if col is None:
            return None
        cols[f] = col
    keys = [c.key for c in clusters]
    if keys and set(map(type, keys)) != {str}:
        return None
    cols["key"] = keys
    stats = [c.stats for c in clusters]
    if stats and set(map(type, stats)) != {dict}:
        return None
    shapes = {tuple(s) for s in stats}
    order = _merged_order(shapes) if stats else ()
    if order is None or any(t[0] != order[0] for t in shapes) or any(type(k) is not str for k in order):
        return None
    rules = props["stats"].get("properties", {})
    table: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for k in order:
        rule = rules.get(k, props["stats"]["additionalProperties"])
        present = np.fromiter((k in s for s in stats), dtype=bool, count=len(stats))
        raw = [s.get(k) for s in stats]
        if not set(map(type, raw)) <= _STAT_TYPES:
            return None
        values = np.array([np.nan if v is None else v for v in raw], dtype=np.float64)
        values[~np.isfinite(values)] = np.nan  # written as null, as Cluster.to_json writes them
        with np.errstate(invalid="ignore"):
            if "minimum" in rule and (values < rule["minimum"]).any():
                return None
        table[k] = (values, present)
    cols["stat_keys"], cols["stats"] = order, table
    reps_rule = props["representatives"]["items"]
    reps = [c.representatives for c in clusters]
    if reps and not set(map(type, reps)) <= {list}:
        return None
    flat = [r for rs in reps for r in rs]
    if _int_column(flat, reps_rule) is None:
        return None
    cols["representatives"] = reps
    return cols


def _representatives_cells(reps: list[list]) -> list[jc.Cell]:
    """``[1, 2]`` per cluster: by columns when every cluster lists as many, else one string each."""
    sizes = set(map(len, reps))
    if sizes == {0}:
        return [b"[]"]
    if len(sizes) == 1:
        width = sizes.pop()
        flat = jc.int_text(np.array([r for rs in reps for r in rs], dtype=np.int64))
        cells: list[jc.Cell] = [b"["]
        for j in range(width):
            cells += [b", "] if j else []
            cells.append(np.ascontiguousarray(flat[j::width]))
        return [*cells, b"]"]
    return [jc.bytes_matrix([("[" + ", ".join(map(str, map(int, rs))) + "]").encode() for rs in reps])]


def clusters_text(cols: Mapping[str, Any], *, indent: str = "    ") -> bytes:
    """Clusters (:func:`cluster_columns`) as ``json.dumps`` writes each
    :meth:`~simsample.planfile.Cluster.to_json`, one per line after ``indent``, joined by commas."""
    n = len(cols["id"])
    if n == 0:
        return b""
    cells: list[jc.Cell] = [b'{"id": ', jc.int_text(cols["id"]), b', "key": ', jc.string_text(cols["key"])]
    cells += [b', "size": ', jc.int_text(cols["size"]), b', "draws": ', jc.int_text(cols["draws"]), b', "stats": {']
    for i, k in enumerate(cols["stat_keys"]):
        values, present = cols["stats"][k]
        text = jc.float_text(values)
        null = np.isnan(values)
        if null.any():
            width = max(4, text.shape[1])
            padded = np.zeros((n, width), dtype=np.uint8)
            padded[:, width - text.shape[1] :] = text
            padded[null] = 0
            padded[null, :4] = np.frombuffer(b"null", dtype=np.uint8)
            text = padded
        prefix = (", " if i else "").encode() + json.dumps(k, ensure_ascii=False).encode() + b": "
        cells += [prefix, text] if present.all() else [(prefix, text, present)]
    cells += [b'}, "representatives": ', *_representatives_cells(cols["representatives"]), b"}"]
    return indent.encode() + jc.rows_bytes(cells, n, separator=b",\n" + indent.encode())
