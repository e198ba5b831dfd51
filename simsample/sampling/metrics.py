"""What each column of a results table is, for the estimate: a count, a ratio of two counts, or
neither.

A whole-workload estimate is a weighted sum, which is right for counts (cycles, instructions,
cache hits) and wrong for everything else: the sum of per-launch IPCs is no IPC, and the sum of
launch ids or of simulation wall seconds is no figure at all. Simulator adapters know which is
which and declare it (:attr:`simsample.plugin_base.Adapter.metrics`); the estimate reads the
declarations. A ratio is estimated as the ratio of its two estimated totals, with the delta
method's interval (:func:`simsample.sampling.estimate.estimate_ratio`).

A table without declarations (a CSV of ``kernel_id,value``) has its numeric columns taken as
counts, except columns whose names say they are ids, labels or flags (:func:`infer_metrics`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from simsample.errors import UserTypeError, UserValueError

if TYPE_CHECKING:
    import pandas as pd

KINDS = ("count", "ratio", "none")
MetricKind = Literal["count", "ratio", "none"]

#: column names never estimated in a table without declarations: ids, positions, labels, statuses
_ID_NAMES = re.compile(
    r"^(kernel_id|id|uid|launch|launch_id|index|number|cluster|stream|stream_id|device|device_id|context|context_id|"
    r"correlation|correlation_id|rank|pid|tid|status|name|trace|log|sample|seed)$|(_id|_uid|_index|_number)$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Metric:
    """One column of an adapter's results and how it is estimated.

    ``kind``: ``"count"`` (summed with the plan's weights: cycles, instructions, hits),
    ``"ratio"`` (``numerator / denominator``, two declared counts: estimated as the ratio of
    their estimated totals, never as a sum of per-launch ratios), or ``"none"`` (not estimable:
    ids, names, wall-clock seconds of the simulation, flags). ``unit`` and ``doc`` are for people
    (tables, the reference documentation).
    """

    name: str
    kind: MetricKind = "count"
    numerator: str | None = None
    denominator: str | None = None
    unit: str = ""
    doc: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise UserTypeError(f"Metric name must be a non-empty string, not {self.name!r}")
        if self.kind not in KINDS:
            raise UserValueError(f"metric {self.name}: kind {self.kind!r} is not one of {', '.join(KINDS)}")
        if self.kind == "ratio":
            if not self.numerator or not self.denominator:
                raise UserValueError(
                    f"ratio metric {self.name} needs a numerator and a denominator (names of two counts)"
                )
        elif self.numerator is not None or self.denominator is not None:
            raise UserValueError(f"metric {self.name}: only a ratio has a numerator and a denominator")

    def __repr__(self) -> str:
        if self.kind == "ratio":
            return f"<Metric {self.name}: ratio {self.numerator}/{self.denominator}>"
        return f"<Metric {self.name}: {self.kind}>"


def count(name: str, *, unit: str = "", doc: str = "") -> Metric:
    """A count: summed with the plan's weights."""
    return Metric(name, "count", unit=unit, doc=doc)


def ratio(name: str, numerator: str, denominator: str, *, unit: str = "", doc: str = "") -> Metric:
    """A ratio of two counts, estimated as the ratio of their estimated totals."""
    return Metric(name, "ratio", numerator, denominator, unit=unit, doc=doc)


def not_estimable(name: str, *, doc: str = "") -> Metric:
    """A column that has no whole-workload estimate (an id, a name, wall-clock seconds)."""
    return Metric(name, "none", doc=doc)


def check_declarations(metrics: Iterable[Metric], *, who: str = "metrics") -> tuple[Metric, ...]:
    """The declarations as a tuple, refused when two share a name or a ratio names a column that
    is not a declared count."""
    if isinstance(metrics, (str, bytes, Metric)) or not isinstance(metrics, Iterable):
        raise UserTypeError(
            f"{who}: expected a list of Metric declarations (count(), ratio(), not_estimable()), got "
            f"{type(metrics).__name__}"
        )
    out = tuple(metrics)
    for m in out:
        if not isinstance(m, Metric):
            raise UserTypeError(
                f"{who}: {m!r} is not a Metric (declare columns with count(), ratio() or not_estimable())"
            )
    names = [m.name for m in out]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise UserValueError(f"{who}: metric {dup[0]} is declared twice")
    counts = {m.name for m in out if m.kind == "count"}
    for m in out:
        if m.kind == "ratio":
            for part in (m.numerator, m.denominator):
                if part not in counts:
                    raise UserValueError(f"{who}: ratio {m.name} names {part}, which is not a declared count")
    return out


def looks_like_id(column: str) -> bool:
    """Whether a column's name says it holds ids, positions or labels (never estimated)."""
    return bool(_ID_NAMES.search(str(column)))


def infer_metrics(results: pd.DataFrame) -> tuple[Metric, ...]:
    """Declarations for a table that has none: numeric (not boolean) columns are counts, except
    ``kernel_id`` and columns named like ids (``uid``, ``launch``, ``*_id``, ``status``, ...)."""
    import pandas as pd

    out = []
    for c in results.columns:
        if looks_like_id(c):
            continue
        s = results[c]
        if pd.api.types.is_bool_dtype(s) or not pd.api.types.is_numeric_dtype(s):
            continue
        out.append(count(str(c)))
    return tuple(out)


def estimable(
    results: pd.DataFrame, metrics: Sequence[Metric]
) -> tuple[list[str], dict[str, tuple[str, str]], list[str]]:
    """The counts and ratios of ``metrics`` that ``results`` can estimate, and what is left out.

    A count is estimable when its column has a value for every row; a count the simulator
    printed for some launches only (Accel-Sim prints no L1 section for a kernel without global
    loads) is left out, and so is every ratio built on a count left out. Columns with no value
    at all are dropped silently (a statistic the simulator never prints).
    """
    present = set(results.columns)
    counts: list[str] = []
    left_out: list[str] = []
    for m in metrics:
        if m.kind != "count" or m.name not in present:
            continue
        col = results[m.name]
        if col.isna().all():
            continue
        if col.isna().any():
            left_out.append(m.name)
            continue
        counts.append(m.name)
    ratios: dict[str, tuple[str, str]] = {}
    known = set(counts)
    gone = set(left_out)
    for m in metrics:
        if m.kind != "ratio":
            continue
        num, den = m.numerator or "", m.denominator or ""
        if num in known and den in known:
            ratios[m.name] = (num, den)
        elif num in gone or den in gone:
            left_out.append(m.name)
    return counts, ratios, left_out


def by_name(metrics: Iterable[Metric]) -> Mapping[str, Metric]:
    return {m.name: m for m in metrics}
