"""Plan time and peak memory of the stratified samplers on synthetic profiles of 1–50 M launches.

Goal (issue 3): 50 million launches planned in under 60 s and under 8 GB on one core.

The profiles are shaped like real ones: a few hundred kernel names repeated over the run, each
with one to four peaks in its duration distribution (different input shapes or contexts), wide
log-normal spreads, durations from microseconds to milliseconds, and a share of zero-duration
launches (Kineto rounds to whole microseconds). Each (size, sampler) runs in a fresh process
pinned to one core, so that its peak resident memory is its own; the table shows the time of
planning (the workload's two fingerprints, which every plan records, and ``sampler.plan``;
the fingerprints' share is shown on its own), the
process's peak RSS (workload included), the RSS before planning (the workload and the
generator's temporaries), and the time growth exponent between consecutive sizes (1.0 = linear).
No allocation tracing runs while timing (tracemalloc slows the many small allocations of the
splits several-fold).

    python benchmarks/bench_samplers.py                    # 1, 10, 50 M; stem and root
    python benchmarks/bench_samplers.py --sizes 1e6,1e7 --samplers stem,root,allegro
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time

N_KERNELS = 300


def make_workload(n: int, seed: int = 0):
    """A synthetic profile of ``n`` launches built directly from arrays (categorical names)."""
    import numpy as np
    import pandas as pd

    from simsample.workload import Workload

    rng = np.random.default_rng(seed)
    k = N_KERNELS
    names = [f"void kernel_{i:03d}<float, {i % 7}>(float const*, float*, int)" for i in range(k)]
    popularity = rng.lognormal(0.0, 1.5, k)  # a few kernels dominate, all of them appear
    codes = rng.choice(k, size=n, p=popularity / popularity.sum()).astype(np.int16)
    base = np.exp(rng.uniform(np.log(2e3), np.log(2e6), k))  # 2 µs .. 2 ms
    peaks = rng.integers(1, 5, k)  # 1..4 peaks per kernel
    spread = rng.uniform(0.02, 0.6, k)  # narrow to wide
    peak = (rng.random(n) * peaks[codes]).astype(np.int8)
    dur = base[codes] * (1.0 + 1.7 * peak) * rng.lognormal(0.0, 1.0, n) ** spread[codes]
    dur[rng.random(n) < 0.002] = 0.0  # rounded-away launches
    del peak
    grid = (2 ** (codes % 9)).astype(np.uint16)
    df = pd.DataFrame(
        {
            "kernel_id": np.arange(n, dtype=np.int64),
            "name": pd.Categorical.from_codes(codes, categories=names),
            "grid_x": grid,
            "grid_y": np.ones(n, np.uint16),
            "grid_z": np.ones(n, np.uint16),
            "block_x": np.full(n, 256, np.uint16),
            "block_y": np.ones(n, np.uint16),
            "block_z": np.ones(n, np.uint16),
            "stream": np.full(n, 7, np.uint16),
            "start_ns": np.arange(n, dtype=np.int64) * 1000,
            "duration_ns": np.rint(dur).astype(np.int64),
        }
    )
    del codes, dur, grid
    return Workload(df, source=f"synthetic-{n}", format="synthetic")


def child(n: int, sampler_name: str) -> None:
    """Build the workload, plan once, print one JSON line of measurements."""
    import resource

    from simsample.manager import get_host

    t0 = time.perf_counter()
    wl = make_workload(n)
    t_build = time.perf_counter() - t0
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    sampler = get_host().sampler(sampler_name)
    params = sampler.resolve_params({})
    t0 = time.perf_counter()
    _ = (wl.fingerprint, wl.shape_fingerprint)  # cached on the workload; every plan records both
    t_fp = time.perf_counter() - t0
    t0 = time.perf_counter()
    plan = sampler.plan(wl, params, 0)
    t_plan = t_fp + time.perf_counter() - t0
    rss_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    scale = 1024 if sys.platform != "darwin" else 1  # ru_maxrss: KiB on Linux, bytes on macOS
    print(
        json.dumps(
            {
                "n": n,
                "sampler": sampler_name,
                "build_s": t_build,
                "plan_s": t_plan,
                "fingerprint_s": t_fp,
                "rss_before_gb": rss_before * scale / 1e9,
                "rss_peak_gb": rss_peak * scale / 1e9,
                "clusters": len(plan.clusters),
                "sampled": plan.prediction["sampled_launches"],
                "speedup": plan.prediction["speedup"],
            }
        )
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1e6,1e7,5e7", help="comma-separated launch counts")
    ap.add_argument("--samplers", default="stem,root", help="comma-separated sampler names")
    ap.add_argument("--child", nargs=2, metavar=("N", "SAMPLER"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(int(float(args.child[0])), args.child[1])
        return
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    samplers = [s.strip() for s in args.samplers.split(",") if s.strip()]
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    rows = []
    for sampler in samplers:
        for n in sizes:
            cmd = [sys.executable, os.path.abspath(__file__), "--child", str(n), sampler]
            if sys.platform.startswith("linux"):
                cmd = ["taskset", "-c", "0", *cmd]
            out = subprocess.run(cmd, env=env, capture_output=True, text=True)
            if out.returncode != 0:
                print(f"{sampler} at {n:,} launches failed:\n{out.stderr}", file=sys.stderr)
                continue
            rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
            r = rows[-1]
            print(
                f"  {sampler} {n:>12,}: plan {r['plan_s']:.2f} s, peak RSS {r['rss_peak_gb']:.2f} GB", file=sys.stderr
            )
    header = (
        f"{'sampler':<8} {'launches':>12} {'plan s':>8} {'fp s':>6} {'exp':>5} {'peak RSS GB':>12} "
        f"{'RSS before GB':>14} {'clusters':>9} {'sampled':>8} {'speedup':>10}"
    )
    print(header)
    print("-" * len(header))
    for sampler in samplers:
        prev = None
        for r in (r for r in rows if r["sampler"] == sampler):
            exp = ""
            if prev is not None and r["plan_s"] > 0 and prev["plan_s"] > 0:
                exp = f"{math.log(r['plan_s'] / prev['plan_s']) / math.log(r['n'] / prev['n']):.2f}"
            print(
                f"{sampler:<8} {r['n']:>12,} {r['plan_s']:>8.2f} {r['fingerprint_s']:>6.2f} {exp:>5} "
                f"{r['rss_peak_gb']:>12.2f} {r['rss_before_gb']:>14.2f} {r['clusters']:>9,} {r['sampled']:>8,} "
                f"{r['speedup'] or 0:>10.1f}"
            )
            prev = r
    print("goal: 50,000,000 launches in < 60 s and < 8 GB on one core; fp s: of which the workload fingerprints;")
    print("exp: time growth exponent between consecutive sizes")


if __name__ == "__main__":
    main()
