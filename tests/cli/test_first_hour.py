"""What a newcomer runs into in the first hour, on the bundled example data: refusals that keep
the command to copy whole, filters that work the same on plan, evaluate and estimate, and a
features table moved without the file beside it."""

from __future__ import annotations

import json
import shutil

import pytest
from hypothesis import given
from hypothesis import strategies as st

import simsample
from simsample.cli import run
from simsample.errors import MESSAGE_LIMIT, one_line
from tests.helpers import ROOT

PROFILE = ROOT / "examples" / "profile" / "train_step.pt.trace.json.gz"
TRACES = ROOT / "examples" / "traces"


def _error_line(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [ln for ln in err.splitlines() if ln.startswith("error: ")]
    assert len(lines) == 1, err
    return lines[0]


# --- messages keep the command to copy whole ----------------------------------------------------


def test_pka_refusal_keeps_the_ncu_command_whole(tmp_path, capsys):
    from simsample.plugins.samplers.pka import PKA_METRICS

    assert run(["plan", str(PROFILE), "--sampler", "pka", "-o", str(tmp_path / "p.json")]) == 1
    line = _error_line(capsys)
    assert "ncu --csv --metrics " + ",".join(PKA_METRICS) + ")" in line
    assert "simsample profile features --sim accelsim TRACES -o features.parquet" in line
    assert len(line) <= MESSAGE_LIMIT + len("error: ")
    assert "…" not in line


@given(st.text(min_size=0, max_size=3000), st.integers(min_value=20, max_value=1200))
def test_one_line_cuts_in_the_middle_keeping_the_end(text, limit):
    line = one_line(text, limit)
    assert len(line) <= limit
    assert "\n" not in line and "\r" not in line
    whole = one_line(text, 10**9)
    if len(whole) > limit:
        head, _, tail = line.partition("…")
        assert whole.startswith(head) and whole.endswith(tail)
        assert len(tail) >= (limit - 1) * 2 // 5 > 0
    else:
        assert line == whole


# --- a plan made on a window, estimated from the whole run's values -----------------------------


@pytest.fixture(scope="module")
def window_plan(tmp_path_factory):
    out = tmp_path_factory.mktemp("window")
    plan_path = out / "plan.json"
    assert run(["plan", str(PROFILE), "--exclude", "sgemm", "--time-range", "20ms-60ms", "-o", str(plan_path)]) == 0
    launches = simsample.read(PROFILE).to_dataframe()[["kernel_id", "duration_ns"]]
    whole = out / "whole.csv"
    launches.to_csv(whole, index=False)
    from simsample.planfile import Plan

    plan = Plan.read(plan_path)
    window = out / "window.csv"
    launches[launches.kernel_id.isin(plan.sampled_ids)].to_csv(window, index=False)
    return plan_path, whole, window, launches


def test_a_filtered_plan_takes_the_whole_runs_values(window_plan, capsys):
    """The whole run's table is the same run as the plan's window, with more launches: accepted,
    and the estimate is the one made from the plan's own launches."""
    plan_path, whole, window, _ = window_plan
    capsys.readouterr()
    assert run(["estimate", "--plan", str(plan_path), str(whole), "--json"]) == 0
    from_whole = json.loads(capsys.readouterr().out)
    assert run(["estimate", "--plan", str(plan_path), str(window), "--json"]) == 0
    from_window = json.loads(capsys.readouterr().out)
    assert from_whole["estimates"] == from_window["estimates"]


def test_a_filtered_plan_still_refuses_another_runs_values(window_plan, tmp_path, capsys):
    plan_path, _, _, launches = window_plan
    import pandas as pd

    extra = launches.tail(10).copy()
    extra["kernel_id"] += int(launches.kernel_id.max()) + 1
    bigger = pd.concat([launches, extra], ignore_index=True)
    path = tmp_path / "other.csv"
    bigger.to_csv(path, index=False)
    assert run(["estimate", "--plan", str(plan_path), str(path)]) == 1
    assert "from another run" in _error_line(capsys)


# --- the filters on evaluate --------------------------------------------------------------------


def test_evaluate_scores_the_window_plan_keeps():
    from simsample.sampling.filters import LaunchFilter, prepare

    wl = simsample.read(PROFILE)
    window = prepare(wl, [PROFILE], LaunchFilter(exclude="sgemm", steps="10-12")).workload
    filtered = simsample.evaluate(PROFILE, "random", repeats=2, exclude="sgemm", steps="10-12", rate=0.1)
    direct = simsample.evaluate(window, "random", repeats=2, rate=0.1)
    assert filtered.results[0].launches == len(window) < len(wl)
    a, b = filtered.to_dataframe(), direct.to_dataframe()
    cols = [c for c in a.columns if c not in ("workload", "name", "source")]
    assert a[cols].equals(b[cols])


def test_evaluate_command_gives_the_librarys_numbers_with_filters(capsys):
    assert (
        run(
            [
                "evaluate",
                str(PROFILE),
                "--sampler",
                "random",
                "--param",
                "rate=0.1",
                "--repeat",
                "2",
                "--time-range",
                "20ms-60ms",
                "--include",
                "sgemm",
                "--json",
            ]
        )
        == 0
    )
    doc = json.loads(capsys.readouterr().out)
    ev = simsample.evaluate(PROFILE, "random", repeats=2, time_range="20ms-60ms", include="sgemm", rate=0.1)
    assert doc == json.loads(json.dumps(ev.to_json()))


@pytest.mark.parametrize(
    ("option", "value", "needle"),
    [
        ("--steps", "x", "expected A-B"),
        ("--time-range", "60ms-20ms", "ends before it starts"),
        ("--steps", "100-120", "the profile has steps 0-39"),
    ],
)
def test_evaluate_refuses_a_bad_filter_in_one_line(option, value, needle, capsys):
    assert run(["evaluate", str(PROFILE), "--repeat", "1", option, value]) == 1
    assert needle in _error_line(capsys)


def test_the_example_profile_has_its_steps():
    """Every documented filter can be tried on the bundled profile: 40 ProfilerStep#N annotations."""
    from simsample.io.kineto_steps import step_of_launches

    wl = simsample.read(PROFILE)
    steps = step_of_launches([PROFILE], wl)
    assert steps is not None and sorted(set(steps.tolist())) == list(range(40))


# --- a features table moved without its extras --------------------------------------------------


def test_photon_names_the_extras_file_a_moved_table_left_behind(tmp_path, capsys):
    made = tmp_path / "made"
    assert run(["profile", "features", "--sim", "accelsim", str(TRACES), "-o", str(made / "features.parquet")]) == 0
    moved = tmp_path / "moved"
    moved.mkdir()
    shutil.copy(made / "features.parquet", moved / "features.parquet")
    capsys.readouterr()
    assert run(["plan", str(moved / "features.parquet"), "--sampler", "photon", "-o", str(tmp_path / "p.json")]) == 1
    line = _error_line(capsys)
    assert "features.parquet.extras.npz is missing" in line and "warp_types" in line
    # what needs no extras still works on the moved table
    assert (
        run(["plan", str(moved / "features.parquet"), "--param", "metric=warp_insts", "-o", str(tmp_path / "m.json")])
        == 0
    )
    assert run(["plan", str(made / "features.parquet"), "--sampler", "photon", "-o", str(tmp_path / "ph.json")]) == 0


# --- every command takes -h; estimate's refusals name only options it takes ------------------


def _all_commands() -> list[list[str]]:
    import click

    from simsample.cli import build_cli

    out: list[list[str]] = []

    def walk(group: click.Group, path: list[str]) -> None:
        ctx = click.Context(group)
        for name in group.list_commands(ctx):
            cmd = group.get_command(ctx, name)
            out.append([*path, name])
            if isinstance(cmd, click.Group):
                walk(cmd, [*path, name])

    walk(build_cli(), [])
    return out


def test_every_command_takes_dash_h(capsys):
    commands = _all_commands()
    assert ["estimate"] in commands and ["plan"] in commands
    for argv in [
        *commands,
        ["estimate", "--sim", "accelsim"],
        ["collect", "--sim", "accelsim"],
        ["apply", "--sim", "accelsim"],
    ]:
        capsys.readouterr()
        assert run([*argv, "-h"]) == 0, argv
        out = capsys.readouterr().out
        assert "Usage:" in out, argv


def test_estimate_help_lists_sim(capsys):
    assert run(["estimate", "--help"]) == 0
    assert "--sim" in capsys.readouterr().out


def _options_of(argv: list[str], capsys) -> set[str]:
    import re

    capsys.readouterr()
    assert run([*argv, "--help"]) == 0
    return set(re.findall(r"(--[a-z][a-z-]+)", capsys.readouterr().out))


def test_estimate_on_a_truncated_log_names_only_options_estimate_takes(tmp_path, capsys):
    """A refusal that says "pass --X" must be answered by that command's --X."""
    import gzip
    import re

    pytest.importorskip("simsample_accelsim")
    full = (
        gzip.open(ROOT / "examples" / "simulator" / "accelsim" / "full.out.gz", "rt").read().splitlines(keepends=True)
    )
    cut = tmp_path / "truncated.log"
    cut.write_text("".join(full[: len(full) // 2]))
    samples = tmp_path / "samples.csv"
    samples.write_text("kernel_id,weight\n" + "".join(f"{k},2\n" for k in range(1, 41, 2)))
    plan = tmp_path / "plan.json"
    assert run(["plan", str(TRACES), "--sampler", "explicit", "--param", f"file={samples}", "-o", str(plan)]) == 0
    capsys.readouterr()
    assert run(["estimate", "--sim", "accelsim", "--plan", str(plan), str(cut)]) == 1
    line = _error_line(capsys)
    named = set(re.findall(r"(--[a-z][a-z-]+)", line))
    assert named <= _options_of(["estimate", "--sim", "accelsim"], capsys), line
    # collect keeps what finished, and says so
    assert run(["collect", "--sim", "accelsim", "--plan", str(plan), str(cut)]) == 1
    line = _error_line(capsys)
    assert set(re.findall(r"(--[a-z][a-z-]+)", line)) <= _options_of(["collect", "--sim", "accelsim"], capsys), line


def test_the_test_summary_says_what_brings_each_skipped_kind():
    from conftest import skipped_summary

    lines = skipped_summary(
        [
            "chromium and chromedriver not installed (Debian: apt-get install chromium chromium-driver)",
            "single-node SLURM unavailable: not installed: munged, slurmctld",
            "single-node SLURM unavailable: not installed: munged, slurmctld",
            "development data not available: profiles/x",
            "something else entirely",
        ]
    )
    assert lines[0] == "skipped 2 SLURM tests: install the Debian packages slurm-wlm and munge"
    assert "skipped 1 browser test: install the Debian packages chromium and chromium-driver" in lines
    assert "skipped 1 test: something else entirely" in lines


def test_tables_piped_take_the_exported_width(monkeypatch, capsys):
    """Piped output is 160 columns wide unless $COLUMNS is exported (the docs' outputs are shown at 100)."""
    monkeypatch.setattr("sys.stdout.isatty", lambda: False, raising=False)
    monkeypatch.delenv("COLUMNS", raising=False)
    assert run(["profile", "info", str(PROFILE), "--top", "3"]) == 0
    wide = max(len(line) for line in capsys.readouterr().out.splitlines())
    monkeypatch.setenv("COLUMNS", "100")
    assert run(["profile", "info", str(PROFILE), "--top", "3"]) == 0
    narrow = max(len(line) for line in capsys.readouterr().out.splitlines())
    assert narrow <= 100 < wide <= 160
