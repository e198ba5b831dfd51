"""Offline PKP: feed a kernel's sampled progress to the monitor and see where it would stop.

Any simulator that logs a running kernel's cycles, instructions and completed CTAs at a fixed
period can replay its full runs through the same monitor its hook uses (:mod:`simsample.pkp`):
:func:`replay_series` gives the stop point, the projected totals and, against the full run's own
totals, the projection's error and the cycles a PKP run would have saved. The stop, and the
projection at the stop, are the hook's to the cycle (same monitor, same samples). What follows
the stop is not in a full run's samples: the drain of the CTAs resident at the stop (cycles the
PKP run still simulates, and with ``drain_tail`` part of its final projection) is estimated as
ending where the full run has completed as many CTAs as were issued at the stop, having run each
CTA's share of the kernel's instructions; the final projection is then the hook's up to that
estimate.

Reading a simulator's logs is its adapter's business (Accel-Sim's: the ``simsample pkp``
commands of the Accel-Sim adapter); this module knows only the samples.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Protocol

import numpy as np

from simsample.errors import UserError


class SampleSeries(Protocol):
    """One kernel's samples, every period: cumulative cycles, instructions and completed CTAs
    since the kernel started (arrays of equal length)."""

    @property
    def cycles(self) -> np.ndarray: ...

    @property
    def insns(self) -> np.ndarray: ...

    @property
    def completed(self) -> np.ndarray: ...

    def __len__(self) -> int: ...


@dataclass(frozen=True)
class ReplayParams:
    """Monitor settings for one replay (``period=None``: the log's own sampling period).

    The defaults are the simulator patch's: threshold 2%, a stop only while half of the
    grid is still to be issued and once the IPC has held over the last half of the run, the
    projection by instructions with the drain counted as the kernel's tail (see
    the Accel-Sim patch's README for the measurements behind them; the paper's
    threshold is 0.25%, its projection ``paper``, no ``min_remaining``, ``settle`` or drain tail)."""

    window: int = 3000
    threshold: float = 2.0
    period: int | None = None
    wave_rule: str = "paper"
    projection: str = "instructions"
    small_grid_fraction: float = 0.3
    min_remaining: float = 0.5
    # Count the drain after the stop as the kernel's tail (the simulator's -pkp_drain_tail 1).
    drain_tail: bool = True
    # Share of the run (after the launch latency) over which the IPC must have held as well.
    settle: float = 0.5
    # Fixed cycles kept apart from the projection; None: the run's -gpgpu_kernel_launch_latency
    # (0 when the run's configuration is unknown), 0: the paper's formula.
    launch_latency: int | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class KernelReplay:
    """One kernel's replay outcome; cycle and instruction totals are the simulator's."""

    run: str
    kernel: int  # 0-based, in the order of the stats blocks
    uid: int | None
    kernel_id: int | None
    name: str
    total_ctas: int
    wave_size: int
    samples: int
    stopped: bool = False
    stable_since: int | None = None
    stop_cycle: int | None = None
    stop_insns: int | None = None
    stop_ctas: int | None = None
    projected_cycles: float | None = None  # the final projection (drain tail included); None when not stopped
    projected_insns: float | None = None
    stop_projected_cycles: float | None = None  # the projection at the stop, the simulator's exactly
    stop_projected_insns: float | None = None
    actual_cycles: int | None = None
    actual_insns: int | None = None
    last_cov: float | None = None
    all_issued_at: int | None = None  # cycle where the monitor fired with every CTA issued (no stop)
    drain_end: int | None = None  # cycle where the stopped kernel's resident CTAs are done
    drain_insns: int | None = None  # instructions the drain runs (estimated, see the module doc)
    launch_latency: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def estimated_cycles(self) -> float | None:
        """What a PKP run reports: the projection if stopped, else the full count."""
        return (
            self.projected_cycles
            if self.stopped
            else (None if self.actual_cycles is None else float(self.actual_cycles))
        )

    @property
    def estimated_insns(self) -> float | None:
        return (
            self.projected_insns if self.stopped else (None if self.actual_insns is None else float(self.actual_insns))
        )

    @property
    def simulated_cycles(self) -> int | None:
        """Cycles a PKP run simulates for this kernel: up to the end of the drain if stopped."""
        if not self.stopped:
            return self.actual_cycles
        return self.drain_end if self.drain_end is not None else self.stop_cycle

    @property
    def cycles_error_pct(self) -> float | None:
        return _err(self.estimated_cycles, self.actual_cycles)

    @property
    def insns_error_pct(self) -> float | None:
        return _err(self.estimated_insns, self.actual_insns)

    @property
    def saved_share(self) -> float | None:
        if self.actual_cycles is None or self.simulated_cycles is None or self.actual_cycles <= 0:
            return None
        return (self.actual_cycles - self.simulated_cycles) / self.actual_cycles

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d.update(
            estimated_cycles=self.estimated_cycles,
            estimated_insns=self.estimated_insns,
            simulated_cycles=self.simulated_cycles,
            cycles_error_pct=self.cycles_error_pct,
            insns_error_pct=self.insns_error_pct,
            saved_share=self.saved_share,
        )
        return d


def _err(est: float | None, actual: int | None) -> float | None:
    if est is None or actual is None or actual == 0:
        return None
    return (est - actual) / actual * 100.0


@dataclass
class ReplaySummary:
    kernels: int
    stopped: int
    actual_cycles: int | None
    simulated_cycles: int | None
    estimated_cycles: float | None
    saved_share: float | None
    total_cycles_error_pct: float | None
    mean_abs_cycles_error_pct: float | None  # over stopped kernels
    max_abs_cycles_error_pct: float | None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def summarize_replays(results: list[KernelReplay]) -> ReplaySummary:
    known = [r for r in results if r.actual_cycles is not None]
    complete = len(known) == len(results)
    actual = sum(r.actual_cycles for r in known) if complete else None  # type: ignore[misc]
    simulated = sum(r.simulated_cycles for r in known) if complete else None  # type: ignore[misc]
    estimated = math.fsum(r.estimated_cycles for r in known) if complete else None  # type: ignore[misc]
    errs = [abs(r.cycles_error_pct) for r in results if r.stopped and r.cycles_error_pct is not None]
    return ReplaySummary(
        kernels=len(results),
        stopped=sum(r.stopped for r in results),
        actual_cycles=actual,
        simulated_cycles=simulated,
        estimated_cycles=estimated,
        saved_share=(actual - simulated) / actual if actual and simulated is not None else None,
        total_cycles_error_pct=_err(estimated, actual),
        mean_abs_cycles_error_pct=math.fsum(errs) / len(errs) if errs else None,
        max_abs_cycles_error_pct=max(errs) if errs else None,
    )


def make_pkp_monitor(
    params: ReplayParams,
    period: int,
    total_ctas: int,
    wave_size: int,
    monitor_cls: Any = None,
    launch_latency: int = 0,
    total_insns: int = 0,
) -> Any:
    """A monitor (active implementation unless ``monitor_cls`` is given) for these settings."""
    if monitor_cls is None:
        from simsample.pkp import Monitor as monitor_cls  # noqa: N813
    try:
        return monitor_cls(
            period=period,
            window=params.window,
            threshold=params.threshold,
            total_ctas=max(total_ctas, 1),
            wave_size=max(wave_size, 1),
            wave_rule=params.wave_rule,
            projection=params.projection,
            small_grid_fraction=params.small_grid_fraction,
            min_remaining=params.min_remaining,
            launch_latency=launch_latency,
            total_insns=total_insns,
            drain_tail=params.drain_tail,
            settle=params.settle,
        )
    except ValueError as exc:
        raise UserError(f"PKP settings: {exc}") from None


def replay_series(
    series: SampleSeries | None,
    *,
    params: ReplayParams,
    period: int,
    total_ctas: int,
    wave_size: int,
    run: str = "",
    kernel: int = 0,
    uid: int | None = None,
    kernel_id: int | None = None,
    name: str = "",
    actual_cycles: int | None = None,
    actual_insns: int | None = None,
    monitor_cls: Any = None,
    launch_latency: int | None = None,
    total_insns: int | None = None,
    drain: tuple[int, int, int] | None = None,
) -> KernelReplay:
    """Feed one kernel's samples to a monitor and record where the simulator would stop.

    ``total_insns``: the kernel's instructions known ahead (the instruction projection's total);
    None or 0 projects by CTAs. ``drain``: the drain as a PKP run of the same kernel measured it
    (its final cycle, instructions and CTAs), used instead of the estimate; with it the final
    projection is the simulator's exactly, a check of the simulator's hook."""
    latency = params.launch_latency if params.launch_latency is not None else (launch_latency or 0)
    if latency < 0:
        raise UserError(f"PKP settings: launch latency must be at least 0 cycles, not {latency}")
    mon = make_pkp_monitor(params, period, total_ctas, wave_size, monitor_cls, latency, total_insns or 0)
    out = KernelReplay(
        run=run, kernel=kernel, uid=uid, kernel_id=kernel_id, name=name, total_ctas=total_ctas,
        wave_size=wave_size, samples=0 if series is None else len(series),
        actual_cycles=actual_cycles, actual_insns=actual_insns,
        launch_latency=latency,
    )  # fmt: skip
    if series is None or len(series) == 0:
        out.notes.append("no samples (kernel shorter than one sampling period)")
        return out
    cycles, completed = series.cycles.tolist(), series.completed.tolist()
    for cyc, ins, done in zip(cycles, series.insns.tolist(), completed):
        if mon.update(cyc, ins, done):
            break
    out.last_cov = mon.last_cov
    out.stable_since = mon.stable_since
    if mon.stopped and all_issued(mon.stop_ctas, total_ctas, wave_size):
        # The hook sees no CTA left to cut: it lets the kernel run and reports nothing.
        out.all_issued_at = mon.stop_cycle
        out.notes.append(f"stable at cycle {mon.stop_cycle}, but every CTA is already issued; runs to completion")
    elif mon.stopped:
        out.stopped = True
        out.stop_cycle, out.stop_insns, out.stop_ctas = mon.stop_cycle, mon.stop_insns, mon.stop_ctas
        out.stop_projected_cycles, out.stop_projected_insns = mon.projected_cycles, mon.projected_insns
        if drain is not None:
            end, end_insns, issued = drain
            out.drain_end, out.drain_insns = end, max(0, end_insns - mon.stop_insns)
        else:
            out.drain_end = drain_end(cycles, completed, mon.stop_ctas, total_ctas, wave_size, actual_cycles)
            issued = min(total_ctas, mon.stop_ctas + wave_size)
            out.drain_insns = drain_insns(
                mon.stop_insns, mon.stop_ctas, issued, total_ctas, total_insns or actual_insns
            )
        end = out.drain_end if out.drain_end is not None else mon.stop_cycle
        mon.finish(end, mon.stop_insns + out.drain_insns, issued)
        out.projected_cycles, out.projected_insns = mon.final_cycles, mon.final_insns
    elif mon.stable_seen:
        out.notes.append("stable, but the wave condition was never met")
    return out


def all_issued(completed: int, total_ctas: int, wave_size: int) -> bool:
    """Whether every CTA is issued once ``completed`` are done (freed slots refill at once)."""
    return completed + wave_size >= total_ctas


def drain_end(
    cycles: list[int], completed: list[int], stop_ctas: int, total_ctas: int, wave_size: int, actual_cycles: int | None
) -> int | None:
    """First logged cycle of the full run where the CTAs issued at the stop have all completed.

    ``None`` when the log ends before (the kernel's own end, ``actual_cycles``, is then used).
    """
    issued = min(total_ctas, stop_ctas + wave_size)
    for cyc, done in zip(cycles, completed):
        if done >= issued:
            return cyc
    return actual_cycles


def drain_insns(stop_insns: int, stop_ctas: int, issued: int, total_ctas: int, kernel_insns: int | None) -> int:
    """Instructions left in the CTAs issued at the stop: each CTA runs its share of the
    kernel's instructions (``kernel_insns``; unknown: the average of the completed ones)."""
    if kernel_insns:
        return max(0, round(issued * kernel_insns / max(total_ctas, 1)) - stop_insns)
    return max(0, round((issued - stop_ctas) * stop_insns / max(stop_ctas, 1)))


def sweep_replay_params(base: ReplayParams, sweeps: list[str]) -> list[ReplayParams]:
    """``["s=0.1,0.25", "window=2000,3000"]`` → every combination, in the given order."""
    keys = {
        "s": "threshold",
        "threshold": "threshold",
        "window": "window",
        "w": "window",
        "period": "period",
        "p": "period",
        "min_remaining": "min_remaining",
        "r": "min_remaining",
        "settle": "settle",
    }
    combos = [base]
    for item in sweeps:
        if "=" not in item:
            raise UserError(f"--sweep {item!r}: expected KEY=V1,V2,... with KEY one of s, window, period, r, settle")
        key, _, vals = item.partition("=")
        attr = keys.get(key.strip())
        if attr is None:
            raise UserError(f"--sweep {item!r}: unknown key {key.strip()!r} (use s, window, period, r or settle)")
        try:
            values = [
                float(v) if attr in ("threshold", "min_remaining", "settle") else int(v)
                for v in vals.split(",")
                if v.strip()
            ]
        except ValueError:
            raise UserError(f"--sweep {item!r}: values must be numbers") from None
        if not values:
            raise UserError(f"--sweep {item!r}: no values")
        combos = [replace(c, **{attr: v}) for c in combos for v in values]
    return combos


__all__ = [
    "KernelReplay",
    "ReplayParams",
    "ReplaySummary",
    "SampleSeries",
    "all_issued",
    "drain_end",
    "drain_insns",
    "make_pkp_monitor",
    "replay_series",
    "summarize_replays",
    "sweep_replay_params",
]
