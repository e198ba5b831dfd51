"""MacSim warm-up: the choice of warm-up launches, what apply writes for them, and that collect
never counts them; the estimates of real MacSim runs with warm-up (tests/fixtures/macsim_warmup).

Kernel 2 of vectormultadd reads what kernels 0 and 1 wrote: MacSim gives it 2,887 cycles after
both (the full run), 3,631 after kernel 0 alone and 3,820 first in a run.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simsample.cli import run
from simsample.errors import UserError
from simsample.planfile import Plan
from simsample.sampling.estimate import estimate_results
from tests.helpers import shared_path

pytest.importorskip("simsample_macsim")

from adapters.macsim.tests.test_macsim_reader import VMA, folder_hash  # noqa: E402
from simsample_macsim.apply import SAMPLED_INFO, apply_plan  # noqa: E402
from simsample_macsim.collect import collect  # noqa: E402
from simsample_macsim.reader import load_trace_folder  # noqa: E402
from simsample_macsim.synth import RECORD, ElementwiseKernel, write_workload  # noqa: E402
from simsample_macsim.warmup import (  # noqa: E402
    _ADDR_AT,
    _OPCODE_AT,
    LINE,
    Footprint,
    choose,
    kernel_footprint,
    parse_warmup,
    preceding,
    targeted,
)

FIXTURES = Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "macsim_warmup"


def _explicit_plan(tmp_path: Path, traces: Path, rows: str, name: str = "plan") -> Plan:
    """A plan made as a user would: features of the traces, then the explicit sampler."""
    features, samples, out = tmp_path / f"{name}.parquet", tmp_path / f"{name}.csv", tmp_path / f"{name}.json"
    samples.write_text("kernel_id,weight,cluster\n" + rows)
    assert run(["profile", "features", "--sim", "macsim", str(traces), "-o", str(features)]) == 0
    assert run(["plan", str(features), "--sampler", "explicit", "--param", f"file={samples}", "-o", str(out)]) == 0
    return Plan.read(out)


def _tracer_ids(text: str) -> list[int]:
    """What the NVBit tracer takes from a SAMPLED_KERNEL_INFO file: two header lines skipped,
    then per line the ids after ``<cluster size> <count>`` (the count must match), until a blank line."""
    ids: list[int] = []
    for line in text.split("\n")[2:]:
        if not line:
            break
        nums = [int(x) for x in line.split()]
        assert nums[1] == len(nums) - 2
        ids += nums[2:]
    return ids


# --- the choice ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, k",
    [("none", 0), ("0", 0), ("3", 3), (" Targeted ", None), (2, 2)],
)
def test_parse_warmup(text, k):
    assert parse_warmup(text).k == k


@pytest.mark.parametrize(
    "args, needle",
    [
        (("-1",), "K must be >= 0"),
        (("soon",), "expected a number of launches"),
        (("1", 0), "--warmup-horizon"),
        (("1", 5, 0.0), "--warmup-coverage"),
        (("1", 5, 0.8, -1.0), "--warmup-budget"),
    ],
)
def test_parse_warmup_refuses_with_one_line(args, needle):
    with pytest.raises(UserError) as e:
        parse_warmup(*args)
    assert needle in str(e.value) and "\n" not in str(e.value)


@given(st.lists(st.integers(0, 60), min_size=1, max_size=8), st.integers(0, 6))
def test_preceding_gives_the_k_launches_before_each_sample(samples, k):
    warm = preceding(samples, k)
    assert sorted(warm) == sorted(set(samples))
    for s, w in warm.items():
        assert w == list(range(max(0, s - k), s))


def _fp(lines: list[int], insts: int = 10) -> Footprint:
    u = np.unique(np.asarray(lines, np.int64))
    return Footprint(u, np.ones(len(u)), insts)


@given(
    st.lists(st.lists(st.integers(0, 12), max_size=6), min_size=2, max_size=12),
    st.data(),
    st.integers(1, 6),
    st.sampled_from([0.5, 0.8, 1.0]),
    st.booleans(),
)
@settings(max_examples=80, deadline=None)
def test_targeted_takes_recent_touchers_until_covered(touches, data, horizon, coverage, window):
    n = len(touches)
    samples = sorted(set(data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=3))))
    fps = {i: _fp(t) for i, t in enumerate(touches)}
    warm = targeted(samples, fps.__getitem__, horizon=horizon, coverage=coverage, budget=None, window=window)
    chosen = {j for w in warm.values() for j in w}
    for s, w in warm.items():
        assert all(s - horizon <= j < s and j not in samples for j in w)
        if window and w:  # a window: every launch from its start to the sample, sampled ones aside
            assert set(w) == set(range(min(w), s)) - set(samples)
        if window and s > 0 and s - 1 not in samples:
            assert s - 1 in w
        # every line the sample touches, attributed to its last toucher within the horizon
        last: dict[int, int] = {}
        for line in fps[s].lines:
            for j in range(s - 1, max(-1, s - 1 - horizon), -1):
                if line in fps[j].lines:
                    last[int(line)] = j
                    break
        covered = sum(1 for j in last.values() if j in chosen or j in samples)
        assert covered >= coverage * len(last) - 1e-9


def test_targeted_budget_limits_the_warmup_instructions():
    fps = {0: _fp([1, 2, 3], 100), 1: _fp([4], 10), 2: _fp([1, 2, 3, 4], 10)}
    for window in (True, False):
        assert targeted([2], fps.__getitem__, budget=None, window=window) == {2: [0, 1]}
        assert targeted([2], fps.__getitem__, budget=1.0, window=window) == {
            2: [1]
        }  # 100 warp instructions do not fit 1 x 10
    assert targeted([2], fps.__getitem__, coverage=0.2, window=False) == {2: [0]}  # the producer of most lines first
    assert targeted([2], fps.__getitem__, coverage=0.2) == {2: [1]}  # the window's nearest launch covers 1 of 4 lines
    assert choose([2], parse_warmup("none"), fps.__getitem__) == {2: []}
    with pytest.raises(UserError, match="--traces"):
        choose([2], parse_warmup("targeted"))


def test_footprint_of_the_real_vectormultadd_traces():
    root = shared_path(*VMA)
    fp = {n: kernel_footprint(root / f"Kernel{n}") for n in range(3)}
    assert [f.warp_insts for f in fp.values()] == [1792, 1792, 1792]  # 128 warps x 14 records
    # kernel 2 reads the lines kernel 0 and kernel 1 wrote
    assert np.isin(fp[2].lines, fp[0].lines).sum() == 128 and np.isin(fp[2].lines, fp[1].lines).sum() == 128
    assert not np.isin(fp[1].lines, fp[0].lines).any()
    assert targeted([2], fp.__getitem__) == {2: [0, 1]}
    assert targeted([1], fp.__getitem__, window=False) == {1: []}  # nothing kernel 1 touches was touched before it
    assert targeted([1], fp.__getitem__) == {
        1: [0]
    }  # but the window has at least the predecessor (same code, measured to warm it)


def test_synth_records_are_what_the_footprint_reads(tmp_path):
    assert RECORD.fields["opcode"][1] == _OPCODE_AT and RECORD.fields["mem_addr"][1] == _ADDR_AT
    arrays = write_workload(tmp_path / "t", [ElementwiseKernel("k", "a", "b", "c", 2048, "mul", 256)])
    fp = kernel_footprint(tmp_path / "t" / "Kernel0")
    # one address per warp instruction (its first thread), 32 doubles = 256 bytes apart
    want = np.concatenate([(arrays[a] + np.arange(64) * 256) // LINE for a in "abc"])
    assert np.array_equal(fp.lines, np.unique(want)) and fp.warp_insts == 64 * 14
    wl = load_trace_folder(tmp_path / "t", quiet=True).workload
    assert wl.kernels["instructions"].tolist() == [64 * 14] and wl.kernels["name"].tolist() == ["k"]
    raw = gzip.open(tmp_path / "t" / "Kernel0" / "trace_65537.raw").read()  # block 1, warp 1
    rec = np.frombuffer(raw, RECORD)
    assert rec["mem_addr"][8] == arrays["a"] + (8 + 1) * 32 * 8 and rec["opcode"][-1] == 139


# --- apply -----------------------------------------------------------------------------------------


@pytest.fixture
def chain(tmp_path):
    """Six launches: k3 reads what k0 and k2 wrote."""
    ks = [
        ElementwiseKernel(f"k{i}", a, b, o, 1024, "add", 256)
        for i, (a, b, o) in enumerate(
            [("x", "y", "p"), ("u", "v", "q"), ("u", "y", "r"), ("p", "r", "s"), ("s", "s", "t"), ("t", "p", "z")]
        )
    ]
    write_workload(tmp_path / "chain", ks)
    return tmp_path / "chain"


def test_apply_lists_warmup_kernels_before_their_sample(tmp_path, chain):
    plan = _explicit_plan(tmp_path, chain, "1,1,0\n3,2,1\n5,3,2\n")
    before = folder_hash(chain)
    res = apply_plan(plan, tmp_path / "out", traces=chain, params=None, warmup=parse_warmup("1"))
    assert folder_hash(chain) == before
    assert res.kernels == [0, 1, 2, 3, 4, 5] and res.warmup == [0, 2, 4]
    assert (tmp_path / "out" / "kernel_config.txt").read_text().split("\n")[3:-1] == [
        f"./Kernel{n}/trace.txt" for n in range(6)
    ]
    w = pd.read_csv(tmp_path / "out" / "simsample-weights.csv")
    assert w["kernel_id"].tolist() == [0, 1, 2, 3, 4, 5]
    assert w["role"].tolist() == ["warmup", "sample", "warmup", "sample", "warmup", "sample"]
    assert w.loc[w["role"] == "warmup", "weight"].tolist() == [0, 0, 0]
    assert w["trace"].tolist() == [f"Kernel{n}" for n in range(6)]
    info = (tmp_path / "out" / SAMPLED_INFO).read_text()
    assert info.splitlines()[-1] == "0 3 0 2 4"
    assert sorted(_tracer_ids(info)) == [0, 1, 2, 3, 4, 5]

    res = apply_plan(plan, tmp_path / "t", traces=chain, params=None, warmup=parse_warmup("targeted"))
    assert res.warmup == [
        0,
        2,
        4,
    ]  # 3 reads p (from 0) and r (from 2); 5 reads t (from 4) and p, last touched by 3 (sampled: free)
    assert (tmp_path / "t" / "kernel_config.txt").read_text().count("Kernel") == 6

    res = apply_plan(plan, tmp_path / "cold", traces=chain, params=None)
    assert res.kernels == [1, 3, 5] and res.warmup == []
    assert "role" not in pd.read_csv(tmp_path / "cold" / "simsample-weights.csv").columns
    assert sorted(_tracer_ids((tmp_path / "cold" / SAMPLED_INFO).read_text())) == [1, 3, 5]


def test_tracer_file_alone_names_the_warmup_launches(tmp_path, chain, capsys):
    plan = _explicit_plan(tmp_path, chain, "3,6,0\n")
    res = apply_plan(plan, tmp_path / "out", traces=None, params=None, warmup=parse_warmup("2"))
    assert res.kernels == [] and res.warmup == [1, 2]
    assert sorted(_tracer_ids((tmp_path / "out" / SAMPLED_INFO).read_text())) == [1, 2, 3]
    w = pd.read_csv(tmp_path / "out" / "simsample-weights.csv")
    assert w[["kernel_id", "launch", "role"]].values.tolist() == [[1, 1, "warmup"], [2, 2, "warmup"], [3, 3, "sample"]]
    # targeted needs the traces' addresses: without them, the tracer is asked for every candidate
    res = apply_plan(plan, tmp_path / "t", traces=None, params=None, warmup=parse_warmup("targeted", horizon=2))
    assert res.warmup == [1, 2]
    assert "lists the 2 launches before each sample" in capsys.readouterr().err


def test_a_folder_traced_without_the_warmup_launches_is_refused(tmp_path, chain):
    plan = _explicit_plan(tmp_path, chain, "3,6,0\n")
    part = tmp_path / "part"
    part.mkdir()
    shutil.copytree(chain / "Kernel3", part / "Kernel3")
    shutil.copy(chain / "kernel_names.txt", part / "kernel_names.txt")
    (part / "kernel_config.txt").write_text("nvbit\n14\n-1\n./Kernel3/trace.txt\n")
    assert apply_plan(plan, tmp_path / "ok", traces=part, params=None).kernels == [3]
    for w in ("1", "targeted"):
        with pytest.raises(UserError) as e:
            apply_plan(plan, tmp_path / f"no{w}", traces=part, params=None, warmup=parse_warmup(w))
        assert "Kernel2" in str(e.value) and "not traced" in str(e.value) and "\n" not in str(e.value)
        assert not (tmp_path / f"no{w}").exists()


def test_cli_apply_with_warmup_and_a_bad_setting(tmp_path, chain, capsys):
    plan = _explicit_plan(tmp_path, chain, "3,6,0\n")
    plan.write(tmp_path / "p.json")
    assert (
        run(
            [
                "apply",
                "--sim",
                "macsim",
                "--plan",
                str(tmp_path / "p.json"),
                "--traces",
                str(chain),
                "--out",
                str(tmp_path / "o"),
                "--warmup",
                "2",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "3 kernel(s) to simulate (Kernel1, Kernel2, Kernel3), 2 of them warm-up only (K=2)" in out
    assert (
        run(
            [
                "apply",
                "--sim",
                "macsim",
                "--plan",
                str(tmp_path / "p.json"),
                "--out",
                str(tmp_path / "b"),
                "--warmup",
                "lots",
            ]
        )
        == 1
    )
    err = capsys.readouterr().err.strip()
    assert "--warmup 'lots'" in err and "\n" not in err and not (tmp_path / "b").exists()


# --- real MacSim runs with warm-up (tests/fixtures/macsim_warmup, see its README) -----------------


def _expected() -> dict:
    path = FIXTURES / "expected.json"
    if not path.exists():
        pytest.skip("tests/fixtures/macsim_warmup is not present")
    return json.loads(path.read_text())


def _runs():
    return (
        [pytest.param(r, id=r["id"]) for r in json.loads((FIXTURES / "expected.json").read_text())["runs"]]
        if (FIXTURES / "expected.json").exists()
        else []
    )


@pytest.mark.parametrize("r", _runs())
def test_estimates_of_the_real_runs_are_those_measured(r, capsys):
    exp = _expected()
    plan = Plan.read(FIXTURES / r["plan"])
    log = FIXTURES / r["log"]
    results, _ = collect([log], plan)
    # warm-up kernels ran (they are in the log) but never count: the results are the plan's kernels only
    from simsample_macsim.output import parse_log

    ran = [k.number for k in parse_log(log).kernels]
    assert ran == r["kernels"]
    assert set(r["warmup"]) <= set(ran) and not set(r["warmup"]) & set(results["kernel_id"])
    assert results["kernel_id"].tolist() == plan.sampled_ids
    cycles = {k.number: k.cycles for k in parse_log(log).kernels}
    assert results["cycles"].tolist() == [cycles[k] for k in plan.sampled_ids]
    est = next(e for e in estimate_results(plan, results, metrics=["cycles"]) if e.metric == "cycles")
    full = exp["full_cycles"][r["workload"]]
    assert est.estimate == pytest.approx(r["estimate"])
    assert 100 * (est.estimate / full - 1) == pytest.approx(r["error_percent"], abs=0.005)


def test_the_measured_story_holds():
    """The numbers the docs page gives, from the fixtures' own entries."""
    runs = {r["id"]: r for r in _expected()["runs"]}
    assert runs["vma-k0k2-none"]["error_percent"] == pytest.approx(13.39, abs=0.01)
    assert runs["vma-random0-none"]["error_percent"] == pytest.approx(20.57, abs=0.01)
    # targeted runs kernels 0 and 1 before kernel 2: the full run's own order, so the estimate is the plan's on the full
    # run
    assert runs["vma-random0-warm"]["log"] == "vma-full.out.gz" and "targeted" in runs["vma-random0-warm"]["settings"]
    # on layers, targeted's warm-up error (its estimate minus the plan's on the full run's cycles) is under 0.1%; cold
    # it is 100%
    warm = runs["layers-random1-targeted"]["error_percent"] - runs["layers-random1-plan-on-full"]["error_percent"]
    assert abs(warm) < 0.1
    assert runs["layers-random1-none"]["error_percent"] - runs["layers-random1-plan-on-full"]["error_percent"] > 100


@pytest.mark.parametrize("setting", ["none", "1", "2", "targeted"])
def test_apply_on_the_real_traces_writes_what_was_run(tmp_path, setting):
    """apply with each setting lists exactly the kernels of the fixture log made with it."""
    exp = _expected()
    traces = shared_path(*VMA)
    for r in exp["runs"]:
        if r["workload"] != "vectormultadd" or setting not in r["settings"]:
            continue
        plan = Plan.read(FIXTURES / r["plan"])
        out = tmp_path / f"{r['id']}-{setting}"
        res = apply_plan(
            plan,
            out,
            traces=traces,
            params=shared_path("simulators", "macsim", "bin", "params.in"),
            warmup=parse_warmup(setting),
        )
        assert res.kernels == r["kernels"] and res.warmup == r["warmup"]
        lines = (out / "kernel_config.txt").read_text().split("\n")[3:-1]
        assert lines == [f"./Kernel{n}/trace.txt" for n in r["kernels"]]
        w = pd.read_csv(out / "simsample-weights.csv")
        roles = dict(zip(w["kernel_id"], w["role"])) if "role" in w.columns else {k: "sample" for k in w["kernel_id"]}
        assert {k for k, v in roles.items() if v == "warmup"} == set(r["warmup"])
        assert sorted(_tracer_ids((out / SAMPLED_INFO).read_text())) == r["kernels"]


@pytest.fixture(scope="module")
def layers(tmp_path_factory):
    """The layers traces, rewritten by the benchmark's generator (about 50 MB, tens of seconds)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "layers", Path(__file__).parents[3] / "benchmarks" / "macsim_layers_workload.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    root = tmp_path_factory.mktemp("macsim-layers") / "layers"
    write_workload(root, mod.layers_kernels())
    return root


@pytest.mark.slow
@pytest.mark.parametrize("setting", ["none", "1", "targeted"])
def test_apply_on_the_layers_workload_writes_what_was_run(tmp_path, layers, setting):
    exp = _expected()
    for r in exp["runs"]:
        if r["workload"] == "layers" and setting in r["settings"]:
            res = apply_plan(
                Plan.read(FIXTURES / r["plan"]),
                tmp_path / r["id"],  # one folder per run: two layers runs share a setting
                traces=layers,
                params=None,
                warmup=parse_warmup(setting),
            )
            assert res.kernels == r["kernels"] and res.warmup == r["warmup"]
