"""The hostile-user catalogue, part three (b): generated scripts, hand-edited plans, edge numbers.

Each case is something a careless or hostile user can type or write into a file, and each failed
before it was fixed: a tracer script that ran ``$(...)`` from ``--traces``; a launch number that
made ``merge`` or ``select`` allocate in proportion to it; a plan applied to another run's folder;
a plan whose ``process`` section the schema never checked; numbers beyond ``int64`` that ended in
tracebacks or wrapped to negative launch numbers; and a few small acceptances. Every refusal is one
line on standard error with exit code 1, and leaves no output behind.

The generated script is run with bash, with the tracer and its post-processing replaced by stubs
(``APP`` runs a stub application, ``POST_PROCESSING`` a stub that writes ``kernelslist.g``), and
every value the script embeds is hostile at once: no ``PWNED`` file may appear, and each value
must arrive at its place unchanged.
"""

from __future__ import annotations

import json
import math
import os
import resource
import shlex
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from simsample.cli import run as cli_run
from simsample.errors import UserError
from simsample.planfile import Plan
from simsample_accelsim.selection import TracerSelection, tracer_ranges
from simsample_accelsim.synth import KernelSpec, write_workload
from tests.plans.test_profile_first import process_folder, runs_of, synth_plan

BASH = shutil.which("bash")
I64 = (1 << 63) - 1


def refused(capsys, args: list[str], phrase: str) -> str:
    """Run the CLI and check a one-line refusal (exit 1) that says ``phrase``."""
    capsys.readouterr()
    code = cli_run(args)
    err = [
        ln
        for ln in capsys.readouterr().err.strip().splitlines()
        if not ln.startswith("note:") and not ln.startswith("warning:")
    ]
    assert code == 1, (args, err)
    assert len(err) == 1 and phrase in err[0], (args, err)
    assert "Traceback" not in err[0] and "internal error" not in err[0]
    return err[0]


# --- 1. the tracer script: hostile values, quoted for where they land -------------------------------

HOSTILE = [
    "$(touch PWNED)",
    "`touch PWNED`",
    "it's",
    "*",
    "-rf",
    "ünïcødé ☃",
    '"; touch PWNED; "',
    "a\\b",
    "$HOME",
    "!x",
]
# the tracer's path may not hold spaces or colons (LD_PRELOAD splits there): the same attacks without them
HOSTILE_TRACER = [
    "$(touch${IFS}PWNED)",
    "`touch${IFS}PWNED`",
    "it's",
    "*",
    "-rf",
    "ünïcødé☃",
    '";touch${IFS}PWNED;"',
    "$HOME",
]

STUB_APP = textwrap.dedent("""\
    #!/usr/bin/env bash
    # the application: records its arguments and the tracer's environment, one value per line
    {
      printf 'ARG=%s\\n' "$1"
      printf 'TOOL=%s\\n' "$CUDA_INJECTION64_PATH"
      printf 'FOLDER=%s\\n' "$TRACES_FOLDER"
      printf 'RANGE=%s-%s\\n' "$DYNAMIC_KERNEL_LIMIT_START" "$DYNAMIC_KERNEL_LIMIT_END"
    } >> "$STUB_LOG"
    """)
STUB_POST = textwrap.dedent("""\
    #!/usr/bin/env bash
    # the post-processing: marks the run as done where the tracer would have written kernelslist.g
    printf 'POST=%s\\n' "$1" >> "$STUB_LOG"
    : > "$(dirname -- "$1")/kernelslist.g"
    """)


def _stubs(root: Path) -> tuple[Path, Path]:
    app, post = root / "stub-app", root / "stub-post"
    app.write_text(STUB_APP)
    post.write_text(STUB_POST)
    app.chmod(0o755)
    post.chmod(0o755)
    return app, post


@pytest.mark.skipif(BASH is None, reason="bash is not installed")
@pytest.mark.parametrize("i", range(len(HOSTILE)))
def test_select_script_runs_hostile_values_as_data(tmp_path, monkeypatch, capsys, i):
    full, _ = process_folder(tmp_path)
    plan_src = synth_plan(tmp_path, full, [9, 17, 26])
    value, tracer = HOSTILE[i], HOSTILE_TRACER[i % len(HOSTILE_TRACER)]
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    plan = work / f"{value}.json"  # the plan's own path is hostile too
    shutil.copy(plan_src, plan)
    app, post = _stubs(tmp_path)
    runs, traces, sampled = value, f"t{value}", f"s{value}"
    args = [
        "accelsim",
        "select",
        "--plan",
        plan.name,
        "-o",
        "trace.sh",
        "--max-gap",
        "0",
        "--warmup",
        "2",
        "--runs",
        runs,
        "--traces",
        traces,
        "--sampled",
        sampled,
        "--tracer",
        tracer,
        "--app",
        shlex.join([str(app), value]),
    ]
    assert cli_run(args) == 0, capsys.readouterr().err
    log = tmp_path / "stub.log"
    env = {**os.environ, "STUB_LOG": str(log), "POST_PROCESSING": str(post)}
    env.pop("APP", None), env.pop("TRACER_TOOL", None), env.pop("RUNS", None)
    res = subprocess.run([BASH, "trace.sh"], cwd=work, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert res.returncode == 0, res.stderr
    assert not list(tmp_path.rglob("PWNED")), "a value ran as a command"
    rec = log.read_text().splitlines()
    assert [ln[4:] for ln in rec if ln.startswith("ARG=")] == [
        value
    ] * 3  # --app: the command line runs as typed, its argument intact
    assert [ln[5:] for ln in rec if ln.startswith("TOOL=")] == [tracer] * 3
    assert [ln[6:] for ln in rec if ln.startswith("RANGE=")] == ["7-9", "15-17", "24-26"]
    folders = [ln[7:] for ln in rec if ln.startswith("FOLDER=")]
    assert folders == [str((work / runs / f"run-000{k}").resolve()) for k in (1, 2, 3)]
    assert [ln[5:] for ln in rec if ln.startswith("POST=")] == [f"{f}/kernelslist" for f in folders]
    # the closing hint is shell: each value one word, unchanged
    hint = [ln for ln in res.stdout.splitlines() if "simsample" in ln]
    merge, apply = shlex.split(hint[0].split(":", 1)[1]), shlex.split(hint[1])
    assert merge == ["simsample", "accelsim", "merge", f"{runs}/run-*", "--out", traces]
    assert apply == [
        "simsample",
        "apply",
        "--sim",
        "accelsim",
        "--plan",
        plan.name,
        "--traces",
        traces,
        "--out",
        sampled,
    ]
    # rerun: every run is skipped (its folder has kernelslist.g), nothing runs twice
    res = subprocess.run([BASH, "trace.sh"], cwd=work, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert res.returncode == 0 and res.stdout.count("traced already, skipped") == 3
    assert not list(tmp_path.rglob("PWNED"))


@pytest.mark.parametrize("option", ["--runs", "--traces", "--sampled", "--tracer", "--app", "--plan"])
@pytest.mark.parametrize("bad", ["x\ntouch PWNED", "x\rtouch PWNED", "x\x1b[2Jy"])
def test_select_refuses_control_characters_in_every_embedded_value(tmp_path, monkeypatch, capsys, option, bad):
    full, _ = process_folder(tmp_path)
    plan = synth_plan(tmp_path, full, [9, 17])
    monkeypatch.chdir(tmp_path)
    if option == "--plan":
        hostile = tmp_path / f"p{bad}.json"
        shutil.copy(plan, hostile)
        plan = hostile
    args = [
        "accelsim",
        "select",
        "--plan",
        str(plan),
        "-o",
        "trace.sh",
        "--tracer",
        "/opt/tracer_tool.so",
        "--app",
        "./app",
    ]
    args += [option, str(plan) if option == "--plan" else bad]
    refused(capsys, args, "control character")
    assert not (tmp_path / "trace.sh").exists()


def test_select_refuses_a_tracer_path_that_ld_preload_would_split(tmp_path, capsys):
    full, _ = process_folder(tmp_path)
    plan = synth_plan(tmp_path, full, [9])
    refused(
        capsys,
        [
            "accelsim",
            "select",
            "--plan",
            str(plan),
            "-o",
            str(tmp_path / "t.sh"),
            "--tracer",
            "/opt/a b/tracer_tool.so",
        ],
        "LD_PRELOAD splits",
    )
    assert not (tmp_path / "t.sh").exists()


def test_hyfiss_run_script_keeps_the_plan_name_in_its_comment():
    from simsample_hyfiss.apply import render_script

    text = render_script(
        kernels=[(1, "k")], np_ranks=2, hyfiss_home="/h", device_config="c", plan_name="p.json\ntouch PWNED\r\n"
    )
    assert "touch PWNED" in text
    assert all(ln.startswith("#") for ln in text.splitlines() if "touch PWNED" in ln)


def test_slurm_job_script_values_with_a_newline_are_refused(tmp_path):
    from simsample.runner.slurm import SlurmOptions, make_cluster

    for opts in (
        SlurmOptions(partition="gpu\ntouch PWNED"),
        SlurmOptions(account="a\rb"),
        SlurmOptions(extra=("--qos=x\nrm -rf ~",)),
    ):
        with pytest.raises(UserError, match="control character"):
            make_cluster(opts, tmp_path)


# --- 2. nothing allocates in proportion to a number a user wrote ------------------------------------


def _capped(args: list[str], cwd: Path, gib: int = 3, timeout: int = 120) -> subprocess.CompletedProcess:
    """The CLI in a child process whose address space is capped: a command that allocates in
    proportion to a launch number fails there (MemoryError, exit 2) instead of taking the machine."""

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (gib << 30, gib << 30))

    return subprocess.run(
        [sys.executable, "-m", "simsample", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=cap,
        check=False,
    )


def _add_launch(run: Path, full: Path, number: int, stats: bool = True) -> None:
    """Add launch ``number`` to a tracer run's folder: its trace (a copy of kernel-1's with the id
    changed), its line in kernelslist.g and in stats.csv."""
    src = Path(os.path.realpath(full / "kernel-1.traceg")).read_text()
    (run / f"kernel-{number}.traceg").write_text(src.replace("-kernel id = 1\n", f"-kernel id = {number}\n", 1))
    with open(run / "kernelslist.g", "a") as fh:
        fh.write(f"kernel-{number}.traceg\n")
    if stats and (run / "stats.csv").exists():
        last = (run / "stats.csv").read_text().splitlines()[-1].split(",")
        with open(run / "stats.csv", "a") as fh:
            fh.write(",".join([f"kernel-{number}.trace", *last[1:]]) + "\n")


def test_merge_of_a_launch_number_beyond_int64_is_refused(tmp_path, capsys):
    full, _ = process_folder(tmp_path)
    runs = runs_of(full, [(3, 4), (10, 11)], tmp_path / "runs")
    _add_launch(runs[1], full, 10**20)
    res = _capped(["accelsim", "merge", *map(str, runs), "--out", str(tmp_path / "m")], tmp_path)
    err = res.stderr.strip().splitlines()
    assert res.returncode == 1 and len(err) == 1 and "beyond int64" in err[0], res.stderr
    assert not (tmp_path / "m").exists()


def test_merge_of_a_run_spanning_a_huge_range_reads_lines_not_numbers(tmp_path):
    full, _ = process_folder(tmp_path)
    runs = runs_of(full, [(3, 4), (10, 11)], tmp_path / "runs")
    _add_launch(runs[1], full, 10**18)  # its range: 10 to 10^18, which the old check enumerated
    res = _capped(["accelsim", "merge", *map(str, runs), "--out", str(tmp_path / "m")], tmp_path)
    assert res.returncode == 0, res.stderr
    assert "5 launches" in res.stdout and (tmp_path / "m" / f"kernel-{10**18}.traceg").exists()


def _edit_plan(src: Path, dst: Path, edit) -> Path:
    doc = json.loads(src.read_text())
    edit(doc)
    dst.write_text(json.dumps(doc))
    return dst


def test_select_with_a_huge_horizon_counts_windows_as_intervals(tmp_path):
    full, _ = process_folder(tmp_path)
    plan = synth_plan(tmp_path, full, [9, 17, 26])
    big = 10**12

    def far(doc):  # a trace-folder plan whose launch 26 is launch 10^12 of the process (its id is its number)
        for s in doc["samples"]:
            s["kernel_id"] = big if s["kernel_id"] == 26 else s["kernel_id"]
        for e in doc["process"]["samples"]:
            if e[0] == 26:
                e[0] = e[1] = big

    p = _edit_plan(plan, tmp_path / "far.json", far)
    res = _capped(
        [
            "accelsim",
            "select",
            "--plan",
            str(p),
            "-o",
            str(tmp_path / "t.sh"),
            "--warmup",
            "targeted",
            "--warmup-horizon",
            str(10**11),
        ],
        tmp_path,
    )
    assert res.returncode == 0, res.stderr
    assert f"{10**11 + 17 + 1:,} needed" in res.stdout  # 1-17 and the 10^11+1 launches up to 10^12


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 300), min_size=1, max_size=12), st.integers(0, 50))
def test_needed_launches_are_the_union_of_the_windows(numbers, window):
    sel = TracerSelection(tuple(tracer_ranges(numbers, window, 0)), tuple(sorted(set(numbers))), window, 0)
    assert sel.needed == len({k for n in numbers for k in range(max(1, n - window), n + 1)})


# --- 4. the run check holds on every path ----------------------------------------------------------


def _other_run(tmp_path: Path, n: int = 30) -> Path:
    """A whole trace folder of another run: the process_folder's launches, launch 5 with another grid
    (the sampled launches 9, 17 and 26 have the same names and shapes)."""
    names = ["_Z4gemmPf", "_Z4reluPf", "_Z4copyPf"]
    specs = [
        KernelSpec(
            name=names[i % 3],
            grid=(7 if i == 4 else 1 + i % 4, 1, 1),
            block=(32, 1, 1),
            iters=1,
            body=("LDG.E", "STG.E"),
            base_address=0x7F5A40000000 + (i // 2) * 0x1000,
        )
        for i in range(n)
    ]
    d = tmp_path / "other"
    write_workload(d, specs, memcpys=[(0, 0x1000, 64), (0, 0x2000, 32), (7, 0x3000, 16), (20, 0x4000, 8)])
    return d


def _apply(plan: Path, traces: Path, out: Path) -> list[str]:
    return [
        "apply",
        "--sim",
        "accelsim",
        "--plan",
        str(plan),
        "--traces",
        str(traces),
        "--out",
        str(out),
        "--warmup",
        "none",
    ]


def test_a_plan_is_refused_on_the_whole_folder_of_another_run(tmp_path, capsys):
    full, _ = process_folder(tmp_path)
    plan = synth_plan(tmp_path, full, [9, 17, 26])
    refused(capsys, _apply(plan, _other_run(tmp_path), tmp_path / "o"), "make a plan for these inputs")
    assert not (tmp_path / "o").exists()


def test_a_plan_with_both_fingerprints_edited_is_refused(tmp_path, capsys):
    full, _ = process_folder(tmp_path)
    plan = synth_plan(tmp_path, full, [9, 17, 26])

    def edit(doc):
        doc["workload"]["fingerprint"] = "0" * 32
        doc["workload"]["shape_fingerprint"] = "1" * 32

    p = _edit_plan(plan, tmp_path / "edited.json", edit)
    refused(capsys, _apply(p, full, tmp_path / "o"), "make a plan for these inputs")
    assert not (tmp_path / "o").exists()


def test_a_sample_beyond_the_workload_or_unknown_to_the_process_section_is_refused(tmp_path, capsys):
    full, _ = process_folder(tmp_path)
    plan = synth_plan(tmp_path, full, [9, 17, 26])
    merge_out = tmp_path / "part"
    from simsample_accelsim.merge import merge_runs

    merge_runs(runs_of(full, [(8, 9), (16, 17), (25, 26)], tmp_path / "runs"), merge_out)

    def launch_99(doc):
        doc["samples"][0]["launch"] = 99

    def kernel_999(doc):
        doc["samples"][0]["kernel_id"] = 999

    for edit, phrase in (
        (launch_99, "at launch 99, but the plan's workload has 30 launches"),
        (kernel_999, "kernel 9 is not one of the plan's samples"),
    ):
        p = _edit_plan(plan, tmp_path / "edited.json", edit)
        for traces in (full, merge_out):
            refused(capsys, _apply(p, traces, tmp_path / "o"), phrase)
            assert not (tmp_path / "o").exists()


def test_a_partial_folder_still_applies_and_says_how_it_was_matched(tmp_path, capsys):
    full, _ = process_folder(tmp_path)
    plan = synth_plan(tmp_path, full, [9, 17, 26])
    from simsample_accelsim.merge import merge_runs

    merge_runs(runs_of(full, [(1, 9), (16, 17), (25, 26)], tmp_path / "runs"), tmp_path / "part")
    capsys.readouterr()
    assert cli_run(_apply(plan, tmp_path / "part", tmp_path / "o")) == 0
    assert "found by launch number" in capsys.readouterr().err
    # a prefix of the run, without a gap, is part of the run too
    merge_runs(runs_of(full, [(1, 26)], tmp_path / "runs2"), tmp_path / "prefix")
    assert cli_run(_apply(plan, tmp_path / "prefix", tmp_path / "o2")) == 0


# --- 5. the process section, checked in full ----------------------------------------------------------


def _process_edits():
    def set_number(v):
        def f(doc):
            doc["process"]["samples"][0][1] = v

        return f

    def drop_first(doc):
        doc["process"]["samples"] = doc["process"]["samples"][1:]

    def other_id(doc):
        doc["process"]["samples"][0][0] = 10

    def empty(doc):
        doc["process"]["samples"] = []

    def twice(doc):
        doc["process"]["samples"].append(doc["process"]["samples"][0])

    def short(doc):
        doc["process"]["samples"][0] = doc["process"]["samples"][0][:8]

    def grid(v):
        def f(doc):
            doc["process"]["samples"][0][3] = v

        return f

    def first(v):
        def f(doc):
            doc["process"]["first_launch"] = v

        return f

    return [
        ("nine", set_number("nine"), "launch number 'nine'"),
        ("fraction", set_number(9.5), "process/samples/0"),
        ("true", set_number(True), "process/samples/0"),
        ("zero", set_number(0), "launch number 0"),
        ("2^63", set_number(1 << 63), "launch number 9223372036854775808"),
        ("missing", drop_first, "sampled kernel 9 has no entry"),
        ("other-id", other_id, "kernel 10 is not one of the plan's samples"),
        ("empty", empty, "has no entry"),
        ("twice", twice, "listed twice"),
        ("short", short, "process/samples/0"),
        ("grid-text", grid("x"), "grid_x 'x'"),
        ("grid-negative", grid(-1), "grid_x -1"),
        ("first-1e30", first(10**30), "first_launch"),
        ("first-text", first("one"), "first_launch"),
    ]


@pytest.mark.parametrize("case", _process_edits(), ids=lambda c: c[0])
def test_hand_edited_process_sections_are_refused(tmp_path, capsys, case):
    _, edit, phrase = case
    full, _ = process_folder(tmp_path)
    plan = _edit_plan(synth_plan(tmp_path, full, [9, 17, 26]), tmp_path / "edited.json", edit)
    refused(capsys, ["accelsim", "select", "--plan", str(plan), "-o", str(tmp_path / "t.sh")], phrase)
    assert not (tmp_path / "t.sh").exists()
    refused(capsys, _apply(plan, full, tmp_path / "o"), phrase)
    assert not (tmp_path / "o").exists()


def test_a_trace_plan_whose_launch_number_is_not_its_id_is_refused(tmp_path, capsys):
    full, _ = process_folder(tmp_path)

    def far(doc):
        doc["process"]["samples"][0][1] = 10**12

    plan = _edit_plan(synth_plan(tmp_path, full, [9, 17, 26]), tmp_path / "edited.json", far)
    refused(
        capsys, ["accelsim", "select", "--plan", str(plan), "-o", str(tmp_path / "t.sh")], "differs from kernel id 9"
    )


def kineto_trace(path: Path, step_ts=None, step_dur=None) -> Path:
    """A small PyTorch-profiler trace: three ProfilerStep#N of four launches each (step 1's ts and
    dur replaced where given)."""
    ev = []
    for s in range(3):
        step = {
            "ph": "X",
            "cat": "user_annotation",
            "name": f"ProfilerStep#{s}",
            "ts": 1000 * s,
            "dur": 900,
            "pid": 1,
            "tid": 1,
        }
        if s == 1 and step_ts is not None:
            step["ts"] = step_ts
        if s == 1 and step_dur is not None:
            step["dur"] = step_dur
        ev.append(step)
        for j in range(4):
            c = s * 10 + j + 1
            ev.append(
                {
                    "ph": "X",
                    "cat": "cuda_runtime",
                    "name": "cudaLaunchKernel",
                    "ts": 1000 * s + 10 * j,
                    "dur": 2,
                    "pid": 1,
                    "tid": 1,
                    "args": {"correlation": c},
                }
            )
            ev.append(
                {
                    "ph": "X",
                    "cat": "kernel",
                    "name": f"k{j % 2}",
                    "ts": 1000 * s + 10 * j + 5,
                    "dur": 3 + j,
                    "pid": 0,
                    "tid": 7,
                    "args": {"correlation": c, "grid": [1 + j, 1, 1], "block": [32, 1, 1], "device": 0, "stream": 7},
                }
            )
    text = json.dumps({"traceEvents": ev}, allow_nan=True)
    path.write_text(text.replace('"dur": "NaN"', '"dur": NaN'))
    return path


def test_numbers_beyond_a_profile_plan_s_launches_are_refused(tmp_path, capsys):
    k = kineto_trace(tmp_path / "k.json")
    plan = tmp_path / "p.json"
    assert cli_run(["plan", str(k), "--first-launch", "5", "-o", str(plan)]) == 0
    n = Plan.read(plan).process["samples"][0][1]

    def far(doc):
        doc["process"]["samples"][0][1] = 10**12

    def before(doc):
        doc["process"]["samples"][0][1] = 4

    for edit, phrase in ((far, "launch number 1000000000000"), (before, "launch number 4")):
        p = _edit_plan(plan, tmp_path / "e.json", edit)
        refused(capsys, ["accelsim", "select", "--plan", str(p), "-o", str(tmp_path / "t.sh")], phrase)
    assert n >= 5


# --- 7. values beyond int64, and times that are no times ---------------------------------------------


def test_a_trace_header_id_beyond_int64_is_refused(tmp_path, capsys):
    full, _ = process_folder(tmp_path)
    d = tmp_path / "copy"
    shutil.copytree(full, d, symlinks=False)
    f = d / "kernel-3.traceg"
    f.write_text(f.read_text().replace("-kernel id = 3\n", f"-kernel id = {10**20}\n", 1))
    plan = synth_plan(tmp_path, full, [9])
    for args in (
        ["profile", "info", str(d)],
        ["profile", "features", "--sim", "accelsim", str(d), "-o", str(tmp_path / "g.parquet"), "--no-cache"],
        _apply(plan, d, tmp_path / "o"),
    ):
        refused(capsys, args, "beyond the 64-bit integers")
    assert not (tmp_path / "o").exists() and not (tmp_path / "g.parquet").exists()


def test_a_stats_line_with_a_kernel_number_of_thousands_of_digits_is_one_line(tmp_path):
    """The tracer's stats.csv once had its ``kernel-N.trace`` numbers converted without a bound:
    5,000 digits was Python's ValueError (a traceback); now it is a refusal naming the file and line,
    from the whole-file reader, the filtered reader and the tail reader alike."""
    from simsample_accelsim.tracerstats import (
        STATS_HEADER,
        parse_stats_lines,
        read_stats,
        read_stats_tail,
        stats_line,
    )

    p = tmp_path / "stats.csv"
    good = stats_line(1, "k", (1, 1, 1), (32, 1, 1), 10)
    for number in ("9" * 5000, str(10**20)):
        p.write_text(STATS_HEADER + "\n" + good + "\n" + good.replace("kernel-1.", f"kernel-{number}.", 1) + "\n")
        readers = [
            lambda: read_stats(p),
            lambda: read_stats_tail(p, 2),
            lambda: parse_stats_lines(p, p.read_text().splitlines()),
        ]
        if (
            len(number) > 40
        ):  # a filtered read skips the launches it does not want, unless their number is no launch number
            readers.append(lambda: read_stats(p, only={1}))
        for read in readers:
            with pytest.raises(UserError) as err:
                read()
            text = str(err.value)
            assert "stats.csv" in text and "kernel number" in text and "\n" not in text and len(text) < 300, text
    assert list(read_stats(p, only={1})) == [1]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet="kernel-.trace0123456789, _abc\u0663\u00b2-+", max_size=80), max_size=5))
def test_any_stats_lines_parse_or_are_refused_in_one_line(lines):
    """Whatever a stats.csv line holds, the parser gives rows or a one-line FormatError: never
    another exception."""
    from simsample_accelsim.tracerstats import parse_stats_lines

    try:
        rows = parse_stats_lines(Path("stats.csv"), lines)
    except UserError as exc:
        assert "\n" not in str(exc)
    else:
        assert all(isinstance(n, int) and 0 <= n < 2**63 for n in rows)


def test_gpgpusim_options_beyond_their_integers_are_refused(tmp_path, capsys):
    full, _ = process_folder(tmp_path)
    cfg = tmp_path / "gpgpusim.config"
    cfg.write_text(f"-gpgpu_shader_registers {10**20}\n-gpgpu_n_clusters 4\n")
    refused(
        capsys,
        [
            "profile",
            "features",
            "--sim",
            "accelsim",
            str(full),
            "-o",
            str(tmp_path / "f.parquet"),
            "--config",
            str(cfg),
            "--no-cache",
        ],
        "beyond the 32-bit integers",
    )
    assert not (tmp_path / "f.parquet").exists()


@pytest.mark.parametrize(
    "extra, phrase",
    [
        (["--time-range", "1" * 400 + "-" + "2" * 400], "beyond any profile"),
        (["--time-range", "0-1e999s"], "expected START-END"),
        (["--first-launch", str(10**21)], "out of range"),
        (["--first-launch", str(I64)], "out of range"),
        (["--steps", "1-" + "9" * 5000], "beyond any profile's steps"),
    ],
)
def test_number_options_beyond_int64_are_refused(tmp_path, capsys, extra, phrase):
    k = kineto_trace(tmp_path / "k.json")
    refused(capsys, ["plan", str(k), "-o", str(tmp_path / "p.json"), *extra], phrase)
    assert not (tmp_path / "p.json").exists()


def test_the_largest_first_launch_that_fits_is_taken_and_never_wraps(tmp_path):
    k = kineto_trace(tmp_path / "k.json")
    plan = tmp_path / "p.json"
    assert (
        cli_run(["plan", str(k), "-o", str(plan), "--first-launch", str(I64 - 11)]) == 0
    )  # 12 launches: the last is int64's largest
    nums = [s[1] for s in Plan.read(plan).process["samples"]]
    assert nums and all(I64 - 11 <= n <= I64 for n in nums)


@pytest.mark.parametrize(
    "ts, dur", [("abc", None), (None, None), (1e300, None), (None, "NaN"), (None, 10**20), ([], None)]
)
def test_steps_whose_times_are_no_times_are_refused(tmp_path, capsys, ts, dur):
    k = tmp_path / "k.json"
    kineto_trace(k, step_ts=ts, step_dur=dur)
    if ts is None and dur is None:  # ts null
        doc = json.loads(k.read_text())
        next(e for e in doc["traceEvents"] if e["name"] == "ProfilerStep#1")["ts"] = None
        k.write_text(json.dumps(doc))
    refused(capsys, ["plan", str(k), "--steps", "1-2", "-o", str(tmp_path / "p.json")], "ProfilerStep#1")
    assert not (tmp_path / "p.json").exists()


def test_nvtx_steps_whose_times_are_no_times_are_refused(tmp_path, capsys):
    import sqlite3

    from simsample.io.nsys_steps import step_of_launches

    db = tmp_path / "s.sqlite"
    with sqlite3.connect(db) as c:
        c.execute("CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, text TEXT, eventType INTEGER)")
        c.execute("INSERT INTO NVTX_EVENTS VALUES ('abc', 10, 'step 1', 59)")
    with pytest.raises(UserError, match="no time"):
        step_of_launches(db, None)


# --- 11. small acceptances ----------------------------------------------------------------------------


def test_merge_refuses_launch_0(tmp_path, capsys):
    full, _ = process_folder(tmp_path)
    runs = runs_of(full, [(3, 4)], tmp_path / "runs")
    _add_launch(runs[0], full, 0, stats=False)
    lst = runs[0] / "kernelslist.g"  # launch 0 first, as its number says
    lines = lst.read_text().splitlines()
    lst.write_text(
        "\n".join(
            [
                *[ln for ln in lines if not ln.startswith("kernel")],
                "kernel-0.traceg",
                *[ln for ln in lines if ln.startswith("kernel") and ln != "kernel-0.traceg"],
            ]
        )
        + "\n"
    )
    refused(capsys, ["accelsim", "merge", str(runs[0]), "--out", str(tmp_path / "m")], "counts from 1")
    assert not (tmp_path / "m").exists()


def test_time_range_on_a_folder_without_times_is_refused(tmp_path, capsys):
    full, _ = process_folder(tmp_path)
    refused(capsys, ["plan", str(full), "--time-range", "0-1ms", "-o", str(tmp_path / "p.json")], "has no launch times")
    assert not (tmp_path / "p.json").exists()


def test_an_inconsistent_plan_names_its_sample(tmp_path, capsys):
    """A plan whose fingerprints agree with the inputs but whose sample sits elsewhere: the refusal
    names the sample (for every adapter: match_plan is shared)."""
    from simsample.adapter_support import match_plan
    from simsample.errors import PlanMismatchError
    from simsample_accelsim.reader import scan_folder, workload_of

    full, _ = process_folder(tmp_path)
    plan = _edit_plan(synth_plan(tmp_path, full, [9, 17, 26]), tmp_path / "e.json", lambda d: None)
    p = Plan.read(plan)
    p.samples.loc[1, "launch"] = 3
    with pytest.raises(PlanMismatchError, match=r"sample 1 \(kernel 17, launch 3\).*kernel 17 is at launch 16"):
        match_plan(p, workload_of(scan_folder(full)))


def test_apply_with_a_huge_horizon_walks_only_what_was_traced(tmp_path):
    """A folder of some launches whose last sampled launch is launch 10^12, warmed up with
    --warmup-horizon 10^11: the targeted warm-up used to look at (and cache) every launch number
    of the window."""
    from simsample_accelsim.merge import merge_runs

    full, _ = process_folder(tmp_path)
    plan = synth_plan(tmp_path, full, [9, 17, 26])
    part = tmp_path / "part"
    merge_runs(runs_of(full, [(8, 9), (16, 17), (25, 26)], tmp_path / "runs"), part, copy=True)
    big = 10**12
    (part / "kernel-26.traceg").rename(part / f"kernel-{big}.traceg")
    f = part / f"kernel-{big}.traceg"
    f.write_text(f.read_text().replace("-kernel id = 26\n", f"-kernel id = {big}\n", 1))
    lst = part / "kernelslist.g"
    lst.write_text(lst.read_text().replace("kernel-26.traceg", f"kernel-{big}.traceg"))
    (part / "stats.csv").unlink()

    def far(doc):
        for s in doc["samples"]:
            s["kernel_id"] = big if s["kernel_id"] == 26 else s["kernel_id"]
        for e in doc["process"]["samples"]:
            if e[0] == 26:
                e[0] = e[1] = big

    p = _edit_plan(plan, tmp_path / "far.json", far)
    res = _capped(
        [
            "apply",
            "--sim",
            "accelsim",
            "--plan",
            str(p),
            "--traces",
            str(part),
            "--out",
            str(tmp_path / "o"),
            "--warmup",
            "targeted",
            "--warmup-horizon",
            str(10**11),
        ],
        tmp_path,
        timeout=90,
    )
    assert res.returncode == 0, res.stderr
    kernels = [ln for ln in (tmp_path / "o" / "kernelslist.g").read_text().splitlines() if ln.startswith("kernel")]
    assert f"kernel-{big}.traceg" in kernels and "kernel-9.traceg" in kernels


def test_select_refuses_empty_folder_names(tmp_path, capsys):
    """An empty --runs made the script remove and remake /run-0001, at the file system's root."""
    full, _ = process_folder(tmp_path)
    plan = synth_plan(tmp_path, full, [9])
    for option in ("--runs", "--traces", "--sampled"):
        refused(
            capsys,
            ["accelsim", "select", "--plan", str(plan), "-o", str(tmp_path / "t.sh"), option, ""],
            "give a folder name",
        )
    assert not (tmp_path / "t.sh").exists()


def test_a_workload_count_written_as_a_float_still_bounds_the_samples(tmp_path, capsys):
    full, _ = process_folder(tmp_path)

    def edit(doc):
        doc["workload"]["launches"] = 30.0  # JSON Schema's integer: the schema takes it
        doc["samples"][0]["launch"] = 99

    plan = _edit_plan(synth_plan(tmp_path, full, [9, 17]), tmp_path / "e.json", edit)
    refused(capsys, ["accelsim", "select", "--plan", str(plan), "-o", str(tmp_path / "t.sh")], "at launch 99")


def test_steps_far_apart_are_named_not_enumerated(tmp_path, capsys):
    """A trace with ProfilerStep#0 and ProfilerStep#10^17: the refusal used to build the list of
    every step number between them to say whether the steps were contiguous."""
    k = tmp_path / "k.json"
    kineto_trace(k)
    doc = json.loads(k.read_text())
    next(e for e in doc["traceEvents"] if e["name"] == "ProfilerStep#2")["name"] = f"ProfilerStep#{10**17}"
    k.write_text(json.dumps(doc))
    res = _capped(["plan", str(k), "--steps", "5-6", "-o", str(tmp_path / "p.json")], tmp_path, timeout=60)
    err = res.stderr.strip().splitlines()
    assert res.returncode == 1 and len(err) == 1 and f"the profile has steps 0, 1, {10**17}" in err[0], res.stderr


@pytest.mark.parametrize(
    "memcpy", ["MemcpyHtoD,0x1000," + "9" * 5000, "MemcpyHtoD,0x" + "f" * 17 + ",8", f"MemcpyHtoD,0x1000,{1 << 64}"]
)
def test_a_memcpy_beyond_64_bits_is_refused(tmp_path, capsys, memcpy):
    """5,000 digits were an internal ValueError (Python's limit on converting digits)."""
    full, _ = process_folder(tmp_path)
    runs = runs_of(full, [(3, 4)], tmp_path / "runs")
    lst = runs[0] / "kernelslist.g"
    lst.write_text(memcpy + "\n" + lst.read_text())
    refused(capsys, ["accelsim", "merge", str(runs[0]), "--out", str(tmp_path / "m")], "beyond 64 bits")
    assert not (tmp_path / "m").exists()


def test_select_refuses_a_warmup_k_beyond_int64(tmp_path, capsys):
    full, _ = process_folder(tmp_path)
    plan = synth_plan(tmp_path, full, [9])
    refused(
        capsys,
        ["accelsim", "select", "--plan", str(plan), "-o", str(tmp_path / "t.sh"), "--warmup", str(10**23)],
        "--warmup K",
    )
    refused(
        capsys,
        ["accelsim", "select", "--plan", str(plan), "-o", str(tmp_path / "t.sh"), "--warmup-horizon", str(1 << 63)],
        "--warmup-horizon",
    )
    assert not (tmp_path / "t.sh").exists()


def test_macsim_names_the_sample_of_an_inconsistent_plan(tmp_path, capsys):
    """A MacSim plan whose sample sits at another launch than its kernel id's: the refusal used to
    say only that the plan file is inconsistent."""
    from adapters.macsim.tests.test_macsim_reader import write_trace_folder

    names = {n: (f"_Z7kernel{n}Pf", (n + 1, 1, 1), (64, 1, 1)) for n in range(6)}
    traces = write_trace_folder(tmp_path / "traces", [(n, [10 * (n + 1)] * (n + 2)) for n in range(6)], names=names)
    plan = tmp_path / "p.json"
    ids = tmp_path / "ids.csv"
    ids.write_text("kernel_id,weight\n2,3\n4,3\n")
    assert cli_run(["plan", str(traces), "--sampler", "explicit", "--param", f"file={ids}", "-o", str(plan)]) == 0

    def moved(doc):
        s = next(s for s in doc["samples"] if s["kernel_id"] == 4)
        s["launch"] = 1

    p = _edit_plan(plan, tmp_path / "e.json", moved)
    refused(
        capsys,
        ["apply", "--sim", "macsim", "--plan", str(p), "--traces", str(traces), "--out", str(tmp_path / "o")],
        "(kernel 4, launch 1) does not match its own workload: kernel 4 is at launch 4 there",
    )
    assert not (tmp_path / "o").exists()


def test_a_plan_made_on_a_folder_of_some_launches_applies_to_the_whole_folder(tmp_path, capsys):
    """The run check must not refuse the legitimate way round: a plan made on a selection's merged
    folder (trace ids with gaps), applied to the full trace folder of the same run."""
    from simsample_accelsim.merge import merge_runs

    full, _ = process_folder(tmp_path)
    part = tmp_path / "part"
    merge_runs(runs_of(full, [(8, 9), (16, 17), (25, 26)], tmp_path / "runs"), part)
    sub = tmp_path / "sub"
    sub.mkdir()
    plan = synth_plan(sub, part, [9, 26])
    capsys.readouterr()
    assert cli_run(_apply(plan, full, tmp_path / "o")) == 0, capsys.readouterr().err
    kernels = [ln for ln in (tmp_path / "o" / "kernelslist.g").read_text().splitlines() if ln.startswith("kernel")]
    assert kernels == ["kernel-9.traceg", "kernel-26.traceg"]


# --- the shared validators and parsers: any text in, a number within bounds or one refusal out -----


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(max_size=60), st.integers(-(1 << 70), 1 << 70).map(str)))
@example("0\x1f")  # an information separator: white space to str.isspace(), not to int()
@example("\x1c12")
@example(" 7\t")
def test_parse_int_takes_int64_or_refuses(text):
    from simsample.io.numbers import parse_int

    try:
        n = parse_int(text, "x", lo=None)
    except UserError as e:
        assert "\n" not in str(e).strip()
        return
    assert -(1 << 63) <= n <= I64 and n == int(text)


@settings(max_examples=200, deadline=None)
@given(
    st.one_of(
        st.none(), st.booleans(), st.floats(allow_nan=True), st.integers(-(1 << 70), 1 << 70), st.text(max_size=5)
    )
)
def test_check_int_and_check_time_take_only_numbers_in_range(value):
    from simsample.io.numbers import check_int, check_time

    try:
        n = check_int(value, "x")
        assert type(value) is int and 0 <= n <= I64
    except UserError:
        assert type(value) is not int or not 0 <= value <= I64
    try:
        t = check_time(value, "t")
        assert math.isfinite(t) and 0 <= t <= float(I64)
    except UserError:
        pass


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="0123456789.-nsumµ e", max_size=40))
def test_time_ranges_parse_within_int64_or_refuse(text):
    from simsample.sampling.filters import parse_time_range

    try:
        lo, hi = parse_time_range(text)
    except UserError:
        return
    assert 0 <= lo < hi <= 2**62
