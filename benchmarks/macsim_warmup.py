"""Sampled against full MacSim simulation, per warm-up setting: estimate error and simulated cost.

For a MacSim trace folder this script

1. runs the full simulation once in ``WORK/full`` (reused when its ``macsim.out`` finished),
2. takes the plans given (``--plan``) or makes them as a user would (``profile features --sim
   macsim`` then ``plan --sampler S --seed N``),
3. per plan and warm-up setting (``--warmup none,1,2,targeted``) applies the plan with that
   warm-up (``apply --sim macsim --traces --params``), runs MacSim in the sampled folder and
   estimates the total cycles from its output (``collect``/``estimate``),
4. prints per run: the kernels simulated (sampled + warm-up), the estimate and its error against
   the full run, the warm-up error (the estimate minus the same plan's estimate from the full
   run's own cycles of its sampled kernels, over the full run: what the sampled run's cache
   state adds to the plan's own error), the simulated cycles of the whole sampled run over those of its sampled kernels
   alone (what warm-up costs), and the full run's cycles over the sampled run's (the saving).

Only one simulation runs at a time; outputs are kept in WORK (a finished run of the same
``kernel_config.txt`` is reused, from WORK/runs).

    python benchmarks/macsim_warmup.py --macsim path/to/macsim --params params.in \\
        --traces vectormultadd/4096 --work scratch/ --plan k0k2.json --warmup none,1,2,targeted
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

from simsample.planfile import Plan


def run_macsim(binary: Path, folder: Path) -> Path:
    """Run MacSim in ``folder`` (it reads params.in and trace_file_list there); its log."""
    log = folder / "macsim.out"
    with open(log, "wb") as fh:
        subprocess.run([str(binary.resolve())], cwd=folder, stdout=fh, stderr=subprocess.STDOUT, check=True)
    return log


def finished(log: Path) -> bool:
    return log.is_file() and "finalize simulation" in log.read_text(errors="replace")


def full_run(args: argparse.Namespace) -> tuple[float, dict[int, int]]:
    """The full run's total cycles and per-kernel cycles."""
    from simsample_macsim.output import parse_log
    from simsample_macsim.params import patch_params, required_knobs
    from simsample_macsim.reader import load_trace_folder
    from simsample_macsim.traces import find_kernel_config

    folder = args.work / "full"
    if not finished(folder / "macsim.out"):
        folder.mkdir(parents=True, exist_ok=True)
        k = load_trace_folder(args.traces, quiet=True).workload.kernels
        text, _ = patch_params(
            args.params.read_text(),
            required_knobs(max_warp_insts=int(k["max_warp_insts"].max()), total_insts=int(k["instructions"].sum())),
        )
        (folder / "params.in").write_text(text)
        (folder / "trace_file_list").write_text(f"1\n{find_kernel_config(args.traces).resolve()}\n")
        print("simulating the full run", file=sys.stderr)
        run_macsim(args.macsim, folder)
    run = parse_log(folder / "macsim.out")
    return float(run.final_cycle), {k.number: int(k.cycles) for k in run.kernels}


def plans(args: argparse.Namespace) -> list[tuple[str, Plan]]:
    out = [(p.stem, Plan.read(p)) for p in args.plan]
    if args.samplers:
        exe = str(Path(sys.executable).parent / "simsample")
        features = args.work / "features.parquet"
        if not features.exists():
            subprocess.run(
                [exe, "profile", "features", "--sim", "macsim", str(args.traces), "--params", str(args.params)]
                + ["-o", str(features)],
                check=True,
                stdout=subprocess.DEVNULL,
            )
        lo, _, hi = args.seeds.partition("-")
        for sampler in args.samplers.split(","):
            for seed in range(int(lo), int(hi or lo) + 1):
                path = args.work / f"plan-{sampler}-{seed}.json"
                if not path.exists():
                    subprocess.run(
                        [
                            exe,
                            "plan",
                            str(features),
                            "--sampler",
                            sampler,
                            "--seed",
                            str(seed),
                            "-o",
                            str(path),
                            *[x for p in args.plan_param for x in ("--param", p)],
                        ],
                        check=True,
                        stdout=subprocess.DEVNULL,
                    )
                out.append((path.stem, Plan.read(path)))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--macsim", type=Path, required=True, help="the MacSim executable")
    ap.add_argument("--params", type=Path, required=True, help="params.in of the machine to simulate")
    ap.add_argument(
        "--traces", type=Path, required=True, help="MacSim trace folder (kernel_config.txt and KernelN folders)"
    )
    ap.add_argument("--work", type=Path, required=True, help="folder for the runs (reused)")
    ap.add_argument("--plan", type=Path, action="append", default=[], help="a plan to apply (repeatable)")
    ap.add_argument("--samplers", default="", help="also make plans with these samplers, e.g. random,stem")
    ap.add_argument("--seeds", default="0-4", help="seeds for --samplers, e.g. 0-4")
    ap.add_argument("--plan-param", action="append", default=[], help="--param for plan, e.g. samples=2")
    ap.add_argument(
        "--warmup",
        default="none,1,2,targeted",
        help="comma-separated --warmup settings ('producers': targeted without the window)",
    )
    ap.add_argument("--warmup-horizon", type=int, default=None)
    ap.add_argument("--warmup-coverage", type=float, default=None)
    args = ap.parse_args()

    from simsample.sampling.estimate import estimate_results
    from simsample_macsim.apply import apply_plan
    from simsample_macsim.collect import collect
    from simsample_macsim.output import parse_log
    from simsample_macsim.warmup import DEFAULT_COVERAGE, DEFAULT_HORIZON, parse_warmup

    args.work.mkdir(parents=True, exist_ok=True)
    truth, per_kernel = full_run(args)
    print(f"full run: {truth:,.0f} cycles, per kernel {per_kernel}")
    runs = (
        args.work / "runs"
    )  # finished logs by kernel_config.txt: a later setting or invocation with the same list reuses them
    runs.mkdir(exist_ok=True)
    rows: list[tuple[str, str, float, float, float, float, float, bool, int]] = []
    for name, plan in plans(args):
        on_full, _ = collect([args.work / "full" / "macsim.out"], plan)
        ideal = next(e for e in estimate_results(plan, on_full, metrics=["cycles"]) if e.metric == "cycles").estimate
        for w in args.warmup.split(","):
            spec = parse_warmup(
                "targeted" if w == "producers" else w,
                args.warmup_horizon or DEFAULT_HORIZON,
                args.warmup_coverage or DEFAULT_COVERAGE,
                None,
            )
            if w == "producers":  # the producers alone, without the launches between them and the sample
                spec = dataclasses.replace(spec, window=False)
            folder = args.work / f"{name}-{spec.label()}".replace("(", "_").replace(")", "").replace(",", "_").replace(
                "=", ""
            )
            res = apply_plan(plan, folder, traces=args.traces, params=args.params, force=True, warmup=spec)
            listing = (folder / "kernel_config.txt").read_text()
            log = folder / "macsim.out"
            cached = runs / f"{hashlib.sha1(listing.encode()).hexdigest()[:16]}.out"
            if finished(cached):
                shutil.copyfile(cached, log)
            else:
                print(
                    f"simulating {folder.name}: {len(res.kernels) - len(res.warmup)} sampled + {len(res.warmup)} "
                    "warm-up kernels",
                    file=sys.stderr,
                )
                run_macsim(args.macsim, folder)
                shutil.copyfile(log, cached)
            results, _ = collect([log], plan)
            est = next(e for e in estimate_results(plan, results, metrics=["cycles"]) if e.metric == "cycles")
            whole = float(parse_log(log).final_cycle)
            own = float(results["cycles"].sum())
            err = est.estimate / truth - 1.0
            low, high = (
                (est.ci_low, est.ci_high) if est.ci_low is not None and est.ci_high is not None else (float("nan"),) * 2
            )
            half = (high - low) / 2 / est.estimate
            rows.append(
                (
                    name,
                    spec.label(),
                    err,
                    whole / own,
                    truth / whole,
                    (est.estimate - ideal) / truth,
                    half,
                    bool(low <= truth <= high),
                    len(res.kernels) - len(res.warmup),
                )
            )
            order = " ".join(f"K{n}{'w' if n in res.warmup else ''}" for n in res.kernels)
            # the interval at the plan's confidence: its relative half-width and whether it covers the full run
            ci = f"CI ±{100 * half:.2f}% covers {'yes' if rows[-1][7] else 'no '}"
            print(
                f"{name:22} {spec.label():28} [{order}] est {est.estimate:10,.0f} err {100 * err:+7.2f}% (warm-up "
                f"{100 * rows[-1][5]:+6.2f}%)  {ci}  cost {whole / own:4.2f}x sampled  {truth / whole:5.2f}x fewer "
                "cycles than full",
                flush=True,
            )
    print(
        "\nwarm-up                       plans  mean|err|  worst|err|  mean|warm-up err|  worst  cost vs sampled  "
        "cycles saved  covered  median ±  sampled launches"
    )
    for label in dict.fromkeys(r[1] for r in rows):
        sel = [r for r in rows if r[1] == label]
        print(
            f"{label:28} {len(sel):6}  {100 * statistics.mean(abs(r[2]) for r in sel):8.2f}%  "
            f"{100 * max(abs(r[2]) for r in sel):9.2f}%  {100 * statistics.mean(abs(r[5]) for r in sel):15.2f}%  "
            f"{100 * max(abs(r[5]) for r in sel):5.2f}%  {statistics.mean(r[3] for r in sel):14.2f}x  "
            f"{statistics.mean(r[4] for r in sel):11.2f}x  {sum(r[7] for r in sel):4}/{len(sel):<3}  "
            f"{100 * statistics.median(r[6] for r in sel):6.2f}%  {statistics.median(r[8] for r in sel):g} "
            f"({min(r[8] for r in sel)}-{max(r[8] for r in sel)})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
