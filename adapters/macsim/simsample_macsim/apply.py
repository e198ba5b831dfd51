"""Sampled MacSim inputs: a new folder that runs only the plan's kernels, in launch order.

The folder holds ``kernel_config.txt`` listing ``./KernelN/trace.txt`` for each sampled kernel
(MacSim keeps only the last two path components and appends them to this folder), a ``KernelN``
link (or copy) per sampled kernel, ``kernel_names.txt`` for them when the traces had one, a
``trace_file_list`` naming the config, ``params.in`` from ``--params`` with the knobs collection
needs (:mod:`simsample_macsim.params`), ``simsample-weights.csv``, the plan itself
(``simsample-plan.json``) and ``sampled_kernels_info.txt`` — the
NVBit tracer's ``SAMPLED_KERNEL_INFO`` file, so that the next traces can hold only the sampled
kernels (traces of whole ML workloads run to hundreds of GB).

Without ``--traces`` only the tracer file, the weights and (with ``--params``) ``params.in`` are
written: the first step of tracing only what will be simulated.

With a warm-up (:mod:`.warmup`), the launches chosen to run before the sampled ones are listed in
``kernel_config.txt`` too, in launch order, each once; ``simsample-weights.csv`` lists them with
weight 0 and role ``warmup`` (collect leaves them out), and the tracer file names them on a line
of its own, so that the tracer traces them as well.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from simsample.sdk import (
    Plan,
    PlanMismatchError,
    UserError,
    atomic_write_text,
    check_output_folder,
    link_or_copy,
    match_plan,
    note,
    read_text_limited,
    staged_folder,
    write_plan_records,
)
from simsample_macsim.params import check_params_text, patch_params, required_knobs
from simsample_macsim.reader import FORMAT, TraceFolder, launch_list, load_trace_folder
from simsample_macsim.traces import KERNEL_CONFIG, KERNEL_NAMES, TRACE_FILE_LIST, kernel_names_text
from simsample_macsim.warmup import Footprint, WarmupSpec, choose, kernel_footprint, warmup_positions

SAMPLED_INFO = "sampled_kernels_info.txt"
PARAMS = "params.in"


@dataclass
class ApplyResult:
    out: Path
    kernels: list[int]  # KernelN numbers written to kernel_config.txt, in order (empty without traces)
    params_changes: list[str]
    wrote_params: bool
    warmup: list[int] = field(default_factory=list)  # warm-up launch numbers (not sampled), in launch order


def _numbers_by_id(plan: Plan, folder: TraceFolder) -> dict[int, int]:
    """Plan kernel id → the ``KernelN`` folder that holds it.

    The traced launches are matched first; a folder that holds only some launches (traced with
    ``SAMPLED_KERNEL_INFO``, or a kernel range) is matched through its ``kernel_names.txt``, which
    lists every launch, and must hold every sampled one.
    """
    try:
        wl = folder.workload
        rows = match_plan(plan, wl, what="traces").rows
    except PlanMismatchError as first:
        full = launch_list(folder)
        if full is None or len(full) == len(folder.workload):
            raise
        try:
            wl, rows = full, match_plan(plan, full, what="the launches of kernel_names.txt").rows
        except PlanMismatchError:
            raise first from None
    numbers = wl.kernels["kernel_id"].to_numpy(np.int64)
    out = {int(k): int(numbers[r]) for k, r in zip(plan.samples["kernel_id"], rows)}
    traced = {e.number for e in folder.config.kernels}
    untraced = sorted(set(out.values()) - traced)
    if untraced:
        raise UserError(
            f"{folder.config.path}: sampled launch Kernel{untraced[0]} was not traced ({len(untraced)} of "
            f"{len(set(out.values()))} sampled launches missing); trace them with SAMPLED_KERNEL_INFO={SAMPLED_INFO} "
            "from 'simsample apply --sim macsim --plan ... --out DIR' (without --traces)"
        )
    return out


def tracer_numbers(plan: Plan, numbers_by_id: dict[int, int] | None) -> dict[int, int]:
    """Plan kernel id → the launch number the NVBit tracer will give it (``grid_launch_id``).

    Known exactly when the traces were read (their ``KernelN``). Otherwise a plan made from MacSim
    traces uses its ids (they are the tracer's numbers) and a plan made from a profile its
    0-based launch position, which is the tracer's count when the profile covers the whole run.
    """
    if numbers_by_id is not None:
        return dict(numbers_by_id)
    own = plan.workload.get("format") == FORMAT
    if not own:
        from simsample.sdk import WHOLE_PROCESS_FORMATS, launch_numbers, sample_launches

        if (
            sample_launches(plan) is not None
        ):  # format 1.2: the process numbers (1-based) the plan recorded; MacSim's count from 0
            return {k: n - 1 for k, n in launch_numbers(plan, what="SAMPLED_KERNEL_INFO").items()}
        if plan.workload.get("format") not in WHOLE_PROCESS_FORMATS:
            raise UserError(
                f"the plan's profile {plan.workload.get('source') or '?'} ({plan.workload.get('format')}) does not "
                "say which launch of the process it starts at, so the tracer's numbers of its launches are unknown; "
                "make the plan again with --first-launch N"
            )
    return {int(k): int(k) if own else int(p) for k, p in zip(plan.samples["kernel_id"], plan.samples["launch"])}


def sampled_kernel_info(plan: Plan, tracer_id: dict[int, int], window: int = 0, warmup: Sequence[int] = ()) -> str:
    """The tracer's ``SAMPLED_KERNEL_INFO`` file: two header lines, then per sampled cluster
    ``<cluster size> <number of ids> <id> ...`` (distinct launches; no blank line, which would end
    the tracer's reading). With ``window``, a last line ``0 <n> <id> ...`` lists the ``window``
    launches before each sampled one that are not sampled themselves: a cluster that stands for
    no launch, traced so that they can be simulated before the samples for their cache state;
    the warm-up launches ``warmup`` chose (:mod:`.warmup`) join that line."""
    s = plan.samples
    lines = [
        f"simsample plan: sampler {plan.sampler.get('name')} seed {plan.sampler.get('seed')}, "
        f"workload {plan.workload.get('fingerprint')} from {plan.workload.get('source') or '?'}",
        f"{len(plan.clusters)} clusters, {len(plan.sampled_ids)} sampled launches of {plan.workload.get('launches')}; "
        "per cluster: size, number of launches to trace, launch numbers",
    ]
    for c in plan.clusters:
        ids = sorted({tracer_id[int(k)] for k in s.loc[s["cluster"] == c.id, "kernel_id"]})
        if ids:
            lines.append(" ".join(str(x) for x in [int(c.size), len(ids), *ids]))
    sampled = set(tracer_id.values())
    windowed = {j for n in sampled for j in range(max(0, n - window), n)} if window > 0 else set()
    warm = sorted((windowed | {int(j) for j in warmup}) - sampled)
    if warm:
        what = f"the {window} launches before each sample" if window > 0 else "the warm-up launches"
        lines[1] += f"; last line: {what}, traced for warm-up (cluster size 0)"
        lines.append(" ".join(str(x) for x in [0, len(warm), *warm]))
    return "\n".join(lines) + "\n"


def apply_plan(
    plan: Plan,
    out: Path,
    *,
    traces: Path | None,
    params: Path | None,
    force: bool = False,
    copy: bool = False,
    absolute: bool = True,
    warmup_window: int = 0,
    warmup: WarmupSpec | None = None,
) -> ApplyResult:
    """Write the sampled inputs into the new folder ``out`` (atomically), with the launches
    ``warmup`` chooses before the sampled ones (default: none)."""
    folder: TraceFolder | None = None
    numbers_by_id: dict[int, int] | None = None
    order: list[int] = []
    if traces is not None:
        folder = load_trace_folder(traces)
        check_output_folder(
            Path(out), force=force, inputs=[folder.config.folder]
        )  # before the warm-up choice reads traces
        numbers_by_id = _numbers_by_id(plan, folder)
        run_pos = {e.number: i for i, e in enumerate(folder.config.kernels)}
        order = sorted(set(numbers_by_id.values()), key=run_pos.__getitem__)
    warm = _choose_warmup(plan, folder, numbers_by_id, warmup or WarmupSpec())
    if folder is not None:
        order = sorted(set(order) | set(warm), key=run_pos.__getitem__)
    if params is not None and not Path(params).is_file():
        from simsample.sdk import special_file

        kind = special_file(Path(params))
        if kind is not None:
            raise UserError(f"{params}: is {kind}, not a regular file; pass the params.in MacSim should run with")
        raise UserError(f"{params}: no such file (pass the params.in MacSim should run with)")
    out = Path(out)
    final = out.resolve()
    if absolute and any(ch.isspace() for ch in str(final)):
        raise UserError(f"{out}: MacSim reads trace paths up to the first blank; choose an output path without spaces")
    inputs = [folder.config.folder] if folder is not None else []
    changes: list[str] = []
    with staged_folder(out, force=force, inputs=inputs) as tmp:
        tracer_id = tracer_numbers(plan, numbers_by_id)
        atomic_write_text(tmp / SAMPLED_INFO, sampled_kernel_info(plan, tracer_id, warmup_window, warm))
        extra = {"trace": {k: f"Kernel{n}" for k, n in numbers_by_id.items()}} if numbers_by_id else None
        write_plan_records(tmp, plan, extra, warmup=_warmup_rows(plan, warm, numbers_by_id is not None))
        if folder is not None:
            cfg = folder.config
            by_number = {e.number: e for e in cfg.kernels}
            lines = [cfg.trace_type, str(cfg.version), "-1", *[f"./Kernel{n}/{by_number[n].trace.name}" for n in order]]
            atomic_write_text(tmp / KERNEL_CONFIG, "\n".join(lines) + "\n")
            for n in order:
                link_or_copy(by_number[n].folder, tmp / f"Kernel{n}", copy=copy)
            if folder.names is not None:
                atomic_write_text(tmp / KERNEL_NAMES, kernel_names_text(folder.names, order))
            config_ref = str(final / KERNEL_CONFIG) if absolute else f"./{KERNEL_CONFIG}"
            atomic_write_text(tmp / TRACE_FILE_LIST, f"1\n{config_ref}\n")
        if params is not None:
            max_warp = total = None
            if folder is not None and "max_warp_insts" in folder.workload.kernels.columns:
                k = folder.workload.kernels.set_index("kernel_id")
                max_warp = int(k.loc[order, "max_warp_insts"].max())
                total = int(k.loc[order, "instructions"].sum())
            original = read_text_limited(params, errors="replace")
            check_params_text(original, str(params))
            text, changes = patch_params(original, required_knobs(max_warp_insts=max_warp, total_insts=total))
            atomic_write_text(tmp / PARAMS, text)
    return ApplyResult(out, order, changes, params is not None, warm)


def _choose_warmup(
    plan: Plan, folder: TraceFolder | None, numbers_by_id: dict[int, int] | None, spec: WarmupSpec
) -> list[int]:
    """The warm-up launch numbers (tracer launch numbers, ``KernelN``) for the plan's samples, in
    launch order; with traces, each must have been traced."""
    samples = sorted(set(tracer_numbers(plan, numbers_by_id).values()))
    footprint: Callable[[int], Footprint] | None = None
    if folder is not None:
        by_number = {e.number: e for e in folder.config.kernels}

        def read(n: int) -> Footprint:
            if n not in by_number:
                raise UserError(
                    f"{folder.config.path}: Kernel{n} (before a sampled launch) was not traced; targeted warm-up needs "
                    "the launches before each sample: retrace them, or pass --warmup K"
                )
            return kernel_footprint(by_number[n].folder)

        footprint = read

    if spec.targeted and folder is None:
        note(
            f"--warmup targeted without --traces: {SAMPLED_INFO} lists the {spec.horizon} launches before each sample "
            "(--warmup-horizon), so that apply --traces on what the tracer writes can choose among them"
        )
        spec = WarmupSpec(spec.horizon)
    warm = warmup_positions(choose(samples, spec, footprint), samples)
    if folder is not None:
        untraced = [n for n in warm if n not in by_number]
        if untraced:
            raise UserError(
                f"{folder.config.path}: warm-up launch Kernel{untraced[0]} was not traced ({len(untraced)} of "
                f"{len(warm)} missing); trace them with SAMPLED_KERNEL_INFO={SAMPLED_INFO} from 'simsample apply "
                f"--sim macsim --plan ... --warmup {'targeted' if spec.targeted else spec.k} --out DIR' (without "
                "--traces), or pass --warmup none"
            )
    return warm


def _warmup_rows(plan: Plan, warm: list[int], from_traces: bool) -> dict[int, tuple[int, object]]:
    """The weights file's warm-up rows: kernel id → (launch position, its ``trace`` value).

    A warm-up launch's kernel id is its launch number (the traces' id); a plan that gives that id
    to one of its samples numbers launches its own way, and cannot be warmed here."""
    sampled = {int(k) for k in plan.samples["kernel_id"]}
    clash = sorted(set(warm) & sampled)
    if clash:
        raise UserError(
            f"warm-up launch {clash[0]} has the kernel id the plan gives to a sampled launch (the plan numbers "
            "launches its own way); make the plan on these traces or on a profile whose ids are launch positions, "
            "or pass --warmup none"
        )
    return {n: (n, f"Kernel{n}" if from_traces else "") for n in warm}
