"""The PKP monitor: rules, projections, validation, and exact agreement of C++ and Python."""

from __future__ import annotations

import math
import os
import statistics

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from simsample.pkp import monitor as twin


def _native_module():
    try:
        from simsample import _pkp
    except ImportError:
        return None
    return _pkp


NATIVE = _native_module()
IMPLS = ["native", "python"]


def monitor_class(impl: str):
    if impl == "native":
        if NATIVE is None:
            pytest.skip("C++ extension simsample._pkp is not built")
        return NATIVE.Monitor
    return twin.Monitor


@pytest.fixture(params=IMPLS)
def Monitor(request):  # noqa: N802  (a class)
    return monitor_class(request.param)


@pytest.fixture(params=IMPLS)
def round_projection(request):
    if request.param == "native":
        if NATIVE is None:
            pytest.skip("C++ extension simsample._pkp is not built")
        return NATIVE.round_projection
    return twin.round_projection


def test_extension_present_when_required():
    """CI sets SIMSAMPLE_REQUIRE_NATIVE=1: the compiled monitor must be built and active there."""
    if os.environ.get("SIMSAMPLE_REQUIRE_NATIVE", "") in ("", "0"):
        pytest.skip("SIMSAMPLE_REQUIRE_NATIVE is not set")
    assert NATIVE is not None, "simsample._pkp is not importable: the C++ extension was not built"
    import simsample.pkp as pkp

    if not os.environ.get("SIMSAMPLE_PURE_PYTHON"):
        assert pkp.IMPLEMENTATION == "native"
        assert pkp.implementation() == "native (C++ extension)"


def test_implementation_switch(monkeypatch):
    import importlib

    import simsample.pkp as pkp

    monkeypatch.setenv("SIMSAMPLE_PURE_PYTHON", "1")
    try:
        importlib.reload(pkp)
        assert pkp.IMPLEMENTATION == "python"
        assert pkp.Monitor is twin.Monitor
        assert pkp.implementation() == "pure Python (SIMSAMPLE_PURE_PYTHON is set)"
    finally:
        monkeypatch.delenv("SIMSAMPLE_PURE_PYTHON")
        importlib.reload(pkp)
    assert pkp.IMPLEMENTATION == ("native" if NATIVE is not None else "python")


# --- hand-computed behaviour ------------------------------------------------------------------
def _ramp_ctas(cycle: int) -> int:
    """0 CTAs until cycle 400, then 4 more every 100 cycles."""
    return max(0, (cycle - 400) // 100 * 4)


def test_constant_ipc_stops_at_first_full_wave(Monitor):
    m = Monitor(period=100, window=300, threshold=1.0, total_ctas=40, wave_size=8)
    assert m.window_samples == 3
    stops = [c for c in range(100, 2001, 100) if m.update(c, 10 * c, _ramp_ctas(c))]
    # Stable once three samples are in (cycle 300); one wave (8 CTAs) completes at cycle 600.
    assert m.stable_since == 300
    assert stops[0] == 600 and m.stop_cycle == 600
    assert m.stop_ctas == 8 and m.stop_insns == 6000
    assert m.projected_cycles == 600 * 40 / 8 == 3000.0
    assert m.projected_insns == 30000.0
    assert m.last_cov == 0.0
    # Once stopped, input is ignored.
    assert m.update(99999, 1, 1) is True and m.stop_cycle == 600 and m.samples == 6


def test_artifact_projection_divides_by_completed_plus_one(Monitor):
    m = Monitor(period=100, window=300, threshold=1.0, total_ctas=40, wave_size=8, projection="artifact")
    for c in range(100, 2001, 100):
        if m.update(c, 10 * c, _ramp_ctas(c)):
            break
    assert m.stop_cycle == 600
    assert m.projected_cycles == 600.0 * 40.0 / 9.0
    assert m.projected_insns == 6000.0 * 40.0 / 9.0


@pytest.mark.parametrize(("rule", "stop"), [("paper", 500), ("artifact", 600)])
def test_small_grid_wave_rules(Monitor, rule, stop):
    """Grid (5 CTAs) below one wave (8): paper needs 1 completed CTA, artifact 0.3 x 5 -> 2."""
    m = Monitor(period=100, window=300, threshold=1.0, total_ctas=5, wave_size=8, wave_rule=rule)
    done = {500: 1, 600: 2, 700: 3}
    for c in range(100, 1001, 100):
        if m.update(c, 10 * c, done.get(c, 0 if c < 500 else 3)):
            break
    assert m.stop_cycle == stop
    assert m.wave_ok(1) is (rule == "paper")
    assert m.wave_ok(2) is True
    assert m.wave_ok(0) is False


def test_small_grid_fraction_is_configurable(Monitor):
    m = Monitor(period=100, window=300, total_ctas=10, wave_size=80, wave_rule="artifact", small_grid_fraction=0.15)
    assert not m.wave_ok(1) and m.wave_ok(2)  # 0.15 x 10 = 1.5


def test_full_grid_needs_one_wave_under_both_rules(Monitor):
    for rule in ("paper", "artifact"):
        m = Monitor(period=100, window=300, total_ctas=80, wave_size=80, wave_rule=rule)
        assert not m.wave_ok(79) and m.wave_ok(80)


def test_zero_ipc_window_is_never_stable(Monitor):
    """The launch-latency stretch (no instructions yet) has a zero mean: not stable."""
    m = Monitor(period=100, window=300, threshold=50.0, total_ctas=10, wave_size=1)
    for c in range(100, 1001, 100):
        assert m.update(c, 0, 10) is False
    assert m.last_cov == math.inf
    assert not m.stable_seen and m.stable_since is None and m.stop_cycle is None


def test_stability_is_latched_until_the_wave_completes(Monitor):
    """Stable early, unstable later, wave later still: stops at the wave (artifact semantics)."""
    m = Monitor(period=100, window=300, threshold=1.0, total_ctas=100, wave_size=50)
    ipcs = [5, 5, 5, 9, 1, 7, 3, 8]
    insns = 0
    for i, ipc in enumerate(ipcs):
        c = 100 * (i + 1)
        insns = ipc * c  # cumulative IPC = ipc exactly
        stopped = m.update(c, insns, 50 if c >= 800 else 10)
        assert stopped is (c == 800)
    assert m.stable_since == 300 and m.last_cov > 1.0


def test_cov_is_sample_std_over_mean_in_percent(Monitor):
    m = Monitor(period=10, window=40, threshold=1e-9, total_ctas=10, wave_size=10)
    ipcs = [2.0, 3.0, 5.0, 7.0]
    for i, ipc in enumerate(ipcs):
        c = 10 * (i + 1)
        m.update(c, int(ipc * c), 0)
    assert m.last_cov == pytest.approx(statistics.stdev(ipcs) / statistics.mean(ipcs) * 100, rel=1e-12)


def test_samples_only_at_period_boundaries(Monitor):
    m = Monitor(period=500, window=1000, threshold=5.0, total_ctas=10, wave_size=1)
    for c in range(1, 1500):
        m.update(c, c, 0)
    assert m.samples == 2
    m.update(1600, 1600, 0)  # past 1500 without hitting it exactly: still one sample
    m.update(1900, 1900, 0)  # next due is 2000
    assert m.samples == 3


def test_every_cycle_and_every_period_feeding_agree(Monitor):
    def insns(c: int) -> int:
        return 7 * c + (c * c) // 997 + (3 * c) % 101

    def ctas(c: int) -> int:
        return c // 300

    every, sparse = (Monitor(period=250, window=1500, threshold=3.0, total_ctas=200, wave_size=20) for _ in range(2))
    for c in range(1, 20001):
        every.update(c, insns(c), ctas(c))
    for c in range(250, 20001, 250):
        sparse.update(c, insns(c), ctas(c))
    assert every.stopped and sparse.stopped
    for attr in (
        "stop_cycle",
        "stop_insns",
        "stop_ctas",
        "projected_cycles",
        "projected_insns",
        "samples",
        "stable_since",
        "last_cov",
        "last_ipc",
    ):
        assert getattr(every, attr) == getattr(sparse, attr), attr


def test_restart_starts_over(Monitor):
    m = Monitor(period=100, window=300, threshold=1.0, total_ctas=40, wave_size=8)
    for c in range(100, 1001, 100):
        m.update(c, 10 * c, _ramp_ctas(c))
    assert m.stopped
    m.restart(20, 4)
    assert not m.stopped and m.samples == 0 and m.last_cov is None and m.stop_cycle is None
    assert m.config["total_ctas"] == 20 and m.config["wave_size"] == 4
    for c in range(100, 1001, 100):
        if m.update(c, 10 * c, _ramp_ctas(c)):
            break
    assert m.stop_cycle == 500 and m.projected_cycles == 500 * 20 / 4


def test_config_round_trips(Monitor):
    m = Monitor(
        period=7,
        window=50,
        threshold=0.5,
        total_ctas=3,
        wave_size=9,
        wave_rule="artifact",
        projection="artifact",
        small_grid_fraction=0.2,
        launch_latency=11,
        drain_tail=True,
    )
    assert m.config == {
        "period": 7, "window": 50, "threshold": 0.5, "total_ctas": 3, "wave_size": 9,
        "wave_rule": "artifact", "projection": "artifact", "small_grid_fraction": 0.2, "launch_latency": 11,
        "total_insns": 0, "min_remaining": 0.0, "drain_tail": True, "settle": 0.0,
    }  # fmt: skip
    m.restart(5, 2, total_insns=123)
    assert (m.config["total_ctas"], m.config["total_insns"]) == (5, 123)
    assert m.window_samples == 7


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"period": 0}, "period must be at least 1 cycle"),
        ({"period": 500, "window": 999}, "window must span at least 2 sample periods"),
        ({"period": 1, "window": (1 << 20) + 1}, "window spans too many samples (at most 1048576)"),
        ({"threshold": 0.0}, "threshold must be a positive number (percent)"),
        ({"min_remaining": 1.0}, "min_remaining must be in [0, 1)"),
        ({"settle": 1.0}, "settle must be in [0, 1)"),
        ({"settle": -0.1}, "settle must be in [0, 1)"),
        ({"threshold": math.nan}, "threshold must be a positive number (percent)"),
        ({"threshold": math.inf}, "threshold must be a positive number (percent)"),
        ({"total_ctas": 0}, "total_ctas must be at least 1"),
        ({"wave_size": 0}, "wave_size must be at least 1"),
        ({"small_grid_fraction": 0.0}, "small_grid_fraction must be in (0, 1]"),
        ({"small_grid_fraction": 1.5}, "small_grid_fraction must be in (0, 1]"),
        ({"wave_rule": "both"}, "wave_rule must be 'paper' or 'artifact', not 'both'"),
        ({"projection": "x"}, "projection must be 'paper', 'artifact' or 'instructions', not 'x'"),
    ],
)
def test_invalid_settings_same_message(Monitor, kwargs, message):
    with pytest.raises(ValueError) as exc:
        Monitor(**kwargs)
    assert str(exc.value) == message


def test_negative_input_is_a_type_error(Monitor):
    m = Monitor()
    with pytest.raises(TypeError):
        m.update(-1, 0, 0)
    with pytest.raises(TypeError):
        m.update(1.5, 0, 0)


def test_round_projection(round_projection):
    assert round_projection(2.5) == 3
    assert round_projection(2.4999999) == 2
    assert round_projection(0.0) == 0
    assert round_projection(math.nan) == 0
    assert round_projection(-3.0) == 0
    assert round_projection(1e30) == (1 << 64) - 1
    assert round_projection(23015.384615384617) == 23015


# --- exact agreement of the two implementations ----------------------------------------------
def _state(m) -> tuple:
    def bits(x):
        return None if x is None else float(x).hex()

    return (
        m.stopped, m.stable_seen, m.stable_since, m.samples, bits(m.last_ipc), bits(m.last_cov), m.stop_cycle,
        m.stop_insns, m.stop_ctas, bits(m.projected_cycles), bits(m.projected_insns), bits(m.last_settle_cov),
    )  # fmt: skip


configs = st.fixed_dictionaries(
    {
        "period": st.integers(1, 600),
        "samples": st.integers(2, 12),
        "threshold": st.one_of(st.floats(1e-3, 50.0), st.sampled_from([0.1, 0.25, 0.5, 1.0])),
        "total_ctas": st.integers(1, 5000),
        "wave_size": st.integers(1, 3000),
        "wave_rule": st.sampled_from(["paper", "artifact"]),
        "projection": st.sampled_from(["paper", "artifact", "instructions"]),
        "small_grid_fraction": st.floats(0.01, 1.0),
        "launch_latency": st.one_of(st.just(0), st.integers(0, 3000)),
        "total_insns": st.one_of(st.just(0), st.integers(1, 1 << 50)),
        "min_remaining": st.one_of(st.just(0.0), st.floats(0.0, 0.99)),
        "drain_tail": st.booleans(),
        "settle": st.one_of(st.just(0.0), st.floats(0.0, 0.99)),
    }
)
steps = st.lists(st.tuples(st.integers(1, 900), st.integers(0, 1 << 40), st.integers(0, 40)), min_size=1, max_size=120)


@pytest.mark.skipif(NATIVE is None, reason="C++ extension simsample._pkp is not built")
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cfg=configs, signal=steps, end=st.tuples(st.integers(0, 5000), st.integers(0, 1 << 40), st.integers(0, 3000)))
def test_native_and_python_agree_bit_for_bit(cfg, signal, end):
    cfg = dict(cfg)
    cfg["window"] = cfg["period"] * cfg.pop("samples") + cfg["period"] // 3
    a, b = NATIVE.Monitor(**cfg), twin.Monitor(**cfg)
    cycle = insns = ctas = 0
    for dc, di, dk in signal:
        cycle, insns, ctas = cycle + dc, insns + di, ctas + dk
        assert a.update(cycle, insns, ctas) == b.update(cycle, insns, ctas)
        assert _state(a) == _state(b)
        assert a.project(insns, ctas) == b.project(insns, ctas) or (
            math.isnan(a.project(insns, ctas)) and math.isnan(b.project(insns, ctas))
        )
        assert a.wave_ok(ctas) == b.wave_ok(ctas)
        assert a.remaining_ok(ctas) == b.remaining_ok(ctas)
        assert a.project_cycles(cycle, ctas).hex() == b.project_cycles(cycle, ctas).hex() or (
            math.isnan(a.project_cycles(cycle, ctas)) and math.isnan(b.project_cycles(cycle, ctas))
        )
        pa, pb = a.project_cycles(cycle, ctas, insns), b.project_cycles(cycle, ctas, insns)
        assert pa.hex() == pb.hex() or (math.isnan(pa) and math.isnan(pb))
        ia, ib = a.project_insns(insns, ctas), b.project_insns(insns, ctas)
        assert ia.hex() == ib.hex() or (math.isnan(ia) and math.isnan(ib))
    # The kernel ends (drained or not): the final projections agree to the bit as well.
    assert a.finish(cycle + end[0], insns + end[1], ctas + end[2]) == b.finish(
        cycle + end[0], insns + end[1], ctas + end[2]
    )
    assert a.finished == b.finished == a.stopped
    for fa, fb in ((a.final_cycles, b.final_cycles), (a.final_insns, b.final_insns)):
        assert (fa is None and fb is None) or fa.hex() == fb.hex() or (math.isnan(fa) and math.isnan(fb))


@pytest.mark.skipif(NATIVE is None, reason="C++ extension simsample._pkp is not built")
@settings(max_examples=100, deadline=None)
@given(ipcs=st.lists(st.floats(0.0, 5000.0, allow_subnormal=False), min_size=6, max_size=60), s=st.floats(0.01, 20.0))
def test_agree_on_near_stable_signals(ipcs, s):
    """Signals hovering near the threshold, where one rounding difference would flip the stop."""
    cfg = {"period": 500, "window": 3000, "threshold": s, "total_ctas": 440, "wave_size": 80}
    a, b = NATIVE.Monitor(**cfg), twin.Monitor(**cfg)
    for i, ipc in enumerate(ipcs):
        c = 500 * (i + 1)
        ins = int(ipc * c)
        ra, rb = a.update(c, ins, 8 * i), b.update(c, ins, 8 * i)
        assert ra == rb and _state(a) == _state(b)


# --- against an independent reference ----------------------------------------------------------
def _reference_stop(cycles, insns, done, *, n, s, total, wave, rule="paper", fraction=0.3):
    """First sample at or after the first stable window where the wave condition holds."""
    ipc = [i / c for c, i in zip(cycles, insns)]
    first_stable = None
    for k in range(n - 1, len(ipc)):
        w = ipc[k - n + 1 : k + 1]
        mu = statistics.fmean(w)
        if mu > 0 and statistics.stdev(w) / mu * 100 < s:
            first_stable = k
            break
    if first_stable is None:
        return None
    for k in range(first_stable, len(ipc)):
        d = done[k]
        ok = d >= 1 and (d >= wave if total >= wave else (rule == "paper" or d >= fraction * total))
        if ok:
            return k
    return None


@settings(max_examples=150, deadline=None)
@given(
    data=st.lists(st.tuples(st.integers(1, 10_000), st.integers(0, 3)), min_size=3, max_size=40),
    n=st.integers(2, 6),
    s=st.floats(0.5, 30.0),
    total=st.integers(1, 200),
    wave=st.integers(1, 100),
    impl=st.sampled_from(IMPLS),
)
def test_stop_matches_independent_reference(data, n, s, total, wave, impl):
    if impl == "native" and NATIVE is None:
        impl = "python"
    Monitor = monitor_class(impl)  # noqa: N806
    period = 100
    cycles = [period * (k + 1) for k in range(len(data))]
    insns, done, acc, dn = [], [], 0, 0
    for c, (ipc_x100, dk) in zip(cycles, data):
        acc = max(acc, ipc_x100 * c // 100)
        dn += dk
        insns.append(acc)
        done.append(dn)
    # Keep away from the threshold, where the reference's different rounding could disagree.
    ipc = [i / c for c, i in zip(cycles, insns)]
    for k in range(n - 1, len(ipc)):
        w = ipc[k - n + 1 : k + 1]
        mu = statistics.fmean(w)
        if mu > 0:
            assume(abs(statistics.stdev(w) / mu * 100 - s) > 1e-6 * s)
    m = Monitor(period=period, window=period * n, threshold=s, total_ctas=total, wave_size=wave)
    got = None
    for k, (c, i, d) in enumerate(zip(cycles, insns, done)):
        if m.update(c, i, d):
            got = k
            break
    assert got == _reference_stop(cycles, insns, done, n=n, s=s, total=total, wave=wave)
    if got is not None:
        assert m.projected_cycles == pytest.approx(cycles[got] * total / done[got], rel=1e-15)


# --- launch latency apart ----------------------------------------------------------------------
def test_launch_latency_apart_samples_and_projects_after_it(Monitor):
    """L fixed cycles, then constant IPC 10: the signal is exact from the first sample on, and
    only the cycles after L are scaled."""
    m = Monitor(period=100, window=300, threshold=1.0, total_ctas=40, wave_size=8, launch_latency=1000)
    ctas = lambda c: max(0, (c - 1400) // 100 * 4)  # noqa: E731
    for c in range(100, 3001, 100):
        if m.update(c, 10 * max(0, c - 1000), ctas(c)):
            break
    # No sample up to cycle 1000; three samples (1100..1300) make the window, CoV 0.
    assert m.stable_since == 1300 and m.last_ipc == 10.0 and m.last_cov == 0.0
    assert m.stop_cycle == 1600 and m.stop_ctas == 8 and m.samples == 6
    assert m.projected_cycles == 1000 + 600 * 40 / 8 == 4000.0
    assert m.projected_insns == 6000 * 40 / 8
    assert m.config["launch_latency"] == 1000


def test_paper_formula_scales_the_latency(Monitor):
    """Same kernel, L = 0 (the paper's formula): the cumulative IPC drifts with the latency and
    the projection scales it: 1600 x 40 / 8 = 8000, twice the truth."""
    m = Monitor(period=100, window=300, threshold=50.0, total_ctas=40, wave_size=8)
    for c in range(100, 3001, 100):
        if m.update(c, 10 * max(0, c - 1000), max(0, (c - 1400) // 100 * 4)):
            break
    assert m.stop_cycle == 1600 and m.projected_cycles == 8000.0


@settings(max_examples=200, deadline=None)
@given(cycle=st.integers(1, 1 << 40), done=st.integers(1, 1 << 20), total=st.integers(1, 1 << 20))
def test_zero_latency_is_the_paper_formula_bit_for_bit(cycle, done, total):
    for impl in IMPLS:
        m = monitor_class(impl)(total_ctas=total, wave_size=1)
        assert m.project_cycles(cycle, done).hex() == m.project(cycle, done).hex()
        m = monitor_class(impl)(total_ctas=total, wave_size=1, launch_latency=cycle)
        assert m.project_cycles(cycle, done) == float(cycle)


def test_instruction_projection_ignores_where_in_a_wave_the_stop_falls(Monitor):
    """CTAs finishing in synchronised waves: the completed count is a staircase, instructions
    grow steadily. Projecting by instructions gives the true end although the stop falls after
    a wave's end (the next sample); by CTAs it is off by the lag."""
    latency, wave, waves, per_wave, rate = 100, 8, 20, 405, 10  # a wave every 405 cycles, 10 insns/cycle
    total_insns = waves * per_wave * rate
    end = latency + waves * per_wave
    kw = {
        "period": 10,
        "window": 20,
        "threshold": 50.0,
        "total_ctas": wave * waves,
        "wave_size": wave,
        "launch_latency": latency,
    }
    by_insns = Monitor(**kw, projection="instructions", total_insns=total_insns)
    by_ctas = Monitor(**kw)
    for m in (by_insns, by_ctas):
        for cycle in range(10, end, 10):
            done = wave * ((cycle - latency) // per_wave) if cycle > latency else 0
            if m.update(cycle, max(0, cycle - latency) * rate, done):
                break
        assert m.stopped and m.stop_cycle == 510  # first sample after the first wave (505)
    assert by_insns.projected_cycles == pytest.approx(end, rel=1e-12)
    assert by_insns.projected_insns == total_insns
    assert by_ctas.projected_cycles == pytest.approx(latency + 410 * waves, rel=1e-12)  # 5 cycles late, x20
    # without a known total it is the CTA projection
    m = Monitor(period=10, window=20, threshold=50.0, total_ctas=16, wave_size=8, projection="instructions")
    for cycle in range(10, 200, 10):
        if m.update(cycle, cycle * 3, 8):
            break
    assert m.projected_cycles == m.project_cycles(m.stop_cycle, 8) and m.projected_insns == m.project(m.stop_insns, 8)


def test_no_stop_without_enough_left_to_issue(Monitor):
    """min_remaining = 0.25 of 100 CTAs, waves of 10: a stop needs completed + 10 <= 75."""
    m = Monitor(period=10, window=20, threshold=50.0, total_ctas=100, wave_size=10, min_remaining=0.25)
    assert m.remaining_ok(65) and not m.remaining_ok(66)
    for cycle in range(10, 500, 10):  # stable at once, but the first full wave only at 66 done
        if m.update(cycle, cycle * 5, 66 if cycle >= 100 else 0):
            break
    assert not m.stopped and m.stable_seen
    m = Monitor(period=10, window=20, threshold=50.0, total_ctas=100, wave_size=10, min_remaining=0.25)
    for cycle in range(10, 500, 10):
        if m.update(cycle, cycle * 5, 30 if cycle >= 100 else 0):
            break
    assert m.stopped and m.stop_cycle == 100
    assert Monitor(total_ctas=10, wave_size=1).remaining_ok(10)  # 0: off


# --- the drain as the kernel's tail -----------------------------------------------------------
def _stopped(Monitor, **kw):
    """A monitor stopped at cycle 1,100: IPC 10 after a 100-cycle latency, 40 of 400 CTAs done."""
    m = Monitor(period=100, window=300, threshold=50.0, total_ctas=400, wave_size=40, launch_latency=100, **kw)
    for cycle in range(100, 2000, 100):
        if m.update(cycle, (cycle - 100) * 10, 40 if cycle >= 1100 else 0):
            break
    assert m.stopped and (m.stop_cycle, m.stop_insns, m.stop_ctas) == (1100, 10000, 40)
    return m


def test_finish_counts_the_drain_as_the_tail(Monitor):
    """The drain (here 300 cycles, 1,500 instructions, 40 CTAs) stands for the kernel's tail:
    only the rest is projected at the stop's rate, and the drain is added as measured."""
    m = _stopped(Monitor, projection="instructions", total_insns=100000, drain_tail=True)
    assert m.projected_cycles == 100 + 1000 * 100000 / 10000 == 10100.0
    assert m.final_cycles is None and not m.finished
    assert m.finish(1400, 11500, 80)
    assert m.finished and m.final_cycles == 100 + 1000 * (100000 - 1500) / 10000 + 300 == 10250.0
    assert m.final_insns == 100000.0
    assert not m.finish(9999, 99999, 99) and m.final_cycles == 10250.0  # once only
    # By CTAs: the 40 CTAs the drain completed are the tail; 360 are projected at the stop's rate.
    c = _stopped(Monitor, projection="paper", drain_tail=True)
    assert c.finish(1400, 11500, 80)
    assert c.final_cycles == 100 + 1000 * 360 / 40 + 300 == 9400.0
    assert c.final_insns == 10000 * 360 / 40 + 1500 == 91500.0
    a = _stopped(Monitor, projection="artifact", drain_tail=True)
    a.finish(1400, 11500, 80)
    assert a.final_cycles == 100 + 1000 * 360 / 41 + 300


def test_finish_without_drain_tail_keeps_the_stop_projection(Monitor):
    m = _stopped(Monitor, projection="instructions", total_insns=100000)
    assert m.config["drain_tail"] is False  # the paper's behaviour unless asked
    assert m.finish(1400, 11500, 80)
    assert (m.final_cycles, m.final_insns) == (m.projected_cycles, m.projected_insns)


def test_finish_needs_a_stop_and_survives_odd_counts(Monitor):
    m = Monitor(period=100, window=300, threshold=0.1, total_ctas=400, wave_size=40, drain_tail=True)
    assert not m.finish(500, 10, 1) and not m.finished and m.final_cycles is None
    # Counts below the stop's (no drain at all) are the stop itself: the stop's projection.
    s = _stopped(Monitor, projection="instructions", total_insns=100000, drain_tail=True)
    s.finish(900, 5, 0)
    assert s.final_cycles == s.projected_cycles
    # A drain that ran more instructions than the stated total: nothing left to project.
    t = _stopped(Monitor, projection="instructions", total_insns=10500, drain_tail=True)
    t.finish(1400, 21000, 80)
    assert t.final_cycles == 100.0 + 0.0 + 300.0


@given(
    rate=st.integers(1, 64),
    waves=st.integers(4, 40),
    wave_cycles=st.integers(50, 2000),
    tail=st.integers(0, 3000),
    latency=st.integers(0, 5000),
)
def test_finish_recovers_a_steady_kernel_with_a_slow_tail(rate, waves, wave_cycles, tail, latency):
    """A kernel at a steady rate whose last wave runs ``tail`` cycles longer than the others
    (its CTAs alone on the machine): the stop's projection misses the tail, the drain (a wave
    run the same way) brings it back exactly."""
    wave_insns = rate * wave_cycles
    total_insns = waves * wave_insns
    actual = latency + waves * wave_cycles + tail
    m = twin.Monitor(
        period=wave_cycles,
        window=2 * wave_cycles,
        threshold=50.0,
        total_ctas=waves,
        wave_size=1,
        launch_latency=latency,
        projection="instructions",
        total_insns=total_insns,
        drain_tail=True,
    )
    cycle = latency
    while not m.stopped:
        cycle += wave_cycles
        m.update(cycle, (cycle - latency) * rate, (cycle - latency) // wave_cycles)
    assert m.projected_cycles == pytest.approx(actual - tail, rel=1e-12)
    m.finish(cycle + wave_cycles + tail, m.stop_insns + wave_insns, m.stop_ctas + 1)
    assert m.final_cycles == pytest.approx(actual, rel=1e-12)


# --- settled: the IPC must have held over a share of the run -------------------------------
def _drifting(k: int) -> int:
    """Cumulative instructions at the k-th 500-cycle sample after the launch latency of a
    kernel whose cumulative IPC falls 3% a sample for 20 samples, then 0.15% a sample for good
    (an L2 filling with dirty lines): any 6-sample window of the slow part varies by 0.3%."""
    ipc = 300.0 * 0.97 ** min(k, 20) * 0.9985 ** max(0, k - 20)
    return int(ipc * 500 * k)


def test_settle_keeps_a_drifting_kernel_running(Monitor):
    kw = {
        "period": 500,
        "window": 3000,
        "threshold": 0.5,
        "total_ctas": 100_000,
        "wave_size": 10,
        "launch_latency": 1000,
    }
    plain, settled = Monitor(**kw), Monitor(**kw, settle=0.5)
    for k in range(1, 400):
        cycle = 1000 + 500 * k
        plain.update(cycle, _drifting(k), k * 10)
        settled.update(cycle, _drifting(k), k * 10)
    assert plain.stopped and plain.stop_cycle <= 1000 + 500 * 30  # the window alone is fooled
    assert not settled.stopped and not settled.stable_seen  # half the run never varies < 0.5%
    assert settled.last_settle_cov is not None and settled.last_settle_cov >= 0.5


def test_settle_does_not_delay_a_steady_kernel(Monitor):
    kw = {
        "period": 500,
        "window": 3000,
        "threshold": 2.0,
        "total_ctas": 10_000,
        "wave_size": 10,
        "launch_latency": 1000,
    }
    a, b = Monitor(**kw), Monitor(**kw, settle=0.5)
    for cycle in range(500, 50_000, 500):
        insns = max(0, cycle - 1000) * 300
        a.update(cycle, insns, cycle // 100)
        b.update(cycle, insns, cycle // 100)
    assert a.stopped and b.stopped and a.stop_cycle == b.stop_cycle
    assert b.last_settle_cov == 0.0


def test_settle_history_keeps_every_strideth_sample():
    """The fixed history spans the whole run: after k samples it holds the multiples of the
    smallest power-of-two stride that fits them, oldest first."""
    m = twin.Monitor(period=10, window=20, threshold=1e-9, total_ctas=1, wave_size=1, settle=0.5)
    for k in range(1, 1000):
        m.update(10 * k, k * k, 0)  # never stable: the history is all that changes
        held = m._hist_cycle[: m._hist_len]
        assert held == [10 * j for j in range(m._hist_stride, k + 1, m._hist_stride)]
        assert m._hist_len <= twin.HISTORY and k // m._hist_stride <= twin.HISTORY
        assert m._hist_len >= min(k, twin.HISTORY // 2)


@pytest.mark.skipif(NATIVE is None, reason="C++ extension simsample._pkp is not built")
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    settle=st.floats(0.01, 0.99),
    s=st.floats(0.05, 10.0),
    latency=st.integers(0, 2000),
    rates=st.lists(st.integers(0, 5000), min_size=200, max_size=1500),
)
def test_native_and_python_agree_over_long_runs(settle, s, latency, rates):
    """Runs long enough for the settle history to fill and halve several times."""
    cfg = {
        "period": 100,
        "window": 600,
        "threshold": s,
        "total_ctas": 100_000,
        "wave_size": 50,
        "launch_latency": latency,
        "settle": settle,
    }
    a, b = NATIVE.Monitor(**cfg), twin.Monitor(**cfg)
    insns = 0
    for i, r in enumerate(rates):
        cycle = 100 * (i + 1)
        insns += r * 100 if cycle > latency else 0
        assert a.update(cycle, insns, i // 4) == b.update(cycle, insns, i // 4)
        assert _state(a) == _state(b)
