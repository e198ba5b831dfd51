"""The README stays a newcomer's page and the documentation site stays whole.

``.ci/run`` builds the site with ``mkdocs build --strict`` (every link, page and API name
checked); these tests check what a broken site build would not say: the README's size, that
every page is in the navigation and every navigation entry exists, and that nothing measured
was left behind in the README.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

import pytest

from tests.helpers import ROOT

DOCS = ROOT / "docs"


def _nav_pages() -> list[str]:
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    nav = text[text.index("\nnav:") :]
    return re.findall(r"([\w/.-]+\.md)\s*$", nav, flags=re.M)


def test_readme_is_short():
    assert (ROOT / "README.md").stat().st_size <= 12 * 1024


def test_readme_keeps_the_quick_start():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    for needed in (
        "make demo",
        "make test",
        "simsample plan",
        "simsample estimate",
        "import simsample",
        "## Where things are",
    ):
        assert needed in text, needed


def test_nav_lists_existing_pages_and_every_page():
    listed = _nav_pages()
    assert listed, "mkdocs.yml has no nav"
    for page in listed:
        assert (DOCS / page).is_file(), page
    pages = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
    assert sorted(set(listed)) == pages


def test_measurements_live_in_the_results_pages():
    """Tables of figures (a row with a percentage or a speedup) are in docs/results/, not the README."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    measured = [line for line in readme.splitlines() if line.startswith("|") and re.search(r"\d(\.\d+)?(%|×)", line)]
    assert measured == []
    assert (DOCS / "results" / "sampled-vs-full.md").is_file()
    text = (DOCS / "results" / "sampled-vs-full.md").read_text(encoding="utf-8")
    assert "chains" in text and "hetero" in text and "targeted" in text


@pytest.mark.slow
def test_site_builds_strictly(tmp_path):
    if shutil.which("mkdocs") is None and not (ROOT / ".venv" / "bin" / "mkdocs").exists():
        pytest.skip("mkdocs not installed (pip install '.[docs]')")
    out = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert (tmp_path / "site" / "reference" / "api" / "index.html").is_file()


def test_no_script_is_published_with_the_site():
    """mkdocs copies every file of docs/ into the site: scripts live elsewhere (scripts/)."""
    assert sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.py")) == []


def test_no_backslash_pipe_in_code_spans():
    """Inside a code span a table's escaped pipe shows its backslash: use <code>…&#124;…</code>."""
    bad = []
    for page in DOCS.rglob("*.md"):
        for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            if any("\\|" in span for span in re.findall(r"`([^`]+)`", line)):
                bad.append(f"{page.relative_to(DOCS)}:{n}")
    assert bad == []


def test_the_home_pages_diagram_fits_the_page():
    """The content column of the site shows about 70 characters of code at 1,400 px."""
    for page in (DOCS / "index.md", ROOT / "README.md"):
        text = page.read_text(encoding="utf-8")
        diagram = text[text.index("```\nprofile / traces") + 4 :]
        diagram = diagram[: diagram.index("```")]
        assert max(len(line) for line in diagram.splitlines()) <= 70, page


def test_sphinx_roles_render_as_code():
    """Docstrings' :meth:`x` markers would show raw in the API pages; the site's hook makes them code."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("mkdocs_hooks", ROOT / "scripts" / "mkdocs_hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    html = "see :meth:<code>to_parquet</code> and :class:<code>~simsample.errors.UserError</code>, not :<code>x</code>"
    assert (
        hooks.sphinx_roles_to_code(html)
        == "see <code>to_parquet</code> and <code>UserError</code>, not :<code>x</code>"
    )
    assert "hooks:\n  - scripts/mkdocs_hooks.py" in (ROOT / "mkdocs.yml").read_text(encoding="utf-8")


def test_code_fences_close_on_a_line_of_their_own():
    """A closing fence with text after it (```` ``` The plans... ````) is no fence in Markdown: the
    rest of the page renders as code and its headings and anchors vanish (a results page lost its
    last three sections that way, seen only as an INFO line about a missing anchor)."""
    bad = []
    for page in [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]:
        fence = None
        for n, line in enumerate(page.read_text().splitlines(), 1):
            m = re.match(r"^ {0,3}(`{3,}|~{3,})(.*)$", line)
            if not m:
                continue
            if fence is None:
                fence = m.group(1)
            elif m.group(1).startswith(fence[0]) and len(m.group(1)) >= len(fence):
                if m.group(2).strip():
                    bad.append(f"{page.relative_to(ROOT)}:{n}: {line[:60]}")
                else:
                    fence = None
        if fence is not None:
            bad.append(f"{page.relative_to(ROOT)}: a code fence is never closed")
    assert not bad, bad
