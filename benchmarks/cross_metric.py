"""Plans made on trace features, scored against a full simulation's own cycles (cross-metric).

Before any sampled simulation, this says how much of a sampled run's error the design itself
makes: each plan's estimate is computed from the full run's cycles of its sampled launches, so
caches and warm-up play no part. Per workload (a ``profile features`` table and the full run's
Accel-Sim output) and per setting (sampler and parameters), over seeds 0..R-1, it prints the
mean and largest |error|, the coverage of the interval at the plan's confidence, its median
relative half-width, the plan's own bound, and the harmonic-mean speedup in cycles.

    python benchmarks/cross_metric.py --workload hetero=features.parquet:full.out.gz \\
        --workload decoder=decoder.parquet:decoder-full.out.gz --setting margin \\
        --setting margin:group=name+shape --repeat 20

A setting is ``SAMPLER[:k=v[,k=v...]]``. ``--json FILE`` also writes every plan's row.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

import numpy as np


def _setting(text: str) -> tuple[str, dict[str, str]]:
    name, _, rest = text.partition(":")
    params = dict(p.split("=", 1) for p in rest.split(",") if p) if rest else {}
    return name, params


def score(features: Path, full: Path, sampler_name: str, params: dict[str, str], repeat: int) -> list[dict]:
    """One row per seed: error, coverage, half-width and speedup of the plan against the full run."""
    from simsample.manager import get_host
    from simsample.sampling.estimate import estimate_total
    from simsample.sampling.evaluate import truth_by_launch
    from simsample.workload import Workload
    from simsample_accelsim.collect import collect_logs

    wl = Workload.from_parquet(features)
    truth = truth_by_launch(wl, collect_logs([full]), source=str(full), metric="cycles")
    total = float(truth.sum())
    ids = wl.kernels["kernel_id"].to_numpy(np.int64)
    sampler = get_host().sampler(sampler_name)
    resolved = sampler.resolve_params(params)
    rows = []
    for seed in range(repeat):
        plan = sampler.plan(wl, resolved, seed)
        launches = plan.samples["launch"].to_numpy(np.int64)
        distinct = np.unique(launches)
        est = estimate_total(
            plan,
            dict(zip(ids[distinct].tolist(), truth[distinct].tolist())),
            metric="cycles",
            confidence=float(plan.prediction.get("confidence") or 0.95),
        )
        half = (est.ci_high - est.ci_low) / 2 / est.estimate if est.ci_low is not None else float("nan")
        rows.append(
            {
                "seed": seed,
                "estimate": est.estimate,
                "truth": total,
                "error": est.estimate / total - 1.0,
                "covers": None if est.ci_low is None else bool(est.ci_low <= total <= est.ci_high),
                "half_width": half,
                "bound": plan.prediction.get("error_bound"),
                "launches": int(distinct.size),
                "speedup": total / float(truth[distinct].sum()),
            }
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workload", action="append", required=True, metavar="NAME=FEATURES:FULL_OUTPUT")
    ap.add_argument("--setting", action="append", required=True, metavar="SAMPLER[:k=v,...]")
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    out = []
    print(
        f"{'workload':10} {'setting':44} {'mean|err|':>9} {'max|err|':>9} {'covers':>7} {'median ±':>9} {'bound':>7} "
        f"{'launches':>8} {'speedup':>8}"
    )
    for w in args.workload:
        name, _, paths = w.partition("=")
        features, _, full = paths.partition(":")
        for setting in args.setting:
            sampler_name, params = _setting(setting)
            rows = score(Path(features), Path(full), sampler_name, params, args.repeat)
            cov = [r["covers"] for r in rows if r["covers"] is not None]
            halves = [r["half_width"] for r in rows if r["half_width"] == r["half_width"]]
            bound = rows[0]["bound"]
            print(
                f"{name:10} {setting:44} {100 * statistics.mean(abs(r['error']) for r in rows):8.2f}% "
                f"{100 * max(abs(r['error']) for r in rows):8.2f}% {(f'{sum(cov)}/{len(cov)}' if cov else '-'):>7} "
                f"{(f'{100 * statistics.median(halves):.2f}%' if halves else '-'):>9} "
                f"{(f'{100 * bound:.1f}%' if bound else '-'):>7} {statistics.mean(r['launches'] for r in rows):8.1f} "
                f"{len(rows) / sum(1 / r['speedup'] for r in rows):7.2f}x",
                flush=True,
            )
            out += [{"workload": name, "setting": setting, **r} for r in rows]
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
