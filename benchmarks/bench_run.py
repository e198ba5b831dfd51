"""Wall-clock of a split sampled run: serial (``--jobs 1``) against parallel (``--jobs J``), side by side.

1. Fake jobs: N sampled launches of a small synthetic trace folder, run by the tests' fake
   Accel-Sim with a busy loop of S seconds per kernel (a CPU-bound job, like a simulation), so
   the ratio shows what the local executor gets out of the machine's cores.
2. Optionally a real Accel-Sim (``--accelsim BIN --config A --config B [--env-script env.sh]``)
   on a real trace folder (``--traces``): the plan a user would make (``profile features``, then
   ``plan --sampler SAMPLER``), applied with ``--split`` (default targeted warm-up), run serial
   then parallel. Each mode starts from an empty set of logs.

    python benchmarks/bench_run.py --n 8 --seconds 2 --jobs 2
    python benchmarks/bench_run.py --n 8 --accelsim .../accel-sim.out --config gpgpusim.config --config trace.config \\
        --env-script env.sh --traces hetero/ --sampler root --work scratch/
"""

from __future__ import annotations

import argparse
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fake_accelsim import make_workload, sim_args, write_fake_simulator  # noqa: E402

SIMSAMPLE = [sys.executable, "-m", "simsample"]


def _sh(args: list[str], env: dict[str, str] | None = None) -> None:
    res = subprocess.run([*SIMSAMPLE, *args], env=env, capture_output=True, text=True)
    if res.returncode != 0:
        raise SystemExit(f"failed: simsample {' '.join(args)}\n{res.stderr}")


def _clear_logs(run: Path) -> None:
    for p in run.glob("jobs/*/accelsim.log*"):
        p.unlink()


def _timed_run(run: Path, sim: list[str], jobs: int, env: dict[str, str], extra: list[str] = ()) -> float:
    _clear_logs(run)
    t = time.perf_counter()
    _sh(["run", "--sim", "accelsim", "--sampled", str(run), *sim, "--jobs", str(jobs), *extra], env)
    return time.perf_counter() - t


def fake(n: int, seconds: float, jobs: int, work: Path) -> None:
    traces = make_workload(work / "traces", n)
    exe, configs = write_fake_simulator(work / "sim")
    _sh(["profile", "features", "--sim", "accelsim", str(traces), "-o", str(work / "f.parquet")])
    _sh(
        ["plan", str(work / "f.parquet"), "--sampler", "random", "--param", f"count={n}", "-o", str(work / "plan.json")]
    )
    _sh(
        [
            "apply",
            "--sim",
            "accelsim",
            "--plan",
            str(work / "plan.json"),
            "--traces",
            str(traces),
            "--out",
            str(work / "run"),
            "--split",
            "--warmup",
            "none",
        ]
    )
    env = {**os.environ, "FAKE_SIM_DELAY": str(seconds), "FAKE_SIM_BUSY": "1"}
    sim = sim_args(exe, configs)
    serial = _timed_run(work / "run", sim, 1, env)
    parallel = _timed_run(work / "run", sim, jobs, env)
    print(
        f"fake jobs: {n} jobs x {seconds:g} s busy; serial {serial:.2f} s, --jobs {jobs} {parallel:.2f} s, "
        f"ratio {parallel / serial:.2f} (usable CPUs {len(os.sched_getaffinity(0))}, load {os.getloadavg()[0]:.2f})"
    )


def real(args: argparse.Namespace, work: Path) -> None:
    exe = Path(args.accelsim).resolve()
    if args.env_script:  # the simulator needs its environment (libraries): a wrapper sources it
        wrapper = work / "accel-sim-env.sh"
        wrapper.write_text(f'#!/usr/bin/env bash\nsource {Path(args.env_script).resolve()}\nexec {exe} "$@"\n')
        wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
        exe = wrapper
    sim = ["--accelsim", str(exe), *(x for c in args.config for x in ("--config", str(Path(c).resolve())))]
    _sh(["profile", "features", "--sim", "accelsim", str(args.traces), "-o", str(work / "real.parquet")])
    _sh(
        [
            "plan",
            str(work / "real.parquet"),
            "--sampler",
            args.sampler,
            "--seed",
            "0",
            "-o",
            str(work / "real-plan.json"),
        ]
    )
    _sh(
        [
            "apply",
            "--sim",
            "accelsim",
            "--plan",
            str(work / "real-plan.json"),
            "--traces",
            str(args.traces),
            "--out",
            str(work / "real-run"),
            "--split",
        ]
    )
    n = len(list((work / "real-run" / "jobs").iterdir()))
    env = dict(os.environ)
    serial = _timed_run(work / "real-run", sim, 1, env)
    parallel = _timed_run(work / "real-run", sim, args.jobs, env)
    print(
        f"accel-sim, {args.traces.name} {args.sampler} plan: {n} jobs; serial {serial:.1f} s, --jobs {args.jobs} "
        f"{parallel:.1f} s, ratio {parallel / serial:.2f} (load {os.getloadavg()[0]:.2f})"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=8, help="fake jobs")
    ap.add_argument("--seconds", type=float, default=2.0, help="busy seconds per fake job")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--accelsim", help="accel-sim.out (optional real measurement)")
    ap.add_argument("--config", action="append", default=[])
    ap.add_argument("--env-script", help="script to source before the simulator (its libraries)")
    ap.add_argument("--traces", type=Path, help="real trace folder")
    ap.add_argument("--sampler", default="root")
    ap.add_argument("--work", type=Path, help="scratch folder (default: a temporary one)")
    args = ap.parse_args()
    work = Path(args.work or tempfile.mkdtemp(prefix="bench-run-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        fake(args.n, args.seconds, args.jobs, work / "fake")
        if args.accelsim:
            real(args, work)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
