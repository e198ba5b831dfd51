"""MacSim trace features: occupancy from params.in and cache context from the traces' addresses
(``simsample_macsim.machine``, ``.context``, ``.features``), and what they do to margin's plans on
the layers workload, checked against real MacSim runs (tests/fixtures/macsim_warmup)."""

from __future__ import annotations

import dataclasses
import importlib.util
import statistics

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simsample.cli import run
from simsample.errors import FormatError, UserError
from simsample.planfile import Plan
from simsample.sampling.estimate import estimate_results
from simsample.sampling.grouping import group_launches
from simsample.workload import Workload
from tests.helpers import ROOT, shared_path

pytest.importorskip("simsample_macsim")

from simsample_macsim.collect import collect  # noqa: E402
from simsample_macsim.context import warm_access_shares  # noqa: E402
from simsample_macsim.features import trace_features  # noqa: E402
from simsample_macsim.machine import DEFAULTS, Machine, parse_params, read_params  # noqa: E402
from simsample_macsim.output import parse_log  # noqa: E402
from simsample_macsim.synth import write_workload  # noqa: E402
from simsample_macsim.warmup import Footprint  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures" / "macsim_warmup"

# --- params.in ------------------------------------------------------------------------------------


def test_machine_without_params_is_macsims_builtin_one():
    m = read_params(None)
    assert m.cores == DEFAULTS["num_sim_cores"]
    assert (
        m.llc_bytes == DEFAULTS["num_llc"] * DEFAULTS["llc_num_set"] * DEFAULTS["llc_assoc"] * DEFAULTS["llc_line_size"]
    )


def test_machine_of_the_params_macsim_ships():
    m = read_params(shared_path("simulators", "macsim", "bin", "params.in"))
    # its own comments say: 16 cores, L3 4.5MB (12 slices of 128 sets x 24 ways x 128 B)
    assert m.cores == 16 and m.llc_bytes == 12 * 128 * 24 * 128 == 4.5 * 2**20
    assert m.llc_lines(128) == 36864


knob_values = st.fixed_dictionaries({}, optional={k: st.integers(1, 10**6) for k in DEFAULTS})


@given(knobs=knob_values, junk=st.lists(st.sampled_from(["# llc_assoc 3", "clock_gpu 2.0", "", "num_llc"]), max_size=4))
def test_parse_params_takes_given_knobs_and_macsims_defaults_for_the_rest(knobs, junk):
    lines = [f"{k} {v}" for k, v in knobs.items()] + junk
    m = parse_params("\n".join(lines))
    v = {**DEFAULTS, **knobs}
    assert m.cores == v["num_sim_cores"]
    assert m.llc_bytes == v["num_llc"] * v["llc_num_set"] * v["llc_assoc"] * v["llc_line_size"]


def test_parse_params_last_value_wins_and_bad_values_are_refused_with_the_line():
    assert parse_params("num_sim_cores 4\nnum_sim_cores 12\n").cores == 12
    with pytest.raises(FormatError, match="line 2") as e:
        parse_params("num_llc 2\nllc_assoc zero\n", "p.in")
    assert "llc_assoc" in str(e.value) and "\n" not in str(e.value)


# --- the context column ---------------------------------------------------------------------------


def _reference(fps: list[Footprint], llc_lines: int, reach: float) -> list[float]:
    """The definition, spelled out with sets: walk back until the distinct lines (data and code)
    reach reach x llc_lines; the share of the launch's accesses on lines that window touched; 0
    when the window ran none of its code; 1 without data accesses."""
    out = []
    for j, f in enumerate(fps):
        data: dict[int, float] = {}
        for line, c in zip(f.lines.tolist(), f.counts.tolist()):
            data[line] = data.get(line, 0.0) + c
        total = sum(data.values())
        if total == 0:
            out.append(1.0)
            continue
        window: set[int] = set()
        for i in range(j - 1, -1, -1):
            window |= set(fps[i].lines.tolist()) | set(fps[i].code.tolist())
            if len(window) >= reach * llc_lines:
                break
        code = set(f.code.tolist())
        if code and not code & window:
            out.append(0.0)
        else:
            out.append(sum(c for line, c in data.items() if line in window) / total)
    return out


launch = st.tuples(
    st.lists(st.tuples(st.integers(0, 24), st.integers(1, 5)), max_size=8),
    st.lists(st.integers(20, 28), max_size=3),  # code lines, sometimes shared with data lines
)


@settings(max_examples=300, deadline=None)
@given(
    launches=st.lists(launch, max_size=9),
    llc_lines=st.integers(1, 30),
    reach=st.sampled_from([0.5, 1.0, 2.0]),
)
def test_warm_shares_are_the_definition(launches, llc_lines, reach):
    fps = [
        Footprint(
            np.array([x for x, _ in d], np.int64),
            np.array([c for _, c in d], np.float64),
            1,
            np.array(sorted(set(code)), np.int64),
        )
        for d, code in launches
    ]
    got = warm_access_shares(fps, llc_lines=llc_lines, reach=reach)
    assert got == pytest.approx(_reference(fps, llc_lines, reach))


def test_warm_shares_refuse_an_llc_without_lines_and_a_bad_reach():
    fp = [Footprint(np.array([1]), np.array([1.0]), 1)]
    with pytest.raises(UserError, match="LLC holds 0 lines"):
        warm_access_shares(fp, llc_lines=0)
    for reach in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(UserError, match="reach"):
            warm_access_shares(fp, llc_lines=8, reach=reach)


# --- the layers workload --------------------------------------------------------------------------


def _layers_module():
    spec = importlib.util.spec_from_file_location("layers", ROOT / "benchmarks" / "macsim_layers_workload.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def small_layers(tmp_path_factory):
    """The layers workload's launches (which arrays each reads and writes, in the same order) at
    1/16 of the size: 1,024 doubles per array, one block per launch. Which lines a launch finds
    warm depends on who touched them before, not on the arrays' size while all of them fit the
    LLC (they do at both sizes), so its context column is the full-size workload's."""
    kernels = [dataclasses.replace(k, elements=1024) for k in _layers_module().layers_kernels()]
    root = tmp_path_factory.mktemp("macsim-small-layers") / "layers"
    write_workload(root, kernels)
    return root


def test_layers_context_column_marks_the_first_step(small_layers):
    wl = trace_features(small_layers, quiet=True)
    k = wl.kernels
    names = k["name"].tolist()
    warm = k["warm_reads"].to_numpy()
    # launch 0: nothing touched before, launch 1: the first resid, whose code nobody ran before
    assert warm[0] == 0 and warm[1] == 0
    # launches 2-6: each proj reads a new weight array, each resid writes a new activation array
    # (one access in three, per warp), the other two are what the launch before touched
    assert warm[2:7] == pytest.approx([2 / 3] * 5)
    # from launch 7 on every array was touched within the step before, well within the LLC
    assert (warm[7:] == 1).all()
    assert names[:2] == ["proj", "resid"]
    assert (k["sms_used"] == 1).all() and (k["waves"] == 1).all()  # one block per launch
    assert "80 cores" in wl.meta["machine"]


def test_layers_groups_of_auto_hold_launches_of_like_real_cycles(small_layers):
    """The real full run's cycles (tests/fixtures/macsim_warmup/layers-full.out.gz): by name the
    launches of one kernel differ 4.4-fold; within the groups of group=auto (name, occupancy,
    context class) by at most 1%."""
    cycles = {kr.number: kr.cycles for kr in parse_log(FIXTURES / "layers-full.out.gz").kernels}
    wl = trace_features(small_layers, quiet=True)
    y = np.array([cycles[n] for n in wl.kernels["kernel_id"]], np.float64)

    def spreads(by: str) -> list[float]:
        g = group_launches(wl, by)
        return [float(y[g.codes == c].max() / y[g.codes == c].min()) for c in range(g.count)]

    assert max(spreads("name")) > 4
    assert max(spreads("auto")) < 1.01
    assert len(spreads("auto")) == 6  # proj and resid, each cold, partly warm and warm


def test_margins_default_plan_on_layers_features_estimates_the_real_full_run(small_layers, tmp_path):
    """Margin's default plans on the features, scored on the real full run's own cycles: the
    plans that missed by -28% (those that drew none of launches 0-6) cannot happen any more."""
    features = tmp_path / "f.parquet"
    assert run(["profile", "features", "--sim", "macsim", str(small_layers), "-o", str(features)]) == 0
    full = parse_log(FIXTURES / "layers-full.out.gz")
    truth = float(full.final_cycle)
    errors = []
    for seed in range(5):
        out = tmp_path / f"plan-{seed}.json"
        assert run(["plan", str(features), "--sampler", "margin", "--seed", str(seed), "-o", str(out)]) == 0
        plan = Plan.read(out)
        assert plan.prediction["grouping"] == "name+occupancy+context"
        assert {0, 1} <= set(plan.sampled_ids)  # the two cold launches are clusters of their own
        results, _ = collect([FIXTURES / "layers-full.out.gz"], plan)
        est = next(e for e in estimate_results(plan, results, metrics=["cycles"]) if e.metric == "cycles")
        errors.append(abs(est.estimate / truth - 1))
    assert statistics.mean(errors) < 0.005  # 15.8% on average before the context column


def test_the_real_sampled_run_of_the_default_plan_is_covered():
    """A real MacSim run of margin's default plan (seed 2) with the default targeted warm-up: its
    99% interval holds the full run's cycles (the README of the fixtures says how it was made)."""
    plan = Plan.read(FIXTURES / "plan-layers-margin2.json")
    results, _ = collect([FIXTURES / "layers-margin2-targeted.out.gz"], plan)
    est = next(e for e in estimate_results(plan, results, metrics=["cycles"]) if e.metric == "cycles")
    truth = float(parse_log(FIXTURES / "layers-full.out.gz").final_cycle)
    assert est.ci_low <= truth <= est.ci_high
    assert abs(est.estimate / truth - 1) < 0.001
    assert {0, 1} <= set(plan.sampled_ids)


@pytest.mark.slow
def test_context_column_of_the_full_size_layers_traces(tmp_path):
    """The full-size workload (the benchmark's, about 50 MB) reads as the small one does, with
    the machine of the params.in the real runs used."""
    root = tmp_path / "layers"
    write_workload(root, _layers_module().layers_kernels())
    small = [dataclasses.replace(k, elements=1024) for k in _layers_module().layers_kernels()]
    write_workload(tmp_path / "small", small)
    params = shared_path("simulators", "macsim", "bin", "params.in")
    big = trace_features(root, params=params, quiet=True).kernels
    assert big["warm_reads"].tolist() == trace_features(tmp_path / "small", quiet=True).kernels["warm_reads"].tolist()
    assert (big["sms_used"] == 16).all() and (big["waves"] == 1).all()  # 16 blocks of 1,024 threads, 16 cores


# --- the command line -----------------------------------------------------------------------------


def test_features_command_options_and_refusals(small_layers, tmp_path, capsys):
    out = tmp_path / "f.parquet"
    assert run(["profile", "features", "--sim", "macsim", str(small_layers), "--no-context", "-o", str(out)]) == 0
    k = Workload.from_parquet(out).kernels
    assert "warm_reads" not in k.columns and {"sms_used", "waves"} <= set(k.columns)

    params = tmp_path / "params.in"
    params.write_text("num_sim_cores 1\nllc_num_set 1\nllc_assoc 1\nllc_line_size 128\n")  # an LLC of one line
    assert (
        run(["profile", "features", "--sim", "macsim", str(small_layers), "--params", str(params), "-o", str(out)]) == 0
    )
    k = Workload.from_parquet(out).kernels
    assert (k["sms_used"] == 1).all()
    # an LLC of one line: only the launch just before counts as recent, and every launch touches
    # something it did not
    assert (k["warm_reads"] < 1).all()
    capsys.readouterr()

    missing = tmp_path / "nope.in"
    assert (
        run(["profile", "features", "--sim", "macsim", str(small_layers), "--params", str(missing), "-o", str(out)])
        == 1
    )
    err = capsys.readouterr().err.strip()
    assert "nope.in" in err and "no such file" in err and len(err.splitlines()) == 1


def test_features_without_trace_bodies(small_layers, tmp_path, capsys):
    import shutil

    part = tmp_path / "part"
    shutil.copytree(small_layers, part)
    for f in (part / "Kernel3").glob("trace_*.raw"):
        f.unlink()
    out = tmp_path / "f.parquet"
    assert run(["profile", "features", "--sim", "macsim", str(part), "-o", str(out)]) == 1
    err = capsys.readouterr().err.strip()
    assert "Kernel3" in err and "--no-context" in err and len(err.splitlines()) == 1 and not out.exists()

    for f in part.glob("Kernel*/trace_*.raw"):  # headers only: a note, and no context column
        f.unlink()
    assert run(["profile", "features", "--sim", "macsim", str(part), "-o", str(out)]) == 0
    assert "warm_reads" not in Workload.from_parquet(out).kernels.columns
    assert "no trace_*.raw" in capsys.readouterr().err


def test_a_damaged_trace_stream_names_the_file_and_the_way_out(small_layers, tmp_path, capsys):
    import shutil

    bad = tmp_path / "bad"
    shutil.copytree(small_layers, bad)
    victim = sorted((bad / "Kernel5").glob("trace_*.raw"))[0]
    victim.write_bytes(victim.read_bytes()[:-9])
    assert run(["profile", "features", "--sim", "macsim", str(bad), "-o", str(tmp_path / "f.parquet")]) == 1
    err = capsys.readouterr().err.strip()
    assert victim.name in err and "--no-context" in err and "--warmup" not in err and len(err.splitlines()) == 1


def test_machine_counts_lines_of_any_size():
    m = Machine(cores=2, llc_bytes=1000)
    assert m.llc_lines(128) == 7 and m.llc_lines(1) == 1000


def test_the_llc_size_of_params_decides_what_a_step_finds(tmp_path):
    """The held-out mlp workload (benchmarks/macsim_mlp_workload.py) at 1/16 of the size: a
    layer's three weight arrays are re-read a step later. With an LLC that holds the whole
    footprint they are warm from the second step on; with one smaller than a step's weights they
    are cold in every step (as the real runs with num_llc 2 found: ``up`` at 3,970-3,993 cycles
    from its second launch on, against 1,629-1,872 from the second step on with the larger LLC)."""
    spec = importlib.util.spec_from_file_location("mlp", ROOT / "benchmarks" / "macsim_mlp_workload.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    kernels = [dataclasses.replace(k, elements=1024) for k in mod.mlp_kernels()]
    write_workload(tmp_path / "mlp", kernels)
    # 1,024 doubles = 8 KiB = 64 lines per array; an LLC of six arrays, as num_llc 2 holds six
    # of the full-size ones (768 KiB), while a step's weights are twelve
    small = tmp_path / "small.in"
    small.write_text("num_llc 1\nllc_num_set 48\nllc_assoc 8\nllc_line_size 128\n")  # 384 lines
    big = trace_features(tmp_path / "mlp", quiet=True).kernels  # MacSim's built-in 8 MiB LLC
    little = trace_features(tmp_path / "mlp", params=small, quiet=True).kernels
    later = big.index >= 16  # steps 2 and 3
    weighted = big["name"].isin(["up", "bias", "down"])
    assert (big.loc[later, "warm_reads"] == 1).all()
    assert little.loc[later & weighted, "warm_reads"].to_numpy() == pytest.approx(2 / 3)
    assert (little.loc[later & ~weighted, "warm_reads"] == 1).all()  # resid reads and writes activations
    # so group=auto puts the later steps' up launches with the first step's second one (launch 4,
    # whose weights are new too) on the small LLC, and apart from it on the large one: in the
    # real full runs launch 4 took 3,982 cycles against 3,970-3,993 later (num_llc 2), and 2,652
    # against 1,629-1,872 (bin/params.in)
    ups = [i for i in range(16, 48) if kernels[i].name == "up"]
    small_groups = group_launches(Workload(little, source="mlp"), "auto").codes
    big_groups = group_launches(Workload(big, source="mlp"), "auto").codes
    assert {int(small_groups[i]) for i in ups} == {int(small_groups[4])}
    assert int(big_groups[4]) not in {int(big_groups[i]) for i in ups}
