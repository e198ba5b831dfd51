"""Packaging of the Accel-Sim adapter: its own distribution builds its own compiled trace scanner,
and without a working C++ compiler (or with SIMSAMPLE_PURE_PYTHON=1) it still builds, as pure
Python, the numpy scanner taking over; the core's wheel holds none of it."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ADAPTER = Path(__file__).resolve().parents[1]
ROOT = ADAPTER.parents[1]


def _wheel(tmp_path: Path, **env: str) -> list[str]:
    """The names in the adapter's wheel, built here without isolation (the build tools of the
    test environment) and with ``env`` added."""
    for mod in ("scikit_build_core", "pybind11", "pip"):
        if importlib.util.find_spec(mod) is None:
            pytest.skip(f"{mod} is not installed (needed to build without isolation)")
    full_env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1", **env}
    if "SIMSAMPLE_PURE_PYTHON" not in env:
        full_env.pop("SIMSAMPLE_PURE_PYTHON", None)
    res = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         str(ADAPTER), "-w", str(tmp_path)],
        capture_output=True, text=True, env=full_env,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-2000:]
    (wheel,) = tmp_path.glob("simsample_accelsim-*.whl")
    return [wheel.name, *zipfile.ZipFile(wheel).namelist()]


def _scanner(names: list[str]) -> list[str]:
    return [n for n in names[1:] if n.rsplit("/", 1)[-1].startswith("_trace_scan")]


def _common_files(names: list[str]) -> None:
    for module in ("plugin", "adapter", "reader", "apply", "collect", "commands", "scan_native", "pkp/commands"):
        assert f"simsample_accelsim/{module}.py" in names, module


@pytest.mark.skipif(not any(shutil.which(c) for c in ("c++", "g++", "clang++")), reason="no C++ compiler here")
def test_wheel_holds_the_compiled_scanner(tmp_path):
    names = _wheel(tmp_path)
    assert not names[0].endswith("-py3-none-any.whl"), names[0]  # a platform wheel
    assert len(_scanner(names)) == 1 and _scanner(names)[0].startswith("simsample_accelsim/_trace_scan")
    _common_files(names)


@pytest.mark.parametrize(
    "env", [{"CXX": "/bin/false"}, {"SIMSAMPLE_PURE_PYTHON": "1"}], ids=["no-compiler", "pure-python"]
)
def test_wheel_without_compiler_is_pure_python(tmp_path, env):
    names = _wheel(tmp_path, **env)
    assert names[0].endswith("-py3-none-any.whl"), names[0]
    assert _scanner(names) == []
    _common_files(names)


def test_the_core_builds_no_trace_scanner():
    """The scanner is built by the adapter's CMakeLists alone (the core's wheel must not carry it)."""
    core = (ROOT / "CMakeLists.txt").read_text()
    assert "_trace_scan" not in core and "trace_scan/" not in core
    assert "_trace_scan" in (ADAPTER / "CMakeLists.txt").read_text()


def test_shared_header_copy_matches_the_core():
    """cpp/common/contiguous_bytes.hpp is copied into the adapter (its sdist must build alone);
    the two copies stay the same."""
    ours = ADAPTER / "cpp" / "common" / "contiguous_bytes.hpp"
    core = ROOT / "cpp" / "common" / "contiguous_bytes.hpp"
    assert ours.read_text() == core.read_text(), f"copy {core.relative_to(ROOT)} to {ours.relative_to(ROOT)}"


def test_plugins_lists_the_adapters_scanner(capsys):
    """`simsample plugins` names the adapter's compiled part with the core's, and which runs."""
    import json

    from simsample.cli import run as cli_run
    from simsample_accelsim import scan_native

    assert cli_run(["plugins", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)["implementations"]
    assert "pkp monitor" in got  # the core's
    want = "native (C++ extension)" if scan_native.available() else f"pure Python ({scan_native.unavailable_reason()})"
    assert got["accel-sim trace scanner"] == want
    if os.environ.get("SIMSAMPLE_REQUIRE_NATIVE", "") not in ("", "0"):
        assert want == "native (C++ extension)"
