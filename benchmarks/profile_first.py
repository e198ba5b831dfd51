"""Profile first, trace only what the plan needs: the whole Accel-Sim flow at 10^6 launches.

    python benchmarks/profile_first.py [--launches 1000000] [--workdir DIR] [--keep]

Steps, each in a fresh process as a user would run it (wall time and peak resident memory from
``wait4``, so the figure is the process's own):

1. ``profile``: a synthetic profile of N launches written as a per-kernel CSV (``--format csv``):
   40 kernels in a repeating "training step" of 200 launches, launch shapes varying within a
   kernel, durations from per-kernel lognormals; a few memcpys at the start (not timed as a step
   of the flow);
2. ``plan``: ``simsample plan PROFILE --format csv --columns ... --first-launch 1`` (the default
   sampler);
3. ``select``: ``simsample accelsim select`` (the tracer runs: sampled launches and their
   warm-up windows of 5, gaps of up to 16 bridged);
4. ``trace``: what the tracer runs would leave (:mod:`simsample_accelsim.synthruns`): for each
   range, a folder with the traces of its launches written by the adapter's trace writer
   (:func:`simsample_accelsim.synth.write_kernel`, header as the profile describes the launch),
   ``kernelslist.g`` with every memcpy up to the range's end and ``stats.csv``. The real
   ``stats.csv`` of every run repeats every earlier launch; here only the run that goes furthest
   does (the others list their own range), since N x runs lines are the tracer's cost, not
   simsample's, and ``merge`` reads only each run's own lines;
5. ``merge``: ``simsample accelsim merge RUNS... --out traces``;
6. ``apply``: ``simsample apply --sim accelsim`` with the default (targeted) warm-up;
7. ``simulate``: the fake Accel-Sim of the tests (``tests/fake_accelsim.py``), excluded from the total;
8. ``estimate``: ``simsample estimate --sim accelsim``.

Prints one line per step and the total excluding the simulation; the goal is under 2 minutes and
4 GB (peak of any step) on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
KERNELS = 40
STEP = 200
COLUMNS = (
    "name=Name,duration_ns=Duration,grid_x=GridX,grid_y=GridY,grid_z=GridZ,block_x=BlockX,block_y=BlockY,block_z=BlockZ"
)


def _exe(name: str) -> str:
    here = Path(sys.executable).parent / name
    return str(here) if here.exists() else name


def run_measured(
    label: str,
    argv: list[str],
    rows: list[tuple[str, float, float, str]],
    *,
    cwd: Path | None = None,
    out: Path | None = None,
) -> None:
    """Run ``argv`` in a fresh process (``fork``/``exec``); record wall seconds and its own peak RSS
    (GB, from ``wait4``) and the last line it printed."""
    t0 = time.perf_counter()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        os.close(r)
        if cwd is not None:
            os.chdir(cwd)
        fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644) if out else w
        os.dup2(fd, 1)
        os.dup2(w, 2)
        try:
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)
    os.close(w)
    with os.fdopen(r) as fh:
        text = fh.read()
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{label} failed: {' '.join(map(str, argv))}\n{text[-3000:]}")
    lines = [ln for ln in text.strip().splitlines() if not ln.startswith(("warning:", "note:", "then:"))]
    rows.append((label, wall, usage.ru_maxrss / 2**20, lines[-1] if lines else ""))


def write_profile(path: Path, n: int, seed: int = 0) -> None:
    """The synthetic profile (see the module docstring)."""
    rng = np.random.default_rng(seed)
    names = np.array([f"_Z{len(f'k{i:02d}')}k{i:02d}Pfi" for i in range(KERNELS)])
    step = rng.integers(0, KERNELS, STEP)
    kern = np.resize(step, n)
    grid_x = 1 + (kern % 4) + (rng.random(n) < 0.1)  # a few launches of a kernel on another grid
    block_x = 32 * (1 + kern % 3)
    mu = rng.uniform(8, 12, KERNELS)
    dur = np.maximum(1000, rng.lognormal(mu[kern], 0.15)).astype(np.int64)
    with open(path, "w") as fh:
        fh.write("Name,Duration,GridX,GridY,GridZ,BlockX,BlockY,BlockZ\n")
        for lo in range(0, n, 200_000):
            hi = min(n, lo + 200_000)
            fh.writelines(
                f"{names[k]},{d},{g},1,1,{b},1,1\n"
                for k, d, g, b in zip(kern[lo:hi], dur[lo:hi], grid_x[lo:hi], block_x[lo:hi])
            )


def write_runs(profile: Path, script: Path, runs: Path) -> None:
    """Step 4, in its own process: the run folders the tracer would leave for the script's ranges."""
    import re

    import pandas as pd

    from simsample_accelsim.synth import KernelSpec, write_kernel
    from simsample_accelsim.synthruns import write_tracer_runs

    ranges = [(int(a), int(b)) for a, b in re.findall(r"^trace_range run-\d+ (\d+) (\d+)$", script.read_text(), re.M)]
    furthest = max(b for _, b in ranges)
    df = pd.read_csv(profile, nrows=furthest, usecols=["Name", "GridX", "BlockX"])
    names, grids, blocks = df["Name"].to_numpy(), df["GridX"].to_numpy(), df["BlockX"].to_numpy()

    def launch(n: int):
        return str(names[n - 1]), (int(grids[n - 1]), 1, 1), (int(blocks[n - 1]), 1, 1)

    def trace(n: int, folder: Path) -> str:
        name, grid, block = launch(n)
        file = f"kernel-{n}.traceg"
        write_kernel(
            folder / file,
            KernelSpec(
                name=name,
                grid=grid,
                block=block,
                iters=1,
                body=("LDG.E", "FFMA", "STG.E"),
                base_address=0x7F5A40000000 + (n // 3 % 64) * 0x10000,
            ),
            n,
            seed=0,
        )
        return file

    memcpys = [(1, f"MemcpyHtoD,0x{0x7F5A40000000 + i * 0x100000:016x},1048576") for i in range(4)]
    write_tracer_runs(runs, ranges, launch=launch, trace=trace, memcpys=memcpys, stats="range")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--launches", type=float, default=1e6)
    ap.add_argument("--workdir", type=Path)
    ap.add_argument("--keep", action="store_true", help="Keep the work folder.")
    ap.add_argument("--write-runs", nargs=3, metavar=("PROFILE", "SCRIPT", "RUNS"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.write_runs:
        write_runs(*(Path(p) for p in args.write_runs))
        return
    n = int(args.launches)
    work = args.workdir or Path(tempfile.mkdtemp(prefix="profile-first-"))
    work.mkdir(parents=True, exist_ok=True)
    sim = _exe("simsample")
    rows: list[tuple[str, float, float, str]] = []
    try:
        t0 = time.perf_counter()
        profile = work / "profile.csv"
        write_profile(profile, n)
        print(
            f"profile: {n:,} launches written in {time.perf_counter() - t0:.1f} s "
            f"({profile.stat().st_size / 1e6:,.0f} MB)",
            flush=True,
        )
        plan = work / "plan.json"
        run_measured(
            "plan",
            [
                sim,
                "plan",
                str(profile),
                "--format",
                "csv",
                "--columns",
                COLUMNS,
                "--first-launch",
                "1",
                "-o",
                str(plan),
            ],
            rows,
        )
        script = work / "trace.sh"
        run_measured(
            "select",
            [sim, "accelsim", "select", "--plan", str(plan), "-o", str(script), "--runs", str(work / "runs")],
            rows,
        )
        run_measured(
            "trace (synth)",
            [sys.executable, __file__, "--write-runs", str(profile), str(script), str(work / "runs")],
            rows,
        )
        runs = sorted(str(p) for p in (work / "runs").iterdir())
        rows[-1] = (*rows[-1][:3], f"{len(runs)} run folders")
        run_measured("merge", [sim, "accelsim", "merge", *runs, "--out", str(work / "traces")], rows)
        run_measured(
            "apply",
            [
                sim,
                "apply",
                "--sim",
                "accelsim",
                "--plan",
                str(plan),
                "--traces",
                str(work / "traces"),
                "--out",
                str(work / "sampled"),
            ],
            rows,
        )
        sys.path.insert(0, str(ROOT))
        from tests.fake_accelsim import write_fake_simulator

        exe, configs = write_fake_simulator(work / "fake")
        log = work / "sim.log"
        args_sim = [str(exe), "-trace", "./kernelslist.g"] + [x for c in configs for x in ("-config", str(c))]
        run_measured("simulate (fake)", args_sim, rows, cwd=work / "sampled", out=log)
        run_measured("estimate", [sim, "estimate", "--sim", "accelsim", "--plan", str(plan), str(log)], rows)
    finally:
        print(f"{'step':<16} {'wall s':>8} {'peak GB':>8}  output")
        for label, wall, peak, note in rows:
            print(f"{label:<16} {wall:8.2f} {peak:8.3f}  {note[:110]}")
        flow = [r for r in rows if not r[0].startswith("simulate")]
        print(
            f"{'total (no sim)':<16} {sum(r[1] for r in flow):8.2f} {max((r[2] for r in flow), default=0):8.3f}  "
            "(goal: < 120 s, < 4 GB)"
        )
        if not args.keep and args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)
        elif args.keep or args.workdir:
            print(f"work folder: {work}")


if __name__ == "__main__":
    main()
