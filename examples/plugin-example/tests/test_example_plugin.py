"""The example plugin keeps simsample's plugin contract (the conformance kit), is found through
its entry point once installed, and works through the public API as a built-in plugin would."""

from __future__ import annotations

from pathlib import Path

import pytest
from simsample_example.adapter import ListSim
from simsample_example.reader import KernelLog
from simsample_example.sampler import EveryNth

import simsample
from simsample.testing import adapter_checks, parametrize_with_checks, reader_checks, sampler_checks

DATA = Path(__file__).parent / "data"
PROFILE = DATA / "run.klog"  # a profile of one run
TRACES = DATA / "run-traces"  # the simulator's inputs for the same run
FULL_RUN = DATA / "run-full.out"  # the simulator's output of all of them


def profile_plan():
    return EveryNth().plan(KernelLog().read([PROFILE], {}), EveryNth().resolve_params({"n": 4}), 0)


@parametrize_with_checks(
    sampler_checks(EveryNth()),  # on the kit's synthetic workload
    sampler_checks(EveryNth(), KernelLog().read([PROFILE], {}), params={"n": 3}, seed=7),  # on the example profile
    reader_checks(KernelLog(), PROFILE),
    adapter_checks(ListSim(), TRACES, outputs=[FULL_RUN], plan=profile_plan()),
)
def test_conformance(check):
    check()


def test_installed_plugin_is_found_through_its_entry_point():
    assert "every-nth" in simsample.get_sampler("every-nth").name
    assert simsample.get_adapter("listsim").name == "listsim"
    assert simsample.read(PROFILE).format == "klog"  # detected among every installed reader


def test_the_public_api_plans_applies_collects_and_estimates(tmp_path):
    wl = simsample.read(PROFILE)
    plan = simsample.plan(wl, "every-nth", n=4, seed=0)
    assert len(plan.samples) == 10 and plan.sampler["params"]["n"] == 4
    out = simsample.apply(plan, TRACES, tmp_path / "sampled", sim="listsim")
    listed = [ln.split()[0] for ln in (out / "launches.txt").read_text().splitlines() if not ln.startswith("#")]
    assert listed == [str(k) for k in plan.sampled_ids]
    results = simsample.collect(FULL_RUN, sim="listsim", plan=plan)
    table = simsample.estimate(plan, results).to_dataframe()
    # the declared ratio is estimated as the ratio of the two estimated totals, not summed
    assert table.loc["ipc", "kind"] == "ratio"
    ipc = table.loc["instructions", "estimate"] / table.loc["cycles", "estimate"]
    assert table.loc["ipc", "estimate"] == pytest.approx(ipc)
    full = simsample.collect(FULL_RUN, sim="listsim")
    assert table.loc["cycles", "estimate"] == pytest.approx(full["cycles"].sum(), rel=0.05)
    assert table.loc["ipc", "estimate"] == pytest.approx(full["instructions"].sum() / full["cycles"].sum(), rel=0.05)


def test_a_malformed_line_is_one_error_naming_it(tmp_path):
    bad = tmp_path / "bad.klog"
    bad.write_text("# klog 1\nsgemm 80 256 0 oops\n")
    with pytest.raises(simsample.UserError, match=r"bad.klog, line 2: duration_ns must be a whole number"):
        KernelLog().read([bad], {})


def test_the_plugin_imports_only_the_sdk_and_the_public_api():
    """Every other simsample module is private and may change in any release."""
    import ast

    package = Path(__file__).parents[1] / "src" / "simsample_example"
    for module in package.glob("*.py"):
        for node in ast.walk(ast.parse(module.read_text())):
            names = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else [a.name for a in getattr(node, "names", [])]
                if isinstance(node, ast.Import)
                else []
            )
            for name in names:
                if name == "simsample" or name.startswith("simsample."):
                    assert name in ("simsample", "simsample.sdk", "simsample.testing"), f"{module.name} imports {name}"
