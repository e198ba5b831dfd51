"""Built-in commands: plugins, samplers, profile info, plan, and the generic estimate."""

from __future__ import annotations

from pathlib import Path

import click
import lazy_loader as lazy
import numpy as np

from simsample.cli.common import (
    csv_requested,
    echo_json,
    fmt_ns,
    join_option,
    parse_params,
    profile_options,
    reader_options,
    report_skipped,
    verbose_option,
)
from simsample.cli.tables import console as table_console
from simsample.cli.tables import kernel_label, name_column, one_of, print_csv, print_table, table_options
from simsample.errors import FormatError, UserError, settle_signals
from simsample.io.files import check_input_file, check_output_file, writable_parent
from simsample.io.limits import check_size
from simsample.library import DEFAULT_SAMPLER

pd = lazy.load("pandas")
rich_console = lazy.load("rich.console", suppress_warning=True)
rich_table = lazy.load("rich.table", suppress_warning=True)


def _console() -> rich_console.Console:
    from simsample.cli.tables import output_width

    return rich_console.Console(highlight=False, soft_wrap=True, width=output_width())


def display_name(name: str, width: int = 72) -> str:
    """A kernel name for a table: argument list dropped, long names cut in the middle."""
    from simsample.io.limits import shown_name
    from simsample.io.names import strip_args

    short = strip_args(shown_name(name, 4096))  # a name of megabytes: its ends are what shows
    if len(short) <= width:
        return short
    half = (width - 1) // 2
    return short[:half] + "…" + short[-(width - 1 - half) :]


@click.command("plugins")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def plugins_cmd(as_json: bool) -> None:
    """List plugins: what each registers, its distribution and version, and load errors."""
    from simsample.manager import get_host

    host = get_host()
    host.load()
    root = click.get_current_context().find_root().command
    if isinstance(root, click.Group):  # what each plugin adds to the command line is recorded as it is added
        host.add_commands(root)
    infos = [i.to_json() for i in host.infos.values()]
    extra = _implementations({m: label for a in host.adapters().values() for m, label in a.compiled_parts.items()})
    if as_json:
        echo_json({"plugins": infos, "implementations": extra})
        return
    table = rich_table.Table(title=None, show_lines=False)
    for col in ("plugin", "origin", "distribution", "registers", "status"):
        table.add_column(col)
    for i in infos:
        regs = "; ".join(f"{k}: {', '.join(v)}" for k, v in i["registers"].items())
        dist = f"{i['distribution'] or '-'} {i['version'] or ''}".strip()
        status = f"[red]error: {i['error']}[/red]" if i["error"] else "ok"
        table.add_row(i["name"], i["origin"], dist, regs or "-", status)
    con = _console()
    con.print(table)
    for k, v in extra.items():
        con.print(f"{k}: {v}")


def _implementations(adapters_parts: dict[str, str]) -> dict[str, str]:
    """Which implementation of each optional compiled part is active: the core's (e.g. the PKP
    monitor) and those the installed adapters declare (e.g. Accel-Sim's trace scanner)."""
    from simsample.native import implementations

    return implementations(adapters_parts)


@click.command("samplers")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def samplers_cmd(as_json: bool) -> None:
    """List samplers with their parameters, defaults and required workload columns."""
    from simsample.manager import get_host

    samplers = get_host().samplers()
    doc = []
    for name in sorted(samplers):
        s = samplers[name]
        doc.append(
            {
                "name": name,
                "version": s.version,
                "description": s.description,
                "bounded": s.bounded,
                "requires": list(s.requires),
                "unavailable": s.unavailable(),
                "params": [
                    {
                        "name": p.name,
                        "type": p.type.__name__,
                        "default": p.default,
                        "help": p.help,
                        **({"choices": list(p.choices)} if p.choices else {}),
                    }
                    for p in s.params
                ],
            }
        )
    if as_json:
        echo_json({"samplers": doc})
        return
    con = _console()
    for s in doc:
        con.print(f"[bold]{s['name']}[/bold] (v{s['version']}): {s['description']}")
        if s["unavailable"]:
            con.print(f"  [yellow]unavailable here[/yellow]: {s['unavailable']}")
        if s["requires"]:
            con.print(f"  requires: {', '.join(s['requires'])}")
        for p in s["params"]:
            choices = f" [{'|'.join(p['choices'])}]" if p.get("choices") else ""
            con.print(f"  {p['name']} ({p['type']}{choices}, default {p['default']!r}): {p['help']}")


@click.group("profile")
def profile_group() -> None:
    """Inspect profiles and derive features from simulator traces."""


@profile_group.command("info")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@profile_options
@join_option
@click.option("--top", default=10, show_default=True, type=click.IntRange(min=0), help="How many kernels to list.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@table_options
@verbose_option
def profile_info(
    files: tuple[Path, ...],
    fmt: str | None,
    rank: int | None,
    join: Path | None,
    top: int,
    as_json: bool,
    as_csv: bool,
    wide: bool,
    verbose: bool,
) -> None:
    """Summarise a profile: launches, kernels, time, memcpys, and the top kernels.

    A folder is searched as 'simsample evaluate' searches it: one that holds several
    profiles gets one summary for each.
    """
    from simsample.library import find_workloads, read

    one_of(as_json, as_csv)
    options = reader_options(rank)
    workloads = [files]
    if len(files) == 1 and files[0].is_dir():
        found, skipped = find_workloads(files, format=fmt)
        report_skipped(skipped, verbose)
        workloads = [(f,) for f in found]
    docs = []
    for paths in workloads:
        wl = read(*paths, format=fmt, rank=options.get("rank"), join=join, columns=options.get("columns"))
        docs.append((wl, _info_doc(wl, top)))
    if as_json:
        echo_json(docs[0][1] if len(docs) == 1 else {"workloads": [d for _, d in docs]})
        return
    if as_csv:
        cols = ["name", "launches", "total", "mean", "cov", "share"]
        print_csv(
            ([{"source": d["source"], **r} for _, d in docs for r in d["top_kernels"]]),
            (["source"] if len(docs) > 1 else []) + cols,
        )
        return
    for i, (wl, doc) in enumerate(docs):
        if i:
            click.echo()
        _print_info(wl, doc, wide)


def _info_doc(wl, top: int) -> dict:
    summary = wl.summary()
    metric = _info_metric(wl)
    top_df = wl.top_kernels(top, metric) if len(wl) else pd.DataFrame()
    return {
        "source": wl.source,
        "format": wl.format,
        **summary,
        "metric": metric,
        "fingerprint": wl.fingerprint,
        "meta": wl.meta,
        "top_kernels": [
            {
                "name": str(r["name"]),
                "launches": int(r["launches"]),
                "total": float(r["total"]),
                "mean": float(r["mean"]),
                "cov": float(r["cov"]),
                "share": float(r["share"]),
            }
            for _, r in top_df.iterrows()
        ],
    }


def _print_info(wl, doc: dict, wide: bool) -> None:
    con = table_console(wide)
    metric = doc["metric"]
    con.print(f"source: {wl.source}  (format {wl.format})")
    con.print(
        f"launches: {doc['launches']:,}   distinct kernels: {doc['distinct_kernels']:,}   memcpys: "
        f"{doc['memcpy_count']:,}"
    )
    con.print(f"total kernel time: {fmt_ns(doc['total_time_ns']) if doc['total_time_ns'] is not None else 'not timed'}")
    for k, v in wl.meta.items():
        if isinstance(v, (str, int, float)):
            con.print(f"{k}: {v}")
    table = rich_table.Table(title=f"top {len(doc['top_kernels'])} kernels by {metric}")
    name_column(table, "kernel", wide)
    for col in ("launches", "total", "mean", "CoV", "share"):
        table.add_column(col, justify="right", no_wrap=True)
    timed = metric in ("duration_ns", "start_ns")
    for r in doc["top_kernels"]:
        show = fmt_ns if timed else (lambda x: f"{x:,.0f}")
        table.add_row(
            kernel_label(r["name"], wide),
            f"{r['launches']:,}",
            show(r["total"]),
            show(r["mean"]),
            f"{r['cov']:.3f}",
            f"{100 * r['share']:.1f}%",
        )
    print_table(con, table)


def _info_metric(wl) -> str:
    """What to rank kernels by: the cost metric, or launch counts for untimed traces."""
    if not len(wl):
        return "duration_ns"
    try:
        return wl.default_metric()
    except UserError:
        return "launches"


@click.command("plan")
@click.argument("profiles", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--sampler",
    "sampler_name",
    default=None,
    help=f"Sampler name (see 'simsample samplers'); default: {DEFAULT_SAMPLER}.",
)
@click.option("--param", "params", multiple=True, metavar="NAME=VALUE", help="Sampler parameter (repeatable).")
@click.option(
    "--seed",
    default=0,
    show_default=True,
    type=click.IntRange(0, 2**32 - 1),
    help="Random seed (recorded in the plan).",
)
@click.option("-o", "--output", required=True, type=click.Path(path_type=Path), help="Plan file to write.")
@profile_options
@join_option
@click.option(
    "--include", metavar="REGEX", help="Plan only the launches whose kernel name matches (case-insensitive search)."
)
@click.option(
    "--exclude",
    metavar="REGEX",
    help="Leave out the launches whose kernel name matches (e.g. nccl); their measured time is reported by estimate.",
)
@click.option(
    "--steps",
    metavar="A-B",
    help=(
        "Only the launches of steps A..B: ProfilerStep#N of a PyTorch-profiler trace, NVTX ranges 'step N' of an "
        "nsys export."
    ),
)
@click.option(
    "--time-range",
    metavar="START-END",
    help="Only the launches starting in this window from the first launch's start, e.g. 200ms-450ms.",
)
@click.option(
    "--first-launch",
    type=int,
    metavar="N",
    help=(
        "The process's launch number (the tracer's 1-based counter) of the profile's first launch; needed for tracer "
        "selections from a profile that does not start with the process (a PyTorch-profiler window)."
    ),
)
def plan_cmd(
    profiles: tuple[Path, ...],
    sampler_name: str | None,
    params: tuple[str, ...],
    seed: int,
    output: Path,
    fmt: str | None,
    rank: int | None,
    join: Path | None,
    include: str | None,
    exclude: str | None,
    steps: str | None,
    time_range: str | None,
    first_launch: int | None,
) -> None:
    """Choose the launches to simulate and write a plan."""
    from simsample.library import get_sampler, plan, read, resolve_params
    from simsample.progress import stage

    check_output_file(output, [*profiles, join], what="plan")
    writable_parent(output)
    chosen = sampler_name is None
    sampler = get_sampler(DEFAULT_SAMPLER if chosen else sampler_name)
    given = parse_params(params)
    resolve_params(sampler, given)  # a wrong parameter is refused before the profile is read
    options = reader_options(rank)
    wl = read(*profiles, format=fmt, rank=options.get("rank"), join=join, columns=options.get("columns"))
    if len(wl) == 0:
        raise UserError(f"{wl.source}: no kernel launches to sample")
    from simsample.sampling.filters import LaunchFilter, attach_process, prepare

    prep = prepare(wl, profiles, LaunchFilter(include, exclude, steps, time_range), first_launch=first_launch)
    for line in prep.filtered.notes:
        click.echo(f"note: {line}", err=True)
    wl = prep.workload
    with stage(f"planning {len(wl):,} launches with {sampler.name}") as say:
        plan_ = plan(wl, sampler.name, seed=seed, stage=say, **given)
    attach_process(plan_, prep)
    if chosen:
        plan_.prediction["default_sampler"] = True  # the plan says it was not asked for by name
    plan_.write(output)
    settle_signals()  # the plan is written: a signal now cannot make it a failed command
    pred = plan_.prediction
    audit = plan_.estimator.get("audit")
    summary = (
        f"{output}: {pred['sampled_launches']:,} of {len(wl):,} launches in {len(plan_.workload_clusters):,} clusters"
    )
    if audit is not None:
        summary += f" and an audit of {audit['draws']:,} draw(s)"
    if chosen:
        summary += f" (sampler {sampler.name}, the default; --sampler to choose another)"
    if pred.get("speedup"):
        summary += f"; predicted speedup {pred['speedup']:.2f}x"
    if pred.get("error_bound") is not None:
        summary += f", error bound {100 * pred['error_bound']:.2f}% at {100 * pred['confidence']:.0f}%"
    click.echo(summary)
    if pred.get("note"):
        click.echo(f"note: {pred['note']}", err=True)
    if prep.filtered.excluded_launches:
        click.echo(
            f"note: {prep.filtered.excluded_launches:,} of {prep.filtered.profile_launches:,} launches left out by "
            "the filters",
            err=True,
        )


def read_values_csv(path: Path) -> pd.DataFrame:
    """A CSV of ``kernel_id`` and one or more numeric metric columns (``value`` by default)."""
    check_input_file(path)
    check_size(path, "log")
    try:
        df = pd.read_csv(path)
    except Exception as exc:
        raise FormatError(path, f"not a readable CSV ({exc})") from exc
    df.columns = [str(c).strip() for c in df.columns]
    if "kernel_id" not in df.columns:
        raise FormatError(path, "expected a header with kernel_id and at least one value column", line=1)
    metrics = [c for c in df.columns if c != "kernel_id"]
    if not metrics:
        raise FormatError(path, "no value column beside kernel_id", line=1)
    for c in ["kernel_id", *metrics]:
        num = pd.to_numeric(df[c], errors="coerce")
        if num.isna().any():
            bad = int(num.isna().to_numpy().nonzero()[0][0])
            raise FormatError(path, f"column {c} is not numeric ({str(df[c].iloc[bad])!r})", line=bad + 2)
        finite = np.isfinite(num.to_numpy(np.float64))
        if not finite.all():
            bad = int(np.flatnonzero(~finite)[0])
            raise FormatError(
                path, f"column {c}: {float(num.iloc[bad])} is out of range (not a finite number)", line=bad + 2
            )
        df[c] = num
    return df


def print_estimates(estimates, plan, as_json: bool, *, header: str = "", as_csv: bool | None = None) -> None:
    """Shared output of ``estimate`` for the generic path and for adapters (``--csv``: from
    ``simsample estimate --sim NAME ... --csv`` when the adapter's command has no such option).
    ``estimates``: the ``Estimate`` the API returned (or a list of metric estimates). Launches a
    plan's filters left out are reported beside the estimate, never added to it."""
    from simsample.library import Estimate
    from simsample.sampling.estimate import no_interval_reason
    from simsample.sampling.filters import excluded_line

    est = estimates if isinstance(estimates, Estimate) else Estimate(plan, list(estimates))
    estimates = est.estimates
    if as_csv is None:
        as_csv = csv_requested()
    if as_json:
        doc = est.to_json()  # with the launches the plan's filters left out, as the API's
        echo_json(doc)
        return
    if as_csv:
        frame = est.to_dataframe().reset_index()
        print_csv(frame.to_dict("records"), list(frame.columns))
        return
    con = _console()
    if header:
        con.print(header)
    table = rich_table.Table()
    for col in (
        "metric",
        "estimate",
        "std error",
        f"{100 * (estimates[0].confidence if estimates else 0.95):.0f}% interval",
        "± (half-width)",
    ):
        table.add_column(col, justify="right" if col != "metric" else "left")
    for e, hw in zip(est.estimates, est.to_dataframe()["half_width_pct"]):
        fmt = (lambda x: f"{x:,.4f}") if e.kind == "ratio" else (lambda x: f"{x:,.1f}")
        interval = f"[{fmt(e.ci_low)}, {fmt(e.ci_high)}]" if e.ci_low is not None else no_interval_reason(plan)
        if e.ci_low is None and getattr(e, "dof", None) is not None:  # its draws cannot support the plan's confidence
            interval = f"none: {e.dof:.1f} dof, too few for {100 * e.confidence:g}%"
        if (
            e.ci_low is not None and getattr(e, "dof", None) is not None and e.dof < 30
        ):  # Student's t: where it widens the interval
            interval += f" (t, {e.dof:.1f} dof)"
        table.add_row(
            e.metric,
            fmt(e.estimate),
            fmt(e.std_error) if e.std_error is not None else "-",
            interval,
            "-" if pd.isna(hw) else f"{hw:.2f}%",
        )
    con.print(table)
    audited = next((e for e in estimates if e.bias is not None and e.estimate != e.bias), None)
    if audited is not None:  # the direction matters as much as the width: say which way the projection is off
        draws = plan.estimator["audit"]["draws"]
        off = 100 * audited.bias / (audited.estimate - audited.bias)
        con.print(
            f"audit of {draws} draw(s): the representatives' projection of {audited.metric} is an estimated "
            f"{off:+.2f}% off the whole run; the interval reaches that far and t standard errors beyond",
            highlight=False,
        )
    if plan.prediction.get("error_bound") is not None:
        con.print(
            f"plan's bound: ±{100 * plan.prediction['error_bound']:.2f}% at "
            f"{100 * plan.prediction['confidence']:.0f}% confidence"
        )
    line = excluded_line(plan)
    if line:
        con.print(line, highlight=False)


@click.command("estimate", context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--sim",
    "sim",
    default=None,
    metavar="NAME",
    help=(
        "Read simulator output with this adapter (accelsim, macsim, hyfiss; 'simsample estimate --sim NAME -h' lists "
        "its options)."
    ),
)
@click.option(
    "--plan",
    "plan_path",
    required=True,
    type=click.Path(path_type=Path),
    help="The plan the values were simulated for.",
)
@click.argument("values", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--confidence", default=None, type=float, help="Confidence level of the interval (default: the plan's).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--csv", "as_csv", is_flag=True, help="The table as CSV on standard output.")
def generic_estimate(
    sim: str | None, plan_path: Path, values: tuple[Path, ...], confidence: float | None, as_json: bool, as_csv: bool
) -> None:
    """Whole-workload estimate with its confidence interval.

    \b
    From simulator output:   simsample estimate --sim NAME --plan plan.json OUTPUT...
    From a table of values:  simsample estimate --plan plan.json VALUES.csv
    (VALUES.csv: kernel_id and one or more numeric columns, one row per simulated launch.)
    """
    from simsample.library import estimate
    from simsample.planfile import Plan

    one_of(as_json, as_csv)
    plan = Plan.read(plan_path)
    frames = [read_values_csv(v) for v in values]
    df = pd.concat(frames, ignore_index=True)
    df.attrs["source"] = ", ".join(str(v) for v in values)
    est = estimate(plan, df, confidence=confidence)
    print_estimates(est, plan, as_json, as_csv=as_csv)


#: what this module adds to the top-level group (:func:`simsample.cli.build_cli`)
COMMANDS = (plugins_cmd, samplers_cmd, profile_group, plan_cmd)
