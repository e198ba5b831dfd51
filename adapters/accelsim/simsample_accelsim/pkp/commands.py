"""``simsample pkp ...``: Principal Kernel Projection tools for Accel-Sim (registered by the adapter's plugin)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from simsample.sdk import UserError


@click.group("pkp")
def pkp_group() -> None:
    """Principal Kernel Projection: end long kernels early once their IPC is stable.

    \b
    simsample pkp replay gpgpusim_visualizer__*.log.gz --stdout sim.out
    simsample pkp replay LOG --stdout sim.out --sweep s=0.1,0.25,0.5,1 --json
    simsample pkp totals features.parquet -o insns.txt    # then: accel-sim.out ... -pkp_insn_file insns.txt
    """


@pkp_group.command("replay")
@click.argument("logs", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--stdout",
    "stdouts",
    multiple=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The simulator's stdout of the same run (actual cycles, grid and wave sizes); one per LOG, in order.",
)
@click.option(
    "--window",
    default=3000,
    show_default=True,
    type=click.IntRange(min=1),
    help="Window in cycles (window / period samples).",
)
@click.option(
    "--threshold",
    "-s",
    default=2.0,
    show_default=True,
    type=float,
    help="Stable when the window's CoV (percent) is below this (the paper's: 0.25).",
)
@click.option(
    "--period",
    default=None,
    type=click.IntRange(min=1),
    help="Sample period in cycles; a multiple of the log's (default: the log's).",
)
@click.option(
    "--wave-rule",
    type=click.Choice(["paper", "artifact"]),
    default="paper",
    show_default=True,
    help="Grids smaller than one wave: no wave condition (paper) or a fraction of the grid (artifact).",
)
@click.option(
    "--projection",
    type=click.Choice(["instructions", "paper", "artifact"]),
    default="instructions",
    show_default=True,
    help="instructions: cycles x the kernel's instructions / instructions so far (totals from --insn-file, else the "
    "stdout's); paper: total = value x CTAs / completed; artifact: / (completed + 1).",
)
@click.option(
    "--insn-file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The -pkp_insn_file given to the simulator (kernel_id instructions per line).",
)
@click.option(
    "--min-remaining",
    default=0.5,
    show_default=True,
    type=click.FloatRange(0.0, 1.0, max_open=True),
    help="Stop only while at least this share of the grid is still to be issued.",
)
@click.option(
    "--settle",
    default=0.5,
    show_default=True,
    type=click.FloatRange(0.0, 1.0, max_open=True),
    help="Stable also needs the cumulative IPC of this last share of the run to vary less than the threshold "
    "(0: the window alone, as the paper).",
)
@click.option(
    "--drain-tail/--no-drain-tail",
    default=True,
    show_default=True,
    help="Count the drain after a stop as the kernel's tail (the simulator's -pkp_drain_tail); "
    "the drain is estimated from the full run.",
)
@click.option(
    "--small-grid-fraction",
    default=0.3,
    show_default=True,
    type=float,
    help="Artifact wave rule: share of a small grid that must complete.",
)
@click.option(
    "--launch-latency",
    type=click.IntRange(min=0),
    default=None,
    help=(
        "Fixed cycles kept apart from the projection (default: the run's -gpgpu_kernel_launch_latency; 0: the "
        "paper's formula)."
    ),
)
@click.option(
    "--total-ctas", type=click.IntRange(min=1), default=None, help="Override the grid size (needed without --stdout)."
)
@click.option(
    "--wave-size",
    type=click.IntRange(min=1),
    default=None,
    help="Override the CTAs of one wave (needed without --stdout).",
)
@click.option(
    "--sweep",
    "sweeps",
    multiple=True,
    metavar="KEY=V1,V2,...",
    help="Replay for each value: s (threshold), window, period, r (min-remaining) or settle.",
)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def replay_cmd(
    logs: tuple[Path, ...],
    stdouts: tuple[Path, ...],
    window: int,
    threshold: float,
    period: int | None,
    wave_rule: str,
    projection: str,
    insn_file: Path | None,
    min_remaining: float,
    settle: float,
    drain_tail: bool,
    small_grid_fraction: float,
    launch_latency: int | None,
    total_ctas: int | None,
    wave_size: int | None,
    sweeps: tuple[str, ...],
    as_json: bool,
) -> None:
    """Replay PKP offline on Accel-Sim visualizer LOGs (-visualizer_enabled 1 -gpgpu_runtime_stat 500).

    For each kernel: where PKP would have stopped, projected vs actual cycles and instructions,
    and the share of simulated cycles saved (the drain of resident CTAs counted as simulated).
    The stop and the projection at the stop are the simulator's exactly; the drain after it is
    estimated from the full run, and so is the final projection that counts it as the tail.
    """
    from simsample.sdk import pkp_implementation as implementation
    from simsample_accelsim.pkp.replay import (
        ReplayParams,
        read_insn_file,
        replay_run,
        summarize_replays,
        sweep_replay_params,
    )
    from simsample_accelsim.pkp.visualizer import read_accelsim_stdout, read_visualizer_log

    if stdouts and len(stdouts) != len(logs):
        raise UserError(f"give one --stdout per LOG ({len(logs)} logs, {len(stdouts)} --stdout)")
    base = ReplayParams(
        window=window, threshold=threshold, period=period, wave_rule=wave_rule,
        projection=projection, small_grid_fraction=small_grid_fraction, min_remaining=min_remaining,
        launch_latency=launch_latency,
        drain_tail=drain_tail, settle=settle,
    )  # fmt: skip
    combos = sweep_replay_params(base, list(sweeps))
    insns = read_insn_file(insn_file) if insn_file is not None else None
    parsed = []
    for i, log in enumerate(logs):
        out = stdouts[i] if stdouts else None
        parsed.append((log, out, read_visualizer_log(log), read_accelsim_stdout(out) if out is not None else None))
    runs = []
    for params in combos:
        results = []
        for log, out, series, info in parsed:
            results.extend(
                replay_run(
                    log, out, params, total_ctas=total_ctas, wave_size=wave_size, series=series, info=info, insns=insns
                )
            )
        runs.append((params, results, summarize_replays(results)))

    if as_json:
        _echo_json(
            {
                "implementation": implementation(),
                "runs": [
                    {"params": p.to_json(), "summary": s.to_json(), "kernels": [r.to_json() for r in res]}
                    for p, res, s in runs
                ],
            }
        )
        return
    _print_tables(runs, implementation())


def _echo_json(doc: object) -> None:
    """The document as the host's ``--json`` outputs print it (numpy numbers as plain ones)."""
    click.echo(json.dumps(doc, indent=2, default=lambda o: o.item() if hasattr(o, "item") else str(o)))


def _fmt(v: float | int | None, spec: str = ",.0f") -> str:
    if v is None:
        return "-"
    return format(v, spec)


def _print_tables(runs: list, impl: str) -> None:
    from rich.console import Console
    from rich.table import Table

    from simsample.sdk import base_name

    con = Console(highlight=False, width=None if sys.stdout.isatty() else 132)
    for params, results, summary in runs:
        title = (
            f"PKP replay: s={params.threshold:g}%, window={params.window}, period={params.period or 'log'}, "
            f"wave rule={params.wave_rule}, projection={params.projection}, launch latency="
            f"{'from the run' if params.launch_latency is None else params.launch_latency}, "
            f"settle={params.settle:g}, drain tail={'on' if params.drain_tail else 'off'}"
        )
        table = Table(
            title=title,
            title_justify="left",
            caption="id: trace kernel id; stop: cycle where PKP stops (- = runs to completion); "
            "done: CTAs completed then; projected: the PKP estimate of the kernel's cycles",
            caption_justify="left",
        )
        for col in (
            "id",
            "kernel",
            "CTAs",
            "wave",
            "stop",
            "done",
            "projected",
            "actual",
            "err %",
            "insn err %",
            "saved",
        ):
            table.add_column(col, justify="left" if col == "kernel" else "right")
        for r in results:
            kid = r.kernel_id if r.kernel_id is not None else (r.uid if r.uid is not None else r.kernel)
            table.add_row(
                str(kid), base_name(r.name)[:24] or "-", f"{r.total_ctas:,}", f"{r.wave_size:,}",
                _fmt(r.stop_cycle) if r.stopped else "-", _fmt(r.stop_ctas), _fmt(r.estimated_cycles),
                _fmt(r.actual_cycles), _fmt(r.cycles_error_pct, "+.2f"), _fmt(r.insns_error_pct, "+.2f"),
                _fmt(r.saved_share, ".1%"),
            )  # fmt: skip
        con.print(table)
        con.print(
            f"{summary.stopped}/{summary.kernels} kernels stopped; simulated {_fmt(summary.simulated_cycles)} of "
            f"{_fmt(summary.actual_cycles)} cycles (saved {_fmt(summary.saved_share, '.1%')}); estimated total "
            f"{_fmt(summary.estimated_cycles)} cycles ({_fmt(summary.total_cycles_error_pct, '+.2f')}%)"
        )
    if len(runs) > 1:
        table = Table(title="Sweep", title_justify="left")
        for col in (
            "s %",
            "window",
            "period",
            "r",
            "settle",
            "stopped",
            "simulated cycles",
            "saved",
            "total err %",
            "mean |err| %",
            "max |err| %",
        ):
            table.add_column(col, justify="right")
        for params, _results, s in runs:
            table.add_row(
                f"{params.threshold:g}", str(params.window), str(params.period or "log"), f"{params.min_remaining:g}",
                f"{params.settle:g}", f"{s.stopped}/{s.kernels}",
                _fmt(s.simulated_cycles), _fmt(s.saved_share, ".1%"), _fmt(s.total_cycles_error_pct, "+.2f"),
                _fmt(s.mean_abs_cycles_error_pct, ".2f"), _fmt(s.max_abs_cycles_error_pct, ".2f"),
            )  # fmt: skip
        con.print(table)
    con.print(f"monitor: {impl}")


@pkp_group.command("totals")
@click.argument("profile", type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The -pkp_insn_file to write.",
)
def totals_cmd(profile: Path, output: Path) -> None:
    """Write each kernel's thread instructions for Accel-Sim's -pkp_insn_file.

    PROFILE holds kernel ids and thread instructions: the output of
    `simsample profile features --sim accelsim TRACES -o features.parquet`. With the file the
    simulator projects a stopped kernel by instructions, not by completed CTAs.
    """
    import simsample
    from simsample.sdk import atomic_write_bytes, check_output_file, writable_parent
    from simsample_accelsim.pkp.replay import insn_file_text

    check_output_file(output, [profile], what="instruction file")
    writable_parent(output)
    wl = simsample.read(profile)
    wl.require(
        ["thread_insts"],
        who="pkp totals",
        hint="run `simsample profile features --sim accelsim TRACES -o features.parquet` and give that",
    )
    k = wl.kernels
    if k["thread_insts"].isna().any():
        raise UserError(f"{profile}: thread_insts is missing for some kernels; recompute the features")
    text = insn_file_text(
        k["kernel_id"].astype("int64").tolist(), k["thread_insts"].astype("int64").tolist(), Path(profile).name
    )
    atomic_write_bytes(output, text.encode())
    click.echo(f"{output}: instruction counts of {len(k):,} kernels")
