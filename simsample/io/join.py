"""Joining per-launch metrics (Nsight Compute) onto a timeline workload (nsys, nvprof, Kineto).

Launch ids differ between tools (ncu numbers only the launches it profiled; nsys and NVBit count
differently, accel-sim-framework issue 223), so launches are matched by *order within a group*:
the k-th launch of a kernel with a given name and shape in the timeline is the k-th launch of
that kernel and shape in the metrics file. Names are compared by :func:`simsample.io.names.base_name`
(ncu prints ``vecAdd`` where nsys prints ``void vecAdd<float>(float*, int)`` and NVBit the mangled
name); shapes by the six grid/block dimensions, or by grid and block *sizes* when one side only
knows totals (old ncu versions).

What happens when the two disagree:

- nothing matches: :class:`~simsample.errors.UserError` naming the kernels on each side;
- some launches match: the joined workload has the metric columns for the matched launches and
  NaN elsewhere, ``meta["join_report"]`` holds the counts per group that differ and the groups
  present on one side only, and :meth:`JoinReport.summary` is the one-line warning the command
  line prints on standard error. Samplers that need a metric then refuse the workload, naming
  the column, rather than silently using part of it.

Columns added: every numeric metric column of the metrics workload that the timeline does not
already have (canonical columns are never overwritten), as float64 over all timeline launches,
plus ``ncu_id``: the metrics file's kernel id of the matched launch, -1 where none matched. A join
that would need more than 4 GiB for those columns is refused with advice to collect fewer
metrics.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import lazy_loader as lazy
import numpy as np

from simsample.errors import UserError
from simsample.io.names import base_name
from simsample.workload import OPTIONAL_COLUMNS, REQUIRED_COLUMNS, SHAPE_COLUMNS, Workload

pd = lazy.load("pandas")

_LIST_LIMIT = 20
#: metric columns are float64 over every timeline launch: refuse joins larger than this
_MAX_JOIN_BYTES = 4 * 2**30


@dataclass
class JoinReport:
    """How a join went: counts, and the groups that did not line up."""

    metrics_source: str
    key: str
    timeline_launches: int
    metrics_launches: int
    matched: int
    count_mismatches: list[dict[str, Any]] = field(default_factory=list)
    only_in_timeline: list[dict[str, Any]] = field(default_factory=list)
    only_in_metrics: list[dict[str, Any]] = field(default_factory=list)
    columns_added: list[str] = field(default_factory=list)
    columns_skipped: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """Every launch on both sides found its partner."""
        return self.matched == self.timeline_launches == self.metrics_launches

    def summary(self) -> str:
        """One line: how many launches matched and what did not."""
        parts = (
            [f"{len(self.count_mismatches)} kernel group(s) with different launch counts"]
            if self.count_mismatches
            else []
        )
        if self.only_in_timeline:
            parts.append(
                f"{len(self.only_in_timeline)} only in the timeline (e.g. {_describe(self.only_in_timeline[0])})"
            )
        if self.only_in_metrics:
            parts.append(f"{len(self.only_in_metrics)} only in the metrics (e.g. {_describe(self.only_in_metrics[0])})")
        if self.count_mismatches:
            g = self.count_mismatches[0]
            parts[0] += f" (e.g. {_describe(g)}: {g['timeline']} in the timeline, {g['metrics']} in the metrics)"
        detail = "; ".join(parts) if parts else "all launches matched"
        return (
            f"joined metrics from {self.metrics_source} onto {self.matched:,} of {self.timeline_launches:,} timeline "
            f"launches ({self.metrics_launches:,} metric rows; matched by {self.key} and launch order): {detail}"
        )

    def to_json(self) -> dict[str, Any]:
        def cut(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
            return items[:_LIST_LIMIT]

        return {
            "metrics_source": self.metrics_source,
            "key": self.key,
            "timeline_launches": self.timeline_launches,
            "metrics_launches": self.metrics_launches,
            "matched": self.matched,
            "complete": self.complete,
            "count_mismatches": cut(self.count_mismatches),
            "count_mismatch_groups": len(self.count_mismatches),
            "only_in_timeline": cut(self.only_in_timeline),
            "only_in_timeline_groups": len(self.only_in_timeline),
            "only_in_metrics": cut(self.only_in_metrics),
            "only_in_metrics_groups": len(self.only_in_metrics),
            "columns_added": len(self.columns_added),
            "columns_skipped": self.columns_skipped,
        }


def _describe(group: dict[str, Any]) -> str:
    return f"{group['name']} grid {group['grid']} block {group['block']}"


def _uses_totals(wl: Workload) -> bool:
    return wl.meta.get("launch_shape") == "totals"


def _keys(k: pd.DataFrame, totals: bool) -> pd.DataFrame:
    """Per launch: base name and shape (six dimensions, or grid and block sizes)."""
    names = k["name"]
    if not isinstance(names.dtype, pd.CategoricalDtype):
        names = names.astype("category")
    bases = np.asarray([base_name(str(c)) for c in names.cat.categories], dtype=object)
    out = pd.DataFrame({"base": bases[names.cat.codes.to_numpy()] if len(bases) else np.array([], dtype=object)})
    if totals:
        dims = {c: k[c].to_numpy(np.int64) for c in SHAPE_COLUMNS}
        out["grid"] = dims["grid_x"] * dims["grid_y"] * dims["grid_z"]
        out["block"] = dims["block_x"] * dims["block_y"] * dims["block_z"]
    else:
        for col in SHAPE_COLUMNS:
            out[col] = k[col].to_numpy(np.int64)
    return out


def _shape_text(row: Any, totals: bool) -> tuple[str, str]:
    if totals:
        return str(int(row["grid"])), str(int(row["block"]))
    g = f"({int(row['grid_x'])}, {int(row['grid_y'])}, {int(row['grid_z'])})"
    b = f"({int(row['block_x'])}, {int(row['block_y'])}, {int(row['block_z'])})"
    return g, b


def join_metrics(
    timeline: Workload, metrics: Workload, *, metrics_source: str | None = None
) -> tuple[Workload, JoinReport]:
    """The timeline with the metrics' columns attached launch by launch, and the report.

    Raises :class:`UserError` when no launch matches.
    """
    source = metrics_source or metrics.source or "the metrics file"
    totals = _uses_totals(timeline) or _uses_totals(metrics)
    key_cols = ["base", "grid", "block"] if totals else ["base", *SHAPE_COLUMNS]
    key_text = "kernel name, grid size and block size" if totals else "kernel name, grid and block"
    m_sorted = metrics.kernels.sort_values("kernel_id", kind="stable").reset_index(drop=True)
    tk = _keys(timeline.kernels, totals)
    mk = _keys(m_sorted, totals)
    tk["_occ"] = tk.groupby(key_cols, sort=False).cumcount()
    mk["_occ"] = mk.groupby(key_cols, sort=False).cumcount()
    tk["_row"] = np.arange(len(tk))
    mk["_row"] = np.arange(len(mk))
    pairs = tk.merge(mk, on=[*key_cols, "_occ"], how="inner", suffixes=("_t", "_m"))

    tc = tk.groupby(key_cols, sort=False).size().rename("timeline")
    mc = mk.groupby(key_cols, sort=False).size().rename("metrics")
    both = pd.concat([tc, mc], axis=1).fillna(0).astype(np.int64).reset_index()
    report = JoinReport(source, key_text, len(timeline), len(metrics), int(len(pairs)))
    both = both[both["timeline"] != both["metrics"]]  # only the groups that do not line up
    for _, row in both.iterrows():
        grid, block = _shape_text(row, totals)
        entry = {
            "name": row["base"],
            "grid": grid,
            "block": block,
            "timeline": int(row["timeline"]),
            "metrics": int(row["metrics"]),
        }
        if row["timeline"] and row["metrics"]:
            report.count_mismatches.append(entry)
        elif row["timeline"]:
            report.only_in_timeline.append(entry)
        else:
            report.only_in_metrics.append(entry)
    for lst in (report.count_mismatches, report.only_in_timeline, report.only_in_metrics):
        lst.sort(key=lambda e: -max(e["timeline"], e["metrics"]))

    if report.matched == 0:
        t_groups = "; ".join(_describe(e) for e in report.only_in_timeline[:2]) or "no launches"
        m_groups = "; ".join(_describe(e) for e in report.only_in_metrics[:2]) or "no launches"
        raise UserError(
            f"{source}: no launch matches {timeline.source or 'the timeline'} by {key_text} "
            f"(the metrics have {m_groups}; the timeline has {t_groups}); "
            "were both recorded from the same run of the same program?"
        )

    known = set(REQUIRED_COLUMNS) | set(OPTIONAL_COLUMNS)
    df = timeline.kernels.copy()
    t_rows = pairs["_row_t"].to_numpy()
    m_rows = pairs["_row_m"].to_numpy()
    wanted = []
    for col in m_sorted.columns:
        if col in known:
            continue
        src = m_sorted[col]
        if (
            col in df.columns
            or not pd.api.types.is_numeric_dtype(src.dtype)
            or isinstance(src.dtype, pd.CategoricalDtype)
        ):
            report.columns_skipped.append(col)
        else:
            wanted.append(col)
    size = len(df) * len(wanted) * 8
    if size > _MAX_JOIN_BYTES:
        raise UserError(
            f"{source}: joining {len(wanted)} metric columns onto {len(df):,} launches would take {size / 2**30:.1f} "
            "GiB; collect only the metrics you need (ncu --metrics name,name,...) or join onto a shorter profile"
        )
    added: dict[str, np.ndarray] = {}
    for col in wanted:
        src = m_sorted[col]
        vals = np.full(len(df), np.nan)
        vals[t_rows] = src.to_numpy(dtype=np.float64, na_value=np.nan)[m_rows]
        added[col] = vals
    ids = m_sorted["kernel_id"].to_numpy(np.int64)
    ncu_id = np.full(len(df), -1, dtype=np.int32 if (ids.size == 0 or ids.max() < 2**31) else np.int64)
    ncu_id[t_rows] = ids[m_rows]
    added["ncu_id"] = ncu_id
    report.columns_added = list(added)
    df = pd.concat([df, pd.DataFrame(added, index=df.index)], axis=1)
    meta = dict(timeline.meta)
    meta["join_report"] = report.to_json()
    joined = Workload(
        df,
        source=timeline.source,
        format=timeline.format,
        memcpy_count=timeline.memcpy_count,
        meta=meta,
        extras=dict(timeline.extras),
        validate=False,
    )
    return joined, report
