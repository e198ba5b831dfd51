"""Sampled MacSim inputs: the folder apply writes, what it refuses, and that inputs stay untouched."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simsample.cli import run
from simsample.errors import PlanMismatchError, UserError
from simsample.planfile import Plan
from simsample.plugins.samplers.random import RandomSampler
from simsample.workload import from_records
from tests.helpers import shared_path

pytest.importorskip("simsample_macsim")

from adapters.macsim.tests.test_macsim_reader import VMA, folder_hash, write_trace_folder  # noqa: E402
from simsample_macsim.apply import apply_plan  # noqa: E402
from simsample_macsim.params import MAX_INSTS_CEILING, patch_params, required_knobs  # noqa: E402
from simsample_macsim.reader import load_trace_folder  # noqa: E402
from simsample_macsim.traces import parse_kernel_config  # noqa: E402

NAMES = {n: (f"_Z7kernel{n}Pf", (n + 1, 1, 1), (64, 1, 1)) for n in range(6)}


def _random_plan(wl, count, seed=0, replace=False):
    s = RandomSampler()
    return s.plan(wl, s.resolve_params({"count": count, "replace": replace}), seed)


@pytest.fixture
def traces(tmp_path):
    counts = [(n, [10 * (n + 1)] * (n + 2)) for n in range(6)]
    return write_trace_folder(tmp_path / "traces", counts, names=NAMES)


def test_apply_writes_a_runnable_sampled_folder(tmp_path, traces):
    wl = load_trace_folder(traces, quiet=True).workload
    plan = _random_plan(wl, 3, seed=4)
    params = tmp_path / "params.in"
    params.write_text("# machine\nnum_sim_cores 16\nstdout mine.out\nsim_cycle_count 5000\nmax_insts 10\n")
    before = folder_hash(traces), params.read_bytes()
    out = tmp_path / "out"
    res = apply_plan(plan, out, traces=traces, params=params)
    assert (folder_hash(traces), params.read_bytes()) == before  # inputs untouched
    ids = plan.sampled_ids
    assert res.kernels == ids
    assert (out / "kernel_config.txt").read_text() == "nvbit\n14\n-1\n" + "".join(
        f"./Kernel{n}/trace.txt\n" for n in ids
    )
    for n in ids:
        assert (out / f"Kernel{n}").is_symlink()
        assert (out / f"Kernel{n}").resolve() == (traces / f"Kernel{n}").resolve()
    assert sorted(p.name for p in out.iterdir() if p.name.startswith("Kernel")) == sorted(f"Kernel{n}" for n in ids)
    assert (out / "trace_file_list").read_text() == f"1\n{out.resolve() / 'kernel_config.txt'}\n"
    # MacSim resolves each line as <config folder>/KernelN/trace.txt: those files exist
    cfg = parse_kernel_config(out / "kernel_config.txt")
    assert all(e.trace.is_file() for e in cfg.kernels)
    # the sampled folder is itself a trace folder of exactly the sampled kernels
    back = load_trace_folder(out, quiet=True).workload
    assert back.kernels["kernel_id"].tolist() == ids
    assert [str(x) for x in back.kernels["name"]] == [NAMES[n][0] for n in ids]
    text = (out / "params.in").read_text()
    assert "num_sim_cores 16" in text
    assert "\nstdout mine.out" not in text and "removed so that all of MacSim's output" in text
    assert "\nsim_cycle_count 0\n" in text and "# simsample: was: sim_cycle_count 5000" in text
    biggest = max(10 * (n + 1) for n in ids)
    assert f"\nmax_insts {biggest + 1}\n" in text  # raised to the longest sampled warp
    assert "\ntrace_name_file trace_file_list\n" in text
    w = (out / "simsample-weights.csv").read_text().splitlines()
    assert w[0] == "kernel_id,weight,cluster,launch,trace"
    assert [line.split(",")[0] for line in w[1:]] == [str(n) for n in ids]
    assert all(line.split(",")[4] == f"Kernel{line.split(',')[0]}" for line in w[1:])
    assert sum(float(line.split(",")[1]) for line in w[1:]) == pytest.approx(len(wl))
    assert Plan.read(out / "simsample-plan.json").dumps() == plan.dumps()
    assert oct((out / "kernel_config.txt").stat().st_mode & 0o444) == oct(0o444)  # readable, not private


def test_sampled_kernel_info_is_what_the_tracer_reads(tmp_path, traces):
    wl = load_trace_folder(traces, quiet=True).workload
    plan = _random_plan(wl, 4, seed=1, replace=True)  # repeats must not repeat ids on a line
    apply_plan(plan, tmp_path / "out", traces=traces, params=None)
    lines = (tmp_path / "out" / "sampled_kernels_info.txt").read_text().splitlines()
    assert len(lines) >= 3 and lines[0] and lines[1]
    ids = []
    for line in lines[2:]:
        assert line.strip()  # a blank line ends the tracer's reading
        size, n, *rest = (int(x) for x in line.split())
        assert n == len(rest) == len(set(rest))  # the tracer asserts the count
        ids += rest
        assert size >= n
    assert sorted(ids) == plan.sampled_ids


def test_tracer_file_alone_without_traces(tmp_path):
    # a plan made from a profile: the tracer counts launches from 0, as the profile's positions
    wl = from_records(
        {
            "kernel_id": [7, 9, 11, 13],
            "name": ["a", "b", "a", "b"],
            "grid_x": [1] * 4,
            "block_x": [32] * 4,
            "duration_ns": [5, 6, 7, 8],
        },
        source="p.csv",
        format="nsys",
    )
    plan = _random_plan(wl, 2, seed=3)
    out = tmp_path / "out"
    res = apply_plan(plan, out, traces=None, params=None)
    assert res.kernels == [] and sorted(p.name for p in out.iterdir()) == [
        "sampled_kernels_info.txt",
        "simsample-plan.json",
        "simsample-weights.csv",
    ]
    launches = sorted(plan.samples["launch"].tolist())
    got = [int(x) for line in (out / "sampled_kernels_info.txt").read_text().splitlines()[2:] for x in line.split()[2:]]
    assert sorted(got) == launches


def test_real_traces_and_params(tmp_path):
    traces = shared_path(*VMA)
    params = shared_path("simulators", "macsim", "bin", "params.in")
    before = folder_hash(traces)
    plan = tmp_path / "plan.json"
    assert run(["plan", str(traces), "--sampler", "random", "--param", "count=2", "--seed", "0", "-o", str(plan)]) == 0
    out = tmp_path / "sampled"
    assert (
        run(
            [
                "apply",
                "--sim",
                "macsim",
                "--plan",
                str(plan),
                "--traces",
                str(traces),
                "--out",
                str(out),
                "--params",
                str(params),
                "--relative",
            ]
        )
        == 0
    )
    assert folder_hash(traces) == before
    assert (out / "trace_file_list").read_text() == "1\n./kernel_config.txt\n"
    text = (out / "params.in").read_text()
    assert "max_insts 200000000" in text  # the reference value already covers 14 instructions per warp
    assert "\nmax_insts1 10000000000\n" in text and "\nrepeat_trace 0\n" in text


def test_out_must_be_new_or_empty_and_failures_leave_nothing(tmp_path, traces, capsys):
    wl = load_trace_folder(traces, quiet=True).workload
    plan_path = tmp_path / "plan.json"
    _random_plan(wl, 2).write(plan_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / "old.txt").write_text("x")
    args = [
        "apply",
        "--sim",
        "macsim",
        "--plan",
        str(plan_path),
        "--traces",
        str(traces),
        "--out",
        str(out),
        "--warmup",
        "none",
    ]
    assert run(args) == 1
    assert "not empty" in capsys.readouterr().err
    assert run([*args, "--force"]) == 0
    assert not (out / "old.txt").exists() and (out / "kernel_config.txt").is_file()
    # a plan for other traces: refused, nothing written, no partial folder left behind
    other = write_trace_folder(tmp_path / "other", [(0, [1]), (1, [2])])
    new_out = tmp_path / "new"
    assert (
        run(
            [
                "apply",
                "--sim",
                "macsim",
                "--plan",
                str(plan_path),
                "--traces",
                str(other),
                "--out",
                str(new_out),
                "--warmup",
                "none",
            ]
        )
        == 1
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("error: plan was made for workload")
    assert not new_out.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_out_inside_the_traces_is_refused(tmp_path, traces):
    wl = load_trace_folder(traces, quiet=True).workload
    before = folder_hash(traces)
    with pytest.raises(UserError, match="overlaps the input"):
        apply_plan(_random_plan(wl, 2), traces / "sampled", traces=traces, params=None)
    with pytest.raises(UserError, match="overlaps the input"):
        apply_plan(_random_plan(wl, 2), traces, traces=traces, params=None, force=True)
    assert folder_hash(traces) == before


def test_copy_makes_real_folders(tmp_path, traces):
    wl = load_trace_folder(traces, quiet=True).workload
    plan = _random_plan(wl, 1, seed=2)
    apply_plan(plan, tmp_path / "out", traces=traces, params=None, copy=True)
    n = plan.sampled_ids[0]
    d = tmp_path / "out" / f"Kernel{n}"
    assert d.is_dir() and not d.is_symlink()
    assert (d / "trace_info.txt").read_bytes() == (traces / f"Kernel{n}" / "trace_info.txt").read_bytes()


def test_plan_from_a_profile_of_the_same_launches_applies_by_position(tmp_path, traces, capsys):
    k = load_trace_folder(traces, quiet=True).workload.kernels
    # same launch sequence (names and shapes), other ids: a profile of the traced run
    prof = from_records(
        {
            "kernel_id": np.arange(500, 506),
            "name": [f"kernel{n}" for n in range(6)],
            "grid_x": k["grid_x"],
            "block_x": k["block_x"],
            "duration_ns": np.arange(1, 7) * 100,
        },
        source="prof.sqlite",
        format="nsys",
    )
    plan = _random_plan(prof, 2, seed=5)
    capsys.readouterr()
    res = apply_plan(plan, tmp_path / "out", traces=traces, params=None)
    assert res.kernels == sorted(int(x) for x in plan.samples["launch"])
    assert "applied by launch position" in capsys.readouterr().err
    w = (tmp_path / "out" / "simsample-weights.csv").read_text().splitlines()[1:]
    assert [int(line.split(",")[0]) for line in w] == plan.sampled_ids  # the plan's own ids are kept
    # a plan whose launch sequence differs is refused
    bad = from_records(
        {"kernel_id": np.arange(6), "name": ["x"] * 6, "grid_x": [1] * 6, "block_x": [1] * 6, "duration_ns": [1] * 6},
        source="other",
        format="nsys",
    )
    with pytest.raises(PlanMismatchError):
        apply_plan(_random_plan(bad, 2), tmp_path / "out2", traces=traces, params=None)


@pytest.mark.parametrize("defect", ["short-line", "missing-kernel"])
def test_bad_inputs_end_in_one_line_and_change_nothing(tmp_path, defect, capsys):
    traces = write_trace_folder(
        tmp_path / "traces",
        [(0, [4]), (1, [5])],
        names={0: ("a", (1, 1, 1), (32, 1, 1)), 1: ("b", (1, 1, 1), (32, 1, 1))},
    )
    plan_path = tmp_path / "plan.json"
    _random_plan(load_trace_folder(traces, quiet=True).workload, 1).write(plan_path)
    if defect == "short-line":
        (traces / "kernel_config.txt").write_text("nvbit\n14\n-1\n./Kernel0/trace.txt\nKernel1/trace.txt\n")
        expect = "kernel_config.txt, line 5: kernel entry 'Kernel1/trace.txt' has fewer than two path components"
    else:
        os.rename(traces / "Kernel1", tmp_path / "elsewhere")
        expect = "kernel_config.txt, line 5: Kernel1: folder"
    before = folder_hash(traces)
    capsys.readouterr()
    for args in (
        ["profile", "info", str(traces)],
        ["apply", "--sim", "macsim", "--plan", str(plan_path), "--traces", str(traces), "--out", str(tmp_path / "o")],
    ):
        assert run(args) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("error: ") and expect in err
    assert folder_hash(traces) == before
    assert not (tmp_path / "o").exists()


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "num_sim_cores 16",
                "stdout x.out",
                "STDERR e.out",
                "max_insts 5",
                "max_insts 999999999999",
                "sim_cycle_count 0",
                "sim_cycle_count 77",
                "# comment",
                "",
                "repeat_trace 1",
                "max_insts1 abc",
            ]
        ),
        max_size=12,
    ),
    st.one_of(st.none(), st.integers(0, 10**9)),
)
def test_patched_params_have_every_knob_right(lines, max_warp):
    text, _ = patch_params("\n".join(lines) + "\n", required_knobs(max_warp_insts=max_warp, total_insts=None))
    live = [line.split() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]
    keys = [t[0].lower() for t in live]
    assert "stdout" not in keys and "stderr" not in keys
    values: dict[str, list[str]] = {}
    for t in live:
        values.setdefault(t[0].lower(), []).append(t[1])
    for k in ("sim_cycle_count", "repeat_trace", "blocks_to_simulate", "max_blocks_to_simulate"):
        assert values[k] and set(values[k]) == {"0"}
    need = MAX_INSTS_CEILING if max_warp is None else max_warp + 1
    assert values["max_insts"] and all(int(v) >= need for v in values["max_insts"])
    assert values["trace_name_file"] == ["trace_file_list"]
    assert "num_sim_cores" in keys or "num_sim_cores 16" not in lines
    # patching twice changes nothing more
    again, changes = patch_params(text, required_knobs(max_warp_insts=max_warp, total_insts=None))
    assert again == text and changes == []


FAKE_MACSIM = """\
#!/usr/bin/env python3
# stands in for MacSim: reads params.in, trace_file_list and kernel_config.txt the way MacSim does
import os, sys
knobs = {}
for line in open("params.in"):
    t = line.split()
    if t and not t[0].startswith("#"):
        knobs[t[0].lower()] = t[1] if len(t) > 1 else ""
assert "stdout" not in knobs and knobs["sim_cycle_count"] == "0", knobs
toks = open(knobs["trace_name_file"]).read().split()
assert toks[0] == "1"
appl = toks[1]
cfg = open(appl).read().split()
assert cfg[:3] == ["nvbit", "14", "-1"]
base = appl[: appl.rfind("/")]
kernels = []
for k in cfg[3:]:
    cut = k.rfind("/", 0, k.rfind("/"))   # the last two components, as MacSim keeps them
    kernels.append(base + k[cut:])
cycle = 0
for i, path in enumerate(kernels):
    print(f"src/process_manager.cc:426: (I=3  C={cycle}):  setup_process:0 {path} current_index:{i} ({len(kernels)})")
    for j, line in enumerate(open(os.path.join(os.path.dirname(path), "trace_info.txt"))):
        n = int(line.split()[1]) - 1
        print(f"**Core 00 Thread {j:02d} Finished:   insts:{n:<10d}  cycles:1 (1)")
    cycle += 1000 + 10 * int(os.path.basename(os.path.dirname(path))[6:])
print(f"src/macsim.cc:624: (I=3  C={cycle}):  finalize simulation")
"""


def test_end_to_end_with_a_stand_in_macsim(tmp_path, traces, capsys):
    import json
    import stat

    exe = tmp_path / "macsim"
    exe.write_text(FAKE_MACSIM)
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    params = tmp_path / "params.in"
    params.write_text("num_sim_cores 4\nstdout out.txt\n")
    plan = tmp_path / "plan.json"
    assert run(["plan", str(traces), "--sampler", "random", "--param", "count=3", "--seed", "2", "-o", str(plan)]) == 0
    out = tmp_path / "sampled"
    assert (
        run(
            [
                "apply",
                "--sim",
                "macsim",
                "--plan",
                str(plan),
                "--traces",
                str(traces),
                "--out",
                str(out),
                "--params",
                str(params),
                "--warmup",
                "none",
            ]
        )
        == 0
    )  # these stand-in traces have no instruction streams to choose warm-up from
    assert run(["run", "--sim", "macsim", "--sampled", str(out), "--macsim", str(exe)]) == 0
    capsys.readouterr()
    assert run(["collect", "--sim", "macsim", "--plan", str(plan), str(out), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["results"]
    ids = Plan.read(plan).sampled_ids
    assert [r["kernel_id"] for r in rows] == ids
    assert [r["cycles"] for r in rows] == [1000 + 10 * n for n in ids]
    assert [r["instructions"] for r in rows] == [(n + 2) * (10 * (n + 1) - 1) for n in ids]
    assert (
        run(["run", "--sim", "macsim", "--sampled", str(out), "--macsim", str(exe)]) == 1
    )  # the log exists: not overwritten
    assert "exists" in capsys.readouterr().err


def test_folder_traced_with_sampled_kernel_info(tmp_path, capsys):
    """The tracer traced only some launches, but its kernel_names.txt lists the whole run."""
    full = write_trace_folder(tmp_path / "full", [(n, [10 * (n + 1)] * 2) for n in range(6)], names=NAMES)
    plan_full = _random_plan(load_trace_folder(full, quiet=True).workload, 2, seed=7)
    picked = plan_full.sampled_ids
    partial = write_trace_folder(tmp_path / "partial", [(n, [10 * (n + 1)] * 2) for n in picked], names=NAMES)
    # a plan made from the full traces: the partial folder's launch list has the same fingerprint
    res = apply_plan(plan_full, tmp_path / "o1", traces=partial, params=None)
    assert res.kernels == picked
    assert (tmp_path / "o1" / f"Kernel{picked[0]}").resolve() == (partial / f"Kernel{picked[0]}").resolve()
    # a plan made from a profile of the same run: matched by position through kernel_names.txt
    k = load_trace_folder(full, quiet=True).workload.kernels
    prof = from_records(
        {
            "kernel_id": np.arange(900, 906),
            "name": [f"kernel{n}" for n in range(6)],
            "grid_x": k["grid_x"],
            "block_x": k["block_x"],
            "duration_ns": np.arange(1, 7),
        },
        source="prof",
        format="nsys",
    )
    s = RandomSampler()
    for seed in range(50):
        plan = s.plan(prof, s.resolve_params({"count": 2}), seed)
        if sorted(plan.samples["launch"]) == picked:
            break
    assert apply_plan(plan, tmp_path / "o2", traces=partial, params=None).kernels == picked
    # a sample the tracer did not trace is refused, naming it
    other = next(n for n in range(6) if n not in picked)
    bad = _random_plan(load_trace_folder(full, quiet=True).workload, 6)
    with pytest.raises(UserError, match=f"sampled launch Kernel{min(set(range(6)) - set(picked))} was not traced"):
        apply_plan(bad, tmp_path / "o3", traces=partial, params=None)
    assert other not in picked and not (tmp_path / "o3").exists()
    # a plan for other launches still gets the plain mismatch error
    alien = from_records(
        {"kernel_id": [0, 1], "name": ["x", "y"], "grid_x": [1, 1], "block_x": [1, 1], "duration_ns": [1, 1]},
        source="alien",
        format="nsys",
    )
    with pytest.raises(PlanMismatchError, match="but traces"):
        apply_plan(_random_plan(alien, 1), tmp_path / "o4", traces=partial, params=None)
