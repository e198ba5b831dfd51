"""Start-up stays light: the commands that list or describe things import no heavy library.

A heavy library (pandas, SciPy, scikit-learn, pyarrow, jsonschema, rich) costs from a tenth of a
second to seconds to import; ``--version``, ``--help``, ``samplers`` and ``plugins`` need none of
them, so a plugin that imports one at module level (instead of through ``lazy_loader`` or inside
the function that needs it) shows up here.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = (
    "pandas",
    "scipy",
    "scipy.stats",
    "scipy.sparse",
    "sklearn",
    "pyarrow",
    "jsonschema",
    "rich.console",
    "torch",
    "matplotlib",
)

PROBE = """
import importlib.util, json, sys
from simsample.cli import run
code = run(sys.argv[1:])
loaded = [m for m in {heavy!r} if m in sys.modules and not isinstance(sys.modules[m], importlib.util._LazyModule)]
print(json.dumps({{"code": code, "loaded": loaded}}), file=sys.stderr)
"""


def _loaded_after(args: list[str]) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=HEAVY), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return json.loads(proc.stderr.strip().splitlines()[-1])


@pytest.mark.parametrize(
    "args, allowed",
    [
        (["--version"], set()),
        (["--help"], set()),
        (["plan", "--help"], set()),
        (["samplers", "--json"], set()),
        (["samplers"], {"rich.console"}),  # the two that draw a table use rich to draw it
        (["plugins"], {"rich.console"}),
    ],
)
def test_listing_commands_import_no_heavy_library(args: list[str], allowed: set[str]) -> None:
    got = _loaded_after(args)
    assert got["code"] == 0
    assert set(got["loaded"]) <= allowed


def test_a_command_that_reads_still_gets_its_libraries(tmp_path) -> None:
    """The lazy proxies load for real on first use: a profile summary needs pandas and gets it."""
    from pathlib import Path

    example = Path(__file__).resolve().parents[2] / "examples" / "profile" / "train_step.pt.trace.json.gz"
    got = _loaded_after(["profile", "info", str(example), "--json"])
    assert got["code"] == 0
    assert "pandas" in got["loaded"]


def test_version_loads_no_plugin() -> None:
    probe = (
        "import sys; from simsample.cli import run; run(['--version']); print(sorted(m for m in sys.modules if "
        "m.startswith('simsample.plugins')))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=False).stdout
    assert out.strip().splitlines()[-1] == "[]"


def test_the_usual_confidence_levels_are_scipys_quantiles_bit_for_bit() -> None:
    """The table that spares a plan the SciPy import holds exactly what ``scipy.special.ndtri``
    computes (the plan's bytes depend on it), and other levels still go to SciPy."""
    from scipy.special import ndtri

    from simsample.sampling.allocation import Z_KNOWN, z_value

    assert Z_KNOWN
    for confidence, z in Z_KNOWN.items():
        assert z == float(ndtri(0.5 + confidence / 2.0)), confidence
        assert z_value(confidence) == z
    assert z_value(0.97) == float(ndtri(0.5 + 0.97 / 2.0))


def test_the_default_plan_imports_no_scipy_or_sklearn(tmp_path) -> None:
    """Planning the bundled profile with the default sampler needs pandas, not SciPy (whose
    ``special`` module brings ``numpy.testing`` and ``unittest``) nor scikit-learn."""
    from pathlib import Path

    example = Path(__file__).resolve().parents[2] / "examples" / "profile" / "train_step.pt.trace.json.gz"
    probe = PROBE.format(heavy=("scipy", "sklearn", "matplotlib", "torch"))
    proc = subprocess.run(
        [sys.executable, "-c", probe, "plan", str(example), "-o", str(tmp_path / "plan.json")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    got = json.loads(proc.stderr.strip().splitlines()[-1])
    assert got["code"] == 0
    assert got["loaded"] == []
