"""Sampled against full Accel-Sim simulation: error, interval, coverage and cost, per warm-up setting.

For a trace folder (uncompressed traces, as the simulator reads them) this script

1. runs the full simulation once (or reuses a given full-run output, ``--full-output``),
2. derives the trace features (``profile features``) and, per sampler and seed, makes the plan
   a user would make (``plan --sampler S --seed N`` on the features),
3. per warm-up setting (``--warmup 0,1,2,targeted,reuse``), applies the plan with that warm-up and
   runs the sampled simulation (cached: a finished output in the work folder is reused); with
   ``--split``, also as one job per sampled launch (``apply --split``), the jobs one after the
   other, and compares the two estimates,
4. prints, per run: the estimated total cycles and its error against the full run, the
   interval at the plan's confidence (its relative half-width) and whether it covers the full
   run, the cost in simulated cycles relative to the sampled launches alone (what warm-up
   adds), the speedup over the full run in simulated
   cycles, and in the simulator's own wall-clock (``gpgpu_simulation_time``; on a shared
   machine this one depends on the load during each run),
5. then the mean per sampler and warm-up.

The simulator is given as a ``run.sh``-style runner (``RUNNER LIST OUT [flags]``) or as a binary
and its config files. Only one simulation runs at a time.

    python benchmarks/sampled_vs_full.py --runner path/to/run.sh --traces hetero/ \\
        --work scratch/ --full-output full.out.gz --samplers root,stem --seeds 0-4 --warmup 0,1,targeted
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

from simsample.planfile import Plan


@dataclass
class Row:
    sampler: str
    seed: int
    warmup: str
    launches: int
    warm_launches: int
    estimate: float
    low: float
    high: float
    error: float
    covers: bool
    cost_ratio: float
    cycle_speedup: float
    speedup: float
    wall_s: float
    half_width: float = float("nan")  # relative half-width of the interval at the plan's confidence
    split_estimate: float = float("nan")  # the same plan and warm-up run as one job per sample (--split)


def seeds_of(text: str) -> list[int]:
    out: list[int] = []
    for part in text.split(","):
        if "-" in part:
            a, b = part.split("-")
            out.extend(range(int(a), int(b) + 1))
        else:
            out.append(int(part))
    return out


def finished(log: Path) -> bool:
    if not log.is_file():
        return False
    opener = gzip.open if log.suffix == ".gz" else open
    with opener(log, "rt", errors="replace") as fh:
        return any("GPGPU-Sim: *** exit detected ***" in line for line in fh)


def simulate(args: argparse.Namespace, kernelslist: Path, out: Path, flags: list[str]) -> float:
    """Run the simulator on ``kernelslist``, output to ``out`` (written beside and moved into place)."""
    tmp = out.with_name(out.name + ".part")
    if args.runner:
        cmd = [str(args.runner), str(kernelslist), str(tmp.resolve()), *flags]
        cwd = None
    else:
        cmd = [str(args.binary), "-trace", str(kernelslist.resolve())]
        for c in args.config:
            cmd += ["-config", str(Path(c).resolve())]
        cmd += flags
        cwd = kernelslist.parent
    t0 = time.perf_counter()
    if args.runner:
        subprocess.run(cmd, check=True)
    else:
        with open(tmp, "w") as fh:
            subprocess.run(cmd, check=True, stdout=fh, stderr=subprocess.STDOUT, cwd=cwd)
    wall = time.perf_counter() - t0
    tmp.replace(out)
    return wall


def run_split(args: argparse.Namespace, plan: Plan, spec, run: Path, flags: list[str]) -> float:
    """The plan run as one job per sampled launch (``apply --split``), the jobs one after the
    other (each cached like the one-list runs); the estimate of the total cycles from their logs."""
    from simsample.sampling.estimate import estimate_results
    from simsample_accelsim.collect import collect_logs
    from simsample_accelsim.split import read_jobs, split_plan

    if not run.is_dir() or not (run / "simsample-jobs.json").is_file():
        split_plan(
            plan,
            args.traces,
            run,
            force=True,
            warmup=spec,
            functional=args.warmup_mode == "functional",
            detailed_previous=args.split_detailed,
        )
    jobs, _ = read_jobs(run)
    logs = []
    for job in jobs:
        log = job.folder(run) / "accelsim.log"
        if not finished(log):
            simulate(args, job.folder(run) / "kernelslist.g", log, flags)
        logs.append(log)
    df = collect_logs(logs, plan, owner={log.resolve(): job.kernel_id for job, log in zip(jobs, logs)})
    return next(e for e in estimate_results(plan, df, metrics=["cycles"]) if e.metric == "cycles").estimate


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sim = ap.add_mutually_exclusive_group(required=True)
    sim.add_argument("--runner", type=Path, help="run.sh-style script: RUNNER KERNELSLIST OUT [flags]")
    sim.add_argument("--binary", type=Path, help="accel-sim.out (with --config files)")
    ap.add_argument("--config", action="append", default=[], help="simulator config file (repeatable, with --binary)")
    ap.add_argument("--traces", type=Path, required=True, help="trace folder with uncompressed traces")
    ap.add_argument(
        "--work", type=Path, required=True, help="folder for features, plans, sampled folders and outputs (reused)"
    )
    ap.add_argument(
        "--full-output",
        type=Path,
        help="output of the full run of these traces (same build and configs); else it is run",
    )
    ap.add_argument("--samplers", default="root,stem")
    ap.add_argument("--seeds", default="0-4", help="e.g. 0-4 or 0,3")
    ap.add_argument("--warmup", default="0,1,targeted", help="comma-separated: K values and/or 'targeted'")
    ap.add_argument("--warmup-horizon", type=int, default=5)
    ap.add_argument("--warmup-coverage", type=float, default=0.8)
    ap.add_argument("--warmup-budget", default="0.25", help="targeted: budget share, or 'none'")
    ap.add_argument(
        "--warmup-config",
        action="append",
        default=[],
        help="targeted: simulator config for the cost model (repeatable)",
    )
    ap.add_argument(
        "--plan-param", action="append", default=[], help="extra 'plan --param' for every sampler (repeatable)"
    )
    ap.add_argument("--warmup-mode", choices=["detailed", "functional"], default="detailed")
    ap.add_argument(
        "--warmup-reach", type=float, default=1.5, help="reuse: the window's reach in multiples of the L2's lines"
    )
    ap.add_argument(
        "--split",
        action="store_true",
        help="also run each plan as one job per sampled launch (apply --split) and compare",
    )
    ap.add_argument(
        "--split-detailed",
        type=int,
        default=3,
        help="split: sampled launches run in detail before each job's own (apply --split-detailed)",
    )
    ap.add_argument(
        "--sim-flags", default="", help="extra simulator flags for the sampled runs (e.g. '-functional_warmup 1')"
    )
    ap.add_argument("--json", type=Path, help="also write the rows as JSON")
    args = ap.parse_args(argv)

    from simsample.sampling.estimate import estimate_results
    from simsample_accelsim.apply import apply_plan
    from simsample_accelsim.collect import collect_logs
    from simsample_accelsim.features import compute_features
    from simsample_accelsim.warmup import CostModel, l2_lines_of_configs, parse_warmup

    work = args.work
    work.mkdir(parents=True, exist_ok=True)
    full = args.full_output or work / "full.out"
    if not finished(full):
        print(f"full run -> {full}", file=sys.stderr)
        simulate(args, args.traces / "kernelslist.g", full, [])
    full_df = collect_logs([full])
    truth = float(full_df["cycles"].sum())
    full_seconds = float(full_df["sim_seconds"].sum())
    print(f"full run: {len(full_df)} launches, {truth:,.0f} cycles, {full_seconds:,.0f} s simulated time")

    features = work / "features.parquet"
    if not features.exists():
        compute_features(args.traces).to_parquet(features)

    rows: list[Row] = []
    flags = args.sim_flags.split()
    for sampler in args.samplers.split(","):
        for seed in seeds_of(args.seeds):
            suffix = "".join("-" + p.replace("=", "_").replace("+", "_") for p in args.plan_param)
            plan_path = work / f"plan-{sampler}{suffix}-{seed}.json"
            if not plan_path.exists():
                subprocess.run(
                    [
                        str(Path(sys.executable).parent / "simsample"),
                        "plan",
                        str(features),
                        "--sampler",
                        sampler,
                        "--seed",
                        str(seed),
                        "-o",
                        str(plan_path),
                        *[x for p in args.plan_param for x in ("--param", p)],
                    ],
                    check=True,
                    stdout=subprocess.DEVNULL,
                )
            plan = Plan.read(plan_path)
            for w in args.warmup.split(","):
                budget = None if args.warmup_budget == "none" else float(args.warmup_budget)
                cost = CostModel.from_configs(args.warmup_config) if args.warmup_config else None
                spec = parse_warmup(w, args.warmup_horizon, args.warmup_coverage, budget, cost)
                if spec.reuse:
                    spec = replace(
                        spec,
                        reach=args.warmup_reach,
                        l2_lines=l2_lines_of_configs(args.warmup_config) if args.warmup_config else spec.l2_lines,
                    )
                tag = (
                    f"{sampler}{suffix}-{seed}-{spec.label()}-{args.warmup_mode}".replace("(", "_")
                    .replace(")", "")
                    .replace(",", "_")
                    .replace("=", "")
                )
                folder = work / tag
                log = work / f"{tag}.out"
                res = apply_plan(
                    plan, args.traces, folder, force=True, warmup=spec, functional=args.warmup_mode == "functional"
                )
                wall = float("nan")
                listing = (folder / "kernelslist.g").read_text() + " ".join(flags)
                recorded = log.with_suffix(".list")
                if finished(log) and (not recorded.is_file() or recorded.read_text() != listing):
                    # an output of another command list under this tag (the warm-up choice changed): not reusable
                    log.unlink()
                same = next(
                    (
                        q.with_suffix(".out")
                        for q in sorted(work.glob("*.list"))
                        if q.read_text() == listing and finished(q.with_suffix(".out"))
                    ),
                    None,
                )
                if not finished(log) and same is not None and same != log:
                    print(f"{tag}: same command list as {same.name}; reusing its output", file=sys.stderr)
                    shutil.copyfile(same, log)
                if not finished(log):
                    print(
                        f"simulating {tag}: {len(res.rows)} sampled + {len(res.warmup)} warm-up launches",
                        file=sys.stderr,
                    )
                    wall = simulate(args, folder / "kernelslist.g", log, flags)
                log.with_suffix(".list").write_text(listing)  # lets a later setting with the same list reuse this run
                every = collect_logs([log])
                sampled = collect_logs([log], plan)
                est = next(e for e in estimate_results(plan, sampled, metrics=["cycles"]) if e.metric == "cycles")
                split_est = float("nan")
                if args.split:
                    suffix = "" if args.split_detailed == 1 else f"-d{args.split_detailed}"
                    split_est = run_split(args, plan, spec, work / f"{tag}-split{suffix}", flags)
                sampled_cycles = float(sampled["cycles"].sum())
                low = est.ci_low if est.ci_low is not None else float("nan")
                high = est.ci_high if est.ci_high is not None else float("nan")
                rows.append(
                    Row(
                        sampler,
                        seed,
                        spec.label(),
                        len(res.rows),
                        len(res.warmup),
                        est.estimate,
                        low,
                        high,
                        est.estimate / truth - 1.0,
                        bool(low <= truth <= high),
                        float(every["cycles"].sum()) / sampled_cycles,
                        truth / float(every["cycles"].sum()),
                        full_seconds / max(float(every["sim_seconds"].sum()), 1.0),
                        wall,
                        (high - low) / 2 / est.estimate,
                        split_est,
                    )
                )
                r = rows[-1]
                split_text = f"  split {100 * (r.split_estimate / r.estimate - 1):+.2f}% vs list" if args.split else ""
                print(
                    f"{sampler:5} seed {seed} {r.warmup:22} {r.launches:3}+{r.warm_launches:<3} est "
                    f"{r.estimate:12,.0f} err {100 * r.error:+6.2f}%  CI ±{100 * r.half_width:.2f}% covers "
                    f"{'yes' if r.covers else 'no '}  cost {r.cost_ratio:4.2f}x  cycles {r.cycle_speedup:5.2f}x "
                    f"fewer  time {r.speedup:5.2f}x{split_text}",
                    flush=True,
                )
                shutil.rmtree(folder, ignore_errors=True)

    print(
        "\nsampler  warm-up                          seeds  mean|err|  max|err|  mean err  covers  median ±  cost vs "
        "sampled  cycle speedup  "
        "time speedup  split vs list (max)"
    )
    keys = sorted({(r.sampler, r.warmup) for r in rows}, key=lambda k: (k[0], k[1]))
    for sampler, warm in keys:
        sel = [r for r in rows if r.sampler == sampler and r.warmup == warm]
        gaps = [abs(r.split_estimate / r.estimate - 1) for r in sel if r.split_estimate == r.split_estimate]
        print(
            (
                f"{sampler:8} {warm:32} {len(sel):5}  {100 * statistics.mean(abs(r.error) for r in sel):8.2f}%  "
                f"{100 * max(abs(r.error) for r in sel):7.2f}%  {100 * statistics.mean(r.error for r in sel):+7.2f}% "
                f" {sum(r.covers for r in sel)}/{len(sel):<4} "
                f"{100 * statistics.median(r.half_width for r in sel):7.2f}%  "
                f"{statistics.mean(r.cost_ratio for r in sel):14.2f}x  "
                f"{statistics.mean(r.cycle_speedup for r in sel):12.2f}x  "
                f"{statistics.mean(r.speedup for r in sel):11.2f}x  "
            )
            + (f"{100 * max(gaps):.2f}%" if gaps else "-")
        )
    if args.json:
        args.json.write_text(json.dumps([r.__dict__ for r in rows], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
