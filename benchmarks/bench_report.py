"""Time and size of ``simsample report`` on a synthetic profile of 1 M launches.

Goal (issue 15): a plan of ≥ 1 M launches and ≥ 1,000 clusters gives a page under 5 MB, written
in under 10 s.

The profile is the samplers' benchmark profile (``bench_samplers.make_workload``: skewed kernel
popularity, several peaks per kernel, wide spreads) with 1,500 kernel names, written to parquet
as a user's ``profile features`` output would be. The inputs are made as a user makes them: a
ROOT plan (clusters split by value), an ``estimate --json`` document from stand-in simulator
values (two totals and a ratio), and ``evaluate --json`` documents for two samplers with an ε
sweep. The report command then runs as a separate process, so the time printed is what a user
waits: interpreter start, reading the plan and the 1 M-launch profile, the figures, the page.
It is printed with the process's CPU time (user + system): on a busy machine the wall time
grows with the load, the CPU time much less.

    python benchmarks/bench_report.py                  # 1 M launches
    python benchmarks/bench_report.py --launches 5e6 --kernels 3000
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench_samplers  # noqa: E402  (the samplers' synthetic profile)


def _cli(argv: list[str]) -> str:
    from simsample.cli import run

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = run(argv)
    if code != 0:
        raise SystemExit(f"simsample {' '.join(argv)} failed with exit code {code}")
    return buf.getvalue()


def _phases(plan: Path, prof: Path, est: Path, evals: list[Path]) -> dict[str, float]:
    """Where the report's time goes, measured in this process (CLI start-up excluded)."""
    times: dict[str, float] = {}
    t0 = time.perf_counter()
    from simsample.planfile import Plan

    p = Plan.read(plan)
    times["plan read"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    from simsample.reading import load_workload

    wl = load_workload([prof])
    _ = wl.shape_fingerprint
    times["profile read"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    from simsample.report import content, render
    from simsample.report.inputs import read_estimate, read_evaluation

    times["matplotlib import"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    report = content.build(
        p, plan, workload=wl, estimate=read_estimate(est), evaluations=[(e.name, read_evaluation(e)) for e in evals]
    )
    times["figures and tables"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    render.render(report)
    times["page"] = time.perf_counter() - t0
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--launches", default="1e6", help="launches in the synthetic profile")
    ap.add_argument("--kernels", type=int, default=1500, help="distinct kernel names")
    ap.add_argument("--sampler", default="root", help="sampler of the plan")
    args = ap.parse_args()
    n = int(float(args.launches))
    bench_samplers.N_KERNELS = args.kernels

    import numpy as np
    import pandas as pd

    with tempfile.TemporaryDirectory(prefix="simsample-bench-report-") as tmp:
        d = Path(tmp)
        wl = bench_samplers.make_workload(n)
        prof = d / "profile.parquet"
        wl.to_parquet(prof)
        plan = d / "plan.json"
        _cli(["plan", str(prof), "--sampler", args.sampler, "-o", str(plan)])
        doc = json.loads(plan.read_text())
        ids = np.unique([s["kernel_id"] for s in doc["samples"]])
        dur = wl.kernels.set_index("kernel_id").loc[ids, "duration_ns"].to_numpy(np.float64)
        values = d / "values.csv"
        pd.DataFrame({"kernel_id": ids, "cycles": np.rint(dur * 1.4), "instructions": np.rint(dur * 37)}).to_csv(
            values, index=False
        )
        est = d / "estimate.json"
        est.write_text(_cli(["estimate", "--plan", str(plan), str(values), "--json"]))
        evals = []
        for sampler in ("stem", "root"):
            ev = d / f"eval-{sampler}.json"
            ev.write_text(
                _cli(
                    [
                        "evaluate",
                        str(prof),
                        "--sampler",
                        sampler,
                        "--repeat",
                        "2",
                        "--sweep",
                        "eps=0.05,0.1,0.25",
                        "--json",
                    ]
                )
            )
            evals.append(ev)
        out = d / "report.html"
        argv = [sys.executable, "-m", "simsample", "report", str(plan), "--profile", str(prof), "--estimate", str(est)]
        for ev in evals:
            argv += ["--evaluate", str(ev)]
        argv += ["-o", str(out)]
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run(argv, check=True, capture_output=True)
        wall = time.perf_counter() - t0
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        size = out.stat().st_size
        print(
            f"{'launches':>10} {'clusters':>9} {'samples':>8} {'plan MB':>8} {'report s':>9} {'CPU s':>6} "
            f"{'page MB':>8}"
        )
        print(
            f"{n:>10,} {len(doc['clusters']):>9,} {len(doc['samples']):>8,} {plan.stat().st_size / 1e6:>8.2f} "
            f"{wall:>9.2f} {cpu:>6.2f} {size / 1e6:>8.2f}"
        )
        print("in-process breakdown:", ", ".join(f"{k} {v:.2f} s" for k, v in _phases(plan, prof, est, evals).items()))
        print(
            f"goal: page under 5 MB {'met' if size < 5e6 else 'NOT met'}; written in under 10 s "
            f"{'met' if wall < 10 else 'NOT met'} (wall {wall:.2f} s, CPU {cpu:.2f} s)"
        )


if __name__ == "__main__":
    main()
