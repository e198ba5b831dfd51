"""Click commands behind ``simsample apply|collect|estimate|run|profile features --sim accelsim``."""

from __future__ import annotations

import shlex
from pathlib import Path

import click

from simsample.errors import UserError

_CTX = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def _plan(path: Path):
    from simsample.plan import Plan

    return Plan.read(path)


@click.command("apply", context_settings=_CTX)
@click.option("--plan", "plan_path", required=True, type=click.Path(path_type=Path), help="Plan to apply.")
@click.option("--traces", required=True, type=click.Path(path_type=Path), help="Trace folder (or its command list file).")
@click.option("--out", required=True, type=click.Path(path_type=Path), help="New folder for the sampled traces.")
@click.option("--copy", is_flag=True, help="Copy the sampled traces instead of linking them.")
@click.option("--force", is_flag=True, help="Replace OUT if it exists and is not empty.")
def apply_cmd(plan_path: Path, traces: Path, out: Path, copy: bool, force: bool) -> None:
    """Write OUT: a kernelslist.g that runs only the plan's launches, their traces, the weights and the plan."""
    from simsample_accelsim.apply import apply_plan

    plan = _plan(plan_path)
    res = apply_plan(plan, traces, out, copy=copy, force=force)
    how = "copied" if res.copied else "linked"
    click.echo(
        f"{out}: {len(res.rows):,} launches ({how}) and {res.memcpys:,} memcpys in {out / 'kernelslist.g'}; "
        f"run: accel-sim.out -trace {out / 'kernelslist.g'} -config gpgpusim.config -config trace.config"
    )


@click.command("collect", context_settings=_CTX)
@click.option("--plan", "plan_path", type=click.Path(path_type=Path), help="Plan the run was made for (checks that every sampled launch has results).")
@click.argument("logs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("-o", "--output", type=click.Path(path_type=Path), help="Results CSV to write (default: standard output).")
@click.option("--traces", type=click.Path(path_type=Path), help="Trace folder, to map launches when the plan was made on another source.")
@click.option("--allow-incomplete", is_flag=True, help="Keep going when sampled launches lack results (they are reported).")
def collect_cmd(plan_path: Path | None, logs: tuple[Path, ...], output: Path | None, traces: Path | None, allow_incomplete: bool) -> None:
    """Parse Accel-Sim output LOG(s) into per-launch results keyed by kernel id."""
    from simsample.fileio import atomic_write_text
    from simsample_accelsim.collect import collect_logs

    plan = _plan(plan_path) if plan_path is not None else None
    df = collect_logs(logs, plan, traces=traces, allow_incomplete=allow_incomplete)
    text = df.to_csv(index=False, float_format="%.10g")
    if output is None:
        click.echo(text, nl=False)
    else:
        if output.is_dir():
            raise UserError(f"{output}: is a directory, expected a file name for the results")
        atomic_write_text(output, text)
        click.echo(f"{output}: {len(df):,} launches ({int(df['projected'].sum()):,} projected)", err=True)


@click.command("estimate", context_settings=_CTX)
@click.option("--plan", "plan_path", required=True, type=click.Path(path_type=Path), help="The plan the run was made for.")
@click.argument("logs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--traces", type=click.Path(path_type=Path), help="Trace folder, to map launches when the plan was made on another source.")
@click.option("--confidence", default=0.95, show_default=True, help="Confidence level of the intervals.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def estimate_cmd(plan_path: Path, logs: tuple[Path, ...], traces: Path | None, confidence: float, as_json: bool) -> None:
    """Whole-workload estimate (cycles, instructions, IPC, cache and DRAM) from the sampled run's LOG(s)
    or from results CSVs written by collect."""
    import pandas as pd

    from simsample.cli.commands import print_estimates
    from simsample.estimate import estimate_results
    from simsample_accelsim.collect import METRICS, RATIOS, collect_logs, is_results_csv, read_results_csv

    plan = _plan(plan_path)
    csvs = [p for p in logs if is_results_csv(p)]
    raw = [p for p in logs if p not in csvs]
    frames = [read_results_csv(p) for p in csvs]
    if raw:
        frames.append(collect_logs(raw, plan, traces=traces))
    df = pd.concat(frames, ignore_index=True)
    df = df[df["kernel_id"].isin(plan.sampled_ids)]
    if df["kernel_id"].duplicated().any():
        raise UserError(f"kernel {int(df.loc[df['kernel_id'].duplicated(), 'kernel_id'].iloc[0])} has results in more than one input")
    ests = estimate_results(plan, df, metrics=[m for m in METRICS if df[m].notna().all()], ratios=RATIOS, confidence=confidence)
    projected = int(df["projected"].astype(bool).sum()) if "projected" in df.columns else 0
    header = f"accelsim: {len(df):,} simulated launches standing for {plan.workload.get('launches', '?'):,} " + (
        f"({projected} projected by PKP)" if projected else ""
    )
    print_estimates(ests, plan, as_json, header=header.strip())


@click.command("run", context_settings=_CTX)
@click.option("--sampled", required=True, type=click.Path(path_type=Path), help="Folder written by apply.")
@click.option("--accelsim", "binary", required=True, type=click.Path(path_type=Path), help="Path to accel-sim.out.")
@click.option("--config", "configs", multiple=True, required=True, type=click.Path(path_type=Path), help="Simulator config file (repeatable: gpgpusim.config, trace.config).")
@click.option("-o", "--output", required=True, type=click.Path(path_type=Path), help="Log file for the simulator's output.")
@click.option("--dry-run", is_flag=True, help="Print the command instead of running it.")
@click.argument("extra", nargs=-1, type=click.UNPROCESSED)
def run_cmd(sampled: Path, binary: Path, configs: tuple[Path, ...], output: Path, dry_run: bool, extra: tuple[str, ...]) -> None:
    """Run Accel-Sim on a sampled folder (EXTRA arguments after -- go to the simulator)."""
    from simsample_accelsim.run import build_command, run_simulator

    cmd, cwd = build_command(sampled, binary, configs, extra, check_binary=not dry_run)
    if dry_run:
        click.echo(f"cd {shlex.quote(str(cwd))} && {shlex.join(cmd)} > {shlex.quote(str(output))} 2>&1")
        return
    summary = run_simulator(cmd, cwd, output)
    click.echo(summary, err=True)


@click.command("features", context_settings=_CTX)
@click.argument("traces", type=click.Path(path_type=Path))
@click.option("-o", "--output", required=True, type=click.Path(path_type=Path), help="Parquet file for the workload with features.")
@click.option("--jobs", "-j", default=1, show_default=True, type=int, help="Trace files scanned in parallel (processes).")
@click.option("--engine", type=click.Choice(["numpy", "python"]), default="numpy", show_default=True, help="Scanner: fast numpy or the line-by-line reference.")
@click.option("--no-cache", is_flag=True, help="Rescan every trace (the cache beside OUTPUT is not read or written).")
def features_cmd(traces: Path, output: Path, jobs: int, engine: str, no_cache: bool) -> None:
    """Scan the trace bodies once: instruction counts, PKA metrics, sectors, basic-block vectors."""
    from simsample.progress import task
    from simsample_accelsim.features import compute_features, default_cache_dir, total_bytes
    from simsample_accelsim.reader import scan_folder

    if output.exists() and output.is_dir():
        raise UserError(f"{output}: is a directory, expected a file name for the features table")
    tf = scan_folder(traces)
    with task("scanning traces", total_bytes(tf), bytes_=True) as advance:
        wl = compute_features(traces, jobs=jobs, engine=engine, cache_dir=None if no_cache else default_cache_dir(output), progress=advance, folder=tf)
    wl.to_parquet(output)
    k = wl.kernels
    click.echo(
        f"{output}: {len(wl):,} launches, {int(k['warp_insts'].sum()):,} warp instructions, "
        f"{wl.extras['bbv'].shape[1]:,} basic blocks, {wl.extras['warp_types'].shape[0]:,} warp types",
        err=True,
    )


def commands() -> dict[str, click.Command]:
    return {"apply": apply_cmd, "collect": collect_cmd, "estimate": estimate_cmd, "run": run_cmd, "features": features_cmd}

