"""``simsample accelsim select`` and ``simsample accelsim merge``: trace only what a plan needs."""

from __future__ import annotations

import shlex
from pathlib import Path

import click

from simsample.sdk import INT64_MAX, UserError, atomic_write_text, check_output_file, writable_parent

_CTX = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


@click.group("accelsim", context_settings=_CTX)
def accelsim_group() -> None:
    """Accel-Sim tracing: the tracer runs a plan needs, and one trace folder from their folders."""


@accelsim_group.command("select", context_settings=_CTX)
@click.option(
    "--plan", "plan_path", required=True, type=click.Path(path_type=Path), help="The plan whose launches to trace."
)
@click.option(
    "-o", "--output", required=True, type=click.Path(path_type=Path), help="Shell script of the tracer runs to write."
)
@click.option(
    "--warmup",
    default="auto",
    show_default=True,
    metavar="auto|reuse|targeted|K|none",
    help="The warm-up 'apply' will use (its default: auto): each sample's window is the launches it may choose from.",
)
@click.option(
    "--warmup-horizon",
    default=5,
    show_default=True,
    type=click.IntRange(min=1, max=INT64_MAX),
    help="auto, reuse, targeted: launches looked back (and traced) before each sample.",
)
@click.option(
    "--max-gap",
    default=16,
    show_default=True,
    type=click.IntRange(min=0, max=INT64_MAX),
    help="Trace up to this many unneeded launches between two windows rather than start another run.",
)
@click.option(
    "--max-runs",
    type=click.IntRange(min=1, max=INT64_MAX),
    help="At most this many tracer runs (ranges merged across their smallest gaps).",
)
@click.option(
    "--app",
    help="The command line that runs the application as profiled, run by the script as typed (else set APP when running it).",
)
@click.option("--tracer", help="Path of the tracer's tracer_tool.so (else set TRACER_TOOL).")
@click.option("--runs", default="runs", show_default=True, help="Folder for the runs' folders (run-0001, ...).")
@click.option(
    "--traces", default="traces", show_default=True, help="Merged trace folder named in the script's closing hint."
)
@click.option(
    "--sampled", default="sampled", show_default=True, help="Sampled folder named in the script's closing hint."
)
@click.option("--compress", is_flag=True, help="Traces written xz-compressed (TRACE_FILE_COMPRESS=1).")
def select_cmd(
    plan_path: Path,
    output: Path,
    warmup: str,
    warmup_horizon: int,
    max_gap: int,
    max_runs: int | None,
    app: str | None,
    tracer: str | None,
    runs: str,
    traces: str,
    sampled: str,
    compress: bool,
) -> None:
    """Write the tracer runs (DYNAMIC_KERNEL_LIMIT_START/END ranges) that trace the plan's sampled launches and their warm-up windows."""
    from simsample.sdk import Plan
    from simsample_accelsim.selection import describe, plan_selection, ranges_text, tracer_script, window_of

    check_output_file(output, [plan_path], what="tracer script")
    writable_parent(output)
    plan = Plan.read(plan_path)
    sel = plan_selection(plan, window=window_of(warmup, warmup_horizon), max_gap=max_gap, max_runs=max_runs)
    atomic_write_text(
        output,
        tracer_script(
            sel,
            app=app,
            tracer=tracer,
            runs=runs,
            plan_path=str(plan_path),
            traces=traces,
            sampled=sampled,
            compress=compress,
        ),
        executable=True,
    )  # never chmod a path written through (/dev/null)
    click.echo(f"{output}: {describe(sel)}; ranges {ranges_text(sel.ranges)}")
    q = shlex.quote
    click.echo(
        f"then: simsample accelsim merge {q(runs)}/run-* --out {q(traces)}; simsample apply --sim accelsim --plan {q(str(plan_path))} "
        f"--traces {q(traces)} --out {q(sampled)} --warmup {q(warmup)}",
        err=True,
    )


@accelsim_group.command("merge", context_settings=_CTX)
@click.argument("runs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--out", required=True, type=click.Path(path_type=Path), help="New trace folder.")
@click.option("--copy", is_flag=True, help="Copy the traces instead of linking them.")
@click.option("--force", is_flag=True, help="Replace OUT if it exists and is not empty.")
def merge_cmd(runs: tuple[Path, ...], out: Path, copy: bool, force: bool) -> None:
    """Merge the folders of tracer runs into one trace folder: kernel lines in launch order, memcpys once, stats.csv kept."""
    from simsample_accelsim.merge import merge_runs
    from simsample_accelsim.selection import ranges_text

    if not runs:
        raise UserError("merge needs the tracer runs' folders")
    res = merge_runs(runs, out, copy=copy, force=force)
    dup = f"; {res.duplicates} launch(es) traced twice, taken once" if res.duplicates else ""
    click.echo(
        f"{out}: {res.launches:,} launches ({ranges_text(res.ranges)}) and {res.memcpys:,} memcpys from {res.runs:,} run(s){dup}"
    )
