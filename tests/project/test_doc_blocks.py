"""Every shell and Python block of the README, the tutorial and the how-to guides runs here.

A page's blocks run in order, sharing one scratch folder (the working directory, which holds a
link ``examples`` to the bundled example data, so the pages' commands read as if run from the
repository's root) and, for Python, one namespace. The shown output of a block is compared with
what it prints. The conventions, for whoever writes a page:

* ``bash``/``sh``/``shell`` blocks run as one script under ``bash -euo pipefail``;
  ``console`` blocks are ``$ command`` lines, each followed by its output; ``python`` blocks are
  executed, ``pycon`` blocks run as doctests.
* A fenced ``text`` block right after a ``bash`` or ``python`` block is its expected output
  (standard output and error together, as a terminal shows them). A line ``...`` stands for any
  number of lines, ``...`` inside a line for any text.
* An HTML comment just before a block changes how it runs: ``<!-- doc-test: skip REASON -->``
  (not run: it needs a real simulator, a cluster, a GPU; counted and listed in the summary),
  ``<!-- doc-test: no-output -->`` (its output is not compared), ``<!-- doc-test: exit N -->``
  (it is expected to fail with that status), ``<!-- doc-test: setup COMMANDS -->`` (hidden
  commands run before it).
"""

from __future__ import annotations

import contextlib
import doctest
import io
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.helpers import ROOT

#: The pages a newcomer copies commands from.
PAGES = [
    ROOT / "README.md",
    ROOT / "docs" / "index.md",
    ROOT / "docs" / "tutorial.md",
    *sorted((ROOT / "docs" / "howto").glob("*.md")),
]
SHELL = ("bash", "sh", "shell")
RUN = (*SHELL, "console", "python", "pycon")
OUTPUT = ("text", "output")
TIMEOUT_S = 600

#: Blocks marked skip, as (page, line, reason): the summary counts them (conftest.py).
SKIPPED_BLOCKS: list[tuple[str, int, str]] = []

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})\s*(?P<info>[^\s`]*)[^`]*$")
_MARKER = re.compile(r"<!--\s*doc-test:\s*(?P<body>.*?)\s*-->", re.S)


@dataclass
class Block:
    """One fenced code block of a page, with what the markers before it said."""

    page: str
    line: int  # 1-based line of the opening fence
    lang: str
    code: str
    expected: str | None = None
    skip: str | None = None
    compare: bool = True
    exit: int = 0
    setup: list[str] = field(default_factory=list)


def parse_blocks(text: str, page: str = "") -> list[Block]:
    """The fenced blocks of a Markdown text, in order, each with its markers and, when a
    ``text`` block follows it, its expected output (which is not a block of its own)."""
    lines = text.splitlines()
    blocks: list[Block] = []
    pending: list[str] = []  # marker bodies seen since the last fence
    comment: list[str] | None = None  # lines of an HTML comment being read
    last_end = -1  # index of the line after the last block's closing fence
    i = 0
    while i < len(lines):
        line = lines[i]
        if comment is not None:
            comment.append(line)
            if "-->" in line:
                pending += [m.group("body") for m in _MARKER.finditer("\n".join(comment))]
                comment = None
            i += 1
            continue
        if line.lstrip().startswith("<!--"):
            if "-->" in line:
                pending += [m.group("body") for m in _MARKER.finditer(line)]
            else:
                comment = [line]
            i += 1
            continue
        m = _FENCE.match(line)
        if m is None:
            if line.strip():
                pending = []  # markers belong to the block right after them
            i += 1
            continue
        start = i
        body, i = _fenced_body(lines, i, m)
        lang = m.group("info").lower()
        follows = blocks and all(not ln.strip() for ln in lines[last_end:start])
        if lang in OUTPUT and follows and blocks[-1].expected is None and blocks[-1].lang in (*SHELL, "python"):
            blocks[-1].expected = body
        else:
            block = Block(page, start + 1, lang, body)
            for marker in pending:
                _apply_marker(block, marker)
            blocks.append(block)
        last_end = i
        pending = []
    return blocks


def _fenced_body(lines: list[str], i: int, m: re.Match[str]) -> tuple[str, int]:
    """The body of the block opened on line ``i`` (indentation removed) and the index after it."""
    indent, fence = len(m.group("indent")), m.group("fence")
    body: list[str] = []
    j = i + 1
    while j < len(lines) and not (lines[j].strip().startswith(fence) and lines[j].strip().strip(fence[0]) == ""):
        raw = lines[j]
        body.append(raw[indent:] if raw[:indent].strip() == "" else raw.lstrip())
        j += 1
    return "\n".join(body) + ("\n" if body else ""), j + 1


def _apply_marker(block: Block, marker: str) -> None:
    m = re.match(r"(\S+)\s*(.*)", marker, re.S)
    word, rest = (m.group(1), m.group(2)) if m else ("", "")
    if word == "skip":
        block.skip = rest.strip() or "no reason given"
    elif word == "no-output":
        block.compare = False
    elif word == "exit":
        block.exit = int(rest.strip())
    elif word == "setup":
        block.setup.append(rest.strip())
    else:
        raise ValueError(f"{block.page}: unknown doc-test marker {marker!r} (skip, no-output, exit, setup)")


def output_matches(expected: str, actual: str) -> bool:
    """Whether ``actual`` is what ``expected`` shows: trailing spaces and blank lines at the ends
    ignored, a line ``...`` for any number of lines, ``...`` in a line for any text."""
    want = [ln.rstrip() for ln in expected.strip("\n").splitlines()]
    got = "\n".join(ln.rstrip() for ln in actual.strip("\n").splitlines())
    parts = []
    for ln in want:
        if ln.strip() == "...":
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            parts.append(".*".join(re.escape(p) for p in ln.split("...")) + r"\n")
    pattern = "".join(parts)
    return re.fullmatch(pattern, got + "\n", flags=0) is not None if want else not got.strip()


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.update(COLUMNS="100", NO_COLOR="1", TERM="dumb", PYTHONUNBUFFERED="1")
    for k in ("FORCE_COLOR", "SIMSAMPLE_DEBUG"):
        env.pop(k, None)
    return env


def _shell(script: str, cwd: Path) -> tuple[int, str]:
    proc = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=cwd,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=TIMEOUT_S,
    )
    return proc.returncode, proc.stdout


def _console_commands(code: str) -> list[tuple[str, str]]:
    """``(command, expected output)`` pairs of a console block."""
    pairs: list[tuple[str, list[str]]] = []
    lines = code.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("$ "):
            cmd = [lines[i][2:]]
            while cmd[-1].endswith("\\") and i + 1 < len(lines):
                i += 1
                cmd.append(lines[i].removeprefix("> "))
            pairs.append(("\n".join(cmd), []))
        elif pairs:
            pairs[-1][1].append(lines[i])
        i += 1
    return [(c, "\n".join(out)) for c, out in pairs]


def _where(block: Block) -> str:
    return f"{block.page}:{block.line} ({block.lang})"


def _check_output(block: Block, expected: str | None, actual: str, what: str) -> None:
    if expected is None or not block.compare:
        return
    assert output_matches(expected, actual), (
        f"{_where(block)}: the output of\n{what}\ndiffers from the page's.\n"
        f"--- page shows:\n{expected}\n--- printed:\n{actual}"
    )


def run_block(block: Block, cwd: Path, namespace: dict) -> None:
    """Run one block in ``cwd``; an AssertionError says what differs from the page."""
    for setup in block.setup:
        rc, out = _shell(setup, cwd)
        assert rc == 0, f"{_where(block)}: the hidden setup failed ({rc}):\n{setup}\n{out}"
    if block.lang in SHELL:
        rc, out = _shell(block.code, cwd)
        assert rc == block.exit, (
            f"{_where(block)}: exit status {rc}, expected {block.exit}:\n{block.code}\n--- printed:\n{out}"
        )
        _check_output(block, block.expected, out, block.code)
    elif block.lang == "console":
        commands = _console_commands(block.code)
        assert commands, f"{_where(block)}: a console block without a '$ ' command"
        for k, (cmd, expected) in enumerate(commands):
            rc, out = _shell(cmd, cwd)
            want = block.exit if k == len(commands) - 1 else 0
            assert rc == want, f"{_where(block)}: exit status {rc}, expected {want}:\n{cmd}\n--- printed:\n{out}"
            _check_output(block, expected, out, cmd)
    elif block.lang == "python":
        buf = io.StringIO()
        with contextlib.chdir(cwd) if hasattr(contextlib, "chdir") else _chdir(cwd), contextlib.redirect_stdout(buf):
            exec(compile(block.code, f"{block.page}:{block.line}", "exec"), namespace)
        _check_output(block, block.expected, buf.getvalue(), block.code)
    elif block.lang == "pycon":
        test = doctest.DocTestParser().get_doctest(
            block.code, namespace, f"{block.page}:{block.line}", block.page, block.line
        )
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        report = io.StringIO()
        with contextlib.chdir(cwd) if hasattr(contextlib, "chdir") else _chdir(cwd):
            result = runner.run(test, out=report.write, clear_globs=False)
        assert result.failed == 0, f"{_where(block)}:\n{report.getvalue()}"


@contextlib.contextmanager
def _chdir(path: Path):
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def _page_id(page: Path) -> str:
    rel = page.relative_to(ROOT).with_suffix("").as_posix()
    return rel.removeprefix("docs/").replace("/", "-")


def _runnable_blocks(page: Path) -> list[Block]:
    return [
        b for b in parse_blocks(page.read_text(encoding="utf-8"), page.relative_to(ROOT).as_posix()) if b.lang in RUN
    ]


#: Pages with at least one block to run (the others have none, or only blocks marked skip).
RUN_PAGES = [p for p in PAGES if any(b.skip is None for b in _runnable_blocks(p))]


def test_every_block_runs_or_says_why_not():
    """Every shell or Python block of the pages is run by the test below, or marked
    ``<!-- doc-test: skip REASON -->`` with a reason; a page may hold none."""
    for page in PAGES:
        for block in _runnable_blocks(page):
            if block.skip is not None:
                assert block.skip.strip() and block.skip != "no reason given", (
                    f"{block.page}:{block.line}: skip without a reason"
                )
                SKIPPED_BLOCKS.append((block.page, block.line, block.skip))
    assert ROOT / "docs" / "tutorial.md" in RUN_PAGES and ROOT / "README.md" in RUN_PAGES


@pytest.mark.parametrize("page", RUN_PAGES, ids=[_page_id(p) for p in RUN_PAGES])
def test_page_blocks_run_as_shown(page: Path, tmp_path: Path):
    """The page's blocks, in order, in a scratch folder: each exits as the page says and prints what it shows."""
    rel = page.relative_to(ROOT).as_posix()
    blocks = _runnable_blocks(page)
    (tmp_path / "examples").symlink_to(ROOT / "examples", target_is_directory=True)
    namespace: dict = {"__name__": "__doc_block__"}
    before = _snapshot(ROOT / "examples")
    ran = 0
    for block in blocks:
        if block.skip is not None:
            continue
        run_block(block, tmp_path, namespace)
        ran += 1
    assert ran, f"{rel}: no block ran"
    assert _snapshot(ROOT / "examples") == before, f"{rel}: its commands changed the bundled example data"
    if page in WRITES_INTO_A_FOLDER:
        stray = sorted(p.name for p in tmp_path.iterdir() if p.name != "examples" and not p.is_dir())
        assert stray == [], (
            f"{rel}: its commands wrote {stray} where they were run (the repository's root); write into a folder"
        )


#: Pages whose commands write only into a folder of their own (tutorial-out/, out/, ...), never
#: beside the repository's files.
WRITES_INTO_A_FOLDER = [
    ROOT / "README.md",
    ROOT / "docs" / "tutorial.md",
    *(
        ROOT / "docs" / "howto" / f"{name}.md"
        for name in ("choose-sampler", "cluster-runs", "pkp", "profile-first", "profile-or-features", "report")
    ),
]


def _snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``folder`` with its size and modification time."""
    return {
        p.relative_to(folder).as_posix(): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


# The runner's own rules, on small pages.


def test_parser_reads_markers_and_expected_output():
    page = "\n".join(
        [
            "text",
            "",
            "<!-- doc-test: skip needs a real simulator -->",
            "```bash",
            "accel-sim.out -trace x",
            "```",
            "",
            "```bash",
            "echo hi",
            "```",
            "",
            "```text",
            "hi",
            "```",
            "<!-- doc-test: exit 1 -->",
            "",
            "```console",
            "$ false",
            "```",
            "<!-- doc-test: setup",
            "touch a",
            "-->",
            "```python",
            "print(1)",
            "```",
            "```json",
            "{}",
            "```",
        ]
    )
    blocks = parse_blocks(page, "p.md")
    assert [(b.lang, b.skip, b.exit, b.expected) for b in blocks] == [
        ("bash", "needs a real simulator", 0, None),
        ("bash", None, 0, "hi\n"),
        ("console", None, 1, None),
        ("python", None, 0, None),
        ("json", None, 0, None),
    ]
    assert blocks[3].setup == ["touch a"]
    assert [b.line for b in blocks] == [4, 8, 17, 23, 26]


def test_markers_apply_only_to_the_next_block():
    page = "<!-- doc-test: skip x -->\n\nsome prose\n\n```bash\necho\n```\n"
    assert parse_blocks(page)[0].skip is None


def test_indented_blocks_lose_their_indent():
    page = "1. step\n\n    ```bash\n    echo a\n      echo b\n    ```\n"
    assert parse_blocks(page)[0].code == "echo a\n  echo b\n"


@pytest.mark.parametrize(
    ("expected", "actual", "ok"),
    [
        ("a\nb", "a  \nb\n\n", True),
        ("a\n...\nd", "a\nb\nc\nd", True),
        ("a\n...\nd", "a\nd", True),
        ("took ... s", "took 1.2 s", True),
        ("a\nb", "a\nc", False),
        ("a", "a\nb", False),
        ("", "", True),
        ("x (y) [z]", "x (y) [z]", True),
    ],
)
def test_output_matching(expected, actual, ok):
    assert output_matches(expected, actual) is ok


def test_console_blocks_pair_commands_with_output():
    code = "$ echo a \\\n> b\na b\n$ true\n"
    assert _console_commands(code) == [("echo a \\\nb", "a b"), ("true", "")]


def test_a_failing_block_names_its_page_and_line(tmp_path):
    block = Block("p.md", 7, "bash", "echo out; exit 3\n")
    with pytest.raises(AssertionError, match=r"p\.md:7 \(bash\): exit status 3"):
        run_block(block, tmp_path, {})
    block = Block("p.md", 9, "bash", "echo two\n", expected="one\n")
    with pytest.raises(AssertionError, match="differs from the page"):
        run_block(block, tmp_path, {})
