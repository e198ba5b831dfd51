"""The report's per-kernel rollup and where it marks its own plan, checked on plans of the example profile."""

from __future__ import annotations

import pytest

import simsample
from simsample.io.names import strip_args
from simsample.report import plots
from simsample.report.content import _plan_point, kernel_rollup
from tests.helpers import ROOT

PROFILE = ROOT / "examples" / "profile" / "train_step.pt.trace.json.gz"


@pytest.fixture(scope="module")
def workload():
    return simsample.read(PROFILE)


def test_rollup_sums_to_the_plan(workload):
    p = simsample.plan(workload, "stem", seed=1)
    g = kernel_rollup(p)
    assert g["launches"].sum() == len(workload)
    assert g["draws"].sum() == sum(c.draws for c in p.clusters)
    assert g["time_share"].sum() == pytest.approx(1.0)
    assert g["variance_share"].sum() == pytest.approx(1.0)
    assert list(g["variance"]) == sorted(g["variance"], reverse=True)
    # a cluster's part: N²(1 − m/N)s²/m with s = CoV·mean, summed per kernel
    c = max(p.clusters, key=lambda c: c.size)
    s = c.stats["cov"] * c.stats["mean"]
    want = c.size**2 * (1 - c.draws / c.size) * s * s / c.draws
    assert 0 < want <= float(g["variance"].max()) * (1 + 1e-9)
    assert set(g["kernel"]) == {strip_args(str(n)) for n in workload.to_dataframe()["name"].unique()}


def _curve(sampler, points):
    return plots.Curve(
        sampler,
        [s for s, _ in points],
        [e for _, e in points],
        [None] * len(points),
        [f"eps={v}" for v in (0.05, 0.25)][: len(points)],
    )


def test_the_plan_is_marked_at_its_evaluated_point_only_when_every_parameter_matches(workload):
    p = simsample.plan(workload, "stem", seed=1)
    params = p.sampler["params"]
    points = [{"params": {"eps": 0.05}}, {"params": {"eps": 0.25}}]
    curve = _curve("stem", [(2.0, 0.5), (9.0, 3.0)])
    same = [{"params": {**params, "eps": 0.05}}, {"params": {**params, "eps": 0.25}}]
    got = _plan_point(p, [curve], [points], [same])
    assert (got.speedup, got.error_pct, got.label) == (2.0, 0.5, "eps=0.05")
    # the evaluation used another confidence: not this plan's point; its predicted speedup instead
    other = [{"params": {**params, "eps": e, "confidence": 0.5}} for e in (0.05, 0.25)]
    got = _plan_point(p, [curve], [points], [other])
    assert got.error_pct is None and got.speedup == pytest.approx(p.prediction["speedup"])
    # another sampler's curve is never this plan's
    got = _plan_point(p, [_curve("root", [(2.0, 0.5)])], [points[:1]], [same[:1]])
    assert got.error_pct is None


def test_error_axis_scale_follows_the_errors():
    log = plots.error_vs_speedup([plots.Curve("a", [2.0, 8.0], [0.5, 5.0], [None, None], ["x", "y"])])
    assert 'data-yscale="log"' in log.svg
    census = plots.error_vs_speedup([plots.Curve("a", [1.0, 8.0], [0.0, 5.0], [None, None], ["x", "y"])])
    assert 'data-yscale="symlog"' in census.svg


# --- readable charts: units on value intervals, labels that do not overlap, a legible coverage chart ---
def test_cluster_intervals_carry_their_unit():
    from simsample.report.content import key_with_unit

    assert (
        key_with_unit("ampere_sgemm_128x64_tn [148003, 173242]", "duration_ns")
        == "ampere_sgemm_128x64_tn [148–173.2 µs]"
    )
    assert key_with_unit("k [950, 990]", "duration_ns") == "k [950–990 ns]"
    assert key_with_unit("k [2.5e9, 3e9]", "duration_ns") == "k [2.5–3 s]"
    assert key_with_unit("k [1024, 40960]", "cycles") == "k [1,024–4.096e+04 cycles]"
    assert key_with_unit("k [3, 7]", "warp_insts") == "k [3–7 warp_insts]"
    assert key_with_unit("void f<int>(float*)", "duration_ns") == "void f<int>(float*)"  # no interval
    assert key_with_unit("k [a, b]", "duration_ns") == "k [a, b]"  # not numbers: as it is


def test_the_report_shows_cluster_intervals_with_units(workload, tmp_path):
    from simsample.cli import run

    plan = tmp_path / "plan.json"
    assert run(["plan", str(PROFILE), "-o", str(plan)]) == 0
    out = tmp_path / "r.html"
    assert run(["report", str(plan), "--profile", str(PROFILE), "-o", str(out)]) == 0
    text = out.read_text()
    import re

    assert re.search(r"ampere_sgemm_128x64_tn \[[0-9.]+–[0-9.]+ µs\]", text), (
        "no interval with its unit in the clusters table"
    )
    assert not re.search(r"ampere_sgemm_128x64_tn \[\d{5,}, \d{5,}\](?! \(duration_ns\))", text), (
        "an interval in bare nanoseconds"
    )


def _texts(svg: str) -> list[str]:
    import re

    return re.findall(r"<text[^>]*>([^<]*)</text>", svg)


def test_point_labels_do_not_overlap():
    """Two samplers' sweeps whose points land close together: every label's box is apart from
    every other's (they were all drawn up and to the right of their points)."""
    import matplotlib.pyplot as plt

    curves = [
        plots.Curve(
            "margin",
            [47, 82, 143, 238],
            [0.81, 0.62, 0.715, 0.344],
            [1, 1, 1, 1],
            ["eps=0.03", "eps=0.05", "eps=0.1", "eps=0.25"],
        ),
        plots.Curve(
            "root",
            [15.5, 116, 134, 244],
            [1.15, 1.01, 0.698, 4.6],
            [1, 1, 1, 1],
            ["eps=0.03", "eps=0.05", "eps=0.1", "eps=0.25"],
        ),
    ]
    captured = {}
    real = plots._to_svg

    def keep(fig, label, **kw):
        captured["fig"] = fig
        fig.canvas.draw()
        ax = fig.axes[0]
        renderer = fig.canvas.get_renderer()
        captured["boxes"] = [t.get_window_extent(renderer) for t in ax.texts]
        captured["frame"] = ax.get_window_extent(renderer)
        return real(fig, label, **kw)

    plots._to_svg = keep
    try:
        plots.error_vs_speedup(curves)
    finally:
        plots._to_svg = real
        plt.close("all")
    boxes = captured["boxes"]
    assert len(boxes) == 8
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            assert not a.overlaps(b), (a, b)
    frame = captured["frame"]
    assert all(frame.x0 - 1 <= b.x0 and b.x1 <= frame.x1 + 1 for b in boxes), "a label runs out of the axes"


def test_log_ticks_are_plain_numbers():
    curves = [plots.Curve("margin", [15, 40, 90, 240], [0.4, 0.9, 2.5, 6.0], [1, 1, 1, 1], ["a", "b", "c", "d"])]
    svg = plots.error_vs_speedup(curves).svg
    texts = [t.strip() for t in _texts(svg)]
    assert "20" in texts and "50" in texts and "100" in texts, texts
    assert not any("10^" in t or "×10" in t or "10<" in t for t in texts), texts


def test_coverage_chart_is_legible():
    """Large enough to read at the page's width, its half-width labels in ink above the bars,
    at the chart's own font size (they were white, 6.5 pt, inside 0.3-inch bars)."""
    import re

    curves = [
        plots.Curve(
            s,
            [10.0] * 4,
            [1.0] * 4,
            [1.0, 0.98, 1.0, 0.9],
            ["eps=0.03", "eps=0.05", "eps=0.1", "eps=0.25"],
            half_width=[2.1, 3.3, 3.6, 5.2],
            confidence=c,
        )
        for s, c in (("margin", 0.99), ("root", 0.95))
    ]
    svg = plots.coverage(curves, nominal=None).svg
    width = float(re.search(r'width="([0-9.]+)pt"', svg).group(1))
    assert width >= 500, width
    labels = re.findall(r'<text[^>]*style="([^"]*)"[^>]*>±[0-9.]+%</text>', svg)
    assert len(labels) == 8
    assert all("fill: #ffffff" not in st and "fill:#ffffff" not in st for st in labels), labels
    sizes = [float(m) for st in labels for m in re.findall(r"font-size: ?([0-9.]+)px", st)]
    assert sizes and min(sizes) >= 8, sizes
