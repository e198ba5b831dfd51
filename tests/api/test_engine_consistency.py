"""One engine: for every adapter's real output, the command line's ``estimate --sim NAME --json``
and the API's ``estimate(plan, collect(...))`` give the same table, ratios as ratios and no row
for ids, names or wall seconds."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

import simsample
from simsample.cli import run
from tests.helpers import ROOT, shared_path

FIXTURES = ROOT / "tests" / "fixtures"
NOT_METRICS = {
    "kernel_id",
    "uid",
    "sim_seconds",
    "occupancy",
    "name",
    "trace",
    "log",
    "projected",
    "sim_cycles",
    "sim_insn",
    "pkp_stop_cycle",
    "status",
}


def _training(tmp_path: Path) -> tuple[Path, list[Path], str]:
    return (
        FIXTURES / "accelsim_workloads" / "training-sampled-plan.json",
        [FIXTURES / "accelsim_workloads" / "training-sampled.out.gz"],
        "accelsim",
    )


def _chains(tmp_path: Path) -> tuple[Path, list[Path], str]:
    wl = simsample.read(FIXTURES / "accelsim_workloads" / "chains-features.parquet")
    plan = tmp_path / "plan.json"
    simsample.plan(wl, "random", count=8, seed=3, metric="warp_insts").write(plan)
    return plan, [FIXTURES / "accelsim_workloads" / "chains-full.out.gz"], "accelsim"


def _macsim(tmp_path: Path) -> tuple[Path, list[Path], str]:
    traces = shared_path("simulators", "macsim", "sst-unit-test", "traces", "nvbit", "vectormultadd", "4096")
    csv = tmp_path / "samples.csv"
    csv.write_text("kernel_id,weight\n2,1.5\n0,1.5\n")
    plan = tmp_path / "plan.json"
    simsample.plan(simsample.read(traces), "explicit", file=str(csv)).write(plan)
    return plan, [shared_path("simulators", "macsim", "run-output-sampled-K2K0")], "macsim"


def _macsim_warm(tmp_path: Path) -> tuple[Path, list[Path], str]:
    return (
        FIXTURES / "macsim_warmup" / "plan-vma-k0k2.json",
        [FIXTURES / "macsim_warmup" / "vma-k0k2-none.out.gz"],
        "macsim",
    )


def _hyfiss(tmp_path: Path) -> tuple[Path, list[Path], str]:
    app = shared_path("simulators", "hyfiss", "synthetic_app")
    plan = tmp_path / "plan.json"
    simsample.plan(simsample.read(app), "random", count=2, seed=1).write(plan)
    return plan, [app / "outputs"], "hyfiss"


def _hetero(tmp_path: Path) -> tuple[Path, list[Path], str]:
    d = shared_path("simulators", "accelsim", "hetero")
    plan = tmp_path / "plan.json"
    simsample.plan(simsample.read(d), "explicit", file=str(d / "sampled_ids.json")).write(plan)
    return plan, [d / "sampled.out.gz"], "accelsim"


def _tinytrace3(tmp_path: Path) -> tuple[Path, list[Path], str]:
    d = shared_path("simulators", "accelsim", "tinytrace3")
    csv = tmp_path / "samples.csv"
    csv.write_text("kernel_id,weight\n1,1.5\n3,1.5\n")
    plan = tmp_path / "plan.json"
    simsample.plan(simsample.read(d), "explicit", file=str(csv)).write(plan)
    return plan, [d / "run_full.out.gz"], "accelsim"


def _warm(tmp_path: Path) -> tuple[Path, list[Path], str]:
    return (
        FIXTURES / "accelsim_warmup" / "plan-root.json",
        [FIXTURES / "accelsim_warmup" / "sampled-warm.out.gz"],
        "accelsim",
    )


def _macsim_full(tmp_path: Path) -> tuple[Path, list[Path], str]:
    traces = shared_path("simulators", "macsim", "sst-unit-test", "traces", "nvbit", "vectormultadd", "4096")
    plan = tmp_path / "plan.json"
    simsample.plan(simsample.read(traces), "explicit", file=str(_ids(tmp_path, "kernel_id,weight\n0,1\n1,2\n"))).write(
        plan
    )
    return plan, [shared_path("simulators", "macsim", "run-output-vectormultadd4096")], "macsim"


def _ids(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "ids.csv"
    p.write_text(text)
    return p


CASES = {
    "accelsim-hetero": _hetero,
    "accelsim-tinytrace3": _tinytrace3,
    "accelsim-warmup": _warm,
    "macsim-full": _macsim_full,
    "accelsim-training": _training,
    "accelsim-chains": _chains,
    "macsim": _macsim,
    "macsim-warmup": _macsim_warm,
    "hyfiss": _hyfiss,
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_cli_and_api_give_the_same_estimates(case, tmp_path, capsys):
    plan, outputs, sim = CASES[case](tmp_path)
    capsys.readouterr()
    # a level every plan here supports (a plan of few draws has few degrees of freedom for 99%)
    assert (
        run(["estimate", "--sim", sim, "--plan", str(plan), *map(str, outputs), "--json", "--confidence", "0.8"]) == 0
    )
    cli = json.loads(capsys.readouterr().out)
    api = simsample.estimate(plan, simsample.collect(outputs, sim=sim, plan=plan), confidence=0.8)
    assert api.to_json() == cli
    by = {e["metric"]: e for e in cli["estimates"]}
    assert not set(by) & NOT_METRICS, f"estimated what is no metric: {sorted(set(by) & NOT_METRICS)}"
    assert by["ipc"]["kind"] == "ratio"
    assert by["ipc"]["estimate"] == pytest.approx(by["instructions"]["estimate"] / by["cycles"]["estimate"])
    assert by["cycles"]["kind"] != "ratio"
    # the table of collect() is the one collect -o writes
    out = tmp_path / "results.csv"
    assert run(["collect", "--sim", sim, "--plan", str(plan), *map(str, outputs), "-o", str(out)]) == 0
    import pandas as pd

    table = pd.read_csv(out)
    frame = simsample.collect(outputs, sim=sim, plan=plan)
    assert table["kernel_id"].tolist() == frame["kernel_id"].tolist()
    assert table["cycles"].tolist() == pytest.approx(frame["cycles"].tolist())
    # and the estimate from that table is the same again
    assert simsample.estimate(plan, simsample.collect(out, sim=sim, plan=plan), confidence=0.8).to_json() == cli


def test_a_plain_table_estimates_counts_and_leaves_ids_out(tmp_path):
    plan, outputs, sim = _training(tmp_path)
    df = simsample.collect(outputs, sim=sim, plan=plan)
    plain = df.copy()
    plain.attrs.clear()  # no declarations: numeric columns are counts, columns named like ids are not
    est = {e.metric: e for e in simsample.estimate(plan, plain, confidence=0.8).estimates}
    assert "uid" not in est and "kernel_id" not in est
    assert est["cycles"].estimate == pytest.approx(
        simsample.estimate(plan, df, confidence=0.8).to_dataframe().loc["cycles", "estimate"]
    )
    declared = simsample.estimate(plan, plain, metrics=simsample.get_adapter("accelsim").metrics, confidence=0.8)
    assert declared.to_json() == simsample.estimate(plan, df, confidence=0.8).to_json()


def test_the_ratio_is_not_a_sum_of_per_launch_ratios(tmp_path):
    plan, outputs, sim = _training(tmp_path)
    df = simsample.collect(outputs, sim=sim, plan=plan)
    ipc = simsample.estimate(plan, df, confidence=0.8).to_dataframe().loc["ipc", "estimate"]
    alone = df[["kernel_id", "ipc"]].copy()
    alone.attrs.clear()  # undeclared, ipc is taken for a count
    summed = simsample.estimate(plan, alone, confidence=0.8).to_dataframe().loc["ipc", "estimate"]
    assert not math.isclose(ipc, summed, rel_tol=0.01)
    assert 0 < ipc < df["ipc"].max() * 1.01


def test_the_api_reference_examples_run(monkeypatch, capsys):
    """The Python blocks of docs/reference/api.md run as shown (from the repository's root)."""
    import re

    monkeypatch.chdir(ROOT)
    text = (ROOT / "docs" / "reference" / "api.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.DOTALL)
    assert len(blocks) >= 3
    ns: dict = {}
    for block in blocks:
        exec(compile(block, "docs/reference/api.md", "exec"), ns)  # noqa: S102  (the page's own examples)
    out = capsys.readouterr().out
    assert "ratio" in out and out.strip().endswith("True")


def test_a_table_of_values_gives_the_same_estimate_on_both_sides(tmp_path, capsys):
    """``simsample estimate --plan P VALUES.csv`` (no simulator) is ``estimate(plan, read_csv(VALUES.csv))``:
    numeric columns are counts, a column named like an id is not estimated."""
    import pandas as pd

    wl = simsample.read(ROOT / "examples" / "profile" / "train_step.pt.trace.json.gz")
    plan = simsample.plan(wl, "random", rate=0.05, seed=5)
    plan.write(tmp_path / "p.json")
    table = wl.to_dataframe()
    table = table[table["kernel_id"].isin(plan.sampled_ids)][["kernel_id", "duration_ns", "stream"]]
    table.to_csv(tmp_path / "v.csv", index=False)
    capsys.readouterr()
    assert run(["estimate", "--plan", str(tmp_path / "p.json"), str(tmp_path / "v.csv"), "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    api = simsample.estimate(tmp_path / "p.json", pd.read_csv(tmp_path / "v.csv"))
    assert api.to_json() == cli
    assert [e["metric"] for e in cli["estimates"]] == ["duration_ns"]  # 'stream' names a stream, not an amount


def _list_adapter():
    """A minimal third-party adapter without click commands: its apply, collect and estimate on
    the command line are the host's, built from its declarations."""
    from simsample.sdk import (
        Adapter,
        Param,
        count,
        hookimpl,
        not_estimable,
        ratio,
        write_plan_records,
    )

    class ListAdapter(Adapter):
        name = "listsim-test"
        description = "a folder of launches.txt; output lines 'kernel K cycles C instructions I'"
        metrics = (
            count("cycles"),
            count("instructions"),
            ratio("ipc", "instructions", "cycles"),
            not_estimable("seconds"),
        )
        apply_options = (
            Param("force", bool, False, "Replace OUT."),
            Param("note", str, "", "A line written into OUT."),
        )

        def read(self, path):
            raise NotImplementedError

        def apply(self, plan, traces, out, **options):
            out.mkdir(parents=True, exist_ok=options["force"])
            write_plan_records(out, plan)
            (out / "note.txt").write_text(options["note"])
            return out

        def collect(self, outputs, plan=None, *, allow_incomplete=False, **options):
            import pandas as pd

            rows = []
            for o in outputs:
                for line in Path(o).read_text().splitlines():
                    _, k, _, c, _, i = line.split()
                    rows.append(
                        {
                            "kernel_id": int(k),
                            "cycles": float(c),
                            "instructions": float(i),
                            "seconds": 1.0,
                            "status": "ok",
                        }
                    )
            return pd.DataFrame(rows)

    class Plugin:
        @hookimpl
        def register_adapters(self, register):
            register(ListAdapter())

    return Plugin()


def test_an_adapter_without_commands_gets_the_hosts(tmp_path, capsys):
    from simsample.manager import PluginHost, get_host, set_host

    previous = get_host()
    host = PluginHost(load_entrypoints=False)
    host.add_plugin(_list_adapter(), "listsim-test")
    set_host(host)
    try:
        wl = simsample.read(ROOT / "examples" / "profile" / "train_step.pt.trace.json.gz")
        plan = simsample.plan(wl, "random", rate=0.05, seed=1)
        plan.write(tmp_path / "p.json")
        assert (
            run(
                [
                    "apply",
                    "--sim",
                    "listsim-test",
                    "--plan",
                    str(tmp_path / "p.json"),
                    "--out",
                    str(tmp_path / "o"),
                    "--note",
                    "hi",
                ]
            )
            == 0
        )
        assert (tmp_path / "o" / "note.txt").read_text() == "hi" and (tmp_path / "o" / "simsample-plan.json").is_file()
        assert "sampled launch(es)" in capsys.readouterr().out
        assert (
            run(
                [
                    "apply",
                    "--sim",
                    "listsim-test",
                    "--plan",
                    str(tmp_path / "p.json"),
                    "--out",
                    str(tmp_path / "o2"),
                    "--bogus",
                ]
            )
            == 1
        )
        log = tmp_path / "run.out"
        log.write_text(
            "".join(f"kernel {k} cycles {100 + k % 7} instructions {300 + k % 11}\n" for k in plan.sampled_ids)
        )
        capsys.readouterr()
        assert (
            run(
                [
                    "estimate",
                    "--sim",
                    "listsim-test",
                    "--plan",
                    str(tmp_path / "p.json"),
                    str(log),
                    "--json",
                    "--confidence",
                    "0.8",
                ]
            )
            == 0
        )
        cli = json.loads(capsys.readouterr().out)
        api = simsample.estimate(plan, simsample.collect(log, sim="listsim-test", plan=plan), confidence=0.8)
        assert api.to_json() == cli and [e["metric"] for e in cli["estimates"]] == ["cycles", "instructions", "ipc"]
    finally:
        set_host(previous)


def test_a_filtered_plan_reports_what_it_left_out_on_both_sides(tmp_path, capsys):
    """A plan made with --exclude: the launches left out are named beside the estimate by the
    command and by Estimate.to_json() alike (measured, not simulated: never added to it)."""
    import pandas as pd

    profile = ROOT / "examples" / "profile" / "train_step.pt.trace.json.gz"
    plan = tmp_path / "p.json"
    assert run(["plan", str(profile), "--sampler", "random", "--exclude", "gemm", "-o", str(plan)]) == 0
    from simsample.planfile import Plan

    p = Plan.read(plan)
    table = simsample.read(profile).to_dataframe()
    table = table[table["kernel_id"].isin(p.sampled_ids)][["kernel_id", "duration_ns"]]
    table.to_csv(tmp_path / "v.csv", index=False)
    capsys.readouterr()
    assert run(["estimate", "--plan", str(plan), str(tmp_path / "v.csv"), "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    assert cli["plan"]["excluded"]["launches"] > 0
    assert simsample.estimate(p, pd.read_csv(tmp_path / "v.csv")).to_json() == cli
