"""pandas imported beside the compiled Kineto scan: on another thread, once, only where pandas is
not imported yet and a second core is there; the launches read are those of a reader that
imported pandas first. Each case runs in a fresh interpreter (an import happens once per process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from simsample.plugins.readers._kineto import native as kn
from tests.helpers import ROOT

pytestmark = pytest.mark.skipif(not kn.AVAILABLE, reason="the compiled Kineto extractor is not built")

SCRIPT = """
import json, os, sys, threading
if sys.argv[2] == "pandas-first":
    import pandas
    pandas.DataFrame
if sys.argv[3] == "one-core" and hasattr(os, "sched_setaffinity"):
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
started = []
real_start = threading.Thread.start
def start(self):
    started.append(self.name)
    real_start(self)
threading.Thread.start = start
from pathlib import Path
from simsample.plugins.readers import kineto
part = kineto.read_file(Path(sys.argv[1]))
print(json.dumps({
    "started": started,
    "pandas": type(sys.modules["pandas"]).__name__,
    "names": [str(n) for n in part["arrays"]["name"]],
    "start_ns": [int(v) for v in part["arrays"]["start_ns"]],
    "engine": part["scan"]["engine"],
}))
"""


def _trace(path: Path) -> Path:
    events = [
        {"ph": "X", "cat": "kernel", "name": f"k{i % 3}", "ts": 10 + i, "dur": 2.5,
         "args": {"grid": [i + 1, 1, 1], "block": [64, 1, 1], "stream": 7}}
        for i in range(40)
    ]  # fmt: skip
    path.write_text(json.dumps({"schemaVersion": 1, "traceEvents": events}))
    return path


def _run(trace: Path, pandas: str, cores: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(trace), pandas, cores],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_pandas_is_imported_beside_the_scan_and_the_launches_are_the_same(tmp_path: Path) -> None:
    trace = _trace(tmp_path / "t.pt.trace.json")
    beside = _run(trace, "lazy", "all")
    first = _run(trace, "pandas-first", "all")
    assert beside["engine"] == first["engine"] == "native"
    assert beside["names"] == first["names"] and beside["start_ns"] == first["start_ns"]
    assert beside["pandas"] == first["pandas"] == "module"  # fully imported, not left a lazy proxy
    if len(os.sched_getaffinity(0)) >= 2:
        assert beside["started"].count("simsample-import-pandas") == 1
    # pandas already imported: nothing to start
    assert "simsample-import-pandas" not in first["started"]


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs sched_setaffinity")
def test_no_import_thread_on_one_core(tmp_path: Path) -> None:
    got = _run(_trace(tmp_path / "t.pt.trace.json"), "lazy", "one-core")
    assert "simsample-import-pandas" not in got["started"]
    assert got["pandas"] == "module" and len(got["names"]) == 40
