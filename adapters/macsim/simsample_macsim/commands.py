"""The ``macsim`` adapter's command line: ``simsample apply|run --sim macsim`` and ``simsample
profile features --sim macsim`` (``collect`` and ``estimate`` are the host's, built from the
adapter's declarations). Each command parses its arguments and calls the public API."""

from __future__ import annotations

import shlex
from pathlib import Path

import click

from simsample.sdk import UserError
from simsample_macsim.warmup import DEFAULT_COVERAGE, DEFAULT_HORIZON, DEFAULT_WARMUP

_PATH = click.Path(path_type=Path)


@click.command("apply")
@click.option("--plan", "plan_path", required=True, type=_PATH, help="The plan (plan.json).")
@click.option(
    "--traces",
    type=_PATH,
    default=None,
    help="MacSim trace folder (or its kernel_config.txt / trace_file_list). "
    "Without it, only the tracer's SAMPLED_KERNEL_INFO file, the weights, the plan and params.in are written.",
)
@click.option("--out", required=True, type=_PATH, help="New (or empty) folder for the sampled inputs.")
@click.option(
    "--params", type=_PATH, default=None, help="params.in to run with; copied with the knobs collection needs."
)
@click.option("--force", is_flag=True, help="Replace OUT if it is not empty.")
@click.option("--copy", is_flag=True, help="Copy the sampled KernelN folders instead of linking them.")
@click.option(
    "--relative",
    is_flag=True,
    help="trace_file_list names ./kernel_config.txt (run MacSim from OUT) instead of its absolute path.",
)
@click.option("--split", is_flag=True, help="Not available for MacSim (see the message).")
@click.option(
    "--warmup",
    default=DEFAULT_WARMUP,
    show_default=True,
    metavar="K|targeted|none",
    help=(
        "Launches run before each sampled one for their cache state (not counted): the K before it, "
        "the window back to the last toucher of its lines and code, or none."
    ),
)
@click.option(
    "--warmup-horizon",
    default=DEFAULT_HORIZON,
    show_default=True,
    type=int,
    help="targeted: launches looked back for the last touchers of a sample's lines and code.",
)
@click.option(
    "--warmup-coverage",
    default=DEFAULT_COVERAGE,
    show_default=True,
    type=float,
    help="targeted: share of a sample's memory accesses whose last toucher the window must hold.",
)
@click.option(
    "--warmup-budget",
    default="none",
    show_default=True,
    metavar="SHARE|none",
    help="targeted: warm-up warp instructions allowed, as a share of the sampled launches' ('none': no limit).",
)
@click.option(
    "--warmup-window",
    default=0,
    show_default=True,
    type=click.IntRange(min=0),
    metavar="W",
    help=(
        "Also name the W launches before each sampled one in SAMPLED_KERNEL_INFO, so that they are traced for warm-up."
    ),
)
def apply_cmd(
    plan_path: Path,
    traces: Path | None,
    out: Path,
    params: Path | None,
    force: bool,
    copy: bool,
    relative: bool,
    split: bool,
    warmup: str,
    warmup_horizon: int,
    warmup_coverage: float,
    warmup_budget: str,
    warmup_window: int,
) -> None:
    """Write a folder that runs only the plan's kernels and their warm-up launches (and the tracer's SAMPLED_KERNEL_INFO
    file)."""
    import simsample

    try:
        budget = None if warmup_budget.strip().lower() == "none" else float(warmup_budget)
    except ValueError:
        raise UserError(f"--warmup-budget {warmup_budget!r}: expected a share such as 0.5, or 'none'") from None
    simsample.apply(
        plan_path,
        traces,
        out,
        sim="macsim",
        params=params,
        force=force,
        copy=copy,
        relative=relative,
        split=split,
        warmup=warmup,
        warmup_horizon=warmup_horizon,
        warmup_coverage=warmup_coverage,
        warmup_budget=budget,
        warmup_window=warmup_window,
    )


@click.command("features")
@click.argument("traces", type=_PATH)
@click.option("-o", "--output", required=True, type=_PATH, help="Workload with trace features (parquet).")
@click.option(
    "--params",
    type=_PATH,
    default=None,
    help="The params.in the simulation will use, for the cores (occupancy) and the LLC's size (cache context); "
    "default: MacSim's built-in knob values.",
)
@click.option(
    "--no-context",
    is_flag=True,
    help="Leave out warm_reads (the share of each launch's loads and stores that touch lines recent launches "
    "touched): only the headers are read; plans then group by name and occupancy.",
)
def features_cmd(traces: Path, output: Path, params: Path | None, no_context: bool) -> None:
    """Per-launch features from a MacSim trace folder: warps, instructions, warp imbalance, occupancy and cache
    context."""
    from simsample.sdk import check_output_file, extras_path, task
    from simsample_macsim.features import trace_features
    from simsample_macsim.reader import load_trace_folder

    for written in (output, extras_path(output)):
        check_output_file(written, [traces, *([params] if params else [])], what="features table")
    launches = None if no_context else len(load_trace_folder(traces, quiet=True).config.kernels)
    with task("reading trace addresses", launches) as advance:
        wl = trace_features(traces, params=params, context=not no_context, progress=advance)
    wl.to_parquet(output)
    click.echo(f"{output}: {len(wl)} launches, features {', '.join(wl.feature_columns)}")


@click.command("run")
@click.option("--sampled", required=True, type=_PATH, help="Folder written by apply (with --traces and --params).")
@click.option("--macsim", "binary", required=True, type=_PATH, help="The MacSim executable.")
@click.option(
    "-o", "--output", type=_PATH, default=None, help="Log file for MacSim's output [default: SAMPLED/macsim.out]."
)
@click.option("--force", is_flag=True, help="Overwrite an existing log.")
@click.option("--dry-run", is_flag=True, help="Print the command instead of running it.")
def run_cmd(sampled: Path, binary: Path, output: Path | None, force: bool, dry_run: bool) -> None:
    """Run MacSim in a folder written by apply (it reads params.in and trace_file_list there)."""
    from simsample.sdk import check_input_folder

    check_input_folder(sampled, "folder written by 'simsample apply'")
    for need in ("params.in", "trace_file_list", "kernel_config.txt"):
        if not (sampled / need).is_file():
            raise UserError(f"{sampled}: no {need}; run 'simsample apply --sim macsim --traces ... --params ...' first")
    exe = binary.resolve()
    target = (output if output is not None else sampled / "macsim.out").resolve()
    from simsample.sdk import check_output_file

    read = [
        f
        for f in sampled.iterdir()
        if f.name in ("params.in", "trace_file_list") or f.name.startswith(("kernel", "simsample-", "Kernel"))
    ]
    check_output_file(target, [binary, *read], what="simulator log")
    if dry_run:
        click.echo(f"cd {shlex.quote(str(sampled))} && {shlex.quote(str(exe))} > {shlex.quote(str(target))} 2>&1")
        return
    if not exe.is_file():
        raise UserError(f"{binary}: no such file")
    if target.exists() and not force:
        raise UserError(f"{target}: exists; pass --force to overwrite it")
    click.echo(f"running {exe} in {sampled} (output in {target})", err=True)
    from simsample.sdk import run_in_group

    try:
        with open(target, "wb") as fh:
            try:
                rc = run_in_group([str(exe)], cwd=sampled, stdout=fh)
            except OSError as exc:  # not a program (exec format error), not executable
                raise UserError(f"cannot start {exe}: {exc.strerror or exc}") from None
    except BaseException:  # Ctrl-C, SIGTERM: MacSim and its children ended, the partial log removed
        from simsample.sdk import remove_partial

        remove_partial(target)  # a regular file only: never /dev/null or a pipe
        raise
    if rc != 0:
        raise UserError(f"MacSim exited with status {rc}; see {target}")
    click.echo(f"{target}: done; collect with: simsample collect --sim macsim --plan PLAN {shlex.quote(str(target))}")
