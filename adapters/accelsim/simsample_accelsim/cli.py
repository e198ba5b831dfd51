"""Click commands behind ``simsample apply|collect|estimate|run|profile features --sim accelsim``."""

from __future__ import annotations

import shlex
from pathlib import Path

import click

from simsample.adapter_support.results import results_options
from simsample.adapter_support.folders import check_output_folder
from simsample.errors import UserError
from simsample.io.files import check_output_file, writable_parent
from simsample.planfile import Plan
from simsample.runner.options import executor_options

_CTX = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


@click.command("apply", context_settings=_CTX)
@click.option("--plan", "plan_path", required=True, type=click.Path(path_type=Path), help="Plan to apply.")
@click.option("--traces", required=True, type=click.Path(path_type=Path), help="Trace folder (or its command list file).")
@click.option("--out", required=True, type=click.Path(path_type=Path), help="New folder for the sampled traces.")
@click.option("--copy", is_flag=True, help="Copy the sampled traces instead of linking them.")
@click.option("--force", is_flag=True, help="Replace OUT if it exists and is not empty.")
@click.option("--warmup", default="auto", show_default=True, metavar="auto|reuse|targeted|K|none",
              help="Launches run before each sampled one for its cache state: every launch back to where the L2 turned over (reuse), "
                   "the footprint-targeted producers (targeted), or the K preceding launches. auto: reuse with functional warm-up, "
                   "targeted with detailed.")
@click.option("--warmup-reach", default=1.5, show_default=True, type=float,
              help="reuse: go back until this many times the L2's lines have been touched.")
@click.option("--warmup-horizon", default=5, show_default=True, type=int, help="targeted: launches looked back for the producers of a sample's lines.")
@click.option("--warmup-coverage", default=0.8, show_default=True, type=float, help="targeted: share of those lines whose producers are run.")
@click.option("--warmup-budget", default="0.25", show_default=True, metavar="SHARE|none",
              help="targeted: warm-up cost allowed, as a share of the sampled launches' predicted cycles ('none': no limit).")
@click.option("--warmup-config", "warmup_configs", multiple=True, type=click.Path(path_type=Path), metavar="FILE",
              help="The gpgpusim.config the run will use (repeatable, later files override): the L2's size for reuse, the launch latency "
                   "and SM count of the predicted cycles for targeted; default: those of SM7_QV100.")
@click.option("--warmup-mode", type=click.Choice(["auto", "detailed", "functional"]), default="auto", show_default=True,
              help="functional: warm-up launches as 'warmup kernel-N.traceg' lines, replayed into the caches without timing by the patched "
                   "simulator (-functional_warmup 1); auto: functional where the simulator found (--accelsim, $ACCELSIM_ROOT, PATH) is patched.")
@click.option("--accelsim", "accelsim_bin", type=click.Path(path_type=Path), metavar="BIN",
              help="The accel-sim.out the sampled run will use (for --warmup-mode auto).")
@click.option("--split", is_flag=True, help="One job folder per sampled launch (its memcpys and warm-up launches, then the launch), for 'simsample run' in parallel.")
@click.option("--split-detailed", type=int, default=None, metavar="N",
              help="With --split and functional warm-up: the N sampled launches before each job's own run in detail, as in the one list "
                   "(default 3).")
def apply_cmd(plan_path: Path, traces: Path, out: Path, copy: bool, force: bool, warmup: str, warmup_reach: float, warmup_horizon: int,
              warmup_coverage: float, warmup_budget: str, warmup_configs: tuple[Path, ...], warmup_mode: str, accelsim_bin: Path | None,
              split: bool, split_detailed: int | None) -> None:
    """Write OUT: a kernelslist.g that runs the plan's launches (and their warm-up launches), their traces, the weights and the plan."""
    from dataclasses import replace

    from simsample.adapter_support.matching import note as simsample_note
    from simsample_accelsim.notes import warn
    from simsample_accelsim.warmup import CostModel, l2_lines_of_configs, parse_warmup

    try:
        budget = None if warmup_budget.strip().lower() == "none" else float(warmup_budget)
    except ValueError:
        raise UserError(f"--warmup-budget {warmup_budget!r}: expected a share such as 0.3, or 'none'") from None
    cost = CostModel.from_configs(warmup_configs) if warmup_configs else None
    auto = warmup.strip().lower() == "auto"
    parse_warmup("targeted" if auto else warmup, warmup_horizon, warmup_coverage, budget, cost)  # every option checked first
    warmup_mode, note = resolve_warmup_mode(warmup_mode, warmup, accelsim_bin)
    if auto:
        warmup = "reuse" if warmup_mode == "functional" else "targeted"
    spec = parse_warmup(warmup, warmup_horizon, warmup_coverage, budget, cost)
    if spec.reuse:
        if warmup_reach <= 0:
            raise UserError(f"--warmup-reach {warmup_reach}: must be > 0 (the L2's lines touched before a sample, in multiples of its size)")
        spec = replace(spec, reach=warmup_reach, l2_lines=l2_lines_of_configs(warmup_configs) if warmup_configs else spec.l2_lines)
        if warmup_mode == "detailed":
            note = ("--warmup reuse with detailed warm-up runs every launch of the window in detail, which can cost as much as the full run; "
                    "use it with --warmup-mode functional and the patched simulator")
    # OUT may not hold, or be, any other input either (with --force it would be replaced)
    check_output_folder(out, force=force, inputs=[plan_path, *warmup_configs, *([accelsim_bin] if accelsim_bin else [])])
    if split_detailed is not None and (not split or split_detailed < 0):
        raise UserError(f"--split-detailed {split_detailed}: give 0 or more, with --split (sampled launches run in detail before each job's own)")
    plan = Plan.read(plan_path)
    if split:
        from simsample_accelsim.split import DEFAULT_DETAILED_PREVIOUS

        _apply_split(plan, traces, out, copy=copy, force=force, spec=spec, functional=warmup_mode == "functional",
                     detailed_previous=DEFAULT_DETAILED_PREVIOUS if split_detailed is None else split_detailed)
    else:
        _apply_list(plan, traces, out, copy=copy, force=force, spec=spec, mode=warmup_mode)
    if note:  # after the output: what the warm-up is, and why
        say = simsample_note if warmup_mode == "functional" else warn
        say(note)


def _apply_list(plan: Plan, traces: Path, out: Path, *, copy: bool, force: bool, spec, mode: str) -> None:
    from simsample_accelsim.apply import apply_plan

    res = apply_plan(plan, traces, out, copy=copy, force=force, warmup=spec, functional=mode == "functional")
    how = "copied" if res.copied else "linked"
    warm = f" + {len(res.warmup):,} {mode} warm-up launches ({spec.label()})" if res.warmup else ""
    flag = " -functional_warmup 1" if res.functional and res.warmup else ""
    click.echo(
        f"{out}: {len(res.rows):,} launches{warm} ({how}) and {res.memcpys:,} memcpys in {out / 'kernelslist.g'}; "
        f"run: accel-sim.out -trace {out / 'kernelslist.g'} -config gpgpusim.config -config trace.config{flag}"
    )


def resolve_warmup_mode(mode: str, warmup: str, accelsim_bin: Path | None) -> tuple[str, str | None]:
    """``--warmup-mode auto`` made ``functional`` or ``detailed`` by the simulator found, and the
    one-line note that says which and why (None when nothing needs saying)."""
    from simsample_accelsim.simulator import CURRENT_REVISION, find_simulator

    if mode != "auto":
        return mode, None
    if warmup.strip().lower() in ("none", "0"):
        return "detailed", None
    sim = find_simulator(accelsim_bin)
    if sim is None:
        return "detailed", ("no Accel-Sim found (--accelsim, $ACCELSIM_ROOT, PATH): warm-up runs in detail; with simsample's patched build, "
                            "pass --accelsim BIN (or --warmup-mode functional) for functional warm-up, which holds better and costs no simulated cycles")
    if not sim.patched:
        return "detailed", (f"{sim.path} (from {sim.how}) lacks simsample's warm-up patch: warm-up runs in detail; "
                            "functional warm-up needs the patched build (adapters/accelsim/patches)")
    if sim.revision < CURRENT_REVISION:
        return "functional", (f"{sim.path} (from {sim.how}) carries the first warm-up patch, whose replay loses the L2's LRU order "
                              "(warm-up traces played at one cycle share their tag times): functional warm-up, but rebuild it with "
                              "the current adapters/accelsim/patches/accel-sim-warmup.patch; run it with -functional_warmup 1")
    return "functional", f"{sim.path} (from {sim.how}) is patched: functional warm-up; run it with -functional_warmup 1"


def _apply_split(plan: Plan, traces: Path, out: Path, *, copy: bool, force: bool, spec, functional: bool, detailed_previous: int) -> None:
    from simsample_accelsim.split import JOBS_DIR, split_plan

    res = split_plan(plan, traces, out, copy=copy, force=force, warmup=spec, functional=functional, detailed_previous=detailed_previous)
    how = "copied" if res.copied else "linked"
    warm = f", {res.warmup_launches:,} launches run only as warm-up ({spec.label()})" if res.warmup_launches else ""
    flag = " -- -functional_warmup 1" if functional and res.warmup_launches else ""
    click.echo(
        f"{out}: {len(res.jobs):,} jobs in {out / JOBS_DIR} (one per sampled launch{warm}; traces {how}); "
        f"run: simsample run --sim accelsim --sampled {out} --accelsim accel-sim.out --config gpgpusim.config --config trace.config{flag}"
    )


#: Columns of the table ``collect`` prints (the CSV and JSON have every column of ``RESULT_COLUMNS``).
TABLE_COLUMNS = ("kernel_id", "status", "cycles", "instructions", "ipc", "l1_hits", "l1_accesses", "l2_hits", "l2_accesses",
                 "dram_reads", "dram_writes")


@click.command("collect", context_settings=_CTX)
@click.option("--plan", "plan_path", type=click.Path(path_type=Path), help="Plan the run was made for (checks that every sampled launch has results).")
@click.argument("logs", nargs=-1, required=True, type=click.Path(path_type=Path))
@results_options
@click.option("--traces", type=click.Path(path_type=Path), help="Trace folder, to map launches when the plan was made on another source.")
def collect_cmd(plan_path: Path | None, logs: tuple[Path, ...], output: Path | None, as_json: bool, allow_incomplete: bool, traces: Path | None) -> None:
    """Parse Accel-Sim output LOG(s) into per-launch results keyed by kernel id."""
    from simsample.adapter_support import emit_results
    from simsample_accelsim.collect import collect_logs
    from simsample_accelsim.split import expand_run_folders

    inputs = [*logs, plan_path, traces]
    if output is not None:
        check_output_file(output, inputs, what="results table")
    files, owner, folder_plan = expand_run_folders(logs)
    plan_path = plan_path or folder_plan
    plan = Plan.read(plan_path) if plan_path is not None else None
    df = collect_logs(files, plan, traces=traces, allow_incomplete=allow_incomplete, owner=owner)
    emit_results(df, output=output, as_json=as_json, allow_incomplete=allow_incomplete, title="Accel-Sim results", table_columns=TABLE_COLUMNS,
                 inputs=inputs)


@click.command("estimate", context_settings=_CTX)
@click.option("--plan", "plan_path", type=click.Path(path_type=Path), help="The plan the run was made for (default: the one in a split run folder).")
@click.argument("logs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--traces", type=click.Path(path_type=Path), help="Trace folder, to map launches when the plan was made on another source.")
@click.option("--confidence", default=None, type=float, help="Confidence level of the intervals (default: the plan's).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def estimate_cmd(plan_path: Path, logs: tuple[Path, ...], traces: Path | None, confidence: float | None, as_json: bool) -> None:
    """Whole-workload estimate (cycles, instructions, IPC, cache and DRAM) from the sampled run's LOG(s)
    or from results CSVs written by collect."""
    from simsample.adapter_support import results_for_estimate
    from simsample.cli.commands import print_estimates
    from simsample.sampling.estimate import estimate_results
    from simsample_accelsim.collect import METRICS, RATIOS, collect_logs
    from simsample_accelsim.split import expand_run_folders

    files, owner, folder_plan = expand_run_folders(logs)
    plan_path = plan_path or folder_plan
    if plan_path is None:
        raise UserError("estimate needs --plan PLAN (the plan the run was made for)")
    plan = Plan.read(plan_path)
    df = results_for_estimate(files, plan, lambda raw, p: (collect_logs(raw, p, traces=traces, owner=owner), {}), METRICS)
    # A counter the simulator printed for some launches only (no L1 section for a kernel without
    # global loads) cannot be estimated; it and the ratios built on it are left out, and said so.
    known = [m for m in METRICS if df[m].notna().all()]
    ratios = {k: v for k, v in RATIOS.items() if all(c in known for c in v)}
    ests = estimate_results(plan, df, metrics=known, ratios=ratios, confidence=confidence)
    projected = int((df["status"] == "projected").sum())
    left_out = [m for m in METRICS if m not in known] + [k for k in RATIOS if k not in ratios]
    header = f"accelsim: {len(df):,} simulated launches standing for {plan.workload.get('launches', '?'):,}" + (
        f" ({projected} projected by PKP)" if projected else ""
    ) + (f"; not reported for every launch, left out: {', '.join(left_out)}" if left_out else "")
    print_estimates(ests, plan, as_json, header=header.strip())


@click.command("run", context_settings=_CTX)
@click.option("--sampled", required=True, type=click.Path(path_type=Path), help="Folder written by apply.")
@click.option("--accelsim", "binary", required=True, type=click.Path(path_type=Path), help="Path to accel-sim.out.")
@click.option("--config", "configs", multiple=True, required=True, type=click.Path(path_type=Path), help="Simulator config file (repeatable: gpgpusim.config, trace.config).")
@click.option("-o", "--output", type=click.Path(path_type=Path), help="Log file for the simulator's output (a split run folder keeps one log per job).")
@click.option("--dry-run", is_flag=True, help="Print the command(s) instead of running them.")
@executor_options
@click.argument("extra", nargs=-1, type=click.UNPROCESSED)
def run_cmd(sampled: Path, binary: Path, configs: tuple[Path, ...], output: Path | None, dry_run: bool, extra: tuple[str, ...], **executor) -> None:
    """Run Accel-Sim on a sampled folder (EXTRA arguments after -- go to the simulator).

    On a folder written by 'apply --split', every job not yet complete runs (on --executor),
    each with its log in its job folder; a rerun finishes only what is missing."""
    from simsample_accelsim.run import build_command, run_simulator
    from simsample_accelsim.split import is_run_folder

    from simsample.io.files import check_input_folder

    check_input_folder(sampled, "folder written by 'simsample apply'")
    if is_run_folder(sampled):
        if output is not None:
            raise UserError(f"{sampled}: a split run folder keeps one log per job (jobs/NAME/accelsim.log); leave out -o")
        from simsample_accelsim.runjobs import run_split

        run_split(sampled, binary, configs, extra, dry_run=dry_run, **executor)
        return
    if output is None:
        raise UserError("run needs -o LOG (the file for the simulator's output)")
    if executor["executor"] != "local" or executor["jobs"] is not None or executor["retries"]:
        raise UserError(f"{sampled}: --executor/--jobs/--retries apply to a folder written by 'apply --split'; this one is a single run")

    # the log may go inside SAMPLED (the simulator's working folder), but never onto what it reads
    read = [f for f in sampled.iterdir() if f.name.startswith(("kernel", "simsample-"))] if sampled.is_dir() else []
    check_output_file(output, [binary, *configs, *read], what="simulator log")
    cmd, cwd = build_command(sampled, binary, configs, extra, check_binary=not dry_run)
    if dry_run:
        click.echo(f"cd {shlex.quote(str(cwd))} && {shlex.join(cmd)} > {shlex.quote(str(output))} 2>&1")
        return
    summary = run_simulator(cmd, cwd, output)
    click.echo(summary, err=True)


class _EngineOption(click.Option):
    """``--engine``, whose help says which scanner ``auto`` picks on this installation."""

    def get_help_record(self, ctx: click.Context):
        from simsample_accelsim.features import engine_note

        self.help = f"Trace scanner: native (compiled C++), numpy, or python (the line-by-line reference). Here auto = {engine_note()}."
        return super().get_help_record(ctx)


@click.command("features", context_settings=_CTX)
@click.argument("traces", type=click.Path(path_type=Path))
@click.option("-o", "--output", required=True, type=click.Path(path_type=Path), help="Parquet file for the workload with features.")
@click.option("--jobs", "-j", default=1, show_default=True, type=int, help="Trace files scanned in parallel (processes).")
@click.option("--engine", cls=_EngineOption, type=click.Choice(["auto", "native", "numpy", "python"]), default="auto", show_default=True)
@click.option("--no-cache", is_flag=True, help="Rescan every trace (the cache beside OUTPUT is not read or written).")
@click.option("--config", "configs", multiple=True, type=click.Path(path_type=Path), metavar="FILE",
              help="The gpgpusim.config the simulation will use (repeatable, later files override), for occupancy, waves and "
                   "predicted cycles; default: those of SM7_QV100.")
@click.option("--no-context", is_flag=True,
              help="Leave out warm_reads (the share of each launch's loads that find lines recent launches touched): the scan then "
                   "records no cache lines, a pass of the numpy scanner saved; plans group by occupancy only.")
def features_cmd(traces: Path, output: Path, jobs: int, engine: str, no_cache: bool, configs: tuple[Path, ...], no_context: bool) -> None:
    """Scan the trace bodies once: instruction counts, PKA metrics, sectors, basic-block vectors, occupancy, predicted cycles and cache context."""
    from simsample.progress import task
    from simsample_accelsim.features import compute_features, default_cache_dir, total_bytes
    from simsample_accelsim.occupancy import GpuConfig
    from simsample_accelsim.reader import scan_folder

    from simsample.io.files import temporary_cache, writes_through
    from simsample.workload import extras_path

    # no cache (and no extras) beside a device or a pipe (-o /dev/null): nothing is created in /dev
    cache_dir = None if no_cache or writes_through(output) else default_cache_dir(output)
    for written in (output, extras_path(output)):
        check_output_file(written, [traces, *configs], what="features table")
    if cache_dir is not None:  # a folder kept from the last run is reused, never refused
        if cache_dir.exists() and not cache_dir.is_dir():
            raise UserError(f"{cache_dir}: exists and is not a folder, where the feature cache goes; move it away or pass --no-cache")
        check_output_file(cache_dir / "entry.npz", [traces], what="feature cache")
    writable_parent(output)
    gpu = GpuConfig.from_configs(configs) if configs else None
    tf = scan_folder(traces)
    with temporary_cache(cache_dir):
        with task("scanning traces", total_bytes(tf), bytes_=True) as advance:
            wl = compute_features(traces, jobs=jobs, engine=engine, cache_dir=cache_dir, progress=advance, folder=tf, gpu=gpu,
                                  context=not no_context)
        wl.to_parquet(output)
    k = wl.kernels
    click.echo(
        f"{output}: {len(wl):,} launches, {int(k['warp_insts'].sum()):,} warp instructions, "
        f"{wl.extras['bbv'].shape[1]:,} basic blocks, {wl.extras['warp_types'].shape[0]:,} warp types",
        err=True,
    )


def commands() -> dict[str, click.Command]:
    return {"apply": apply_cmd, "collect": collect_cmd, "estimate": estimate_cmd, "run": run_cmd, "features": features_cmd}

