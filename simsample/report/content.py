"""What the report shows, gathered from the plan, the profile and the JSON documents.

Everything here is plain data for the template (numbers already formatted where the template
would otherwise need logic). Tables and figures are bounded whatever the input: the clusters
table lists the :data:`TOP_CLUSTERS` clusters carrying most of the metric and sums up the rest in
one row, distributions are drawn for the :data:`TOP_DISTRIBUTIONS` first of them, and the
per-workload evaluation table stops at :data:`MAX_WORKLOAD_ROWS` rows. A plan of a million
launches and thousands of clusters thus gives a page of a few hundred kilobytes.

A plan does not list every member of its clusters, only their sizes and the sampled launches.
With the profile, a cluster's population is rebuilt from what every sampler's cluster key
says: the launches of the sampled launches' kernel names (arguments stripped, as the samplers
group them), narrowed to the key's value interval ``[lo, hi]`` when the cluster is one part of
a split kernel. When the rebuilt count differs from the plan's cluster size (samplers that
cluster by other features), the figure says it shows the kernel's launches, not the cluster's.
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from simsample.cli.commands import display_name
from simsample.cli.common import fmt_ns
from simsample.io.names import strip_args
from simsample.planfile import Plan
from simsample.report import plots

#: clusters listed one by one in the clusters table
TOP_CLUSTERS = 50
#: clusters whose distribution is drawn
TOP_DISTRIBUTIONS = 8
#: kernels in the workload's top-kernels table
TOP_KERNELS = 10
#: rows of the per-workload evaluation table
MAX_WORKLOAD_ROWS = 300

_INTERVAL = re.compile(r" \[([^\[\],]+), ([^\[\],]+)\]$")


@dataclass
class Report:
    """Everything the template renders."""

    title: str
    generated: str
    inputs: list[tuple[str, str]]
    workload: list[tuple[str, str]]
    top_kernels: list[dict[str, str]]
    plan: list[tuple[str, str]]
    clusters: list[dict[str, str]]
    clusters_rest: dict[str, str] | None
    cluster_count: int
    shares_figure: plots.Figure | None
    distributions: list[plots.Figure]
    distribution_note: str
    estimates: list[dict[str, str]]
    estimate_figure: plots.Figure | None
    evaluation_figures: list[plots.Figure]
    evaluation_suites: list[dict[str, Any]]
    evaluation_rows: list[dict[str, str]]
    evaluation_rows_total: int
    notes: list[str] = field(default_factory=list)
    kernels: list[dict[str, str]] = field(default_factory=list)
    kernels_rest: dict[str, str] | None = None


def metric_unit(metric: str) -> tuple[str, float]:
    """Axis label and divisor for a metric: durations are shown in microseconds."""
    if metric in ("duration_ns", "start_ns"):
        return "duration (µs)", 1e3
    if metric == "cycles":
        return "cycles", 1.0
    return metric, 1.0


_TIME_UNITS = (("s", 1e9), ("ms", 1e6), ("µs", 1e3), ("ns", 1.0))


def key_with_unit(key: str, metric: str) -> str:
    """A cluster key whose value interval carries its unit: ``k [148003, 173242]`` of a plan on
    ``duration_ns`` reads ``k [148.0–173.2 µs]`` (the bounds in the larger bound's unit); another
    metric's interval is named by the metric (``[1,024–2,048 cycles]``). A key without an
    interval, or with bounds that are not numbers, is returned as it is."""
    m = _INTERVAL.search(key)
    if m is None:
        return key
    try:
        lo, hi = float(m.group(1)), float(m.group(2))
    except ValueError:
        return key
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return key
    head = key[: m.start()]
    if metric in ("duration_ns", "start_ns"):
        unit, scale = next(((u, f) for u, f in _TIME_UNITS if max(abs(lo), abs(hi)) >= f), ("ns", 1.0))
        return f"{head} [{lo / scale:.4g}–{hi / scale:.4g} {unit}]"
    shown = metric if metric and metric not in ("none", "auto") else "value"
    return f"{head} [{lo:,.4g}–{hi:,.4g} {shown}]"


def _fmt_value(metric: str, v: float | None) -> str:
    if v is None:
        return "–"
    if metric in ("duration_ns", "start_ns"):
        return fmt_ns(v)
    if abs(v) >= 1e4 or v == int(v):
        return f"{v:,.0f}"
    return f"{v:,.4g}"


def _pct(v: float | None, digits: int = 1) -> str:
    return "–" if v is None else f"{100 * v:.{digits}f}%"


def workload_section(plan: Plan, workload: Any | None) -> tuple[list[tuple[str, str]], list[dict[str, str]]]:
    """Facts about the workload (from the plan, completed by the profile) and its top kernels."""
    w = plan.workload
    metric = str(w.get("metric", ""))
    rows = [
        ("source", str(w.get("source") or "–")),
        ("format", str(w.get("format") or "–")),
        ("launches", f"{int(w.get('launches', 0)):,}"),
        ("distinct kernels", f"{int(w.get('distinct_kernels', 0)):,}"),
        ("total kernel time", fmt_ns(w["total_time_ns"]) if w.get("total_time_ns") is not None else "not timed"),
        ("design metric", metric or "–"),
        (f"total {metric}" if metric else "metric total", _fmt_value(metric, w.get("metric_total"))),
        ("fingerprint", str(w.get("fingerprint", "–"))),
    ]
    top: list[dict[str, str]] = []
    if workload is not None:
        if workload.memcpy_count:
            rows.insert(4, ("memcpys", f"{workload.memcpy_count:,}"))
        rank_by = metric if metric and metric != "none" and workload.has(metric) else "launches"
        for _, r in workload.top_kernels(TOP_KERNELS, rank_by).iterrows():
            top.append(
                {
                    "name": strip_args(str(r["name"])),  # whole: kernels differing mid-name stay apart (the cell wraps)
                    "full": str(r["name"]),
                    "launches": f"{int(r['launches']):,}",
                    "total": _fmt_value(rank_by, float(r["total"]))
                    if rank_by != "launches"
                    else f"{int(r['total']):,}",
                    "mean": _fmt_value(rank_by, float(r["mean"])) if rank_by != "launches" else "1",
                    "cov": f"{float(r['cov']):.3f}",
                    "share": _pct(float(r["share"])),
                    "share_width": f"{100 * float(r['share']):.1f}",
                }
            )
    return rows, top


def plan_section(plan: Plan) -> list[tuple[str, str]]:
    """Sampler, parameters, seed, fingerprint and the sampler's predictions."""
    s, p = plan.sampler, plan.prediction
    params = ", ".join(f"{k}={v}" for k, v in sorted(s.get("params", {}).items())) or "–"
    rows = [
        ("sampler", f"{s.get('name')} (v{s.get('version')})"),
        ("parameters", params),
        ("seed", str(s.get("seed"))),
        (
            "estimator",
            f"{plan.estimator.get('kind')}, {'with' if plan.estimator.get('replace') else 'without'} replacement",
        ),
        ("clusters", f"{len(plan.clusters):,}"),
        ("sampled launches", f"{int(p.get('sampled_launches', 0)):,} of {int(plan.workload.get('launches', 0)):,}"),
        ("predicted speedup", f"{p['speedup']:,.2f}×" if p.get("speedup") else "unknown"),
        (
            "error bound",
            f"±{100 * p['error_bound']:.2f}% at {100 * (p.get('confidence') or 0.95):.0f}% confidence"
            if p.get("error_bound") is not None
            else "none (one representative per cluster)",
        ),
    ]
    if p.get("predicted_error") is not None:
        rows.append(("predicted error of the drawn sizes", f"±{100 * p['predicted_error']:.2f}%"))
    if p.get("note"):
        rows.append(("note", str(p["note"])))
    rows.append(("created by", plan.created_by))
    return rows


def _cluster_frame(plan: Plan) -> pd.DataFrame:
    """One row per cluster of the workload (:attr:`Plan.workload_clusters`: not an audit's): size,
    draws, metric total and CoV, sorted by metric total."""
    cl = plan.workload_clusters
    df = pd.DataFrame(
        {
            "id": np.array([c.id for c in cl], dtype=np.int64),
            "key": [c.key for c in cl],
            "size": np.array([c.size for c in cl], dtype=np.int64),
            "draws": np.array([c.draws for c in cl], dtype=np.int64),
            "total": np.array([float(c.stats.get("total") or 0.0) for c in cl]),
            "mean": np.array([float(c.stats.get("mean") or 0.0) for c in cl]),
            "cov": np.array([float(c.stats.get("cov") or 0.0) for c in cl]),
        }
    )
    return df.sort_values(["total", "size", "id"], ascending=[False, False, True], kind="stable").reset_index(drop=True)


def clusters_section(
    plan: Plan,
) -> tuple[list[dict[str, str]], dict[str, str] | None, plots.Figure | None, pd.DataFrame]:
    """The clusters table (top clusters, the rest in one row) and the shares figure."""
    metric = str(plan.workload.get("metric", ""))
    df = _cluster_frame(plan)
    launches = max(int(df["size"].sum()), 1)
    grand = float(df["total"].sum())
    draws = max(int(df["draws"].sum()), 1)
    df["share"] = df["total"] / grand if grand > 0 else 0.0
    df["launch_share"] = df["size"] / launches
    df["sample_share"] = df["draws"] / draws
    head, rest = df.head(TOP_CLUSTERS), df.iloc[TOP_CLUSTERS:]
    rows = [
        {
            "id": str(int(r.id)),
            "key": key_with_unit(str(r.key), metric),  # whole, its value interval with its unit
            "full": f"{r.key} ({metric})"
            if _INTERVAL.search(str(r.key))
            else str(r.key),  # the exact bounds, in the metric's unit
            "launches": f"{int(r.size):,}",
            "share": _pct(float(r.share)) if grand > 0 else "–",
            "share_width": f"{100 * float(r.share):.1f}" if grand > 0 else "0",
            "mean": _fmt_value(metric, float(r.mean)),
            "cov": f"{float(r.cov):.3f}",
            "draws": f"{int(r.draws):,}",
        }
        for r in head.itertuples()
    ]
    summary = None
    if len(rest):
        summary = {
            "count": f"{len(rest):,}",
            "launches": f"{int(rest['size'].sum()):,}",
            "share": _pct(float(rest["share"].sum())) if grand > 0 else "–",
            "draws": f"{int(rest['draws'].sum()):,}",
        }
    fig = None
    if len(df) and metric != "none":
        top = df.head(min(15, len(df)))
        fig = plots.shares(
            [display_name(key_with_unit(str(k), metric), 56) for k in top["key"]],
            top["launch_share"].tolist(),
            top["share"].tolist(),
            top["sample_share"].tolist(),
            metric=metric,
        )
    return rows, summary, fig, df


#: kernels listed one by one in the per-kernel rollup
TOP_ROLLUP = 30


def kernel_rollup(plan: Plan) -> pd.DataFrame:
    """One row per kernel (its clusters summed): launches, draws, share of the design metric and
    share of the estimator's variance, sorted by that variance.

    A cluster's part of the variance of the estimated total is N²·(1 − m/N)·s²/m (without the
    correction when the plan draws with replacement), s the design metric's spread over its
    launches as the plan records it: where the error bar comes from, which is not always where
    the time is (a kernel with most of the time but identical launches adds nothing)."""
    from simsample.sampling.estimate import kernel_of

    df = _cluster_frame(plan)
    replace = bool(plan.estimator.get("replace"))
    n = df["size"].to_numpy(np.float64)
    m = df["draws"].to_numpy(np.float64)
    s = df["cov"].to_numpy(np.float64) * df["mean"].to_numpy(np.float64)
    fpc = np.ones_like(n) if replace else np.clip(1.0 - np.divide(m, n, out=np.zeros_like(n), where=n > 0), 0.0, 1.0)
    var = np.divide(n * n * fpc * s * s, m, out=np.zeros_like(n), where=m > 0)
    df["variance"] = var
    df["kernel"] = [kernel_of(str(k)) for k in df["key"]]
    g = df.groupby("kernel", sort=False).agg(
        clusters=("id", "size"),
        launches=("size", "sum"),
        draws=("draws", "sum"),
        total=("total", "sum"),
        variance=("variance", "sum"),
    )
    grand, vsum = float(g["total"].sum()), float(g["variance"].sum())
    g["time_share"] = g["total"] / grand if grand > 0 else np.nan
    g["variance_share"] = g["variance"] / vsum if vsum > 0 else np.nan
    return g.sort_values(["variance", "total"], ascending=False, kind="stable").reset_index()


def rollup_section(plan: Plan) -> tuple[list[dict[str, str]], dict[str, str] | None]:
    """The per-kernel rollup table: the :data:`TOP_ROLLUP` kernels with most of the variance, the rest in one row."""
    if not plan.clusters:
        return [], None
    g = kernel_rollup(plan)
    metric = str(plan.workload.get("metric", ""))

    def share(v: float) -> str:
        return "–" if v is None or not np.isfinite(v) else _pct(float(v))

    rows = [
        {
            "kernel": str(r.kernel),
            "clusters": f"{int(r.clusters):,}",
            "launches": f"{int(r.launches):,}",
            "draws": f"{int(r.draws):,}",
            "time_share": share(r.time_share),
            "variance_share": share(r.variance_share),
        }
        for r in g.head(TOP_ROLLUP).itertuples()
    ]
    rest = g.iloc[TOP_ROLLUP:]
    summary = None
    if len(rest):
        summary = {
            "count": f"{len(rest):,}",
            "launches": f"{int(rest['launches'].sum()):,}",
            "draws": f"{int(rest['draws'].sum()):,}",
            "time_share": share(float(rest["time_share"].sum())),
            "variance_share": share(float(rest["variance_share"].sum())),
        }
    if metric == "none":
        for r in rows:
            r["time_share"] = "–"
    return rows, summary


def distributions_section(plan: Plan, workload: Any | None, ranked: pd.DataFrame) -> tuple[list[plots.Figure], str]:
    """Histograms of the design metric for the clusters carrying most of it, samples marked."""
    metric = str(plan.workload.get("metric", ""))
    if workload is None:
        return [], "Give the profile the plan was made from (--profile) to see each cluster's distribution."
    if metric in ("", "none") or not workload.has(metric):
        return [], f"The profile has no {metric or 'cost'} column to draw."
    values = workload.values(metric)
    names = workload.kernels["name"]
    if not isinstance(names.dtype, pd.CategoricalDtype):
        names = names.astype("category")
    cats = np.array([strip_args(str(c)) for c in names.cat.categories], dtype=object)
    codes = names.cat.codes.to_numpy()
    stripped_of_code: dict[str, list[int]] = {}
    for code, name in enumerate(cats):
        stripped_of_code.setdefault(name, []).append(code)
    launches = plan.samples["launch"].to_numpy(np.int64)
    cluster_of = plan.samples["cluster"].to_numpy(np.int64)
    unit, scale = metric_unit(metric)
    figures: list[plots.Figure] = []
    approximated = 0
    for r in ranked.head(TOP_DISTRIBUTIONS).itertuples():
        rows = launches[cluster_of == r.id]
        rows = rows[(rows >= 0) & (rows < len(values))]
        if rows.size == 0:
            continue
        kernel_names = sorted({cats[codes[i]] for i in np.unique(rows)})
        member_codes = [c for n in kernel_names for c in stripped_of_code.get(n, [])]
        mask = np.isin(codes, np.asarray(member_codes, dtype=codes.dtype))
        m = _INTERVAL.search(str(r.key))
        if m:
            try:
                lo, hi = float(m.group(1)), float(m.group(2))
                mask &= (values >= lo) & (values <= hi)
            except ValueError:
                pass
        members = values[mask]
        exact = int(mask.sum()) == int(r.size)
        if not exact:
            approximated += 1
        what = "cluster" if exact else "kernel"
        title = f"#{r.id} {display_name(key_with_unit(str(r.key), metric), 52)}"
        about = f"{title} ({what}, {members.size:,} launches)"
        figures.append(
            plots.distribution(members, values[rows], title=title, unit_label=unit, scale=scale, about=about)
        )
    note = ""
    if approximated:
        note = (
            f"{'One of these figures shows' if approximated == 1 else f'{approximated} of these figures show'} all "
            "launches of the cluster's kernel: this sampler's clusters are not defined by kernel name and value "
            "range alone."
        )
    return figures, note


def estimates_section(estimate: dict[str, Any] | None) -> tuple[list[dict[str, str]], plots.Figure | None]:
    """The estimate of every metric with its interval, and the relative intervals figure."""
    if estimate is None:
        return [], None
    rows = []
    lows: list[float | None] = []
    highs: list[float | None] = []
    names: list[str] = []
    conf = 0.95
    for e in estimate["estimates"]:
        if e["estimate"] is None:  # a metric the simulator did not report for every launch
            continue
        est = float(e["estimate"])
        conf = float(e.get("confidence") or conf)
        ratio = e.get("kind") == "ratio"
        fmt = (lambda x: f"{x:,.4f}") if ratio else (lambda x: f"{x:,.1f}")
        lo, hi, se = e.get("ci_low"), e.get("ci_high"), e.get("std_error")
        rel = (hi - lo) / 2 / abs(est) if lo is not None and hi is not None and est else None
        rows.append(
            {
                "metric": str(e["metric"]),
                "kind": str(e.get("kind", "total")),
                "estimate": fmt(est),
                "std_error": fmt(se) if se is not None else "–",
                "interval": f"[{fmt(lo)}, {fmt(hi)}]" if lo is not None and hi is not None else "no bound",
                "relative": f"±{100 * rel:.2f}%" if rel is not None else "–",
                "samples": f"{int(e.get('samples', 0)):,}",
            }
        )
        names.append(str(e["metric"]))
        lows.append((lo - est) / abs(est) if lo is not None and est else None)
        highs.append((hi - est) / abs(est) if hi is not None and est else None)
    fig = plots.intervals(names, lows, highs, confidence=conf) if names else None
    return rows, fig


def _point_label(params: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in params.items())


def _plan_point(
    plan: Plan | None,
    curves: list[plots.Curve],
    points_by_curve: list[list[dict[str, Any]]],
    workloads_by_curve: list[list[dict[str, Any]]],
) -> plots.PlanPoint | None:
    """Where the report's plan sits among the evaluated points: the point of its sampler whose
    swept parameters equal the plan's, or (none evaluated) its predicted speedup."""
    if plan is None:
        return None
    name = str(plan.sampler.get("name"))
    params = plan.sampler.get("params") or {}
    for c, points, workloads in zip(curves, points_by_curve, workloads_by_curve):
        if c.sampler != name:
            continue
        for p, sp, err, lab in zip(points, c.speedup, c.error_pct, c.labels):
            swept = p.get("params", {})
            # the point's parameters in full, swept and not, as its workloads record them
            full = next(
                (
                    w.get("params", {})
                    for w in workloads
                    if all(_same(w.get("params", {}).get(k), v) for k, v in swept.items())
                ),
                swept,
            )
            if all(_same(params.get(k), v) for k, v in full.items()) and sp is not None and err is not None:
                return plots.PlanPoint(name, sp, err, lab)
    sp = plan.prediction.get("speedup")
    return plots.PlanPoint(name, float(sp), None, "") if isinstance(sp, (int, float)) else None


def _same(a: Any, b: Any) -> bool:
    try:
        return abs(float(a) - float(b)) <= 1e-12 * max(abs(float(a)), 1.0)
    except (TypeError, ValueError):
        return str(a).lower() == str(b).lower()


def _confidence_of(doc: dict[str, Any]) -> float | None:
    """The confidence an evaluation's intervals are at: the sampler's ``confidence`` parameter,
    else 95% (what ``evaluate`` uses for plans that do not name one); None when its workloads differ."""
    found = {
        float(w["params"].get("confidence") or 0.95)
        for w in doc.get("workloads", [])
        if isinstance(w.get("params"), dict)
    }
    return found.pop() if len(found) == 1 else None


def _hw(v: Any) -> str:
    return "–" if v is None else f"±{float(v):.2f}%"


def evaluation_section(
    evaluations: list[tuple[str, dict[str, Any]]], plan: Plan | None = None
) -> tuple[list[plots.Figure], list[dict[str, Any]], list[dict[str, str]], int]:
    """Error-vs-speedup curves and coverage (one curve per sampler), suites and workloads; the
    report's plan marked on the curves."""
    if not evaluations:
        return [], [], [], 0
    curves: list[plots.Curve] = []
    suites: list[dict[str, Any]] = []
    rows: list[dict[str, str]] = []
    total_rows = 0
    confidences: set[float] = set()
    points_by_curve: list[list[dict[str, Any]]] = []
    workloads_by_curve: list[list[dict[str, Any]]] = []
    for source, doc in evaluations:
        sampler = str(doc["workloads"][0]["sampler"])
        suite = doc["suite"]
        points = suite if isinstance(suite, list) else [{"params": {}, **suite}]
        labels = [_point_label(p.get("params", {})) for p in points]
        curves.append(
            plots.Curve(
                sampler=sampler,
                speedup=[p.get("speedup_hmean") for p in points],
                error_pct=[p.get("error_mean_pct") for p in points],
                coverage=[p.get("coverage") for p in points],
                labels=labels,
                half_width=[p.get("half_width_median_pct") for p in points],
                confidence=_confidence_of(doc),
            )
        )
        points_by_curve.append(points)
        workloads_by_curve.append(list(doc["workloads"]))
        for p, lab in zip(points, labels):
            suites.append(
                {
                    "sampler": sampler,
                    "params": lab or "–",
                    "error": "–" if p.get("error_mean_pct") is None else f"{p['error_mean_pct']:.3f}%",
                    "speedup": "–" if p.get("speedup_hmean") is None else f"{p['speedup_hmean']:,.2f}×",
                    "coverage": _pct(p.get("coverage")),
                    "half_width": _hw(p.get("half_width_median_pct")),
                    "source": source,
                }
            )
        swept = sorted({k for p in points for k in p.get("params", {})})
        for w in doc["workloads"]:
            c = w["params"].get("confidence")
            if isinstance(c, (int, float)):
                confidences.add(float(c))
            total_rows += 1
            if len(rows) >= MAX_WORKLOAD_ROWS:
                continue
            rows.append(
                {
                    "sampler": sampler,
                    "workload": str(w.get("name", "")),
                    "params": _point_label({k: w["params"].get(k) for k in swept}) or "–",
                    "launches": f"{int(w.get('launches') or 0):,}",
                    "error_mean": "–" if w.get("error_mean_pct") is None else f"{w['error_mean_pct']:.3f}%",
                    "error_max": "–" if w.get("error_max_pct") is None else f"{w['error_max_pct']:.3f}%",
                    "speedup": "–" if w.get("speedup_hmean") is None else f"{w['speedup_hmean']:,.2f}×",
                    "sampled": f"{float(w.get('sampled_launches_mean') or 0):,.1f}",
                    "coverage": _pct(w.get("coverage")),
                    "half_width": _hw(w.get("half_width_median_pct")),
                }
            )
    figures = [plots.error_vs_speedup(curves, plan=_plan_point(plan, curves, points_by_curve, workloads_by_curve))]
    if any(v is not None for c in curves for v in c.coverage):
        nominal = confidences.pop() if len(confidences) == 1 else None
        figures.append(plots.coverage([c for c in curves if any(v is not None for v in c.coverage)], nominal=nominal))
    return figures, suites, rows, total_rows


def build(
    plan: Plan,
    plan_path: Path,
    *,
    workload: Any | None = None,
    profile_path: Path | None = None,
    estimate: dict[str, Any] | None = None,
    estimate_path: Path | None = None,
    evaluations: list[tuple[str, dict[str, Any]]] | None = None,
) -> Report:
    """Gather the whole report."""
    inputs = [("plan", plan_path.name)]
    if profile_path is not None:
        inputs.append(("profile", profile_path.name))
    if estimate_path is not None:
        inputs.append(("estimate", estimate_path.name))
    for source, _ in evaluations or []:
        inputs.append(("evaluation", source))
    wl_rows, top = workload_section(plan, workload)
    rows, rest, shares_fig, ranked = clusters_section(plan)
    dists, note = distributions_section(plan, workload, ranked)
    est_rows, est_fig = estimates_section(estimate)
    ev_figs, suites, ev_rows, ev_total = evaluation_section(evaluations or [], plan)
    kernels, kernels_rest = rollup_section(plan)
    notes = []
    if estimate is not None:
        s = estimate["plan"]
        if s.get("sampler") not in (None, plan.sampler.get("name")) or s.get("samples") not in (
            None,
            len(plan.samples),
        ):
            notes.append(
                f"The estimate was made with a {s.get('sampler')} plan of {s.get('samples')} samples, "
                f"this plan is {plan.sampler.get('name')} with {len(plan.samples)} samples."
            )
    return Report(
        title=(
            f"simsample report: {plan.sampler.get('name')} plan of "
            f"{Path(str(plan.workload.get('source') or plan_path)).name}"
        ),
        generated=_dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        inputs=inputs,
        workload=wl_rows,
        top_kernels=top,
        plan=plan_section(plan),
        clusters=rows,
        clusters_rest=rest,
        cluster_count=len(plan.clusters),
        shares_figure=shares_fig,
        distributions=dists,
        distribution_note=note,
        estimates=est_rows,
        estimate_figure=est_fig,
        evaluation_figures=ev_figs,
        evaluation_suites=suites,
        evaluation_rows=ev_rows,
        evaluation_rows_total=ev_total,
        notes=notes,
        kernels=kernels,
        kernels_rest=kernels_rest,
    )
