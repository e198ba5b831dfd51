"""The default sampler against stem, root, root joint+fpc and allegro on the same real profiles.

Every profile under the given folders with at least ``--min-launches`` launches is read once;
each sampler plans it with seeds 0..R-1 at each ε of ``--eps``, and each plan is scored against
the profile's own times (the STEM paper's protocol): per sampler and ε, the suite's mean error,
the harmonic-mean speedup, the worst workload's share of plans within ε and the worst
workload's interval coverage, with the workloads where those fall short named.

    python benchmarks/bench_default_sampler.py ../shared/data/profiles --repeat 20 --eps 0.05
    python benchmarks/bench_default_sampler.py PROFILES --eps 0.02,0.05,0.1 --samplers stem,root,margin

``--cache FILE`` keeps the read workloads (a pickle) for the next run; ``--json`` writes every
workload's figures.
"""

from __future__ import annotations

import argparse
import json
import math
import pickle
import sys
import time
from pathlib import Path

import numpy as np

from simsample.manager import get_host
from simsample.reading import discover_profiles, load_workload
from simsample.sampling.evaluate import evaluate_workload, harmonic_mean

#: name shown -> (sampler, parameters)
SAMPLERS = {
    "stem": ("stem", {}),
    "root": ("root", {}),
    "root-joint-fpc": ("root", {"allocation": "joint", "fpc": "true"}),
    "allegro": ("allegro", {}),
    "margin": ("margin", {}),
    "margin-95": ("margin", {"confidence": "0.95", "sizing_confidence": "0.95"}),
    "margin-pool": ("margin", {"pool": "true"}),
    "margin-skew": ("margin", {"max_skew": "0.2"}),
}


def load_suite(folders: list[str], min_launches: int, cache: Path | None) -> list[tuple[str, object]]:
    if cache is not None and cache.is_file():
        with open(cache, "rb") as fh:
            suite = pickle.load(fh)
        return [(n, w) for n, w in suite if len(w) >= min_launches]
    suite = []
    for path, _ in discover_profiles(folders):
        try:
            wl = load_workload([path])
            if len(wl) >= 100:
                wl.values(wl.default_metric())
        except Exception as exc:  # a file a detector took but no reader can use: skipped, as evaluate does
            print(f"skipped {path}: {exc}", file=sys.stderr)
            continue
        if len(wl) >= 100:
            suite.append((str(path), wl))
    if cache is not None:
        with open(cache, "wb") as fh:
            pickle.dump(suite, fh)
    return [(n, w) for n, w in suite if len(w) >= min_launches]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folders", nargs="+")
    ap.add_argument(
        "--samplers",
        default="stem,root,root-joint-fpc,allegro,margin",
        help=f"comma-separated, of: {', '.join(SAMPLERS)}",
    )
    ap.add_argument("--eps", default="0.05", help="comma-separated error bounds")
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--min-launches", type=int, default=100)
    ap.add_argument("--cache", type=Path)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    suite = load_suite(args.folders, args.min_launches, args.cache)
    print(
        f"{len(suite)} workloads with >= {args.min_launches} launches (read in {time.perf_counter() - t0:.0f} s)",
        file=sys.stderr,
    )
    host = get_host()
    rows, detail = [], []
    for label in args.samplers.split(","):
        name, fixed = SAMPLERS[label]
        sampler = host.sampler(name)
        for eps in [float(e) for e in args.eps.split(",")]:
            params = sampler.resolve_params({**fixed, "eps": str(eps)})
            t1 = time.perf_counter()
            errs, speeds, within, covs, short = [], [], [], [], []
            for wname, wl in suite:
                r = evaluate_workload(wl, sampler, params, args.repeat, name=wname)
                e = np.array([s.error for s in r.scores if s.error is not None])
                inside = float(np.mean(e <= eps)) if e.size else math.nan
                cov = r.coverage
                errs.append(float(e.mean()) if e.size else math.nan)
                speeds.append(r.speedup_hmean)
                within.append(inside)
                covs.append(cov if cov is not None else math.nan)
                detail.append({**r.to_json(), "sampler": label, "eps": eps, "within_eps": inside})
                if inside < 0.95 or cov is None or cov < 0.93:
                    short.append(
                        f"{Path(wname).name} (within {inside:.2f}, coverage {cov if cov is None else round(cov, 2)})"
                    )
            row = {
                "sampler": label,
                "eps": eps,
                "error_mean_pct": 100 * float(np.nanmean(errs)),
                "error_max_pct": 100 * float(np.nanmax(errs)),
                "speedup_hmean": harmonic_mean(speeds),
                "worst_within_eps": float(np.nanmin(within)),
                "worst_coverage": float(np.nanmin(covs)) if not all(math.isnan(c) for c in covs) else math.nan,
                "no_interval": int(sum(math.isnan(c) for c in covs)),
                "seconds": time.perf_counter() - t1,
            }
            rows.append(row)
            print(
                f"{label:15} eps {eps:<5g} mean err {row['error_mean_pct']:6.3f}% (worst workload "
                f"{row['error_max_pct']:6.2f}%)  h-mean speedup {row['speedup_hmean'] or math.nan:7.2f}x  worst "
                f"P(|err|<=eps) {row['worst_within_eps']:.2f}  worst coverage {row['worst_coverage']:.2f}  "
                f"({row['seconds']:.0f} s)",
                flush=True,
            )
            for s in short[:8]:
                print(f"    short: {s}", flush=True)
            if len(short) > 8:
                print(f"    ... and {len(short) - 8} more", flush=True)
    if args.json:
        args.json.write_text(json.dumps({"summary": rows, "workloads": detail}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
