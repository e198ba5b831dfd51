"""The report's figures, drawn by matplotlib into SVG text that the page inlines.

matplotlib is imported here only, and this module only by ``simsample report``: importing it
costs about half a second, which no other command should pay at start-up.

Every figure is small by construction whatever the input size: distributions are binned
histograms (a fixed number of bars) with at most :data:`MAX_MARKS` sampled-launch marks, and
curves have one point per sweep value. Text stays text (``svg.fonttype = none``) so that it is
searchable, selectable and read by screen readers, and each ``<svg>`` carries ``role="img"``
and an ``aria-label`` that says what it shows. Each figure gets its own hash salt so that the
ids matplotlib writes (clip paths, markers) never collide between figures inlined in one page.
"""

from __future__ import annotations

import html
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass

import matplotlib
import numpy as np

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402  (after matplotlib.use)

#: sampled launches marked on one distribution at most (evenly thinned beyond)
MAX_MARKS = 400
#: bars of one distribution's histogram
BINS = 40

_PALETTE = ["#1f5f99", "#c8553d", "#2a9d8f", "#8e6c8a", "#e9a03b", "#4d4d4d", "#6a994e", "#bc4749"]

_STYLE = {
    "svg.fonttype": "none",
    "font.family": "sans-serif",
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.color": "#dddddd",
    "grid.linewidth": 0.6,
    "axes.axisbelow": True,
    "figure.dpi": 72,
}

_counter = 0


@dataclass
class Figure:
    """An inline SVG and the sentence that describes it (its accessible label and caption)."""

    svg: str
    label: str


def _to_svg(fig, label: str, *, tight: bool = True) -> Figure:
    """Serialise ``fig`` to inline SVG text (no XML prolog), labelled for assistive technology.

    ``tight`` fits the saved box to the labels, which draws the figure twice; figures with a
    fixed layout (the distributions, eight per page) pass False and take half the time.
    """
    global _counter
    _counter += 1
    buf = io.StringIO()
    with matplotlib.rc_context({**_STYLE, "svg.hashsalt": f"simsample-fig{_counter}"}):
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None}, bbox_inches="tight" if tight else None)
    plt.close(fig)
    text = buf.getvalue()
    start = text.find("<svg")
    text = re.sub(r"\s*<metadata>.*?</metadata>", "", text[start:], count=1, flags=re.S)
    attrs = f' role="img" aria-label="{html.escape(label, quote=True)}" class="plot"'
    text = text.replace("<svg", "<svg" + attrs, 1)
    return Figure(svg=text, label=label)


def _figure(width: float, height: float):
    with matplotlib.rc_context(_STYLE):
        fig, ax = plt.subplots(figsize=(width, height))
    return fig, ax


def _style(ax) -> None:
    for k, v in _STYLE.items():
        if k.startswith("axes.spines."):
            ax.spines[k.rsplit(".", 1)[1]].set_visible(v)
    ax.grid(True, color=_STYLE["grid.color"], linewidth=_STYLE["grid.linewidth"])
    ax.set_axisbelow(True)
    ax.tick_params(labelsize=9)


def distribution(
    values: np.ndarray, marks: np.ndarray, *, title: str, unit_label: str, scale: float = 1.0, about: str = ""
) -> Figure:
    """Histogram of a cluster's (or kernel's) metric values with its sampled launches marked.

    ``scale`` divides the values for display (ns → µs); ``about`` is the longer description
    of the accessible label and caption (the title stays short). Values spanning more than two decades
    get logarithmic bins, so that a long tail does not squash the body into one bar.
    """
    with matplotlib.rc_context(_STYLE):
        fig, ax = _figure(4.2, 2.3)
        _style(ax)
        v = np.asarray(values, dtype=np.float64) / scale
        m = np.asarray(marks, dtype=np.float64) / scale
        pos = v[v > 0]
        log = pos.size > 1 and pos.size == v.size and pos.max() > 100 * pos.min()
        if log:
            edges = np.geomspace(pos.min(), pos.max(), BINS + 1)
            ax.set_xscale("log")
        else:
            lo, hi = (float(v.min()), float(v.max())) if v.size else (0.0, 1.0)
            edges = np.linspace(lo, hi if hi > lo else lo + 1.0, BINS + 1)
        counts, _ = np.histogram(v, bins=edges)
        # one filled outline and one multi-segment line: two SVG paths whatever the counts
        ax.stairs(counts, edges, fill=True, color="#9fb7cf", label="all launches")
        ax.stairs(counts, edges, color="#6f8fae", linewidth=0.6)
        if m.size:
            shown = np.unique(m)
            if shown.size > MAX_MARKS:
                shown = shown[np.linspace(0, shown.size - 1, MAX_MARKS).astype(np.int64)]
            # a rug under the bars: the samples stay visible without hiding the distribution
            top = max(int(counts.max()) if counts.size else 1, 1)
            xs = np.repeat(shown, 3)
            ys = np.tile([-0.13 * top, -0.02 * top, np.nan], shown.size)
            xs[2::3] = np.nan
            ax.plot(xs, ys, color="#c8553d", linewidth=0.9, alpha=0.8, label=f"sampled launches ({m.size:,})")
            ax.set_ylim(-0.15 * top, top * 1.08)
            ax.axhline(0, color="#6f8fae", linewidth=0.6)
        ax.set_xlabel(unit_label)
        ax.set_ylabel("launches")
        ax.set_title(title, fontsize=8.5, loc="left")
        if not log:  # at most six labelled ticks: at the figure's width more would run into each other
            from matplotlib.ticker import MaxNLocator

            ax.xaxis.set_major_locator(MaxNLocator(6))
        ax.legend(fontsize=8, frameon=False, loc="best")
        fig.subplots_adjust(left=0.15, right=0.97, bottom=0.2, top=0.88)
    label = (
        f"{about or title}: histogram of {v.size:,} launches by {unit_label}, {m.size:,} sampled launches marked "
        "below the axis"
    )
    return _to_svg(fig, label, tight=False)


def shares(
    keys: Sequence[str],
    launch_share: Sequence[float],
    metric_share: Sequence[float],
    sampled_share: Sequence[float],
    *,
    metric: str,
) -> Figure:
    """Horizontal bars: each top cluster's share of launches, of the metric, and of the samples."""
    with matplotlib.rc_context(_STYLE):
        n = len(keys)
        fig, ax = _figure(7.0, 0.9 + 0.28 * n)
        _style(ax)
        y = np.arange(n)
        h = 0.27
        ax.barh(y - h, 100 * np.asarray(metric_share), height=h, color=_PALETTE[0], label=f"share of {metric}")
        ax.barh(y, 100 * np.asarray(launch_share), height=h, color=_PALETTE[2], label="share of launches")
        ax.barh(y + h, 100 * np.asarray(sampled_share), height=h, color=_PALETTE[1], label="share of samples")
        ax.set_yticks(y, [_short(k, 56) for k in keys], fontsize=8.5)
        ax.invert_yaxis()
        ax.set_xlabel("share (%)")
        ax.legend(fontsize=8.5, frameon=False, loc="lower right")
    label = f"Shares of {metric}, launches and samples for the {n} clusters carrying most {metric}"
    return _to_svg(fig, label)


def intervals(
    metrics: Sequence[str], rel_low: Sequence[float | None], rel_high: Sequence[float | None], *, confidence: float
) -> Figure:
    """Each metric's interval relative to its estimate (percent), one row per metric."""
    with matplotlib.rc_context(_STYLE):
        n = len(metrics)
        fig, ax = _figure(6.0, 0.9 + 0.3 * n)
        _style(ax)
        y = np.arange(n)
        for i, (lo, hi) in enumerate(zip(rel_low, rel_high)):
            if lo is None or hi is None:
                ax.plot([0], [i], marker="x", color=_PALETTE[5])
                continue
            ax.plot([100 * lo, 100 * hi], [i, i], color=_PALETTE[0], linewidth=2.5, solid_capstyle="butt")
            ax.plot([0], [i], marker="|", markersize=10, color=_PALETTE[1])
        ax.axvline(0, color="#888888", linewidth=0.6)
        ax.set_yticks(y, list(metrics), fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel(f"{100 * confidence:.0f}% interval relative to the estimate (%)")
    label = (
        f"{100 * confidence:.0f}% confidence intervals of {n} metrics, relative to each estimate, in percent (x: no "
        "bound)"
    )
    return _to_svg(fig, label)


@dataclass
class Curve:
    """One sampler's evaluation: a point per sweep value."""

    sampler: str
    speedup: list[float | None]
    error_pct: list[float | None]
    coverage: list[float | None]
    labels: list[str]
    half_width: list[float | None] | None = None  # median relative half-width of the intervals (%), per point
    confidence: float | None = None  # the confidence its intervals are reported at


@dataclass
class PlanPoint:
    """The report's own plan on the error-vs-speedup chart: the evaluated point of its sampler and
    parameters when an evaluation has one (``label`` names it), else its predicted speedup."""

    sampler: str
    speedup: float | None
    error_pct: float | None
    label: str


def error_vs_speedup(curves: Sequence[Curve], *, plan: PlanPoint | None = None) -> Figure:
    """Mean error against harmonic-mean speedup, one line per sampler, points labelled by value.

    Both axes are logarithmic: errors of samplers worth comparing differ by decades (random at
    tens of percent, stratified designs at tenths), and a linear axis squashes the good ones onto
    zero with their labels on top of each other. A zero error (a census) is drawn on a symlog
    axis instead, linear below the smallest non-zero error. The plan the report is about is
    marked with a star (its evaluated point), or a dotted line at its predicted speedup.
    """
    with matplotlib.rc_context(_STYLE):
        fig, ax = _figure(8.0, 4.4)
        _style(ax)
        drawn = 0
        errors: list[float] = []
        labelled: list[tuple[float, float, str, str]] = []
        for i, c in enumerate(curves):
            pts = [
                (s, e, lab)
                for s, e, lab in zip(c.speedup, c.error_pct, c.labels)
                if s is not None and e is not None and s > 0
            ]
            if not pts:
                continue
            pts.sort()
            xs, ys, labs = zip(*pts)
            errors += list(ys)
            color = _PALETTE[i % len(_PALETTE)]
            ax.plot(xs, ys, marker="o", markersize=4, linewidth=1.4, color=color, label=c.sampler)
            drawn += 1
            labelled += [(x, yv, lab, color) for x, yv, lab in zip(xs, ys, labs) if lab]
        ax.set_xscale("log")
        _plain_log_ticks(ax.xaxis)
        speeds = [x for x, _, _, _ in labelled]
        if (
            speeds and 1e-250 < min(speeds) and max(speeds) < 1e250
        ):  # (an edited file's extremes: matplotlib's own limits)
            ax.set_xlim(min(speeds) / 1.5, max(speeds) * 1.5)  # room for the labels left and right of the points
        positive = [e for e in errors if e > 0]
        if positive and len(positive) == len(errors):
            ax.set_yscale("log")
            _plain_log_ticks(ax.yaxis)
        elif positive:
            ax.set_yscale("symlog", linthresh=min(positive), linscale=0.5)
        if errors:
            lo_e, hi_e = min(errors), max(errors)
            if ax.get_yscale() == "log" and 1e-250 < lo_e and hi_e < 1e250:
                ax.set_ylim(lo_e / 1.6, hi_e * 1.6)  # room for the labels above and below the points
        _label_points(fig, ax, labelled)
        marked = ""
        if plan is not None and plan.speedup is not None and plan.speedup > 0:
            if plan.error_pct is not None:
                (pt,) = ax.plot(
                    [plan.speedup],
                    [plan.error_pct],
                    marker="*",
                    markersize=13,
                    color="#111111",
                    linestyle="none",
                    label=f"this plan ({plan.sampler}{', ' + plan.label if plan.label else ''})",
                    zorder=5,
                )
                marked = (
                    f"; this plan ({plan.sampler}) marked with a star at {plan.speedup:,.2f}× and {plan.error_pct:.3g}%"
                )
            else:
                pt = ax.axvline(
                    plan.speedup,
                    color="#111111",
                    linestyle=":",
                    linewidth=1.2,
                    label=f"this plan's predicted speedup ({plan.speedup:,.2f}×)",
                )
                marked = f"; this plan's predicted speedup ({plan.speedup:,.2f}×) marked by a dotted line"
            pt.set_gid("plan-point")
        ax.set_xlabel("simulation speedup (harmonic mean over workloads, ×, log scale)")
        scale = ax.get_yscale()
        ax.set_ylabel(
            "mean error of the total (%"
            + (", log scale)" if scale == "log" else ", symlog scale)" if scale == "symlog" else ")")
        )
        if drawn or marked:
            ax.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    names = ", ".join(c.sampler for c in curves)
    label = f"Mean error (%) against speedup (×) for {names}, one point per parameter value{marked}"
    out = _to_svg(fig, label)
    out.svg = out.svg.replace("<svg", f'<svg data-yscale="{scale}" data-xscale="log"', 1)
    return out


def coverage(curves: Sequence[Curve], *, nominal: float | None) -> Figure:
    """Interval coverage per sweep value and sampler, with the nominal confidence drawn and each
    bar labelled with the median relative half-width of its intervals (coverage alone cannot be
    judged: an interval wide enough always covers).

    ``nominal`` is drawn across the chart when every sampler reports at the same confidence;
    otherwise each sampler's own (``Curve.confidence``) is drawn over its bars."""
    with matplotlib.rc_context(_STYLE):
        bars = sum(len(c.labels) for c in curves)
        fig, ax = _figure(min(8.0 + 0.25 * max(bars - 12, 0), 14.0), 4.0)
        _style(ax)
        upright = bars > 12  # beyond a dozen bars, their labels stand upright above them
        labels: list[str] = []
        for c in curves:
            for lab in c.labels:
                if lab not in labels:
                    labels.append(lab)
        x = np.arange(len(labels))
        w = 0.8 / max(len(curves), 1)
        own: list = []
        for i, c in enumerate(curves):
            vals = dict(zip(c.labels, c.coverage))
            ys = [100 * vals[lab] if vals.get(lab) is not None else np.nan for lab in labels]
            xs = x + (i - (len(curves) - 1) / 2) * w
            ax.bar(xs, ys, width=w, color=_PALETTE[i % len(_PALETTE)], label=c.sampler)
            widths = dict(zip(c.labels, c.half_width or [None] * len(c.labels)))
            for xb, yb, lab in zip(xs, ys, labels):
                hw = widths.get(lab)
                if hw is not None and not np.isnan(yb):
                    # above the bar, in ink: readable on any bar; upright when the bars are many and narrow
                    ax.text(
                        xb,
                        yb + 1.5,
                        f"±{hw:.2g}%",
                        rotation=90 if upright else 0,
                        ha="center",
                        va="bottom",
                        fontsize=8,
                        color="#1d2530",
                    )
            if nominal is None and c.confidence is not None:
                drawn = [xb for xb, yb in zip(xs, ys) if not np.isnan(yb)]
                if drawn:
                    own.append(
                        ax.hlines(
                            100 * c.confidence,
                            min(drawn) - w / 2,
                            max(drawn) + w / 2,
                            colors="#111111",
                            linestyles="--",
                            linewidth=1.0,
                        )
                    )
        if nominal is not None:
            line = ax.axhline(
                100 * nominal, color="#111111", linestyle="--", linewidth=1.0, label=f"nominal {100 * nominal:.0f}%"
            )
            line.set_gid("nominal-confidence")
        elif own:
            own[0].set_label("each sampler's nominal confidence")
            for k, seg in enumerate(own):
                seg.set_gid("nominal-confidence" if k == 0 else f"nominal-confidence-{k}")
        ax.set_xticks(
            x,
            [lab or "default" for lab in labels],
            fontsize=9,
            rotation=30 if upright else 0,
            ha="right" if upright else "center",
        )
        ax.set_ylim(0, 125 if upright else 112)
        ax.set_yticks([0, 20, 40, 60, 80, 100])
        ax.set_ylabel("runs whose interval holds the truth (%)", fontsize=9)
        ax.set_xlabel("parameter value (label: median half-width of the intervals)", fontsize=9)
        ax.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    label = (
        "Coverage of the confidence intervals (%) per parameter value and sampler, each bar labelled with the median "
        "half-width of its intervals"
    )
    if nominal is not None:
        label += f", the nominal {100 * nominal:.0f}% dashed"
    elif own:
        label += (
            ", each sampler's nominal confidence dashed over its bars ("
            + ", ".join(f"{c.sampler} {100 * c.confidence:.0f}%" for c in curves if c.confidence is not None)
            + ")"
        )
    return _to_svg(fig, label)


def _plain_log_ticks(axis) -> None:
    """Ticks of a log axis written as plain numbers at 1, 2 and 5 of each decade (``20``, not
    ``2×10¹``, whose superscripts overlapped their neighbours), no labels on the minor ticks."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:,.6g}"))
    axis.set_minor_formatter(NullFormatter())


#: where a point's label may go, in points from the point: right-above, right-below, left-above,
#: left-below, above, below (the first that overlaps no other label nor point is taken)
_LABEL_SPOTS = (
    (5, 4, "left", "bottom"),
    (5, -4, "left", "top"),
    (-5, 4, "right", "bottom"),
    (-5, -4, "right", "top"),
    (0, 7, "center", "bottom"),
    (0, -7, "center", "top"),
)


def _label_points(fig, ax, points: Sequence[tuple[float, float, str, str]]) -> None:
    """Label each point with the first of :data:`_LABEL_SPOTS` whose box overlaps no label placed
    before and no point (boxes estimated from the text's length, in display points); a label
    that fits nowhere takes the spot that overlaps least. Labels overlapped each other when two
    sweep values of different samplers landed close."""
    if not points:
        return
    fig.canvas.draw()  # the scales and limits as they will be drawn
    to_px = ax.transData.transform
    ppp = fig.dpi / 72.0  # pixels per point
    size = 7.5
    centers = [tuple(to_px((x, y))) for x, y, _, _ in points]
    bb = ax.get_window_extent()
    frame = (bb.x0, bb.y0, bb.x1, bb.y1)
    placed: list[tuple[float, float, float, float]] = [
        (cx - 4 * ppp, cy - 4 * ppp, cx + 4 * ppp, cy + 4 * ppp) for cx, cy in centers
    ]

    def box(
        cx: float, cy: float, dx: float, dy: float, ha: str, va: str, text: str
    ) -> tuple[float, float, float, float]:
        w, h = len(text) * size * 0.55 * ppp, size * 1.2 * ppp
        x0 = cx + dx * ppp - (w if ha == "right" else w / 2 if ha == "center" else 0)
        y0 = cy + dy * ppp - (h if va == "top" else 0)
        return (x0, y0, x0 + w, y0 + h)

    def overlap(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> float:
        return max(0.0, min(a[2], b[2]) - max(a[0], b[0])) * max(0.0, min(a[3], b[3]) - max(a[1], b[1]))

    for (x, y, text, color), (cx, cy) in zip(points, centers):
        own = (cx - 4 * ppp, cy - 4 * ppp, cx + 4 * ppp, cy + 4 * ppp)
        best, best_cost = None, None
        for dx, dy, ha, va in _LABEL_SPOTS:
            b = box(cx, cy, dx, dy, ha, va, text)
            inside = overlap(b, frame) / max((b[2] - b[0]) * (b[3] - b[1]), 1e-9)  # a label out of the axes is clipped
            cost = sum(overlap(b, o) for o in placed if o != own) + (1 - inside) * 1e6
            if best_cost is None or cost < best_cost:
                best, best_cost = (dx, dy, ha, va, b), cost
            if cost == 0:
                break
        assert best is not None
        dx, dy, ha, va, b = best
        placed.append(b)
        ax.annotate(text, (x, y), textcoords="offset points", xytext=(dx, dy), ha=ha, va=va, fontsize=size, color=color)


def _short(text: str, width: int) -> str:
    if len(text) <= width:
        return text
    half = (width - 1) // 2
    return text[:half] + "…" + text[-(width - 1 - half) :]
