"""The report in a real headless Chromium: loads without console errors, every figure renders.

Skipped when Chromium or its driver is absent, unless ``SIMSAMPLE_REQUIRE_BROWSER=1`` (set by
``.ci/run``, which installs them), where their absence fails the test.
"""

from __future__ import annotations

import os
import re

import pytest

from simsample.cli import run
from tests.browser import SVG_BOXES_JS, chromium, console_errors, find_chromium, full_page_screenshot, open_page
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
