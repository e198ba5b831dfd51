"""The adapter's click commands: argument parsing and printing over the public API.

``simsample apply|run|profile features --sim accelsim`` (the adapter's own verbs, :func:`commands`;
``collect`` and ``estimate`` are the host's, built from the adapter's declarations) and the
``simsample accelsim`` group (``select`` and ``merge``: trace only what a plan needs), registered
by :mod:`.plugin`. The ``simsample pkp`` group is in :mod:`.pkp.commands`."""

from __future__ import annotations

import shlex
from pathlib import Path

import click

from simsample.sdk import (
    INT64_MAX,
    UserError,
    atomic_write_text,
    check_output_file,
    executor_options,
    writable_parent,
)

_CTX = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


@click.command("apply", context_settings=_CTX)
@click.option("--plan", "plan_path", required=True, type=click.Path(path_type=Path), help="Plan to apply.")
@click.option(
    "--traces", required=True, type=click.Path(path_type=Path), help="Trace folder (or its command list file)."
)
@click.option("--out", required=True, type=click.Path(path_type=Path), help="New folder for the sampled traces.")
@click.option("--copy", is_flag=True, help="Copy the sampled traces instead of linking them.")
@click.option("--force", is_flag=True, help="Replace OUT if it exists and is not empty.")
@click.option(
    "--warmup",
    default="auto",
    show_default=True,
    metavar="auto|reuse|targeted|K|none",
    help=(
        "Launches run before each sampled one for its cache state: every launch back to where the L2 turned over "
        "(reuse), the footprint-targeted producers (targeted), or the K preceding launches. auto: reuse with "
        "functional warm-up, targeted with detailed."
    ),
)
@click.option(
    "--warmup-reach",
    default=1.5,
    show_default=True,
    type=float,
    help="reuse: go back until this many times the L2's lines have been touched.",
)
@click.option(
    "--warmup-horizon",
    default=5,
    show_default=True,
    type=int,
    help="targeted: launches looked back for the producers of a sample's lines.",
)
@click.option(
    "--warmup-coverage",
    default=0.8,
    show_default=True,
    type=float,
    help="targeted: share of those lines whose producers are run.",
)
@click.option(
    "--warmup-budget",
    default="0.25",
    show_default=True,
    metavar="SHARE|none",
    help="targeted: warm-up cost allowed, as a share of the sampled launches' predicted cycles ('none': no limit).",
)
@click.option(
    "--warmup-config",
    "warmup_configs",
    multiple=True,
    type=click.Path(path_type=Path),
    metavar="FILE",
    help=(
        "The gpgpusim.config the run will use (repeatable, later files override): the L2's size for reuse, the "
        "launch latency and SM count of the predicted cycles for targeted; default: those of SM7_QV100."
    ),
)
@click.option(
    "--warmup-mode",
    type=click.Choice(["auto", "detailed", "functional"]),
    default="auto",
    show_default=True,
    help=(
        "functional: warm-up launches as 'warmup kernel-N.traceg' lines, replayed into the caches without timing by "
        "the patched simulator (-functional_warmup 1); auto: functional where the simulator found (--accelsim, "
        "$ACCELSIM_ROOT, PATH) is patched."
    ),
)
@click.option(
    "--accelsim",
    "accelsim_bin",
    type=click.Path(path_type=Path),
    metavar="BIN",
    help="The accel-sim.out the sampled run will use (for --warmup-mode auto).",
)
@click.option(
    "--split",
    is_flag=True,
    help=(
        "One job folder per sampled launch (its memcpys and warm-up launches, then the launch), for 'simsample run' "
        "in parallel."
    ),
)
@click.option(
    "--split-detailed",
    type=int,
    default=None,
    metavar="N",
    help=(
        "With --split and functional warm-up: the N sampled launches before each job's own run in detail, as in the "
        "one list (default 3)."
    ),
)
def apply_cmd(
    plan_path: Path,
    traces: Path,
    out: Path,
    copy: bool,
    force: bool,
    warmup: str,
    warmup_reach: float,
    warmup_horizon: int,
    warmup_coverage: float,
    warmup_budget: str,
    warmup_configs: tuple[Path, ...],
    warmup_mode: str,
    accelsim_bin: Path | None,
    split: bool,
    split_detailed: int | None,
) -> None:
    """Write OUT: a kernelslist.g that runs the plan's launches (and their warm-up launches), their traces, the weights
    and the plan."""
    import simsample

    try:
        budget = None if warmup_budget.strip().lower() == "none" else float(warmup_budget)
    except ValueError:
        raise UserError(f"--warmup-budget {warmup_budget!r}: expected a share such as 0.3, or 'none'") from None
    if split_detailed is not None and (not split or split_detailed < 0):
        raise UserError(
            f"--split-detailed {split_detailed}: give 0 or more, with --split (sampled launches run in detail before "
            "each job's own)"
        )
    simsample.apply(
        plan_path,
        traces,
        out,
        sim="accelsim",
        copy=copy,
        force=force,
        warmup=warmup,
        warmup_reach=warmup_reach,
        warmup_horizon=warmup_horizon,
        warmup_coverage=warmup_coverage,
        warmup_budget=budget,
        warmup_config=warmup_configs,
        warmup_mode=warmup_mode,
        accelsim=accelsim_bin,
        split=split,
        split_detailed=split_detailed,
    )


@click.command("run", context_settings=_CTX)
@click.option("--sampled", required=True, type=click.Path(path_type=Path), help="Folder written by apply.")
@click.option("--accelsim", "binary", required=True, type=click.Path(path_type=Path), help="Path to accel-sim.out.")
@click.option(
    "--config",
    "configs",
    multiple=True,
    required=True,
    type=click.Path(path_type=Path),
    help="Simulator config file (repeatable: gpgpusim.config, trace.config).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    help="Log file for the simulator's output (a split run folder keeps one log per job).",
)
@click.option("--dry-run", is_flag=True, help="Print the command(s) instead of running them.")
@executor_options
@click.argument("extra", nargs=-1, type=click.UNPROCESSED)
def run_cmd(
    sampled: Path,
    binary: Path,
    configs: tuple[Path, ...],
    output: Path | None,
    dry_run: bool,
    extra: tuple[str, ...],
    **executor,
) -> None:
    """Run Accel-Sim on a sampled folder (EXTRA arguments after -- go to the simulator).

    On a folder written by 'apply --split', every job not yet complete runs (on --executor),
    each with its log in its job folder; a rerun finishes only what is missing."""
    from simsample.sdk import check_input_folder
    from simsample_accelsim.run import build_command, run_simulator
    from simsample_accelsim.split import is_run_folder

    check_input_folder(sampled, "folder written by 'simsample apply'")
    if is_run_folder(sampled):
        if output is not None:
            raise UserError(
                f"{sampled}: a split run folder keeps one log per job (jobs/NAME/accelsim.log); leave out -o"
            )
        from simsample_accelsim.runjobs import run_split

        run_split(sampled, binary, configs, extra, dry_run=dry_run, **executor)
        return
    if output is None:
        raise UserError("run needs -o LOG (the file for the simulator's output)")
    if executor["executor"] != "local" or executor["jobs"] is not None or executor["retries"]:
        raise UserError(
            f"{sampled}: --executor/--jobs/--retries apply to a folder written by 'apply --split'; this one is a "
            "single run"
        )

    # the log may go inside SAMPLED (the simulator's working folder), but never onto what it reads
    read = [f for f in sampled.iterdir() if f.name.startswith(("kernel", "simsample-"))] if sampled.is_dir() else []
    check_output_file(output, [binary, *configs, *read], what="simulator log")
    cmd, cwd = build_command(sampled, binary, configs, extra, check_binary=not dry_run)
    if dry_run:
        click.echo(f"cd {shlex.quote(str(cwd))} && {shlex.join(cmd)} > {shlex.quote(str(output))} 2>&1")
        return
    from simsample.sdk import writes_through

    if writes_through(output):
        # refused before the simulator starts: the log is read back to judge whether the run finished
        raise UserError(
            f"-o {output}: run reads the simulator's log back to judge whether it finished (and collect and "
            "estimate read it later); give a file name"
        )
    summary = run_simulator(cmd, cwd, output)
    click.echo(summary, err=True)


class _EngineOption(click.Option):
    """``--engine``, whose help says which scanner ``auto`` picks on this installation."""

    def get_help_record(self, ctx: click.Context):
        from simsample_accelsim.features import engine_note

        self.help = (
            "Trace scanner: native (compiled C++), numpy, or python (the line-by-line reference). Here auto = "
            f"{engine_note()}."
        )
        return super().get_help_record(ctx)


@click.command("features", context_settings=_CTX)
@click.argument("traces", type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(path_type=Path),
    help="Parquet file for the workload with features.",
)
@click.option(
    "--jobs",
    "-j",
    default=1,
    show_default=True,
    type=int,
    help="Trace files scanned in parallel (threads with the compiled scanner, else processes).",
)
@click.option(
    "--engine",
    cls=_EngineOption,
    type=click.Choice(["auto", "native", "numpy", "python"]),
    default="auto",
    show_default=True,
)
@click.option("--no-cache", is_flag=True, help="Rescan every trace (the cache beside OUTPUT is not read or written).")
@click.option(
    "--config",
    "configs",
    multiple=True,
    type=click.Path(path_type=Path),
    metavar="FILE",
    help="The gpgpusim.config the simulation will use (repeatable, later files override), for occupancy, waves and "
    "predicted cycles; default: those of SM7_QV100.",
)
@click.option(
    "--no-context",
    is_flag=True,
    help=(
        "Leave out warm_reads (the share of each launch's loads that find lines recent launches touched): the scan "
        "then records no cache lines, a pass of the numpy scanner saved; plans group by occupancy only."
    ),
)
def features_cmd(
    traces: Path, output: Path, jobs: int, engine: str, no_cache: bool, configs: tuple[Path, ...], no_context: bool
) -> None:
    """Scan the trace bodies once: instruction counts, PKA metrics, sectors, basic-block vectors, occupancy, predicted
    cycles and cache context."""
    from simsample.sdk import extras_path, task, temporary_cache, writes_through
    from simsample_accelsim.features import compute_features, default_cache_dir, total_bytes
    from simsample_accelsim.occupancy import GpuConfig
    from simsample_accelsim.reader import scan_folder

    # no cache (and no extras) beside a device or a pipe (-o /dev/null): nothing is created in /dev
    cache_dir = None if no_cache or writes_through(output) else default_cache_dir(output)
    for written in (output, extras_path(output)):
        check_output_file(written, [traces, *configs], what="features table")
    if cache_dir is not None:  # a folder kept from the last run is reused, never refused
        if cache_dir.exists() and not cache_dir.is_dir():
            raise UserError(
                f"{cache_dir}: exists and is not a folder, where the feature cache goes; move it away or pass "
                "--no-cache"
            )
        check_output_file(cache_dir / "entry.npz", [traces], what="feature cache")
    writable_parent(output)
    gpu = GpuConfig.from_configs(configs) if configs else None
    tf = scan_folder(traces)
    with temporary_cache(cache_dir):
        with task("scanning traces", total_bytes(tf), bytes_=True) as advance:
            wl = compute_features(
                traces,
                jobs=jobs,
                engine=engine,
                cache_dir=cache_dir,
                progress=advance,
                folder=tf,
                gpu=gpu,
                context=not no_context,
            )
        wl.to_parquet(output)
    k = wl.kernels
    click.echo(
        f"{output}: {len(wl):,} launches, {int(k['warp_insts'].sum()):,} warp instructions, "
        f"{wl.extras['bbv'].shape[1]:,} basic blocks, {wl.extras['warp_types'].shape[0]:,} warp types",
        err=True,
    )


def commands() -> dict[str, click.Command]:
    """The adapter's own verbs; ``collect`` and ``estimate`` are the host's, built from its declarations."""
    return {"apply": apply_cmd, "run": run_cmd, "features": features_cmd}


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
    help=(
        "The command line that runs the application as profiled, run by the script as typed (else set APP when "
        "running it)."
    ),
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
    """Write the tracer runs (DYNAMIC_KERNEL_LIMIT_START/END ranges) that trace the plan's sampled launches and their
    warm-up windows."""
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
        f"then: simsample accelsim merge {q(runs)}/run-* --out {q(traces)}; simsample apply --sim accelsim --plan "
        f"{q(str(plan_path))} --traces {q(traces)} --out {q(sampled)} --warmup {q(warmup)}",
        err=True,
    )


@accelsim_group.command("merge", context_settings=_CTX)
@click.argument("runs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--out", required=True, type=click.Path(path_type=Path), help="New trace folder.")
@click.option("--copy", is_flag=True, help="Copy the traces instead of linking them.")
@click.option("--force", is_flag=True, help="Replace OUT if it exists and is not empty.")
def merge_cmd(runs: tuple[Path, ...], out: Path, copy: bool, force: bool) -> None:
    """Merge the folders of tracer runs into one trace folder: kernel lines in launch order, memcpys once, stats.csv
    kept."""
    from simsample_accelsim.merge import merge_runs
    from simsample_accelsim.selection import ranges_text

    if not runs:
        raise UserError("merge needs the tracer runs' folders")
    res = merge_runs(runs, out, copy=copy, force=force)
    dup = f"; {res.duplicates} launch(es) traced twice, taken once" if res.duplicates else ""
    click.echo(
        f"{out}: {res.launches:,} launches ({ranges_text(res.ranges)}) and {res.memcpys:,} memcpys from {res.runs:,} "
        f"run(s){dup}"
    )
