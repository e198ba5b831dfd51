"""The report in a real headless Chromium: loads without console errors, every figure renders.

Skipped when Chromium or its driver is absent, unless ``SIMSAMPLE_REQUIRE_BROWSER=1`` (set by
``.ci/run``, which installs them), where their absence fails the test.
"""

from __future__ import annotations

import os
import re

import pytest

from simsample.cli import run
from tests.browser import (
    SVG_BOXES_JS,
    chromium,
    console_errors,
    find_chromium,
    full_page_screenshot,
    open_page,
)
from tests.report_inputs import make_inputs, report_argv


@pytest.fixture(scope="module")
def browser():
    if find_chromium() is None:
        if os.environ.get("SIMSAMPLE_REQUIRE_BROWSER"):
            pytest.fail("SIMSAMPLE_REQUIRE_BROWSER=1 but chromium or chromedriver is not installed")
        pytest.skip("chromium and chromedriver not installed (Debian: apt-get install chromium chromium-driver)")
    with chromium() as drv:
        yield drv


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    folder = tmp_path_factory.mktemp("browser")
    out = folder / "report.html"
    assert run(report_argv(make_inputs(folder), out)) == 0
    return out


def test_page_loads_and_every_plot_renders(browser, report, tmp_path):
    open_page(browser, report)
    assert browser.execute_script("return document.readyState") == "complete"
    assert console_errors(browser) == []
    font = browser.execute_script("return getComputedStyle(document.body).fontFamily")
    assert "sans-serif" in font, f"the page's stylesheet was not applied: {font}"
    expected = len(re.findall(r"<svg\b", report.read_text(encoding="utf-8")))
    boxes = browser.execute_script(SVG_BOXES_JS)
    assert len(boxes) == expected > 0
    for b in boxes:
        assert b["w"] > 50 and b["h"] > 50, b
        assert b["drawn"] > 10, b
        assert b["label"], b
    # the largest figures fit the page: nothing wider than the main column
    main = browser.execute_script("return document.querySelector('main').getBoundingClientRect().width")
    assert max(b["w"] for b in boxes) <= main
    shot = tmp_path / "report.png"
    full_page_screenshot(browser, shot)
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000


def test_page_prints(browser, report, tmp_path):
    """Chromium's own print to PDF of the page (what a user's Print gives)."""
    import base64

    open_page(browser, report)
    pdf = base64.b64decode(browser.print_page())
    assert pdf[:5] == b"%PDF-"
    pages = len(re.findall(rb"/Type\s*/Page\b", pdf))
    assert pages >= 2
    assert console_errors(browser) == []


#: the error-vs-speedup figure as the browser lays it out: its axis scale, the y tick labels
#: (their text and height on the page) and the plan's own marked point
ERROR_FIGURE_JS = """
var svg = document.querySelector('svg[data-yscale]');
if (!svg) { return null; }
var yaxis = svg.querySelector('g[id^="matplotlib.axis_2"]') || svg.querySelector('g[id^="matplotlib_axis_2"]');
var ticks = yaxis ? Array.from(yaxis.querySelectorAll('g[id^="ytick"]')).map(function (t) {
  var r = t.getBoundingClientRect();
  return {text: (t.textContent || '').trim(), y: r.top + r.height / 2};
}) : [];
var mark = svg.querySelector('[id="plan-point"]');
var mr = mark ? mark.getBoundingClientRect() : null;
var sr = svg.getBoundingClientRect();
return {scale: svg.getAttribute('data-yscale'), label: svg.getAttribute('aria-label'), ticks: ticks,
        mark: mr ? {w: mr.width, h: mr.height,
                    inside: mr.left >= sr.left && mr.right <= sr.right && mr.top >= sr.top && mr.bottom <= sr.bottom}
                 : null};
"""


def test_error_axis_is_logarithmic_and_the_plan_is_marked(browser, report):
    open_page(browser, report)
    fig = browser.execute_script(ERROR_FIGURE_JS)
    assert fig is not None, "no error-vs-speedup figure on the page"
    assert fig["scale"] in ("log", "symlog")
    # a logarithmic axis: its labelled ticks are plain numbers (1, 2, 5 of each decade; the
    # superscripts of 2×10¹ overlapped), placed on the page in proportion to their logarithms
    labelled = [{**t, "text": "".join(t["text"].split())} for t in fig["ticks"] if t["text"].strip()]
    assert len(labelled) >= 2, fig["ticks"]
    values = [
        (float(t["text"].replace(",", "").replace("−", "-")), t["y"]) for t in labelled if t["text"] not in ("0", "−0")
    ]
    assert all(v > 0 and f"{v:e}"[0] in "125" for v, _ in values), labelled
    if fig["scale"] == "log" and len(values) >= 3:
        import math

        per_decade = [(y1 - y0) / (math.log10(v1) - math.log10(v0)) for (v0, y0), (v1, y1) in zip(values, values[1:])]
        assert max(per_decade) - min(per_decade) <= 1.0, values
    # the report's own plan (stem, eps=0.05, evaluated in the sweep) is marked inside the figure
    assert fig["mark"] is not None and fig["mark"]["w"] > 3 and fig["mark"]["h"] > 3 and fig["mark"]["inside"], fig[
        "mark"
    ]
    assert "this plan" in fig["label"]


def test_coverage_chart_draws_the_nominal_confidence_and_widths(browser, report):
    open_page(browser, report)
    found = browser.execute_script(
        "var l = document.querySelector('[id=\"nominal-confidence\"]'); if (!l) return null;"
        "var r = l.getBoundingClientRect(); var s = l.closest('svg');"
        "return {w: r.width, text: s.textContent};"
    )
    assert found is not None and found["w"] > 50
    assert re.search(r"±[0-9.]+%", found["text"]), "no interval half-width on the coverage chart"


def test_kernel_rollup_table(browser, report):
    open_page(browser, report)
    rows = browser.execute_script(
        "var t = document.getElementById('kernel-rollup'); if (!t) return null;"
        "var head = Array.from(t.querySelectorAll('thead th')).map(function (h) { return h.textContent; });"
        "var body = Array.from(t.querySelectorAll('tbody tr')).map(function (r) {"
        "  return Array.from(r.querySelectorAll('td')).map(function (c) { return c.textContent; }); });"
        "return {head: head, body: body, visible: t.getBoundingClientRect().height > 0};"
    )
    assert rows is not None and rows["visible"]
    assert rows["head"] == ["kernel", "clusters", "launches", "draws", "share of time", "share of variance"]
    assert len(rows["body"]) >= 2
    time_share = sum(float(r[4].rstrip("%")) for r in rows["body"])
    var_share = sum(float(r[5].rstrip("%")) for r in rows["body"] if r[5] != "–")
    assert abs(time_share - 100) < 1.0 and abs(var_share - 100) < 1.0
    launches = sum(int(r[2].replace(",", "")) for r in rows["body"])
    assert launches == 5320  # every launch of the example profile, once
