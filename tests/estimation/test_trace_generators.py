"""The held-out workloads' trace generators (``benchmarks/*_workload.py``): they write the very
traces whose full and sampled runs are the fixtures, and they share one command line
(``simsample_accelsim.synth.generate``): a count below its least, or an output that is a file,
is argparse's one-line error, and nothing is written."""

from __future__ import annotations

import pytest

from tests.helpers import ROOT, benchmark_module, generated_traces_digest


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
        ("amr_workload.py", "--steps", "0", 1),
        ("amr_workload.py", "--seed", "-1", 0),
    ],
)
def test_the_generators_refuse_a_count_or_a_folder_they_cannot_use(script, flag, value, least, tmp_path, capsys):
    mod = benchmark_module(script)
    with pytest.raises(SystemExit) as exc:
        mod.main([str(tmp_path / "out"), flag, value])
    assert exc.value.code == 2 and f"error: {flag} must be at least {least}" in capsys.readouterr().err
    (tmp_path / "file").write_text("x")
    with pytest.raises(SystemExit):
        mod.main([str(tmp_path / "file")])
    assert "is a file; give a folder for the traces" in capsys.readouterr().err
    assert (tmp_path / "file").read_text() == "x" and not (tmp_path / "out").exists()


#: sha256 of kernelslist.g followed by kernel-1.traceg .. kernel-N.traceg as each generator writes
#: them by default: the traces the fixtures' full runs (tests/fixtures/accelsim_NAME) simulated
@pytest.mark.parametrize(
    ("script", "sha256"),
    [
        ("graph_workload.py", "5eb602b20c3b77402ac56c91736d65a76c1c95217d6ca7a77d4b35f24a0b8bd0"),
        ("moe_workload.py", "54e85b988460fcef483d60e067b6fc8da9ef40afd6fd94a6c07928838c5d285e"),
        ("amr_workload.py", "49603c8c0884b73d3461bcdeb12d857ffa01d3efcbd9be7d9cadad595cd8dcf5"),
        # the solver writes 660 MB of traces (about a minute and a half); the others tens of seconds
        *(
            pytest.param(script, sha256, marks=pytest.mark.slow)
            for script, sha256 in (
                ("solver_workload.py", "a277626470a15b1c6bcdbe179a8ebfb3a67017cf9308fc8cbf0e11c024461018"),
                ("convnet_workload.py", "120e67be0ac279c3849dce3b6e156498255342115a0feb21585cba4f189911ca"),
                ("serving_workload.py", "cff84d5af9c3b88ee530492fef2b095eab91958a4a5b65e83ab93ea3e15cc2bf"),
                ("particles_workload.py", "3893269b5093f6359808ac7696b0f89c09466acb8f70b9c2dd4b8f9ed1995e1f"),
            )
        ),
    ],
)
def test_the_generators_write_the_simulated_traces(script, sha256, tmp_path):
    assert generated_traces_digest(script, tmp_path) == sha256
