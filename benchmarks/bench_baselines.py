"""Plan time of the baseline samplers (PKA, Sieve, Photon) beside STEM and ROOT.

A synthetic workload carries everything every sampler needs: cycles and durations, the twelve
PKA metrics, instruction counts, and per-warp basic-block vectors (warp types) for Photon. Its
kernels come in three kinds, drawn with Zipf-like popularity:

* *static* (about 60% of kernels): one launch shape, instruction counts within 1%, fixed warp mix;
* *shaped* (about 25%): one of four grid sizes, each with its own warp mix;
* *dynamic* (1 in 7 kernels, about 17% of launches): data-dependent grids (160 to 32,000 warps),
  warp mixes and per-block trip counts that vary from launch to launch — nearly every launch
  has a GPU BBV of its own.

The dynamic kernels make Photon's representative set grow with the launches, so its online
comparison shows its O(N × representatives × BBV length) cost; PKA's cost is its k-means sweep
(k = 1 … 20 with 10 initialisations, until a k meets the 5% target), timed on one thread
(``--threads``). Sizes run in increasing
order; a sampler whose projected time at the next size exceeds ``--budget`` seconds (from the
growth between its last two sizes) is skipped there, with the projection printed.

    .venv/bin/python benchmarks/bench_baselines.py                 # 1k, 10k, 100k, 1M
    .venv/bin/python benchmarks/bench_baselines.py --sizes 1000,10000 --samplers pka,photon
"""

from __future__ import annotations

import argparse
import gc
import math
import sys
import time

import numpy as np
import scipy.sparse as sp

from simsample.plugins.samplers.pka import PKA_METRICS
from simsample.workload import from_records

N_KERNELS = 60
BLOCKS_PER_KERNEL = 6
TYPES_PER_LAUNCH = 2
DYNAMIC_SPREAD = 1.0  # log-normal σ of a dynamic kernel's per-block trip counts


def synthetic(n: int, seed: int = 0):
    """A workload of ``n`` launches with profile metrics and warp-type BBVs (see module doc)."""
    g = np.random.default_rng(seed)
    pop = 1.0 / np.arange(1, N_KERNELS + 1)
    kernel = g.choice(N_KERNELS, size=n, p=pop / pop.sum())
    kid = np.arange(N_KERNELS)
    kind = np.where(kid % 7 == 3, 2, np.where(kid % 4 == 1, 1, 0))[kernel]
    block = np.array([128, 256])[np.arange(N_KERNELS) % 2][kernel]
    base_grid = g.integers(8, 600, N_KERNELS)[kernel]
    shape_ix = g.integers(0, 4, n)
    grid = np.where(kind == 0, base_grid, np.where(kind == 1, base_grid * (1 + shape_ix), g.integers(40, 4000, n)))
    warps = grid * (block // 32)
    # warp mix: share of the first of two warp types
    share0 = np.where(kind == 0, 0.7, np.where(kind == 1, 0.5 + 0.1 * shape_ix, g.uniform(0.05, 0.95, n)))
    # per-warp instructions in each of the kernel's blocks, for its two types
    per_block = g.integers(4, 400, (N_KERNELS, TYPES_PER_LAUNCH, BLOCKS_PER_KERNEL)).astype(np.float64)
    scale = np.where(
        kind == 0, 1 + 0.01 * g.standard_normal(n), np.where(kind == 1, 1 + shape_ix, g.uniform(0.5, 2.0, n))
    )
    count0 = np.maximum(1, np.rint(share0 * warps)).astype(np.int64)
    count1 = np.maximum(0, warps - count0)
    # warp types: rows (launch, type) × columns (kernel block)
    rows_launch = np.repeat(np.arange(n), TYPES_PER_LAUNCH)
    rows_type = np.tile(np.arange(TYPES_PER_LAUNCH), n)
    vals = per_block[kernel[rows_launch], rows_type] * scale[rows_launch, None]
    # dynamic kernels: data-dependent trip counts per block, so their warp BBVs differ launch to launch
    dyn = kind[rows_launch] == 2
    vals[dyn] *= g.lognormal(0.0, DYNAMIC_SPREAD, (int(dyn.sum()), BLOCKS_PER_KERNEL))
    vals = np.maximum(1.0, np.rint(vals))
    cols = kernel[rows_launch, None] * BLOCKS_PER_KERNEL + np.arange(BLOCKS_PER_KERNEL)[None, :]
    t = n * TYPES_PER_LAUNCH
    types = sp.csr_matrix(
        (vals.ravel(), cols.ravel(), np.arange(0, t * BLOCKS_PER_KERNEL + 1, BLOCKS_PER_KERNEL)),
        shape=(t, N_KERNELS * BLOCKS_PER_KERNEL),
    )
    type_count = np.column_stack([count0, count1]).ravel()
    per_warp = np.asarray(types.sum(axis=1)).ravel()
    warp_insts = np.bincount(rows_launch, weights=per_warp * type_count, minlength=n)
    cpi = g.uniform(0.5, 4.0, N_KERNELS)[kernel] * (1 + 0.05 * g.standard_normal(n)).clip(0.5)
    cycles = np.rint(warp_insts * cpi / np.maximum(1, warps / 5120)).astype(np.int64) + 1000
    rec = {
        "name": np.array([f"kernel_{k:02d}" for k in range(N_KERNELS)])[kernel],
        "grid_x": grid,
        "block_x": block,
        "duration_ns": cycles,
        "cycles": cycles,
        "warp_insts": warp_insts.astype(np.int64),
    }
    mem_share = g.uniform(0.01, 0.3, (N_KERNELS, len(PKA_METRICS)))[kernel]
    for i, m in enumerate(PKA_METRICS):
        if m == "smsp__inst_executed.sum":
            rec[m] = warp_insts
        elif m == "launch__grid_size":
            rec[m] = grid
        elif m.endswith(".ratio"):
            rec[m] = np.full(n, 32.0) - 8 * (kind == 2) * g.random(n)
        else:
            rec[m] = np.rint(warp_insts * mem_share[:, i])
    wl = from_records(rec, source=f"synthetic-{n}")
    wl.extras = {
        "warp_types": types,
        "warp_type_launch": rows_launch,
        "warp_type_count": type_count,
        "bbv_blocks": {
            "start_pc": np.arange(N_KERNELS * BLOCKS_PER_KERNEL) * 256 % 8192,
            "length": np.full(N_KERNELS * BLOCKS_PER_KERNEL, 8),
        },
    }
    return wl


def _sampler(name: str):
    from simsample.manager import get_host

    try:
        return get_host().sampler(name)
    except Exception:
        return None


def _detail(name: str, plan) -> str:
    p = plan.prediction
    if name == "pka":
        return f"k={p['k']} ({len(p['k_errors'])} k fitted)"
    if name == "photon":
        return f"{len(plan.clusters):,} representatives"
    if name == "sieve":
        return f"{len(plan.clusters):,} strata"
    return f"{len(plan.clusters):,} clusters"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,10000,100000,1000000")
    ap.add_argument("--samplers", default="pka,sieve,photon,stem,root")
    ap.add_argument("--budget", type=float, default=600.0, help="skip a run projected to take longer (s)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1, help="BLAS/OpenMP threads (k-means); 0 = library default")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    names = [s.strip() for s in args.samplers.split(",") if s.strip()]
    samplers = {n: _sampler(n) for n in names}
    warm = synthetic(200, args.seed)  # imports (scikit-learn) and thread pools start outside the timings
    for s in samplers.values():
        if s is not None:
            s.plan(warm, s.resolve_params({}), args.seed)
    limits = None
    if args.threads > 0:
        # one thread: stable timings on a shared machine (OpenMP k-means slows down by an order of
        # magnitude when its threads compete with other processes for the cores). Applied after
        # the warm-up, which loads the libraries whose thread pools it limits.
        from threadpoolctl import threadpool_limits

        limits = threadpool_limits(args.threads)
    history: dict[str, list[tuple[int, float]]] = {n: [] for n in names}
    header = f"{'sampler':8} {'launches':>10} {'plan s':>10} {'µs/launch':>10} {'sampled':>9} {'speedup':>9}  detail"
    print(header)
    print("-" * len(header))
    for n in sizes:
        t0 = time.perf_counter()
        wl = synthetic(n, args.seed)
        gen_s = time.perf_counter() - t0
        print(f"# {n:,} launches generated in {gen_s:.1f} s", flush=True)
        for name in names:
            s = samplers[name]
            if s is None:
                print(f"{name:8} {n:>10,} {'not available':>10}")
                continue
            hist = history[name]
            if hist:
                (n1, t1) = hist[-1]
                p = 1.0
                if len(hist) >= 2:
                    (n0, t0_) = hist[-2]
                    if t0_ > 0.05 and t1 > 0:
                        p = max(1.0, math.log(t1 / t0_) / math.log(n1 / n0))
                projected = t1 * (n / n1) ** p
                if projected > args.budget:
                    print(
                        f"{name:8} {n:>10,} {'skipped':>10}  projected {projected:,.0f} s (growth ∝ N^{p:.2f})",
                        flush=True,
                    )
                    hist.append((n, projected))
                    continue
            params = s.resolve_params({})
            gc.collect()
            t0 = time.perf_counter()
            plan = s.plan(wl, params, args.seed)
            dt = time.perf_counter() - t0
            hist.append((n, dt))
            sp_ = plan.prediction.get("speedup")
            print(
                f"{name:8} {n:>10,} {dt:>10.2f} {1e6 * dt / n:>10.1f} {plan.prediction['sampled_launches']:>9,} "
                f"{(sp_ or 0):>8.1f}x  {_detail(name, plan)}",
                flush=True,
            )
        del wl
    if limits is not None:
        limits.restore_original_limits()
    return 0


if __name__ == "__main__":
    sys.exit(main())
