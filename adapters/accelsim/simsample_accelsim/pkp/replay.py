"""Offline PKP on Accel-Sim runs: where would each kernel have stopped, and how good would the
projection be?

The visualizer log of a full run gives, every ``-gpgpu_runtime_stat`` cycles, the kernel's
cycles, instructions and completed CTAs (:mod:`.visualizer`); the core's replay
(:func:`simsample.sdk.replay_series`) feeds these to the same monitor the simulator hook uses,
and the run's stdout gives the actual totals to compare with, each kernel's grid and wave size,
and the launch latency. This module pairs the two files kernel by kernel, reads the drains a
PKP run measured, and reads and writes the ``-pkp_insn_file`` that gives the simulator each
kernel's instructions ahead. The generic names are re-exported here, so that one import serves
the ``simsample pkp`` commands and the tests.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from simsample.sdk import (
    FormatError,
    KernelReplay,
    ReplayParams,
    ReplaySummary,
    UserError,
    check_input_file,
    make_pkp_monitor,
    read_text_limited,
    replay_series,
    summarize_replays,
    sweep_replay_params,
)
from simsample_accelsim.pkp.visualizer import (
    KernelRun,
    KernelSeries,
    RunInfo,
    read_accelsim_stdout,
    read_visualizer_log,
    sample_interval,
)


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
            f"--period {params.period}: must be a positive multiple of the log's sampling period ({interval} cycles, "
            f"{log.name})"
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
                f"{log.name} has fewer kernels than {stdout.name} (uid {k.uid} has no samples); are they from the "
                "same run?"
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


def read_insn_file(path: str | Path) -> dict[int, int]:
    """A ``-pkp_insn_file``: ``kernel_id instructions`` per line, ``#`` starts a comment."""
    p = Path(path)
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


__all__ = [
    "KernelReplay",
    "ReplayParams",
    "ReplaySummary",
    "insn_file_text",
    "make_pkp_monitor",
    "match_series",
    "measured_drains",
    "read_insn_file",
    "replay_run",
    "replay_series",
    "summarize_replays",
    "sweep_replay_params",
]
