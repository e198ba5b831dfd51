"""PKP against real Accel-Sim runs of long kernels (fixtures in tests/fixtures/accelsim_pkp).

The simulator's own stdout of a full run and of a PKP run (the project's patch, default
settings) of the same workload: the projection must be within 3% and save at least half of
the kernel's simulated cycles and wall time, and the offline replay of the full run must stop
where the simulator stopped and print the same projection.
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


@pytest.mark.parametrize(("waves", "ctas"), [(30, 2400), (75, 6000)])
def test_long_kernels_are_long(waves, ctas):
    full = kernel(f"long{waves}_full")
    assert full.total_ctas == ctas and full.ctas_per_sm_printed == 1
    assert full.total_ctas / (1 * 80) >= 20  # waves on the 80 SMs of SM7_QV100


def test_default_pkp_on_75_waves_saves_half_within_3_percent():
    full, pkp = kernel("long75_full"), kernel("long75_pkp")
    projected = pkp.pkp["pkp_projected_cycle"]
    assert abs(projected - full.cycles) / full.cycles <= 0.03
    # pkp.cycles is what the PKP run simulated: up to the stop plus the drain.
    assert pkp.cycles > pkp.pkp["pkp_stop_cycle"]
    assert 1 - pkp.cycles / full.cycles >= 0.5
    assert 1 - wall_seconds("long75_pkp") / wall_seconds("long75_full") >= 0.5


def test_paper_formula_stops_late_on_the_same_kernel():
    """-pkp_launch_latency 0: the 5,000-cycle launch latency keeps the cumulative IPC drifting,
    so the window becomes stable only near the end and little is saved."""
    full, apart, paper = kernel("long75_full"), kernel("long75_pkp"), kernel("long75_pkp_paper")
    assert paper.pkp["pkp_stop_cycle"] > 3 * apart.pkp["pkp_stop_cycle"]
    assert 1 - paper.cycles / full.cycles < 0.5


@pytest.mark.parametrize("impl", ["native", "python"])
def test_replay_equals_the_simulator(impl, monkeypatch):
    if impl == "python":
        monkeypatch.setenv("SIMSAMPLE_PURE_PYTHON", "1")
    from simsample.pkp import monitor as twin

    cls = twin.Monitor if impl == "python" else None
    (r,) = replay_run(FIX / "long30_full_visualizer.log.gz", FIX / "long30_full.out.gz", ReplayParams(), monitor_cls=cls)
    sim = kernel("long30_pkp").pkp
    assert r.launch_latency == 5000 and r.stopped
    assert (r.stop_cycle, r.stop_ctas, r.stop_insns) == (sim["pkp_stop_cycle"], sim["pkp_stop_completed_cta"], sim["pkp_stop_insn"])
    assert round(r.projected_cycles) == sim["pkp_projected_cycle"]
    assert round(r.projected_insns) == sim["pkp_projected_insn"]
    # The drain: the replay's estimate is at the log's 500-cycle resolution, never before the
    # simulator's own end of the kernel.
    assert kernel("long30_pkp").cycles <= r.drain_end < kernel("long30_pkp").cycles + 500


@pytest.mark.slow
@pytest.mark.parametrize(
    ("waves", "sha256"),
    [
        (30, "f566f135f01b13d8cf883eec9155a78f4f751f8a1e2b4a221d776322cce7e3ac"),
        (75, "0a467483a1742fad0ea8d1116ee973d229bed1533b1af578266872b9f933a424"),
    ],
)
def test_generator_reproduces_the_traces(tmp_path, waves, sha256):
    """The committed outputs come from these exact traces (see the fixtures' README)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("pkp_in_simulator", Path(__file__).parents[1] / "benchmarks" / "pkp_in_simulator.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.write_long_kernel(tmp_path, waves)
    assert hashlib.sha256((tmp_path / "kernel-1.traceg").read_bytes()).hexdigest() == sha256
