"""``simsample evaluate``: score a sampler on profiles, the profile's times as ground truth, or
against another truth (a full simulation's per-launch results, a ``kernel_id,value`` table)."""

from __future__ import annotations

from pathlib import Path

import click
import lazy_loader as lazy

from simsample.cli.common import (
    echo_json,
    parse_params,
    profile_options,
    reader_options,
    report_skipped,
    verbose_option,
)
from simsample.cli.tables import console as table_console
from simsample.cli.tables import one_of, print_csv, print_table, table_options
from simsample.errors import UserError
from simsample.library import DEFAULT_SAMPLER

rich_table = lazy.load("rich.table", suppress_warning=True)


def _fmt(v: float | None, spec: str) -> str:
    return "-" if v is None else format(v, spec)


@click.command("evaluate")
@click.argument("profiles", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--sampler",
    "sampler_name",
    default=DEFAULT_SAMPLER,
    show_default=True,
    help="Sampler name (see 'simsample samplers').",
)
@click.option("--param", "params", multiple=True, metavar="NAME=VALUE", help="Sampler parameter (repeatable).")
@click.option(
    "--repeat",
    "repeats",
    default=10,
    show_default=True,
    type=click.IntRange(min=1),
    help="Plans per workload, with seeds 0..R-1 (at most 100,000).",
)
@click.option(
    "--sweep",
    "sweeps",
    multiple=True,
    metavar="NAME=V1,V2,...",
    help="Evaluate each value of a parameter (repeatable: all combinations).",
)
@click.option(
    "--against",
    "against",
    type=click.Path(path_type=Path),
    default=None,
    help="Score the plans against this profile of the same run (cross-hardware).",
)
@click.option(
    "--truth",
    "truths",
    multiple=True,
    type=click.Path(path_type=Path),
    metavar="OUTPUT|VALUES.csv",
    help=(
        "Score against this truth instead of the design metric: a full simulation's output (with --sim; repeatable) "
        "or a kernel_id,value CSV."
    ),
)
@click.option(
    "--sim", "sim", default=None, help="Simulator adapter that reads the --truth output (accelsim, macsim, hyfiss)."
)
@click.option(
    "--truth-metric", default=None, help="Metric of the simulator's results to score against.  [default: cycles]"
)
@click.option(
    "--min-launches",
    default=1,
    show_default=True,
    type=click.IntRange(min=1),
    help="Skip workloads with fewer launches.",
)
@click.option(
    "--include",
    metavar="REGEX",
    help="Score on the launches whose kernel name matches, as 'plan --include' keeps them.",
)
@click.option(
    "--exclude",
    metavar="REGEX",
    help="Leave out the launches whose kernel name matches (e.g. nccl), as 'plan --exclude' does.",
)
@click.option(
    "--steps",
    metavar="A-B",
    help="Only the launches of steps A..B (ProfilerStep#N, NVTX 'step N'), as 'plan --steps' keeps them.",
)
@click.option(
    "--time-range",
    metavar="START-END",
    help="Only the launches starting in this window from the first launch's start, e.g. 20ms-60ms.",
)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@table_options
@verbose_option
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
    as_csv: bool,
    wide: bool,
    verbose: bool,
    fmt: str | None,
    rank: int | None,
    include: str | None = None,
    exclude: str | None = None,
    steps: str | None = None,
    time_range: str | None = None,
) -> None:
    """Mean error, harmonic-mean speedup, sampled launches, interval coverage and width of a sampler.

    Each PROFILE is one workload; a folder stands for every profile inside it. The profile's
    own times are the truth: plans are made with seeds 0..R-1 and their estimates scored
    (STEM paper §4.1). Coverage is the fraction of repeats whose interval contains the true
    total (samplers with a statistical design only); the median relative half-width of those
    intervals says what that coverage costs.

    \b
    simsample evaluate run.nsys-rep.sqlite --sweep eps=0.03,0.05,0.1,0.25
    simsample evaluate profiles/ --sampler root --repeat 10 --json

    With --truth the plans are made on the PROFILE (the design input, e.g. trace features) and
    scored against the per-launch values of a full simulation or a kernel_id,value CSV:

    \b
    simsample evaluate features.parquet --truth full.out --sim accelsim

    --include, --exclude, --steps and --time-range score the sampler on the launches 'plan'
    keeps with the same filters (the truth is their total).
    """
    from simsample.library import evaluate, get_sampler
    from simsample.progress import task
    from simsample.reading import discover_profiles
    from simsample.sampling.evaluate import sweep_points

    one_of(as_json, as_csv)
    sampler = get_sampler(sampler_name)
    base = parse_params(params)
    points = sweep_points(sweeps)
    for pt in points:
        sampler.resolve_params({**base, **pt})  # a wrong parameter is refused before anything is read
    sweep = {k: [pt[k] for pt in points if k in pt] for k in sorted({k for pt in points for k in pt})}
    sweep = {k: list(dict.fromkeys(v)) for k, v in sweep.items()}
    count = len(discover_profiles(profiles, format=fmt))
    truth_table = _truth_table(truths, sim, truth_metric, against)
    options = reader_options(rank)
    truth, metric = None, "value"
    if truth_table is not None:
        truth, source, metric = truth_table
        truth.attrs["source"] = source
    with task(f"evaluating {sampler.name}", total=count * len(points) * repeats) as advance:
        ev = evaluate(
            list(profiles),
            sampler.name,
            repeats=repeats,
            sweep=sweep,
            against=against,
            truth=truth,
            truth_metric=metric,
            min_launches=min_launches,
            format=fmt,
            rank=options.get("rank"),
            columns=options.get("columns"),
            on_progress=advance,
            include=include,
            exclude=exclude,
            steps=steps,
            time_range=time_range,
            **base,
        )
    report_skipped(ev.skipped, verbose)
    if as_json:
        echo_json(ev.to_json())
        return
    if as_csv:
        frame = ev.to_dataframe()
        print_csv(frame.to_dict("records"), list(frame.columns))
        return
    _print_table(ev.results, ev.suite, ev.swept, sampler.name, repeats, wide)


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


def _print_table(results, suite, swept: list[str], sampler_name: str, repeats: int, wide: bool = False) -> None:
    con = table_console(wide, width=220)
    table = rich_table.Table(title=f"{sampler_name}, {repeats} repeat(s) per workload")
    table.add_column("workload", overflow="fold", no_wrap=wide)
    table.add_column("launches", justify="right")
    for k in swept:
        table.add_column(k, justify="right")
    for col in ("error mean %", "error max %", "speedup (h-mean)", "sampled launches", "coverage", "± median %"):
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
            _fmt(r.half_width_median_pct, ".2f"),
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
            _fmt(s.get("half_width_median_pct"), ".2f"),
        )
    print_table(con, table)


#: what this module adds to the top-level group (:func:`simsample.cli.build_cli`)
COMMANDS = (evaluate_cmd,)
