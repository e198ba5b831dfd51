"""The held-out workloads' trace generators (``benchmarks/*_workload.py``) share one command line
(``simsample_accelsim.synth.generate``): a count below its least, or an output that is a file,
is argparse's one-line error, and nothing is written."""

from __future__ import annotations

import importlib.util

import pytest

from tests.helpers import ROOT


@pytest.mark.parametrize(
    ("script", "flag", "value", "least"),
    [
        ("graph_workload.py", "--levels", "0", 1),
        ("moe_workload.py", "--steps", "0", 1),
        ("solver_workload.py", "--steps", "0", 1),
        ("solver_workload.py", "--vcycle-every", "-1", 0),
        ("convnet_workload.py", "--batches", "0", 1),
        ("convnet_workload.py", "--short-batch", "-1", 0),
        ("serving_workload.py", "--steps", "0", 1),
        ("serving_workload.py", "--seed", "-1", 0),
        ("particles_workload.py", "--steps", "0", 1),
        ("particles_workload.py", "--seed", "-1", 0),
    ],
)
def test_the_generators_refuse_a_count_or_a_folder_they_cannot_use(script, flag, value, least, tmp_path, capsys):
    spec = importlib.util.spec_from_file_location(script[:-3], ROOT / "benchmarks" / script)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    with pytest.raises(SystemExit) as exc:
        mod.main([str(tmp_path / "out"), flag, value])
    assert exc.value.code == 2 and f"error: {flag} must be at least {least}" in capsys.readouterr().err
    (tmp_path / "file").write_text("x")
    with pytest.raises(SystemExit):
        mod.main([str(tmp_path / "file")])
    assert "is a file; give a folder for the traces" in capsys.readouterr().err
    assert (tmp_path / "file").read_text() == "x" and not (tmp_path / "out").exists()
