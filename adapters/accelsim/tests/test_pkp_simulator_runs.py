"""PKP against real Accel-Sim runs of long kernels (fixtures in tests/fixtures/accelsim_pkp).

The simulator's own stdout of a full run and of a PKP run (the project's patch, default
settings, with the kernels' instruction counts from ``simsample pkp totals``) of the same
workload: the projection must be within 3%, kernels of 20 waves and more whose CTAs are not
trivially short must save at least half of their simulated cycles and wall time, and the
offline replay of the full run must stop where the simulator stopped and print the same
projection at the stop; given the drain the PKP run measured, the same final projection.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from simsample_accelsim.pkp.replay import ReplayParams, measured_drains, replay_run
from simsample_accelsim.pkp.visualizer import read_accelsim_stdout

FIX = Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "accelsim_pkp"
#: name -> (CTAs, CTAs resident per SM): 20 waves and more on the 80 SMs of SM7_QV100
KERNELS = {
    "long20": (1600, 1), "long20x16": (1600, 1), "long30": (2400, 1), "long75": (6000, 1),
    "varied20": (3200, 2), "strided20": (6400, 4),
}  # fmt: skip
#: the kernels the defaults stop (strided20's IPC keeps drifting: it runs to completion)
STOPPED = [k for k in KERNELS if k != "strided20"]


def kernel(name: str):
    (k,) = read_accelsim_stdout(FIX / f"{name}.out.gz").kernels
    return k


def wall_seconds(name: str) -> int:
    from simsample_accelsim.collect import parse_log

    (run,) = parse_log(FIX / f"{name}.out.gz").runs
    return int(run.stats["sim_seconds"])


@pytest.mark.parametrize("name", KERNELS)
def test_long_kernels_are_long(name):
    ctas, per_sm = KERNELS[name]
    full = kernel(f"{name}_full")
    assert full.total_ctas == ctas
    assert full.ctas_per_sm_printed in (None, per_sm)  # printed when it changes
    assert full.total_ctas / (per_sm * 80) >= 20


@pytest.mark.parametrize("name", STOPPED)
def test_default_pkp_projects_within_3_percent(name):
    full, pkp = kernel(f"{name}_full"), kernel(f"{name}_pkp")
    assert pkp.pkp["pkp_projected_insn"] == full.insns  # the instruction count given ahead
    projected = pkp.pkp["pkp_projected_cycle"]
    assert abs(projected - full.cycles) / full.cycles <= 0.03
    # pkp.cycles is what the PKP run simulated: up to the stop plus the drain.
    assert pkp.cycles > pkp.pkp["pkp_stop_cycle"]


@pytest.mark.parametrize("name", STOPPED)
def test_the_drain_as_tail_corrects_the_stops_projection(name):
    """At the stop, every projection is low: the kernel's last CTAs run alone at the end, a
    tail no sample before the stop sees. Counting the drain as that tail moves each one up,
    closer to the full run (long75's remaining -2% is a rate that drifts down over the run)."""
    full, pkp = kernel(f"{name}_full"), kernel(f"{name}_pkp")
    at_stop, final = pkp.pkp["pkp_stop_projected_cycle"], pkp.pkp["pkp_projected_cycle"]
    assert at_stop < full.cycles and final > at_stop
    assert abs(final - full.cycles) < abs(at_stop - full.cycles)


@pytest.mark.parametrize("name", ["long20x16", "long30", "long75", "varied20"])
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
    assert 1 - wall_seconds("long20_pkp") / wall_seconds("long20_full_nolog") >= 0.5


def test_paper_formula_stops_late_on_the_same_kernel():
    """-pkp_launch_latency 0: the 5,000-cycle launch latency keeps the cumulative IPC drifting,
    so the window becomes stable only near the end and little is saved."""
    full, apart, paper = kernel("long75_full"), kernel("long75_pkp"), kernel("long75_pkp_paper")
    assert paper.pkp["pkp_stop_cycle"] > 3 * apart.pkp["pkp_stop_cycle"]
    assert 1 - paper.cycles / full.cycles < 0.5


def test_a_drifting_kernel_runs_to_completion():
    """strided20: uncoalesced loads and stores; its IPC holds near 200 for a few thousand
    cycles, then falls to about 70 as the L2 fills with dirty lines (by 50,000 of its 231,274
    cycles). The window alone (-pkp_settle 0) stops it at 13,000 cycles and projects less than
    half of its cycles; with the default settle the cumulative IPC of the last half of the run
    never holds, so nothing is stopped and the run is exact."""
    full, pkp, window_only = kernel("strided20_full"), kernel("strided20_pkp"), kernel("strided20_pkp_settle0")
    assert not pkp.pkp and (pkp.cycles, pkp.insns) == (full.cycles, full.insns)
    assert window_only.pkp["pkp_stop_cycle"] == 13000
    assert window_only.pkp["pkp_projected_cycle"] < 0.5 * full.cycles
    log, out = FIX / "strided20_full_visualizer.log.gz", FIX / "strided20_full.out.gz"
    (r,) = replay_run(log, out, ReplayParams())
    assert not r.stopped and r.estimated_cycles == full.cycles
    (w,) = replay_run(log, out, ReplayParams(settle=0.0))
    assert (w.stop_cycle, round(w.stop_projected_cycles)) == (13000, window_only.pkp["pkp_stop_projected_cycle"])


@pytest.mark.parametrize("name", STOPPED)
@pytest.mark.parametrize("impl", ["native", "python"])
def test_replay_equals_the_simulator(name, impl, monkeypatch):
    if impl == "python":
        monkeypatch.setenv("SIMSAMPLE_PURE_PYTHON", "1")
    from simsample.pkp import monitor as twin

    cls = twin.Monitor if impl == "python" else None
    log, full = FIX / f"{name}_full_visualizer.log.gz", FIX / f"{name}_full.out.gz"
    (r,) = replay_run(log, full, ReplayParams(), monitor_cls=cls)
    pkp = kernel(f"{name}_pkp")
    sim = pkp.pkp
    assert r.launch_latency == 5000 and r.stopped
    assert (r.stop_cycle, r.stop_ctas, r.stop_insns) == (
        sim["pkp_stop_cycle"],
        sim["pkp_stop_completed_cta"],
        sim["pkp_stop_insn"],
    )
    assert round(r.stop_projected_cycles) == sim["pkp_stop_projected_cycle"]
    assert round(r.stop_projected_insns) == sim["pkp_stop_projected_insn"]
    # With the drain the PKP run measured, the final projection is the simulator's as well.
    (c,) = replay_run(log, full, ReplayParams(), monitor_cls=cls, drains=measured_drains(FIX / f"{name}_pkp.out.gz"))
    assert c.drain_end == pkp.cycles and c.stop_projected_cycles == r.stop_projected_cycles
    assert round(c.projected_cycles) == sim["pkp_projected_cycle"]
    assert round(c.projected_insns) == sim["pkp_projected_insn"]
    # Without it the drain is estimated from the full run (where as many CTAs as were issued at
    # the stop have completed there, at the log's 500-cycle resolution). In the full run the
    # freed slots take new CTAs, and short new ones finish before long resident ones: the
    # estimate ends early when CTAs differ in length or a resident one straggles.
    assert sim["pkp_issued_cta"] == min(r.total_ctas, r.stop_ctas + r.wave_size)
    assert r.drain_end <= pkp.cycles + 500
    assert abs(r.projected_cycles - sim["pkp_projected_cycle"]) <= 0.025 * kernel(f"{name}_full").cycles


@pytest.mark.slow
@pytest.mark.parametrize(
    ("waves", "iters", "shape", "sha256"),
    [
        (20, 2, "uniform", "f6962d1720b33feb8d962363c8cfe17f50cf723c9527ae298af6462e837e35ef"),
        (20, 16, "uniform", "e59faabe97c75a55d983eb438ec4562304133d5939d02147cbf9a5f898e18114"),
        (30, 2, "uniform", "f566f135f01b13d8cf883eec9155a78f4f751f8a1e2b4a221d776322cce7e3ac"),
        (75, 2, "uniform", "0a467483a1742fad0ea8d1116ee973d229bed1533b1af578266872b9f933a424"),
        (20, 2, "varied", "1b430dc013c142e357e04b1136f24b914fc1f8340d3c622cc5c65963f287e58d"),
        (20, 2, "strided", "cd7d254c77d7d832906cffc3f9590b9f21b97cd3fd9255561dc1c965bcf83f8c"),
    ],
)
def test_generator_reproduces_the_traces(tmp_path, waves, iters, shape, sha256):
    """The committed outputs come from these exact traces (see the fixtures' README)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "pkp_in_simulator", Path(__file__).parents[3] / "benchmarks" / "pkp_in_simulator.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.write_long_kernel(tmp_path, waves, iters=iters, shape=shape)
    assert hashlib.sha256((tmp_path / "kernel-1.traceg").read_bytes()).hexdigest() == sha256


def test_hetero_defaults_stop_no_kernel_and_why_half_the_grid():
    """The whole hetero workload (56 kernels of at most 5.5 waves; the full run's log, the shared
    full.out.gz as its stdout): the defaults stop nothing. With a quarter of the grid left as the
    rule (and the window alone, projected at the stop), the two sgemm launches would stop at
    11,500 cycles and be projected over 5% low."""
    from tests.helpers import shared_path

    out = shared_path("simulators", "accelsim", "hetero", "full.out.gz")
    log = FIX / "hetero_full_visualizer.log.gz"
    res = replay_run(log, out, ReplayParams())
    assert len(res) == 56 and not any(r.stopped for r in res)
    assert sum(r.estimated_cycles for r in res) == 451827
    quarter = [
        r for r in replay_run(log, out, ReplayParams(min_remaining=0.25, settle=0.0, drain_tail=False)) if r.stopped
    ]
    assert [(r.kernel_id, r.stop_cycle) for r in quarter] == [(10, 11500), (38, 11500)]
    assert all(-6.0 < r.cycles_error_pct < -5.0 for r in quarter)
