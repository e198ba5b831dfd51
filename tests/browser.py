"""A real headless Chromium driven by selenium, for the report's browser tests and screenshot.

Chromium and its driver come from the system (Debian ``chromium`` and ``chromium-driver``,
installed by ``.ci/run``); tests skip when either is absent. The browser starts with a new empty
profile and without any background network activity, so a page that loads cleanly here loads
offline.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")
DRIVER_NAMES = ("chromedriver",)

#: what a page reports about its figures: count, and each SVG's box and drawn element count
SVG_BOXES_JS = """
return Array.from(document.querySelectorAll('svg')).map(function (s) {
  var r = s.getBoundingClientRect();
  return {w: r.width, h: r.height, drawn: s.querySelectorAll('path, use, text').length,
          label: s.getAttribute('aria-label') || ''};
});
"""


def find_chromium() -> tuple[str, str] | None:
    """Paths of the browser and its driver, or None when either is missing."""
    browser = next((p for n in CHROMIUM_NAMES if (p := shutil.which(n))), None)
    driver = next((p for n in DRIVER_NAMES if (p := shutil.which(n))), None)
    return (browser, driver) if browser and driver else None


@contextmanager
def chromium(width: int = 1280, height: int = 1600) -> Iterator[Any]:
    """A selenium WebDriver for headless Chromium with the browser console log enabled."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    found = find_chromium()
    if found is None:
        raise RuntimeError("chromium or chromedriver not found")
    browser, driver_path = found
    with tempfile.TemporaryDirectory(prefix="simsample-chromium-") as profile:
        opts = webdriver.ChromeOptions()
        opts.binary_location = browser
        for arg in (
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            f"--user-data-dir={profile}",
            f"--window-size={width},{height}",
        ):
            opts.add_argument(arg)
        opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        drv = webdriver.Chrome(service=Service(executable_path=driver_path), options=opts)
        try:
            yield drv
        finally:
            drv.quit()


def open_page(drv: Any, path: Path) -> None:
    drv.get(path.resolve().as_uri())


def console_errors(drv: Any) -> list[str]:
    """Console messages of level SEVERE (errors) since the last call."""
    return [e["message"] for e in drv.get_log("browser") if e.get("level") == "SEVERE"]


def full_page_screenshot(drv: Any, out: Path, width: int = 1280, max_height: int = 16000) -> None:
    """A PNG of the whole page: the window is resized to the document's height first."""
    h = int(drv.execute_script("return Math.ceil(document.documentElement.scrollHeight)"))
    drv.set_window_size(width, min(max(h, 600), max_height))
    drv.save_screenshot(str(out))
