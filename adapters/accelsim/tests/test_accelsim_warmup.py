"""Warm-up launches: which launches run before each sampled one, how apply writes them, and that
collect/estimate leave them out."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapters.accelsim.tests.test_accelsim_apply import make_plan
from simsample.cli import run as cli_run
from simsample.errors import UserError
from simsample.planfile import Plan
from simsample_accelsim import opcodes as oc
from simsample_accelsim import read_traces
from simsample_accelsim.apply import WEIGHTS_FILE, apply_plan
from simsample_accelsim.collect import collect_logs
from simsample_accelsim.kernelslist import KernelEntry, Memcpy, parse_kernelslist
from simsample_accelsim.scan_numpy import scan_footprint, scan_lines
from simsample_accelsim.synth import KernelSpec, write_kernel, write_workload
from simsample_accelsim.warmup import CostModel, Footprint, WarmupSpec, parse_warmup, preceding, targeted, warmup_steps
from tests.helpers import shared_path

FIXTURES = Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "accelsim_warmup"


# --- the choice ---------------------------------------------------------------------------------
def test_parse_warmup_accepts_k_none_targeted_and_refuses_the_rest():
    assert parse_warmup("2") == WarmupSpec(2)
    assert parse_warmup("none").none
    assert parse_warmup("targeted", 3, 0.5) == WarmupSpec(None, 3, 0.5)
    for bad in ("-1", "two", "1.5"):
        with pytest.raises(UserError):
            parse_warmup(bad)
    with pytest.raises(UserError, match="horizon"):
        parse_warmup("targeted", horizon=0)
    with pytest.raises(UserError, match="coverage"):
        parse_warmup("targeted", coverage=0.0)


@given(st.sets(st.integers(0, 60), min_size=1, max_size=15), st.integers(0, 8))
def test_preceding_is_the_k_launches_before_each_sample(samples, k):
    warm, short = preceding(sorted(samples), k)
    assert sorted(warm) == sorted(samples)
    for s, rows in warm.items():
        assert rows == list(range(max(0, s - k), s))
    assert short == sum(1 for s in samples if s < k)


def _fp(table):
    def footprint(row):
        reads, writes, cost = table.get(row, ((), (), 10))
        return np.array(sorted(reads), np.uint64), np.array(sorted(writes), np.uint64), cost

    return footprint


def test_targeted_picks_the_last_writer_within_the_horizon():
    # launch 5 reads lines 0..9: 4 wrote 0..4 (one back), 1 wrote 5..9 (four back); 3 and 2 touch nothing of it
    table = {5: (range(10), (), 10), 4: ((), range(5), 10), 1: ((), range(5, 10), 10), 3: ((), range(100, 110), 10)}
    assert targeted([5], {5: 1.0}, _fp(table), horizon=5, coverage=1.0, budget=None) == {5: [1, 4]}
    assert targeted([5], {5: 1.0}, _fp(table), horizon=3, coverage=1.0, budget=None) == {
        5: [4]
    }  # 1 is beyond the horizon
    assert targeted([5], {5: 1.0}, _fp(table), horizon=5, coverage=0.5, budget=None) == {
        5: [4]
    }  # half suffices; ties go to the nearest
    assert targeted([5], {5: 1.0}, _fp(table), horizon=5, coverage=1.0, budget=1.0) == {
        5: [4]
    }  # room for one launch of 10


def test_targeted_attributes_a_line_to_its_last_toucher_only():
    # 3 and 1 both wrote lines 0..9; the full run's cache holds them as 3 left them: 1 is not needed
    table = {4: (range(10), (), 10), 3: ((), range(10), 10), 1: ((), range(10), 10)}
    assert targeted([4], {4: 1.0}, _fp(table), horizon=5, coverage=1.0, budget=None) == {4: [3]}


def test_targeted_prefers_cheap_producers_and_launches_already_in_the_run():
    # 6 reads 0..9; 5 wrote 0..4 but costs 1000 instructions, 2 wrote 5..9 for 10; with coverage 0.5 the cheap one is
    # enough
    table = {6: (range(10), (), 10), 5: ((), range(5), 1000), 2: ((), range(5, 10), 10)}
    assert targeted([6], {6: 1.0}, _fp(table), coverage=0.5, budget=None) == {6: [2]}
    # when 5 is itself sampled it costs nothing: it covers the half and nothing is added
    assert targeted([5, 6], {5: 1.0, 6: 1.0}, _fp(table), coverage=0.5, budget=None) == {5: [], 6: []}


def test_targeted_shares_a_producer_between_samples():
    table = {3: (range(8), (), 10), 4: (range(8), (), 10), 1: ((), range(8), 10)}
    out = targeted([3, 4], {3: 2.0, 4: 1.0}, _fp(table), coverage=1.0, budget=None)
    # 3 reads 0..7, last written by 1; for 4 the last toucher of those lines is 3 (it read them), already in the run
    assert out == {3: [1], 4: []}


def test_targeted_budget_goes_to_the_producers_of_heavy_samples():
    # two samples with equal producers; the one standing for 10 launches gets the only launch the budget allows
    table = {3: (range(10), (), 10), 2: ((), range(10), 10), 6: (range(20, 30), (), 10), 5: ((), range(20, 30), 10)}
    assert targeted([3, 6], {3: 1.0, 6: 10.0}, _fp(table), coverage=1.0, budget=0.5) == {3: [], 6: [5]}
    assert targeted([3, 6], {3: 1.0, 6: 10.0}, _fp(table), coverage=1.0, budget=1.0) == {3: [2], 6: [5]}
    assert targeted([3, 6], {3: 1.0, 6: 10.0}, _fp(table), coverage=1.0, budget=0.0) == {3: [], 6: []}


def test_lines_many_warps_read_outweigh_lines_read_once():
    # sample 5 reads 10 lines of 4 once each and 4 lines of 3 that every CTA re-reads (50 accesses
    # each): with one producer affordable, the re-read lines' producer is the one worth running
    once, reread = np.arange(10, dtype=np.uint64), np.arange(100, 104, dtype=np.uint64)
    reads = np.concatenate([once, reread])
    counts = np.concatenate([np.ones(10, np.int64), np.full(4, 50, np.int64)])
    table = {
        5: Footprint(reads, np.zeros(0, np.uint64), 10, counts),
        4: Footprint(np.zeros(0, np.uint64), once, 10),
        3: Footprint(np.zeros(0, np.uint64), reread, 10),
    }
    fp = lambda row: table.get(row, Footprint(np.zeros(0, np.uint64), np.zeros(0, np.uint64), 10))  # noqa: E731
    assert targeted([5], {5: 1.0}, fp, coverage=0.5, budget=None, cost=float) == {5: [3]}
    # without the counts every line weighs the same, and the producer of more lines wins
    plain = lambda row: tuple(fp(row))[:3]  # noqa: E731
    assert targeted([5], {5: 1.0}, plain, coverage=0.5, budget=None, cost=float) == {5: [4]}


def test_budget_counts_predicted_cycles_so_small_producers_are_not_free():
    # one heavy sample (100k warp instructions) whose lines three small producers (1k each) wrote;
    # in instructions the three fit in a quarter of the sample, in cycles each pays the launch latency
    table = {
        4: (range(30), (), 100_000),
        3: ((), range(10), 1000),
        2: ((), range(10, 20), 1000),
        1: ((), range(20, 30), 1000),
    }
    assert targeted([4], {4: 1.0}, _fp(table), coverage=1.0, budget=0.25, cost=float) == {4: [1, 2, 3]}
    model = CostModel()  # 5,000-cycle latency, 80 SMs: the sample is 10,000 cycles, each producer 5,050
    assert model.cycles(100_000) == 10_000 and model.cycles(1000) == 5050
    assert targeted([4], {4: 1.0}, _fp(table), coverage=1.0, budget=0.25, cost=model.cycles) == {4: []}
    assert targeted([4], {4: 1.0}, _fp(table), coverage=1.0, budget=0.6, cost=model.cycles) == {4: [3]}
    # the default cost is the default model
    assert targeted([4], {4: 1.0}, _fp(table), coverage=1.0, budget=0.6) == {4: [3]}


CONFIG = """# functional simulator specification
-gpgpu_ptx_instruction_classification 0
-gpgpu_n_clusters 80
-gpgpu_n_cores_per_cluster 1
-gpgpu_kernel_launch_latency 5000    # in cycles
-gpgpu_TB_launch_latency 0
"""


def test_cost_model_reads_the_config_the_run_uses(tmp_path):
    (tmp_path / "gpgpusim.config").write_text(CONFIG)
    (tmp_path / "other.config").write_text("-gpgpu_n_clusters 28\n-gpgpu_n_cores_per_cluster 2 # two per cluster\n")
    (tmp_path / "bare.config").write_text("-gpgpu_shader_core_pipeline 2048:32\n")
    assert CostModel.from_configs([tmp_path / "gpgpusim.config"]) == CostModel(5000.0, 80)
    assert CostModel.from_configs([tmp_path / "gpgpusim.config", tmp_path / "other.config"]) == CostModel(
        5000.0, 56
    )  # later overrides
    assert CostModel.from_configs([tmp_path / "bare.config"]) == CostModel(0.0, 30)  # GPGPU-Sim's own defaults
    (tmp_path / "bad.config").write_text("-gpgpu_kernel_launch_latency lots\n")
    with pytest.raises(UserError, match="not an integer"):
        CostModel.from_configs([tmp_path / "bad.config"])
    with pytest.raises(UserError, match="cannot read"):
        CostModel.from_configs([tmp_path / "missing.config"])


def test_cli_warmup_config_sets_the_cost_model(tmp_path, capsys):
    d = _chain_folder(tmp_path)
    plan = make_plan(read_traces(d, quiet=True), [3])
    plan.write(tmp_path / "plan.json")
    base = ["apply", "--sim", "accelsim", "--plan", str(tmp_path / "plan.json"), "--traces", str(d)]
    rc = cli_run([*base, "--out", str(tmp_path / "o1"), "--warmup-config", str(tmp_path / "missing.config")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 1 and len(err) == 1 and "missing.config" in err[0]
    (tmp_path / "gpgpusim.config").write_text(CONFIG.replace("5000", "123"))
    rc = cli_run(
        [
            *base,
            "--out",
            str(tmp_path / "o2"),
            "--warmup-budget",
            "1",
            "--warmup-config",
            str(tmp_path / "gpgpusim.config"),
        ]
    )
    assert rc == 0 and "1 detailed warm-up launches (targeted(h=5,c=0.8,b=1,lat=123,sms=80))" in capsys.readouterr().out


def test_warmup_steps_keep_real_order_with_every_preceding_memcpy():
    cmds = [
        Memcpy(1, "MemcpyHtoD,0x10,4", 16, 4),
        KernelEntry(2, "kernel-1.traceg"),
        KernelEntry(3, "kernel-2.traceg"),
        Memcpy(4, "MemcpyHtoD,0x20,4", 32, 4),
        KernelEntry(5, "kernel-3.traceg"),
        KernelEntry(6, "kernel-4.traceg"),
    ]
    steps = warmup_steps(cmds, [3], {3: [1, 2]})
    assert steps == {3: [cmds[0], 1, cmds[3], 2]}
    assert warmup_steps(cmds, [0], {0: []}) == {0: [cmds[0]]}  # no warm-up launch, but the copy before it


# --- the footprint scanner ---------------------------------------------------------------------
def _reference_lines(path: Path, counts: dict[int, int] | None = None) -> tuple[set[int], set[int]]:
    """Global load/store lines of a trace, decoded line by line (independent of the numpy scanner);
    ``counts`` receives, for each read line, how many load instructions touch it."""
    reads: set[int] = set()
    writes: set[int] = set()
    for line in path.read_text().splitlines():
        t = line.split()
        if not t or t[0].startswith(("#", "-", "warp", "insts", "thread")) or len(t) < 4:
            continue
        ndst = int(t[2])
        op = t[3 + ndst]
        cls = oc.classify(op).mem_class
        if cls not in (oc.GLOBAL_LD, oc.GLOBAL_ST):
            continue
        nsrc = int(t[4 + ndst])
        k = 5 + ndst + nsrc
        width, mode = int(t[k]), int(t[k + 1])
        lanes = bin(int(t[1], 16)).count("1")
        if mode == 0:
            addrs = [int(x, 16) for x in t[k + 2 : k + 2 + lanes]]
        elif mode == 1:
            base, stride = int(t[k + 2], 16), int(t[k + 3])
            addrs = [base + i * stride for i in range(lanes)]
        else:
            addrs = [int(t[k + 2], 16)]
            for d in t[k + 3 : k + 2 + lanes]:
                addrs.append(addrs[-1] + int(d))
        target = reads if cls == oc.GLOBAL_LD else writes
        mine: set[int] = set()
        for a in addrs:
            mine.update(range(a >> 7, ((a + width - 1) >> 7) + 1))
        target.update(mine)
        if counts is not None and cls == oc.GLOBAL_LD:
            for line in mine:
                counts[line] = counts.get(line, 0) + 1
    return reads, writes


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    pattern=st.sampled_from(["coalesced", "strided", "broadcast", "random"]),
    mode=st.sampled_from([None, 0, 2]),
    stride=st.integers(-64, 300),
    body=st.sampled_from([("LDG.E", "FFMA", "STG.E"), ("LDG.E.128", "STG.E.64"), ("LDG.E.64", "LDS", "STS")]),
    divergence=st.sampled_from([0.0, 0.5]),
)
def test_scan_lines_equals_a_line_by_line_decoding(tmp_path, pattern, mode, stride, body, divergence):
    spec = KernelSpec(
        grid=(3, 1, 1),
        block=(64, 1, 1),
        body=body,
        iters=2,
        pattern=pattern,
        stride=stride or 4,
        address_mode=mode,
        divergence=divergence,
    )
    path = tmp_path / f"k-{pattern}-{mode}-{stride}-{len(body)}-{divergence}.traceg"
    man = write_kernel(path, spec, 1, seed=stride & 7)
    reads, writes, insts = scan_lines(path)
    want_counts: dict[int, int] = {}
    want_r, want_w = _reference_lines(path, want_counts)
    assert set(reads.tolist()) == want_r
    assert set(writes.tolist()) == want_w
    assert insts == man.warp_insts
    fp = scan_footprint(path)
    assert np.array_equal(fp.reads, reads) and np.array_equal(fp.writes, writes) and fp.warp_insts == insts
    assert dict(zip(fp.reads.tolist(), fp.read_counts.tolist())) == want_counts


# --- apply ------------------------------------------------------------------------------------
def _chain_folder(tmp_path: Path) -> Path:
    """Six launches: 1 writes buffer A, 2 and 3 touch other buffers, 4 reads A (consumer of 1), 5 and 6 unrelated."""
    a, b, c = 0x7F0000000000, 0x7F1000000000, 0x7F2000000000

    def k(base, body):
        return KernelSpec(grid=(2, 1, 1), block=(64, 1, 1), body=body, iters=1, base_address=base)

    specs = [
        k(a, ("FFMA", "STG.E")),
        k(b, ("LDG.E", "STG.E")),
        k(c, ("LDG.E", "STG.E")),
        k(a, ("LDG.E", "FFMA")),
        k(b, ("LDG.E", "STG.E")),
        k(c, ("LDG.E", "FFMA")),
    ]
    d = tmp_path / "chain"
    write_workload(d, specs, memcpys=[(0, 0x7E0000000000, 256), (3, 0x7E0000001000, 128)])
    return d


def test_apply_k_keeps_predecessors_once_in_order_with_weight_zero(tmp_path):
    d = _chain_folder(tmp_path)
    wl = read_traces(d, quiet=True)
    plan = make_plan(wl, [3, 4], weights=[3.0, 3.0])
    res = apply_plan(plan, d, tmp_path / "out", warmup=WarmupSpec(2))
    assert res.warmup == [1, 2]  # 3's predecessors 1, 2; 4's are 2 (shared, once) and 3 (sampled)
    lst = parse_kernelslist(tmp_path / "out" / "kernelslist.g")
    assert [c.text for c in lst.commands] == [
        "MemcpyHtoD,0x00007e0000000000,256",
        "kernel-2.traceg",
        "kernel-3.traceg",
        "MemcpyHtoD,0x00007e0000001000,128",
        "kernel-4.traceg",
        "kernel-5.traceg",
    ]
    w = pd.read_csv(tmp_path / "out" / WEIGHTS_FILE)
    assert w["kernel_id"].tolist() == [2, 3, 4, 5]
    assert w["role"].tolist() == ["warmup", "warmup", "sample", "sample"]
    assert w["weight"].tolist() == [0, 0, 3, 3]
    assert w.loc[w["role"] == "warmup", "cluster"].tolist() == [-1, -1]
    assert w["trace"].tolist() == ["kernel-2.traceg", "kernel-3.traceg", "kernel-4.traceg", "kernel-5.traceg"]
    assert (tmp_path / "out" / "kernel-2.traceg").exists()


def test_apply_without_warmup_has_no_role_column(tmp_path):
    d = _chain_folder(tmp_path)
    plan = make_plan(read_traces(d, quiet=True), [3])
    res = apply_plan(plan, d, tmp_path / "out", warmup=WarmupSpec(0))
    assert res.warmup == []
    assert "role" not in pd.read_csv(tmp_path / "out" / WEIGHTS_FILE).columns


def test_apply_targeted_runs_the_producer_not_the_launches_between(tmp_path):
    d = _chain_folder(tmp_path)
    plan = make_plan(read_traces(d, quiet=True), [3])
    res = apply_plan(plan, d, tmp_path / "out", warmup=WarmupSpec(None, horizon=5, coverage=0.8, budget=None))
    assert res.warmup == [0]  # launch 4 (row 3) reads buffer A, written by launch 1 (row 0) only
    # the producer costs about as much as the sample: a budget of 0.3 x the sample leaves it out
    res = apply_plan(plan, d, tmp_path / "out2", warmup=WarmupSpec(None, horizon=5, coverage=0.8, budget=0.3))
    assert res.warmup == []


def test_cli_bad_budget_is_one_line_error(tmp_path, capsys):
    d = _chain_folder(tmp_path)
    plan = make_plan(read_traces(d, quiet=True), [3])
    plan.write(tmp_path / "plan.json")
    for bad in ("lots", "-0.5"):
        rc = cli_run(
            [
                "apply",
                "--sim",
                "accelsim",
                "--plan",
                str(tmp_path / "plan.json"),
                "--traces",
                str(d),
                "--out",
                str(tmp_path / "o"),
                "--warmup-budget",
                bad,
            ]
        )
        err = capsys.readouterr().err.strip().splitlines()
        assert rc == 1 and len(err) == 1 and "--warmup-budget" in err[0]


def test_functional_mode_writes_warmup_lines_an_unpatched_simulator_ignores(tmp_path):
    d = _chain_folder(tmp_path)
    plan = make_plan(read_traces(d, quiet=True), [3])
    apply_plan(plan, d, tmp_path / "out", warmup=WarmupSpec(2), functional=True)
    text = (tmp_path / "out" / "kernelslist.g").read_text().splitlines()
    assert text == [
        "MemcpyHtoD,0x00007e0000000000,256",
        "warmup kernel-2.traceg",
        "warmup kernel-3.traceg",
        "MemcpyHtoD,0x00007e0000001000,128",
        "kernel-4.traceg",
    ]
    lst = parse_kernelslist(tmp_path / "out" / "kernelslist.g")  # read as the unpatched simulator reads it
    assert [k.text for k in lst.kernels] == ["kernel-4.traceg"]
    assert [n for n, _ in lst.ignored] == [2, 3]
    assert (tmp_path / "out" / "kernel-3.traceg").exists()  # the patched simulator reads it


def test_cli_negative_warmup_is_one_line_error(tmp_path, capsys):
    d = _chain_folder(tmp_path)
    plan = make_plan(read_traces(d, quiet=True), [3])
    plan.write(tmp_path / "plan.json")
    rc = cli_run(
        [
            "apply",
            "--sim",
            "accelsim",
            "--plan",
            str(tmp_path / "plan.json"),
            "--traces",
            str(d),
            "--out",
            str(tmp_path / "o"),
            "--warmup",
            "-1",
        ]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 1 and len(err) == 1 and "K must be >= 0" in err[0]
    assert not (tmp_path / "o").exists()


def test_cli_k_larger_than_the_launches_before_says_so_once(tmp_path, capsys):
    d = _chain_folder(tmp_path)
    plan = make_plan(read_traces(d, quiet=True), [0, 1])
    plan.write(tmp_path / "plan.json")
    rc = cli_run(
        [
            "apply",
            "--sim",
            "accelsim",
            "--plan",
            str(tmp_path / "plan.json"),
            "--traces",
            str(d),
            "--out",
            str(tmp_path / "o"),
            "--warmup",
            "3",
        ]
    )
    err = capsys.readouterr().err
    assert rc == 0
    assert err.count("fewer than 3 launches") == 1 and "2 sampled launch(es)" in err


# --- collect / estimate on a real sampled run with warm-up --------------------------------------
@pytest.fixture(scope="module")
def warm_run(tmp_path_factory):
    if not (FIXTURES / "sampled-warm.out.gz").exists():
        pytest.skip("fixture missing")
    return (
        FIXTURES / "plan-root.json",
        FIXTURES / "sampled-warm.out.gz",
        json.loads((FIXTURES / "expected.json").read_text()),
    )


def test_collect_leaves_warmup_launches_out(warm_run, capsys):
    plan_path, log, expected = warm_run
    plan = Plan.read(plan_path)
    everything = collect_logs([log])
    assert len(everything) == expected["launches_in_log"]
    df = collect_logs([log], plan)
    assert df["kernel_id"].tolist() == sorted(set(plan.sampled_ids))
    assert "warm-up launches" in capsys.readouterr().err
    warm_ids = set(everything["kernel_id"]) - set(plan.sampled_ids)
    assert warm_ids == set(expected["warmup_ids"])


def test_estimate_on_a_warm_run_uses_sampled_launches_only(warm_run, capsys):
    plan_path, log, expected = warm_run
    rc = cli_run(["estimate", "--sim", "accelsim", "--plan", str(plan_path), str(log), "--json"])
    out = capsys.readouterr().out
    assert rc == 0
    cycles = next(e for e in json.loads(out)["estimates"] if e["metric"] == "cycles")
    plan = Plan.read(plan_path)
    df = collect_logs([log], plan)
    w = plan.weights_by_id().set_index("kernel_id")["weight"]
    assert cycles["estimate"] == pytest.approx(float((df.set_index("kernel_id")["cycles"] * w).sum()), rel=1e-9)
    assert abs(cycles["estimate"] / expected["full_cycles"] - 1) < 0.05


def test_targeted_finds_the_producers_the_simulator_showed_on_hetero():
    """Kernel 13 runs as in the full run only after kernels 8 and 12 (its 768 lines: 384 written by
    12, 384 last touched by 8); kernel 10 only needs kernel 9 (measured on Accel-Sim, SM7_QV100)."""
    d = shared_path("simulators", "accelsim", "hetero")
    fp = lambda row: scan_lines(d / f"kernel-{row + 1}.traceg.xz")  # noqa: E731 - rows are 0-based
    reads13 = fp(12)[0]
    assert len(reads13) == 768
    assert targeted([12], {12: 1.0}, fp, coverage=1.0, budget=None) == {12: [7, 11]}
    assert targeted([9], {9: 1.0}, fp, coverage=1.0, budget=None) == {9: [8]}


def test_functional_warmup_run_has_only_the_sampled_launches(warm_run, capsys):
    plan_path, _, expected = warm_run
    log = FIXTURES / "sampled-functional.out.gz"
    plan = Plan.read(plan_path)
    text = gzip.open(log, "rt").read()
    assert text.count("GPGPU-Sim functional warm-up:") == 2  # the patched simulator played both warm-up traces
    everything = collect_logs([log])
    assert everything["kernel_id"].tolist() == sorted(set(plan.sampled_ids))  # warm-up launches are not timed launches
    rc = cli_run(["estimate", "--sim", "accelsim", "--plan", str(plan_path), str(log), "--json"])
    cycles = next(e for e in json.loads(capsys.readouterr().out)["estimates"] if e["metric"] == "cycles")
    assert rc == 0
    # functional warming of the producers removes the cold-L2 bias of the detailed run without warm-up (+3.25%)
    assert abs(cycles["estimate"] / expected["full_cycles"] - 1) < 0.01


def test_warmup_of_a_profile_plan_is_numbered_in_the_plan_s_own_ids(tmp_path):
    """A profile numbers launches from 0, the traces from 1: the launch before profile launch 3 is
    trace kernel 3. Its warm-up row takes the profile's numbering (id 2, position 2), so it can
    never collide with a sampled id (it used to be refused as 'kernel id 3, which the plan gives to
    a sampled launch')."""
    from adapters.accelsim.tests.test_accelsim_apply import synth_folder
    from simsample.workload import from_records

    d = synth_folder(tmp_path)
    k = read_traces(d).kernels
    prof = from_records(
        {
            "name": ["axpy(float*)", "relu(float*)", "axpy(float*)", "gemm(float*)", "relu(float*)"],
            "grid_x": k["grid_x"].to_numpy(),
            "block_x": k["block_x"].to_numpy(),
            "duration_ns": [5, 6, 5, 9, 6],
        },
        source="profile.sqlite",
        format="nsys",
    )
    plan = make_plan(prof, [3, 4])  # profile ids 3, 4; the traces number the launch before them 3
    res = apply_plan(plan, d, tmp_path / "out", warmup=WarmupSpec(1))
    assert res.warmup == [2]
    w = pd.read_csv(tmp_path / "out" / "simsample-weights.csv")
    assert w[["kernel_id", "launch", "role", "trace"]].values.tolist() == [
        [2, 2, "warmup", "kernel-3.traceg"],
        [3, 3, "sample", "kernel-4.traceg"],
        [4, 4, "sample", "kernel-5.traceg"],
    ]
    assert [ln for ln in (tmp_path / "out" / "kernelslist.g").read_text().splitlines() if ln.startswith("kernel")] == [
        "kernel-3.traceg",
        "kernel-4.traceg",
        "kernel-5.traceg",
    ]


def test_split_warmup_of_a_profile_plan_is_numbered_in_the_plan_s_own_ids(tmp_path):
    """The same 0/1-based collision in one job per sample (apply --split)."""
    from adapters.accelsim.tests.test_accelsim_apply import synth_folder
    from simsample.workload import from_records
    from simsample_accelsim.split import split_plan

    d = synth_folder(tmp_path)
    k = read_traces(d).kernels
    prof = from_records(
        {
            "name": ["axpy(float*)", "relu(float*)", "axpy(float*)", "gemm(float*)", "relu(float*)"],
            "grid_x": k["grid_x"].to_numpy(),
            "block_x": k["block_x"].to_numpy(),
            "duration_ns": [5, 6, 5, 9, 6],
        },
        source="profile.sqlite",
        format="nsys",
    )
    res = split_plan(make_plan(prof, [3, 4]), d, tmp_path / "out", warmup=WarmupSpec(1))
    assert [(j.kernel_id, j.warmup) for j in res.jobs] == [
        (3, (2,)),
        (4, (3,)),
    ]  # profile ids; in its own job, sample 3 warms sample 4
