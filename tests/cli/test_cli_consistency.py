"""Commands that answer the same questions the same way: whole kernel names at any width, CSV
beside JSON, the default sampler everywhere, one way of walking inputs, one line for what was
skipped, and install hints where something is missing."""

from __future__ import annotations

import io
import json
import re

import pandas as pd
import pytest

from simsample.cli import run
from simsample.io.limits import shown_name
from simsample.io.names import strip_args
from tests.helpers import ROOT

PROFILE = ROOT / "examples" / "profile" / "train_step.pt.trace.json.gz"
ANSI = re.compile(r"\x1b\[[0-9;]*m")

#: kernels that differ only in the middle of long template names, as thrust and PyTorch's are
_T = (
    "void "
    "thrust::cuda_cub::core::_kernel_agent<thrust::cuda_cub::__parallel_for::ParallelForAgent<"
    "thrust::cuda_cub::__uninitialized_fill::functor<thrust::device_ptr<{t}>, "
    "{t}>, unsigned long>, thrust::cuda_cub::__uninitialized_fill::functor<thrust::device_ptr<{t}>, {t}>, unsigned "
    "long>(thrust::cuda_cub::__uninitialized_fill::functor<thrust::device_ptr<{t}>, {t}>, unsigned long)"
)
_V = (
    "void at::native::vectorized_elementwise_kernel<4, at::native::{op}<float>, at::detail::Array<char*, 2> >(int, "
    "at::native::{op}<float>, at::detail::Array<char*, 2>)"
)
NAMES = [_T.format(t="float"), _T.format(t="double"), _V.format(op="AbsFunctor"), _V.format(op="NegFunctor")]


def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = run([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, ANSI.sub("", out), ANSI.sub("", err)


@pytest.fixture()
def long_names(tmp_path):
    rows = [{"Name": NAMES[i % 4], "Duration": 1000 + 37 * i} for i in range(40)]
    path = tmp_path / "kernels.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def _first_column(text: str) -> str:
    """The table's first column, its folded lines joined."""
    cells = [line.split("│")[1] for line in text.splitlines() if line.count("│") >= 2]
    return "".join("".join(c.split()) for c in cells)


@pytest.mark.parametrize("columns", ["40", "80", "200"])
def test_profile_info_prints_names_whole_at_any_width(capsys, monkeypatch, long_names, columns):
    monkeypatch.setenv("COLUMNS", columns)
    monkeypatch.setattr("sys.stdout.isatty", lambda: True, raising=False)
    code, out, _ = _cli(
        capsys, "profile", "info", long_names, "--format", "csv", "--columns", "name=Name,duration_ns=Duration"
    )
    assert code == 0
    shown = _first_column(out)
    labels = [
        shown_name(strip_args(name)) for name in NAMES
    ]  # a name longer than the table's limit is cut in the middle
    assert len(set(labels)) == len(NAMES)  # names that differ only in the middle stay apart
    for name, label in zip(NAMES, labels):
        assert "".join(label.split()) in shown, name


def test_wide_prints_complete_names_one_row_per_line(capsys, monkeypatch, long_names):
    monkeypatch.setenv("COLUMNS", "40")
    code, out, _ = _cli(
        capsys,
        "profile",
        "info",
        long_names,
        "--format",
        "csv",
        "--columns",
        "name=Name,duration_ns=Duration",
        "--wide",
    )
    assert code == 0
    lines = out.splitlines()
    for name in NAMES:
        assert sum(shown_name(name) in line for line in lines) == 1, name


def test_profile_info_csv_parses_back(capsys, long_names):
    args = ["profile", "info", long_names, "--format", "csv", "--columns", "name=Name,duration_ns=Duration"]
    code, out, _ = _cli(capsys, *args, "--csv")
    assert code == 0
    table = pd.read_csv(io.StringIO(out))
    code, js, _ = _cli(capsys, *args, "--json")
    doc = json.loads(js)
    assert list(table["name"]) == [k["name"] for k in doc["top_kernels"]]
    assert sorted(table["name"]) == sorted(NAMES)
    assert list(table["launches"]) == [k["launches"] for k in doc["top_kernels"]]
    assert table["share"].tolist() == pytest.approx([k["share"] for k in doc["top_kernels"]])
    code, _, err = _cli(capsys, *args, "--csv", "--json")
    assert code == 1 and "give one of them" in err


def test_evaluate_csv_parses_back_and_carries_the_half_width(capsys):
    code, out, _ = _cli(
        capsys, "evaluate", PROFILE, "--sampler", "stem", "--repeat", "2", "--sweep", "eps=0.05,0.25", "--csv"
    )
    assert code == 0
    table = pd.read_csv(io.StringIO(out))
    code, js, _ = _cli(
        capsys, "evaluate", PROFILE, "--sampler", "stem", "--repeat", "2", "--sweep", "eps=0.05,0.25", "--json"
    )
    doc = json.loads(js)
    assert list(table["eps"]) == [0.05, 0.25]
    assert table["half_width_median_pct"].tolist() == pytest.approx(
        [w["half_width_median_pct"] for w in doc["workloads"]]
    )
    assert table["error_mean_pct"].tolist() == pytest.approx([w["error_mean_pct"] for w in doc["workloads"]])
    assert all(s["half_width_median_pct"] > 0 for s in doc["suite"])


def test_evaluate_without_sampler_uses_margin_and_prints_the_width(capsys):
    code, out, _ = _cli(capsys, "evaluate", PROFILE, "--repeat", "2", "--json")
    assert code == 0
    doc = json.loads(out)
    assert doc["workloads"][0]["sampler"] == "margin"
    assert doc["workloads"][0]["params"]["confidence"] == 0.99  # margin's own defaults were used
    hw = doc["suite"]["half_width_median_pct"]
    assert hw is not None and hw > 0
    code, out, _ = _cli(capsys, "evaluate", PROFILE, "--repeat", "2")
    assert code == 0
    assert "margin, 2 repeat(s)" in out and "± median %" in out
    assert f"{hw:.2f}" in out


def test_estimate_csv_parses_back(capsys, tmp_path):
    plan = tmp_path / "plan.json"
    assert _cli(capsys, "plan", PROFILE, "--sampler", "random", "--param", "rate=0.05", "-o", plan)[0] == 0
    from simsample.library import read
    from simsample.planfile import Plan

    p = Plan.read(plan)
    launches = read(PROFILE).to_dataframe().set_index("kernel_id")
    values = tmp_path / "values.csv"
    launches.loc[p.sampled_ids, ["duration_ns"]].reset_index().rename(columns={"duration_ns": "value"}).to_csv(
        values, index=False
    )
    code, out, _ = _cli(capsys, "estimate", "--plan", plan, values, "--csv")
    assert code == 0
    table = pd.read_csv(io.StringIO(out))
    code, js, _ = _cli(capsys, "estimate", "--plan", plan, values, "--json")
    est = json.loads(js)["estimates"][0]
    assert table.loc[0, "metric"] == "value"
    assert table.loc[0, "estimate"] == pytest.approx(est["estimate"])
    assert table.loc[0, "half_width_pct"] == pytest.approx(est["half_width_pct"])
    code, text, _ = _cli(capsys, "estimate", "--plan", plan, values)
    assert f"{est['half_width_pct']:.2f}%" in text


def test_one_folder_serves_profile_info_plan_and_evaluate(capsys, tmp_path):
    """A folder with the profile in a subfolder, and a file no reader takes beside it."""
    deep = tmp_path / "suite" / "train" / "rank0"
    deep.mkdir(parents=True)
    (deep / PROFILE.name).write_bytes(PROFILE.read_bytes())
    (tmp_path / "suite" / "README.txt").write_text("notes\n")
    folder = tmp_path / "suite"
    code, out, err = _cli(capsys, "profile", "info", folder, "--json")
    assert code == 0, err
    assert json.loads(out)["launches"] == 5320
    assert err.count("\n") == 1 and "skipped 1 input(s)" in err and "--verbose" in err
    code, out, err = _cli(capsys, "plan", folder, "-o", tmp_path / "plan.json")
    assert code == 0, err
    assert "5,320 launches" in out
    code, out, err = _cli(capsys, "evaluate", folder, "--repeat", "1", "--json")
    assert code == 0, err
    assert [w["launches"] for w in json.loads(out)["workloads"]] == [5320]
    assert "skipped 1 input(s)" in err


def test_skipped_inputs_are_one_line_unless_verbose(capsys, tmp_path):
    (tmp_path / "p" / "run").mkdir(parents=True)
    (tmp_path / "p" / "run" / PROFILE.name).write_bytes(PROFILE.read_bytes())
    for i in range(30):
        (tmp_path / "p" / f"log{i}.txt").write_text("nothing to read here\n")
    code, _, err = _cli(capsys, "evaluate", tmp_path / "p", "--repeat", "1")
    assert code == 0
    assert err.strip().count("\n") == 0 and "skipped 30 input(s)" in err
    code, _, err = _cli(capsys, "evaluate", tmp_path / "p", "--repeat", "1", "--verbose")
    assert code == 0
    assert len([line for line in err.splitlines() if line.startswith("skipped ")]) == 30


@pytest.mark.parametrize("suffix", [".nsys-rep", ".qdrep"])
def test_an_nsight_systems_report_gets_the_export_command(capsys, tmp_path, suffix):
    rep = tmp_path / f"run{suffix}"
    rep.write_bytes(b"\x00\x01binary nsys report\x00" * 8)
    for cmd in (["profile", "info", rep], ["plan", rep, "-o", tmp_path / "plan.json"], ["evaluate", rep]):
        code, _, err = _cli(capsys, *cmd)
        assert code == 1
        assert f"nsys export --type sqlite -o {tmp_path / 'run.sqlite'} {rep}" in err, err
        assert err.count("\n") == 1
    # in a folder beside a real profile: named in the one summary line
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / PROFILE.name).write_bytes(PROFILE.read_bytes())
    code, _, err = _cli(capsys, "evaluate", tmp_path, "--repeat", "1")
    assert code == 0 and "nsys export --type sqlite" in err


def test_a_missing_adapter_names_its_install(capsys, tmp_path):
    from simsample.manager import PluginHost, get_host, set_host

    host = get_host()
    set_host(PluginHost(load_entrypoints=False))  # built-in plugins only: no adapter installed
    try:
        plan = tmp_path / "plan.json"
        assert _cli(capsys, "plan", PROFILE, "-o", plan)[0] == 0
        for sim in ("accelsim", "macsim", "hyfiss"):
            code, _, err = _cli(
                capsys, "apply", "--sim", sim, "--plan", plan, "--traces", tmp_path, "--out", tmp_path / "o"
            )
            assert code == 1
            assert f"pip install -e adapters/{sim}" in err and f"simsample-{sim}" in err, err
        code, _, err = _cli(
            capsys, "apply", "--sim", "gpgpusim", "--plan", plan, "--traces", tmp_path, "--out", tmp_path / "o"
        )
        assert code == 1 and "no adapter named gpgpusim; installed: none" in err
    finally:
        set_host(host)


def test_help_and_docs_show_the_default_sampler(capsys):
    code, out, _ = _cli(capsys, "--help")
    assert code == 0
    assert "--sampler stem" not in out and "margin" in out
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "--sampler stem" not in readme


def test_adapter_tables_take_csv(capsys):
    """``collect --sim NAME ... --csv``: the adapter's table through the host's printer, parsed back."""
    from tests.helpers import shared_path

    log = shared_path("simulators", "accelsim", "hetero", "full.out.gz")
    code, out, err = _cli(capsys, "collect", "--sim", "accelsim", log, "--csv")
    assert code == 0, err
    table = pd.read_csv(io.StringIO(out))
    code, js, _ = _cli(capsys, "collect", "--sim", "accelsim", log, "--json")
    rows = json.loads(js)["results"]
    assert table["kernel_id"].tolist() == [r["kernel_id"] for r in rows]
    assert table["cycles"].sum() == 451_827 == sum(r["cycles"] for r in rows)
    code, out, _ = _cli(capsys, "collect", "--sim", "accelsim", log)
    assert code == 0 and "│" in out  # without --csv: the table again
