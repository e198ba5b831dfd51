"""Do the intervals still hold when the cycles are not a line in the features' model?

The estimator takes how far a kernel's cycles follow the model from the line through that
kernel's draws (``_kernel_model_slopes``). A line fitted over a kernel's small and large launches
could be too flat for the large ones where the real relation bends. This stress test replaces
each trace workload's cycles by a bent function of its model, per kernel (m the launch's
modelled cycles, m̃ the kernel's median of them):

- ``hinge``: 0.8·max(m, m̃), a latency floor under the median, then throughput;
- ``convex``: 0.8·m̃·(m/m̃)², cycles that spread twice as much as the model in relative terms.

It plans each workload with ``--sampler`` (margin by default) at seeds 0..R-1 and scores each
plan's interval on those cycles twice: as the estimator reads the plan, and without the samples'
model values (a plan of format 1.3, where no line is fitted). It prints coverage, mean |error|
and median half-width of both::

    python benchmarks/model_shape_stress.py --repeat 60

The convex cycles spread more than the model says, which no reading of the model's spread
covers; the question here is whether the kernel's line ever covers less than without it.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
from pathlib import Path

import numpy as np

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures"
#: trace workloads in the fixtures whose margin plans these cycles test (margin's plans of amr
#: and moe estimate them exactly, with no width)
WORKLOADS = ("serving", "particles", "graph", "convnet")


def bent_cycles(model: np.ndarray, names: np.ndarray, shape: str) -> np.ndarray:
    """The stress test's cycles of each launch: ``shape`` (``hinge`` or ``convex``) per kernel."""
    out = np.empty_like(model)
    for name in np.unique(names):
        mine = names == name
        median = float(np.median(model[mine]))
        if shape == "hinge":
            out[mine] = 0.8 * np.maximum(model[mine], median)
        else:
            out[mine] = 0.8 * median * (model[mine] / median) ** 2
    return out


def _summary(scores: list) -> str:
    cover = statistics.mean(bool(s.covered) for s in scores)
    error = statistics.mean(abs(s.error) for s in scores)
    half = statistics.median(s.half_width for s in scores)
    return f"{cover:5.2f} {100 * error:7.3f}% {100 * half:7.3f}%"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sampler", default="margin")
    ap.add_argument("--repeat", type=int, default=60, help="seeds 0..R-1")
    ap.add_argument("--workloads", default=",".join(WORKLOADS), help="comma-separated, of " + ", ".join(WORKLOADS))
    args = ap.parse_args(argv)

    import simsample
    from simsample.sampling.evaluate import score_plan

    print(f"{'workload':10s} {'shape':7s} {'cover':>5s} {'mean|e|':>8s} {'med±':>8s}   without the samples' model")
    for name in args.workloads.split(","):
        wl = simsample.read(FIXTURES / f"accelsim_{name}" / f"{name}-features.parquet")
        ids = wl.kernels["kernel_id"].to_numpy()
        model = wl.kernels["predicted_cycles"].to_numpy(np.float64)
        names = wl.kernels["name"].astype(str).to_numpy()
        plans = [simsample.plan(wl, args.sampler, seed=s) for s in range(args.repeat)]
        older = [dataclasses.replace(p, samples=p.samples.drop(columns=["model"])) for p in plans]
        for shape in ("hinge", "convex"):
            cycles = bent_cycles(model, names, shape)
            now = [score_plan(p, cycles, ids, metric="cycles") for p in plans]
            before = [score_plan(p, cycles, ids, metric="cycles") for p in older]
            print(f"{name:10s} {shape:7s} {_summary(now)}   {_summary(before)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
