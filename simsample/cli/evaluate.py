"""``simsample evaluate``: score a sampler on profiles, the profile's times as ground truth, or
against another truth (a full simulation's per-launch results, a ``kernel_id,value`` table)."""

from __future__ import annotations

from pathlib import Path

import click
import lazy_loader as lazy

from simsample.cli import cli
from simsample.cli.common import echo_json, parse_params, profile_options, reader_options
from simsample.errors import UserError

rich_console = lazy.load("rich.console", suppress_warning=True)
rich_table = lazy.load("rich.table", suppress_warning=True)


def _fmt(v: float | None, spec: str) -> str:
    return "-" if v is None else format(v, spec)


@cli.command("evaluate")
@click.argument("profiles", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--sampler", "sampler_name", required=True, help="Sampler name (see 'simsample samplers').")
@click.option("--param", "params", multiple=True, metavar="NAME=VALUE", help="Sampler parameter (repeatable).")
@click.option("--repeat", "repeats", default=10, show_default=True, type=click.IntRange(min=1), help="Plans per workload, with seeds 0..R-1.")
@click.option("--sweep", "sweeps", multiple=True, metavar="NAME=V1,V2,...", help="Evaluate each value of a parameter (repeatable: all combinations).")
@click.option("--against", "against", type=click.Path(path_type=Path), default=None, help="Score the plans against this profile of the same run (cross-hardware).")
@click.option("--truth", "truths", multiple=True, type=click.Path(path_type=Path), metavar="OUTPUT|VALUES.csv",
              help="Score against this truth instead of the design metric: a full simulation's output (with --sim; repeatable) or a kernel_id,value CSV.")
@click.option("--sim", "sim", default=None, help="Simulator adapter that reads the --truth output (accelsim, macsim, hyfiss).")
@click.option("--truth-metric", default=None, help="Metric of the simulator's results to score against.  [default: cycles]")
@click.option("--min-launches", default=1, show_default=True, type=click.IntRange(min=1), help="Skip workloads with fewer launches.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@profile_options
def evaluate_cmd(
    profiles: tuple[Path, ...],
    sampler_name: str,
    params: tuple[str, ...],
    repeats: int,
    sweeps: tuple[str, ...],
    against: Path | None,
    truths: tuple[Path, ...],
    sim: str | None,
    truth_metric: str | None,
    min_launches: int,
    as_json: bool,
    fmt: str | None,
    rank: int | None,
) -> None:
    """Mean error, harmonic-mean speedup, sampled launches and interval coverage of a sampler.

    Each PROFILE is one workload; a folder stands for every profile inside it. The profile's
    own times are the truth: plans are made with seeds 0..R-1 and their estimates scored
    (STEM paper §4.1). Coverage is the fraction of repeats whose interval contains the true
    total (samplers with a statistical design only).

    \b
    simsample evaluate run.nsys-rep.sqlite --sampler stem --sweep eps=0.03,0.05,0.1,0.25
    simsample evaluate profiles/ --sampler root --repeat 10 --json

    With --truth the plans are made on the PROFILE (the design input, e.g. trace features) and
    scored against the per-launch values of a full simulation or a kernel_id,value CSV:

    \b
    simsample evaluate features.parquet --sampler root --truth full.out --sim accelsim
    """
    from simsample.sampling.evaluate import discover_profiles, evaluate_workload, suite_summary, sweep_points, truth_by_launch
    from simsample.io.loading import load_workload
    from simsample.manager import get_host
    from simsample.progress import task

    sampler = get_host().sampler(sampler_name)
    base = parse_params(params)
    points = sweep_points(sweeps)
    resolved = [sampler.resolve_params({**base, **pt}) for pt in points]
    paths = discover_profiles(profiles, format=fmt)
    options = reader_options(rank)
    truth = load_workload([against], format=fmt, options=options) if against is not None else None
    truth_table = _truth_table(truths, sim, truth_metric, against)
    if truth_table is not None and (len(paths) != 1 or paths[0][1]):
        raise UserError("--truth scores one workload: give exactly one profile (not a folder of them)")
    results = []
    skipped = []
    with task(f"evaluating {sampler_name}", total=len(paths) * len(resolved) * repeats) as advance:
        for path, in_folder in paths:
            try:
                wl = load_workload([path], format=fmt, options=options)
                if len(wl) >= min_launches and truth_table is None:
                    wl.values(wl.default_metric())  # untimed traces fail here, with their reason
            except UserError as exc:
                if not in_folder:
                    raise
                msg = str(exc)
                skipped.append(msg if msg.startswith(str(path)) else f"{path}: {msg}")
                advance(len(resolved) * repeats)
                continue
            if len(wl) < min_launches:
                skipped.append(f"{path}: {len(wl)} launches, fewer than {min_launches}")
                advance(len(resolved) * repeats)
                continue
            truth_values = None
            if truth_table is not None:
                table, source, metric = truth_table
                truth_values = truth_by_launch(wl, table, source=source, metric=metric)
            for p in resolved:
                results.append(
                    evaluate_workload(wl, sampler, p, repeats, name=str(path), against=truth, truth=truth_values, on_repeat=advance)
                )
    if not results:
        raise UserError(f"no workload with at least {min_launches} launches among {len(paths)} profile(s)")
    for s in skipped:
        click.echo(f"skipped {s}", err=True)
    swept = sorted({k for pt in points for k in pt})
    if len(resolved) == 1:
        suite: object = suite_summary(results)
    else:
        suite = []
        for p in resolved:
            part = [r for r in results if r.params == p]
            suite.append({"params": {k: p[k] for k in swept}, **suite_summary(part)})
    if as_json:
        echo_json({"workloads": [r.to_json() for r in results], "suite": suite})
        return
    _print_table(results, suite, swept, sampler_name, repeats)


def _truth_table(truths: tuple[Path, ...], sim: str | None, metric: str | None, against: Path | None):
    """``(table, source, metric)`` of the --truth inputs, or None without --truth."""
    if not truths:
        if sim is not None or metric is not None:
            raise UserError("--sim and --truth-metric go with --truth (the full run to score against)")
        return None
    if against is not None:
        raise UserError("--truth and --against are two different ground truths; give one of them")
    source = ", ".join(str(t) for t in truths)
    if sim is None:
        from simsample.sampling.evaluate import read_truth_csv

        if len(truths) > 1:
            raise UserError("a --truth CSV is one file; for a simulator's output give --sim NAME")
        if metric not in (None, "value"):
            raise UserError("--truth-metric chooses a simulator's metric; a kernel_id,value CSV has only 'value'")
        return read_truth_csv(truths[0]), source, "value"
    from simsample.manager import get_host

    table = get_host().adapter(sim).full_run_results(list(truths))
    return table, source, metric or "cycles"


def _short_names(names: list[str]) -> list[str]:
    """Workload names relative to the folder they all share (the table's first column)."""
    import os

    if len(names) < 2:
        return [Path(n).name if os.sep in n else n for n in names]
    try:
        common = os.path.commonpath([os.path.dirname(n) or "." for n in names])
    except ValueError:  # absolute and relative paths mixed
        common = ""
    return [os.path.relpath(n, common) if common else n for n in names]


def _print_table(results, suite, swept: list[str], sampler_name: str, repeats: int) -> None:
    import sys

    con = rich_console.Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 220)
    table = rich_table.Table(title=f"{sampler_name}, {repeats} repeat(s) per workload")
    table.add_column("workload", overflow="fold")
    table.add_column("launches", justify="right")
    for k in swept:
        table.add_column(k, justify="right")
    for col in ("error mean %", "error max %", "speedup (h-mean)", "sampled launches", "coverage"):
        table.add_column(col, justify="right")
    for r, short in zip(results, _short_names([r.name for r in results])):
        table.add_row(
            short,
            f"{r.launches:,}",
            *[str(r.params[k]) for k in swept],
            _fmt(r.error_mean_pct, ".3f"),
            _fmt(r.error_max_pct, ".3f"),
            _fmt(r.speedup_hmean, ",.2f"),
            f"{r.sampled_launches_mean:,.1f}",
            _fmt(r.coverage, ".2f"),
        )
    rows = suite if isinstance(suite, list) else [{"params": {}, **suite}]
    for s in rows:
        table.add_row(
            "[bold]suite[/bold]",
            f"{len(results) // max(len(rows), 1)} workloads",
            *[str(s["params"].get(k, "")) for k in swept],
            _fmt(s["error_mean_pct"], ".3f"),
            "",
            _fmt(s["speedup_hmean"], ",.2f"),
            "",
            _fmt(s["coverage"], ".2f"),
        )
    con.print(table)
