"""pandas imported beside a compiled scan (``simsample.sdk.import_beside``): on another thread,
once, only where pandas is not imported yet and a second core is there, joined before pandas is
touched; the launches read are those of a reader that imported pandas first. Each case runs in a
fresh interpreter (a module is imported once per process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from simsample.plugins.readers._kineto import native as kn
from simsample.plugins.readers._nsys_sqlite import columns as sc
from tests.helpers import ROOT, shared_path

#: the subprocess scripts' first lines after their imports: every thread started is named in ``started``
COUNT_THREADS = """started = []
real_start = threading.Thread.start
def start(self):
    started.append(self.name)
    real_start(self)
threading.Thread.start = start
"""

SCRIPT = """
import json, os, sys, threading
if sys.argv[2] == "pandas-first":
    import pandas
    pandas.DataFrame
if sys.argv[3] == "one-core" and hasattr(os, "sched_setaffinity"):
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
{count_threads}import simsample
k = simsample.read(sys.argv[1]).kernels
print(json.dumps({
    "started": started,
    "pandas": type(sys.modules["pandas"]).__name__,
    "names": [str(n) for n in k["name"]],
    "start_ns": [int(v) for v in k["start_ns"]],
}))
""".replace("{count_threads}", COUNT_THREADS)

LAZY_SCRIPT = """
import sys, threading
sys.path.insert(0, sys.argv[1])
{count_threads}import lazy_loader
slow = lazy_loader.load("slowmod")  # a lazily loaded stand-in, as the readers hold pandas
from simsample.sdk import import_beside
assert type(sys.modules["slowmod"]).__name__ == "_LazyModule"
wait = import_beside("slowmod")
again = import_beside("slowmod")  # asked twice: the same import, not a second one
wait()
print(type(sys.modules["slowmod"]).__name__, slow.VALUE, slow.LOADS, started.count("simsample-import-slowmod"))
before = len(started)
import_beside("threading")()  # already imported: nothing started, nothing to wait for
print(len(started) - before)
""".replace("{count_threads}", COUNT_THREADS)


def _trace(path: Path) -> Path:
    events = [
        {"ph": "X", "cat": "kernel", "name": f"k{i % 3}", "ts": 10 + i, "dur": 2.5,
         "args": {"grid": [i + 1, 1, 1], "block": [64, 1, 1], "stream": 7}}
        for i in range(40)
    ]  # fmt: skip
    path.write_text(json.dumps({"schemaVersion": 1, "traceEvents": events}))
    return path


def _run(script: str, *args: str) -> str:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, env=env, check=True)
    return out.stdout.strip().splitlines()


def _read(path: Path, pandas: str, cores: str) -> dict:
    return json.loads(_run(SCRIPT, str(path), pandas, cores)[-1])


def _check_beside(path: Path) -> None:
    beside = _read(path, "lazy", "all")
    first = _read(path, "pandas-first", "all")
    assert beside["names"] == first["names"] and beside["start_ns"] == first["start_ns"]
    assert beside["pandas"] == first["pandas"] == "module"  # fully imported, not left a lazy stand-in
    if len(os.sched_getaffinity(0)) >= 2:
        assert beside["started"].count("simsample-import-pandas") == 1
    assert "simsample-import-pandas" not in first["started"]  # pandas already imported: nothing to start


@pytest.mark.skipif(not kn.AVAILABLE, reason="the compiled Kineto extractor is not built")
def test_kineto_scan_imports_pandas_beside(tmp_path: Path) -> None:
    _check_beside(_trace(tmp_path / "t.pt.trace.json"))


@pytest.mark.skipif(sc.native_reader()[0] is None, reason="the compiled SQLite reader is not built")
def test_sqlite_scan_imports_pandas_beside(tmp_path: Path) -> None:
    import lzma

    packed = shared_path("profiles", "nsys-sqlite", "pipit-cloverleaf", "perlmutter-cloverleaf-cuda.sqlite.xz")
    plain = tmp_path / "cloverleaf.sqlite"
    plain.write_bytes(lzma.decompress(packed.read_bytes()))
    _check_beside(plain)


@pytest.mark.skipif(not kn.AVAILABLE, reason="the compiled Kineto extractor is not built")
@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs sched_setaffinity")
def test_no_import_thread_on_one_core(tmp_path: Path) -> None:
    got = _read(_trace(tmp_path / "t.pt.trace.json"), "lazy", "one-core")
    assert "simsample-import-pandas" not in got["started"]
    assert got["pandas"] == "module" and len(got["names"]) == 40


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2, reason="one core")
def test_import_beside_loads_a_lazy_module_once_and_waits_for_it(tmp_path: Path) -> None:
    (tmp_path / "slowmod.py").write_text(
        "import time\nimport builtins\nLOADS = getattr(builtins, '_slowmod_loads', 0) + 1\n"
        "builtins._slowmod_loads = LOADS\ntime.sleep(0.3)\nVALUE = 42\n"
    )
    lines = _run(LAZY_SCRIPT, str(tmp_path))
    # loaded for real (no longer the lazy stand-in), once, complete when wait() returns; one thread
    assert lines[0] == "module 42 1 1"
    # a module already imported starts no thread
    assert lines[1] == "0"
