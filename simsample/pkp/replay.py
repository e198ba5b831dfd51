"""Offline PKP: where would each kernel have stopped, and how good would the projection be?

The visualizer log of a full run gives, every ``-gpgpu_runtime_stat`` cycles, the kernel's
cycles, instructions and completed CTAs; feeding these to the same monitor the simulator hook
uses (:mod:`simsample.pkp`) gives the stop point and the projected totals, and the run's
stdout gives the actual totals to compare with. The stop, and the projection at the stop, are
the simulator's to the cycle (same monitor, same samples). What follows the stop is not in a
full run's log: the drain of the CTAs resident at the stop (cycles the PKP run still simulates,
and with ``drain_tail`` part of its final projection) is estimated as ending where the full run
has completed as many CTAs as were issued at the stop, having run each CTA's share of the
kernel's instructions; the final projection is then the simulator's up to that estimate.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from simsample.errors import UserError
from simsample.pkp.visualizer import (
    KernelRun,
    KernelSeries,
    RunInfo,
    read_accelsim_stdout,
    read_visualizer_log,
    sample_interval,
)


@dataclass(frozen=True)
class ReplayParams:
    """Monitor settings for one replay (``period=None``: the log's own sampling period).

    The defaults are the simulator patch's: threshold 2%, a stop only while half of the
    grid is still to be issued and once the IPC has held over the last half of the run, the
    projection by instructions with the drain counted as the kernel's tail (see
    adapters/accelsim/patches/README.md for the measurements behind them; the paper's
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


def summarize(results: list[KernelReplay]) -> ReplaySummary:
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


def make_monitor(
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
    series: KernelSeries | None,
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
    mon = make_monitor(params, period, total_ctas, wave_size, monitor_cls, latency, total_insns or 0)
    out = KernelReplay(
        run=run, kernel=kernel, uid=uid, kernel_id=kernel_id, name=name, total_ctas=total_ctas,
        wave_size=wave_size, samples=0 if series is None else len(series),
        actual_cycles=actual_cycles, actual_insns=actual_insns,
        launch_latency=latency,
    )  # fmt: skip
    if series is None or len(series) == 0:
        out.notes.append("no visualizer samples (kernel shorter than one sampling period)")
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


def measured_drains(pkp_stdout: str | Path) -> dict[int, tuple[int, int, int]]:
    """Kernel uid → (cycles, instructions, CTAs issued) of each kernel a PKP run stopped: the
    drain as the simulator ran it (``gpu_sim_cycle``, ``gpu_sim_insn``, ``pkp_issued_cta``)."""
    out: dict[int, tuple[int, int, int]] = {}
    for k in read_accelsim_stdout(pkp_stdout).kernels:
        issued = k.pkp.get("pkp_issued_cta")
        if k.uid is not None and issued is not None and k.cycles is not None and k.insns is not None:
            out[k.uid] = (k.cycles, k.insns, issued)
    return out


def replay_run(
    log: str | Path,
    stdout: str | Path | None,
    params: ReplayParams,
    *,
    total_ctas: int | None = None,
    wave_size: int | None = None,
    monitor_cls: Any = None,
    series: list[KernelSeries] | None = None,
    info: RunInfo | None = None,
    insns: dict[int, int] | None = None,
    drains: dict[int, tuple[int, int, int]] | None = None,
) -> list[KernelReplay]:
    """Replay every kernel of one run: the visualizer ``log`` and, if given, its ``stdout``.

    Without stdout, ``total_ctas`` and ``wave_size`` apply to every kernel of the log and the
    actual totals are unknown. ``series``/``info`` may be passed pre-parsed (sweeps).

    The instruction projection needs each kernel's instructions: ``insns`` (kernel id →
    instructions, as ``-pkp_insn_file`` gives the simulator) or else the stdout's own counts
    (a full run's are the kernels' totals); without either it projects by CTAs.

    ``drains``: kernel uid → the drain a PKP run measured (see :func:`replay_series`).
    """
    log = Path(log)
    series = read_visualizer_log(log) if series is None else series
    interval = sample_interval(series)
    period = _period(params, interval, log)
    run = log.name
    if stdout is None:
        if total_ctas is None or wave_size is None:
            raise UserError(
                f"{log}: without --stdout the replay needs --total-ctas and --wave-size "
                "(the grid size and the CTAs of one wave are in the simulator's stdout)"
            )
        return [
            replay_series(
                s,
                params=params,
                period=period,
                total_ctas=total_ctas,
                wave_size=wave_size,
                run=run,
                kernel=s.index,
                monitor_cls=monitor_cls,
            )
            for s in series
        ]
    info = read_accelsim_stdout(stdout) if info is None else info
    pairs = match_series(series, info.kernels, interval, log, Path(stdout))
    out = []
    for i, (k, s) in enumerate(pairs):
        wave = wave_size if wave_size is not None else info.wave_size(k)
        total = total_ctas if total_ctas is not None else k.total_ctas
        if wave is None:
            raise UserError(
                f"{stdout}: cannot tell the wave size of kernel uid {k.uid} (no 'CTA/core' line and the "
                "configuration options are incomplete); pass --wave-size"
            )
        if total <= 0:
            raise UserError(f"{stdout}: no grid size for kernel uid {k.uid} (trace header missing); pass --total-ctas")
        out.append(
            replay_series(
                s,
                params=params,
                period=period,
                total_ctas=total,
                wave_size=wave,
                run=run,
                kernel=i,
                uid=k.uid,
                kernel_id=k.kernel_id,
                name=k.name,
                actual_cycles=k.cycles,
                actual_insns=k.insns,
                monitor_cls=monitor_cls,
                launch_latency=info.option_int("gpgpu_kernel_launch_latency"),
                total_insns=(insns.get(k.kernel_id) if k.kernel_id is not None else None)
                if insns is not None
                else k.insns,
                drain=None if drains is None or k.uid is None else drains.get(k.uid),
            )  # fmt: skip
        )
    return out


def _period(params: ReplayParams, interval: int, log: Path) -> int:
    if params.period is None:
        return interval
    if params.period <= 0 or params.period % interval:
        raise UserError(
            f"--period {params.period}: must be a positive multiple of the log's sampling period ({interval} cycles, {log.name})"
        )
    return params.period


def match_series(
    series: list[KernelSeries], kernels: list[KernelRun], interval: int, log: Path, stdout: Path
) -> list[tuple[KernelRun, KernelSeries | None]]:
    """Pair the log's kernels with the stdout's: a kernel shorter than one period has no samples."""
    pairs: list[tuple[KernelRun, KernelSeries | None]] = []
    it = iter(series)
    for k in kernels:
        if k.cycles is not None and k.cycles < interval:
            pairs.append((k, None))
            continue
        s = next(it, None)
        if s is None:
            raise UserError(
                f"{log.name} has fewer kernels than {stdout.name} (uid {k.uid} has no samples); are they from the same run?"
            )
        if k.cycles is not None and int(s.cycles[-1]) > k.cycles or k.insns is not None and int(s.insns[-1]) > k.insns:
            raise UserError(
                f"{log.name} kernel {s.index + 1} ran past what {stdout.name} reports for uid {k.uid} "
                f"({int(s.cycles[-1])} cycles vs {k.cycles}); are they from the same run?"
            )
        pairs.append((k, s))
    extra = next(it, None)
    if extra is not None:
        raise UserError(f"{log.name} has more kernels than {stdout.name} reports; are they from the same run?")
    return pairs


def sweep_params(base: ReplayParams, sweeps: list[str]) -> list[ReplayParams]:
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


def read_insn_file(path: str | Path) -> dict[int, int]:
    """A ``-pkp_insn_file``: ``kernel_id instructions`` per line, ``#`` starts a comment."""
    from simsample.errors import FormatError
    from simsample.io.files import check_input_file

    p = Path(path)
    from simsample.io.limits import read_text_limited

    check_input_file(p)
    out: dict[int, int] = {}
    for n, line in enumerate(read_text_limited(p, errors="replace").splitlines(), 1):
        text = line.split("#", 1)[0].split()
        if not text:
            continue
        if len(text) != 2 or not all(t.isdigit() for t in text):
            raise FormatError(p, f"expected 'kernel_id instructions', got {line.strip()[:60]!r}", line=n)
        out[int(text[0])] = int(text[1])
    return out


def insn_file_text(kernel_ids: list[int], insns: list[int], source: str) -> str:
    """The ``-pkp_insn_file`` for these kernels."""
    lines = [f"# thread instructions per kernel id, for Accel-Sim -pkp_insn_file (from {source})"]
    lines += [f"{k} {v}" for k, v in zip(kernel_ids, insns)]
    return "\n".join(lines) + "\n"
