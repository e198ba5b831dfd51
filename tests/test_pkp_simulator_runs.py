"""PKP against real Accel-Sim runs of long kernels (fixtures in tests/fixtures/accelsim_pkp).

The simulator's own stdout of a full run and of a PKP run (the project's patch, default
settings, with the kernels' instruction counts from ``simsample pkp totals``) of the same
workload: the projection must be within 3%, kernels of 20 waves and more whose CTAs are not
trivially short must save at least half of their simulated cycles and wall time, and the
offline replay of the full run must stop where the simulator stopped and print the same
projection.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from simsample.pkp.replay import ReplayParams, replay_run
from simsample.pkp.visualizer import read_accelsim_stdout

FIX = Path(__file__).parent / "fixtures" / "accelsim_pkp"


def kernel(name: str):
    (k,) = read_accelsim_stdout(FIX / f"{name}.out.gz").kernels
    return k


def wall_seconds(name: str) -> int:
    from simsample_accelsim.collect import parse_log

    (run,) = parse_log(FIX / f"{name}.out.gz").runs
    return int(run.stats["sim_seconds"])


@pytest.mark.parametrize(("name", "ctas"), [("long20", 1600), ("long20x16", 1600), ("long30", 2400), ("long75", 6000)])
def test_long_kernels_are_long(name, ctas):
    full = kernel(f"{name}_full")
    assert full.total_ctas == ctas and full.ctas_per_sm_printed == 1
    assert full.total_ctas / (1 * 80) >= 20  # waves on the 80 SMs of SM7_QV100


@pytest.mark.parametrize("name", ["long20", "long20x16", "long30", "long75"])
def test_default_pkp_projects_within_3_percent(name):
    full, pkp = kernel(f"{name}_full"), kernel(f"{name}_pkp")
    assert pkp.pkp["pkp_projected_insn"] == full.insns  # the instruction count given ahead
    projected = pkp.pkp["pkp_projected_cycle"]
    assert abs(projected - full.cycles) / full.cycles <= 0.03
    # pkp.cycles is what the PKP run simulated: up to the stop plus the drain.
    assert pkp.cycles > pkp.pkp["pkp_stop_cycle"]


@pytest.mark.parametrize("name", ["long20x16", "long30", "long75"])
def test_default_pkp_saves_half_of_long_kernels(name):
    full, pkp = kernel(f"{name}_full"), kernel(f"{name}_pkp")
    assert 1 - pkp.cycles / full.cycles >= 0.5
    # wall time against a full run without the visualizer log (which slows a run down)
    assert 1 - wall_seconds(f"{name}_pkp") / wall_seconds(f"{name}_full_nolog") >= 0.5


def test_twenty_short_waves_save_less_than_half():
    """1,600 CTAs of about 680 cycles a wave: the 5,000-cycle launch latency is over a quarter
    of the kernel, and the stop comes after the same 5,500 cycles as on longer grids."""
    full, pkp = kernel("long20_full"), kernel("long20_pkp")
    assert 0.35 < 1 - pkp.cycles / full.cycles < 0.5


def test_paper_formula_stops_late_on_the_same_kernel():
    """-pkp_launch_latency 0: the 5,000-cycle launch latency keeps the cumulative IPC drifting,
    so the window becomes stable only near the end and little is saved."""
    full, apart, paper = kernel("long75_full"), kernel("long75_pkp"), kernel("long75_pkp_paper")
    assert paper.pkp["pkp_stop_cycle"] > 3 * apart.pkp["pkp_stop_cycle"]
    assert 1 - paper.cycles / full.cycles < 0.5


@pytest.mark.parametrize("name", ["long20", "long20x16", "long30", "long75"])
@pytest.mark.parametrize("impl", ["native", "python"])
def test_replay_equals_the_simulator(name, impl, monkeypatch):
    if impl == "python":
        monkeypatch.setenv("SIMSAMPLE_PURE_PYTHON", "1")
    from simsample.pkp import monitor as twin

    cls = twin.Monitor if impl == "python" else None
    (r,) = replay_run(FIX / f"{name}_full_visualizer.log.gz", FIX / f"{name}_full.out.gz", ReplayParams(), monitor_cls=cls)
    sim = kernel(f"{name}_pkp").pkp
    assert r.launch_latency == 5000 and r.stopped
    assert (r.stop_cycle, r.stop_ctas, r.stop_insns) == (sim["pkp_stop_cycle"], sim["pkp_stop_completed_cta"], sim["pkp_stop_insn"])
    assert round(r.projected_cycles) == sim["pkp_projected_cycle"]
    assert round(r.projected_insns) == sim["pkp_projected_insn"]
    # The drain is not in the full run's log: the replay ends it where as many CTAs as were
    # issued at the stop have completed in the full run, at the log's 500-cycle resolution. A
    # straggler among the resident CTAs runs longer than that (long20x16: 21,000 against the
    # simulator's 22,440, 2% of the kernel); short CTAs are within one sample.
    sim_cycles = kernel(f"{name}_pkp").cycles
    assert abs(r.drain_end - sim_cycles) <= 0.025 * kernel(f"{name}_full").cycles
    if name != "long20x16":
        assert sim_cycles <= r.drain_end < sim_cycles + 500


@pytest.mark.slow
@pytest.mark.parametrize(
    ("waves", "iters", "sha256"),
    [
        (20, 2, "f6962d1720b33feb8d962363c8cfe17f50cf723c9527ae298af6462e837e35ef"),
        (20, 16, "e59faabe97c75a55d983eb438ec4562304133d5939d02147cbf9a5f898e18114"),
        (30, 2, "f566f135f01b13d8cf883eec9155a78f4f751f8a1e2b4a221d776322cce7e3ac"),
        (75, 2, "0a467483a1742fad0ea8d1116ee973d229bed1533b1af578266872b9f933a424"),
    ],
)
def test_generator_reproduces_the_traces(tmp_path, waves, iters, sha256):
    """The committed outputs come from these exact traces (see the fixtures' README)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("pkp_in_simulator", Path(__file__).parents[1] / "benchmarks" / "pkp_in_simulator.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.write_long_kernel(tmp_path, waves, iters=iters)
    assert hashlib.sha256((tmp_path / "kernel-1.traceg").read_bytes()).hexdigest() == sha256


def test_hetero_defaults_stop_no_kernel_and_why_half_the_grid():
    """The whole hetero workload (56 kernels of at most 5.5 waves; the full run's log, the shared
    full.out.gz as its stdout): the defaults stop nothing. With a quarter of the grid left as the
    rule, the two sgemm launches would stop at 11,500 cycles and be projected over 5% low."""
    from tests.helpers import shared_path

    out = shared_path("simulators", "accelsim", "hetero", "full.out.gz")
    log = FIX / "hetero_full_visualizer.log.gz"
    res = replay_run(log, out, ReplayParams())
    assert len(res) == 56 and not any(r.stopped for r in res)
    assert sum(r.estimated_cycles for r in res) == 451827
    quarter = [r for r in replay_run(log, out, ReplayParams(min_remaining=0.25)) if r.stopped]
    assert [(r.kernel_id, r.stop_cycle) for r in quarter] == [(10, 11500), (38, 11500)]
    assert all(-6.0 < r.cycles_error_pct < -5.0 for r in quarter)
