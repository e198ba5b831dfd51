"""Progress on a terminal: a stage line while planning, a byte count that follows the reader."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from simsample import progress
from tests.helpers import ROOT

PROFILE = ROOT / "examples" / "profile" / "train_step.pt.trace.json.gz"


def test_offsets_follow_an_open_file(tmp_path):
    if not os.path.isdir("/proc/self/fdinfo"):
        pytest.skip("no /proc/self/fdinfo on this system")
    f = tmp_path / "big.bin"
    f.write_bytes(b"x" * 100_000)
    with open(f, "rb", buffering=0) as fh:
        fh.read(12_345)
        offsets = progress._offsets({str(f.resolve())})
    assert offsets == {str(f.resolve()): 12_345}
    assert progress._offsets({str(f.resolve())}) == {}  # closed: nothing to follow


def test_one_display_at_a_time(monkeypatch):
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    assert progress._enabled()
    with progress._display():
        assert not progress._enabled()  # a bar inside another draws nothing
        with progress.task("inner", None) as advance:
            advance(1)
    assert progress._enabled()


def test_plan_shows_a_stage_line_on_a_terminal(tmp_path):
    """Run ``simsample plan`` with its standard error on a pseudo-terminal: the stage line shows."""
    pty = pytest.importorskip("pty")
    main, child = pty.openpty()
    env = {**os.environ, "COLUMNS": "120", "TERM": "xterm"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "simsample", "plan", str(PROFILE), "-o", str(tmp_path / "plan.json")],
        stdout=subprocess.PIPE,
        stderr=child,
        env=env,
    )
    os.close(child)
    seen = b""
    while True:
        try:
            chunk = os.read(main, 4096)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    proc.wait(timeout=120)
    os.close(main)
    assert proc.returncode == 0
    assert b"planning 5,320 launches with margin" in seen
