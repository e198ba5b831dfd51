"""The Accel-Sim adapter object the plugin registers: what it reports (metric declarations), its
``apply`` and ``collect`` options, and the methods the public API calls."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from simsample.sdk import (
    Adapter,
    Param,
    UserError,
    Workload,
    count,
    not_estimable,
    ratio,
)

if TYPE_CHECKING:
    import pandas as pd

    from simsample.sdk import InstructionTraces, Plan

#: what ``collect`` reports beside ``kernel_id`` and ``status``, in the order its table shows them
METRICS = (
    not_estimable("name", doc="The kernel's name as the simulator printed it."),
    count("cycles", unit="cycles", doc="Simulated cycles (gpu_sim_cycle; PKP's projection for a projected kernel)."),
    count(
        "instructions",
        unit="instructions",
        doc="Simulated instructions (gpu_sim_insn; PKP's projection for a projected kernel).",
    ),
    ratio(
        "ipc",
        "instructions",
        "cycles",
        unit="instructions/cycle",
        doc="Instructions per cycle: total instructions over total cycles.",
    ),
    not_estimable("occupancy", doc="Achieved occupancy in percent (gpu_occupancy): a per-launch average, not a count."),
    count("l1_hits", doc="L1 hits of global reads and writes."),
    count("l1_accesses", doc="L1 accesses of global reads and writes."),
    ratio("l1_hit_rate", "l1_hits", "l1_accesses", doc="L1 hits over L1 accesses."),
    count("l2_hits", doc="L2 hits of global reads and writes."),
    count("l2_accesses", doc="L2 accesses of global reads and writes."),
    ratio("l2_hit_rate", "l2_hits", "l2_accesses", doc="L2 hits over L2 accesses."),
    count("dram_reads", doc="DRAM reads."),
    count("dram_writes", doc="DRAM writes."),
    not_estimable("sim_seconds", doc="Wall-clock seconds the simulator took: a property of the simulation host."),
    not_estimable("projected", doc="Whether PKP stopped the kernel early and projected its totals."),
    not_estimable("sim_cycles", doc="Cycles actually simulated (before a PKP projection)."),
    not_estimable("sim_insn", doc="Instructions actually simulated (before a PKP projection)."),
    not_estimable("pkp_stop_cycle", doc="The cycle at which PKP stopped the kernel."),
    not_estimable("uid", doc="The launch's number within the simulator's run."),
    not_estimable("trace", doc="The trace file simulated."),
    not_estimable("log", doc="The log the result was read from."),
)


class AccelSimAdapter(Adapter):
    """Accel-Sim (trace-driven): trace folders, sampled command lists, stdout statistics."""

    name = "accelsim"
    description = "Accel-Sim trace-driven simulator: kernelslist.g + kernel-N.traceg[.xz] folders"
    title = "Accel-Sim"
    #: built from cpp/trace_scan when the adapter is installed with a compiler (scan_native.py)
    compiled_parts = {"simsample_accelsim._trace_scan": "accel-sim trace scanner"}

    metrics = METRICS
    apply_options = (
        Param("copy", bool, False, "Copy the sampled traces instead of linking them."),
        Param("force", bool, False, "Replace OUT if it exists and is not empty."),
        Param(
            "warmup",
            str,
            "auto",
            "Launches run before each sampled one for its cache state: auto, reuse, targeted, K or none.",
        ),
        Param("warmup_reach", float, 1.5, "reuse: go back until this many times the L2's lines have been touched."),
        Param("warmup_horizon", int, 5, "targeted: launches looked back for the producers of a sample's lines."),
        Param("warmup_coverage", float, 0.8, "targeted: share of those lines whose producers are run."),
        Param(
            "warmup_budget",
            float,
            0.25,
            "targeted: warm-up cost allowed, as a share of the sampled launches' predicted cycles (None: no limit).",
            nullable=True,
        ),
        Param(
            "warmup_config",
            Path,
            (),
            "The gpgpusim.config files the run will use (later files override).",
            multiple=True,
        ),
        Param(
            "warmup_mode",
            str,
            "auto",
            "auto, detailed or functional warm-up.",
            choices=("auto", "detailed", "functional"),
        ),
        Param(
            "accelsim", Path, None, "The accel-sim.out the sampled run will use (for warmup_mode auto).", nullable=True
        ),
        Param("split", bool, False, "One job folder per sampled launch, for 'simsample run' in parallel."),
        Param(
            "split_detailed",
            int,
            None,
            "With split and functional warm-up: the N sampled launches run in detail before each job's "
            "own (default 3).",
            nullable=True,
            minimum=0,
        ),
    )
    collect_options = (
        Param(
            "traces",
            Path,
            None,
            "Trace folder, to map launches when the plan was made on another source.",
            nullable=True,
        ),
    )

    def read(self, path: Path) -> Workload:
        from simsample_accelsim.reader import read_traces

        return read_traces(path)

    def instruction_traces(self, workload: Workload) -> InstructionTraces:
        from simsample.sdk import InstructionTraces, UserError
        from simsample_accelsim.reader import scan_folder, workload_of
        from simsample_accelsim.warps import FORMAT_VERSION, read_warps

        folder = Path(workload.source or "")
        if workload.format != "accelsim" or not ((folder / "kernelslist.g").is_file() or folder.is_file()):
            raise UserError(
                f"{workload.source or 'the workload'} is not an Accel-Sim trace folder here; GCL-Sampler reads "
                "instructions: plan on the trace folder itself (kernelslist.g with kernel-N.traceg[.xz])"
            )
        tf = scan_folder(folder)
        ids = workload_of(tf).kernels["kernel_id"].to_numpy()
        by_id = dict(zip(ids.tolist(), tf.files))
        wanted = workload.kernels["kernel_id"].to_numpy().tolist()
        missing = [k for k in wanted if k not in by_id]
        if missing:
            raise UserError(
                f"{folder}: no trace for kernel id(s) {', '.join(map(str, missing[:5]))} of the workload; plan on "
                "the folder the workload was read from"
            )
        return InstructionTraces([by_id[k] for k in wanted], read_warps, f"accelsim-traceg/{FORMAT_VERSION}")

    def check_apply(self, **options: Any) -> None:
        from simsample_accelsim.warmup import CostModel, parse_warmup

        o = options
        if o["split_detailed"] is not None and not o["split"]:
            raise UserError(
                f"--split-detailed {o['split_detailed']}: give 0 or more, with --split (sampled launches run in "
                "detail before each job's own)"
            )
        cost = CostModel.from_configs(tuple(o["warmup_config"])) if o["warmup_config"] else None
        auto = o["warmup"].strip().lower() == "auto"
        parse_warmup(
            "targeted" if auto else o["warmup"], o["warmup_horizon"], o["warmup_coverage"], o["warmup_budget"], cost
        )

    def apply(self, plan: Plan, traces: Path | None, out: Path, **options: Any) -> Path:
        """OUT: a kernelslist.g that runs the plan's launches (and their warm-up launches), their
        traces, the weights and the plan; with ``split``, one job folder per sampled launch."""
        from dataclasses import replace

        from simsample.sdk import check_output_folder
        from simsample.sdk import note as simsample_note
        from simsample_accelsim.notes import warn
        from simsample_accelsim.warmup import (
            CostModel,
            l2_lines_of_configs,
            parse_warmup,
        )

        o = options
        if traces is None:
            raise UserError("apply --sim accelsim needs the trace folder (--traces) the plan's launches are taken from")
        warmup, budget, configs, accelsim_bin = (
            o["warmup"],
            o["warmup_budget"],
            tuple(o["warmup_config"]),
            o["accelsim"],
        )
        split, split_detailed = o["split"], o["split_detailed"]
        if split_detailed is not None and not split:
            raise UserError(
                f"--split-detailed {split_detailed}: give 0 or more, with --split (sampled launches run in detail "
                "before each job's own)"
            )
        cost = CostModel.from_configs(configs) if configs else None
        auto = warmup.strip().lower() == "auto"
        parse_warmup(
            "targeted" if auto else warmup, o["warmup_horizon"], o["warmup_coverage"], budget, cost
        )  # every option checked first
        warmup_mode, note = resolve_warmup_mode(o["warmup_mode"], warmup, accelsim_bin)
        if auto:
            warmup = "reuse" if warmup_mode == "functional" else "targeted"
        spec = parse_warmup(warmup, o["warmup_horizon"], o["warmup_coverage"], budget, cost)
        if not (
            o["warmup_reach"] > 0 and o["warmup_reach"] < float("inf")
        ):  # nan, inf, <= 0: refused whatever the warm-up
            raise UserError(
                f"--warmup-reach {o['warmup_reach']}: must be a finite number > 0 (the L2's lines touched before a "
                "sample, in multiples of its size)"
            )
        if spec.reuse:
            spec = replace(
                spec, reach=o["warmup_reach"], l2_lines=l2_lines_of_configs(configs) if configs else spec.l2_lines
            )
            if warmup_mode == "detailed":
                note = (
                    "--warmup reuse with detailed warm-up runs every launch of the window in detail, which can cost "
                    "as much as the full run; use it with --warmup-mode functional and the patched simulator"
                )
        # OUT may not hold, or be, any other input either (with --force it would be replaced)
        check_output_folder(out, force=o["force"], inputs=[*configs, *([accelsim_bin] if accelsim_bin else [])])
        if split:
            from simsample_accelsim.split import DEFAULT_DETAILED_PREVIOUS

            _apply_split(
                plan,
                traces,
                out,
                copy=o["copy"],
                force=o["force"],
                spec=spec,
                functional=warmup_mode == "functional",
                detailed_previous=DEFAULT_DETAILED_PREVIOUS if split_detailed is None else split_detailed,
            )
        else:
            _apply_list(plan, traces, out, copy=o["copy"], force=o["force"], spec=spec, mode=warmup_mode)
        if note:  # after the output: what the warm-up is, and why
            say = simsample_note if warmup_mode == "functional" else warn
            say(note)
        return out

    def find_plan(self, outputs: Sequence[Path]) -> Path | None:
        """The plan a run folder written by ``apply --split`` holds."""
        from simsample_accelsim.split import is_run_folder

        for p in outputs:
            if Path(p).is_dir() and is_run_folder(p) and (Path(p) / "simsample-plan.json").is_file():
                return Path(p) / "simsample-plan.json"
        return None

    def collect(
        self, outputs: Sequence[Path], plan: Plan | None = None, *, allow_incomplete: bool = False, **options: Any
    ) -> pd.DataFrame:
        """Per-launch results of Accel-Sim's output log(s) and of run folders written by ``apply --split``."""
        from simsample.sdk import Plan as _Plan
        from simsample_accelsim.collect import collect_logs
        from simsample_accelsim.split import expand_run_folders

        files, owner, folder_plan = expand_run_folders(list(outputs))
        if plan is None and folder_plan is not None:
            plan = _Plan.read(folder_plan)
        df = collect_logs(files, plan, traces=options.get("traces"), allow_incomplete=allow_incomplete, owner=owner)
        df.attrs["details"] = {}
        return df

    def full_run_results(self, outputs: Sequence[Path]) -> pd.DataFrame:
        """Every launch of a full run's log(s), by the traces' ``-kernel id``; an unusable kernel
        is an error (a truth must be complete)."""
        from simsample_accelsim.collect import collect_logs

        return collect_logs(list(outputs), None)

    def commands(self) -> Mapping[str, click.Command]:
        from simsample_accelsim.commands import commands

        return commands()


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
        return "detailed", (
            "no Accel-Sim found (--accelsim, $ACCELSIM_ROOT, PATH): warm-up runs in detail; with simsample's patched "
            "build, pass --accelsim BIN (or --warmup-mode functional) for functional warm-up, which holds better and "
            "costs no simulated cycles"
        )
    if not sim.patched:
        return "detailed", (
            f"{sim.path} (from {sim.how}) lacks simsample's warm-up patch: warm-up runs in detail; "
            "functional warm-up needs the patched build (adapters/accelsim/patches)"
        )
    if sim.revision < CURRENT_REVISION:
        return "functional", (
            f"{sim.path} (from {sim.how}) carries the first warm-up patch, whose replay loses the L2's LRU order "
            "(warm-up traces played at one cycle share their tag times): functional warm-up, but rebuild it with "
            "the current adapters/accelsim/patches/accel-sim-warmup.patch; run it with -functional_warmup 1"
        )
    return "functional", f"{sim.path} (from {sim.how}) is patched: functional warm-up; run it with -functional_warmup 1"


def _apply_split(
    plan: Plan, traces: Path, out: Path, *, copy: bool, force: bool, spec, functional: bool, detailed_previous: int
) -> None:
    from simsample_accelsim.split import JOBS_DIR, split_plan

    res = split_plan(
        plan,
        traces,
        out,
        copy=copy,
        force=force,
        warmup=spec,
        functional=functional,
        detailed_previous=detailed_previous,
    )
    how = "copied" if res.copied else "linked"
    warm = f", {res.warmup_launches:,} launches run only as warm-up ({spec.label()})" if res.warmup_launches else ""
    flag = " -- -functional_warmup 1" if functional and res.warmup_launches else ""
    click.echo(
        f"{out}: {len(res.jobs):,} jobs in {out / JOBS_DIR} (one per sampled launch{warm}; traces {how}); run: "
        f"simsample run --sim accelsim --sampled {out} --accelsim accel-sim.out --config gpgpusim.config --config "
        f"trace.config{flag}"
    )
