"""GCL-Sampler's cost: the whole ``simsample plan --sampler gcl`` on a trace folder, and how its
parts grow with launches and with warps per launch.

1. End to end, as a user runs it: the CLI on the folder with the default parameters, once with
   an empty graph cache and once with the cache filled (wall time and peak memory of the process);
   with ``--previous-end-to-end``, first with the previous training settings beside the current
   defaults (wall and CPU seconds; see 3).
2. Scaling, each point in a fresh process: graph building (reading the chosen warps, building,
   no cache) and training time per epoch, with peak memory, for warps per launch in ``--warps``
   at all launches, and for the first ``--launches`` launches (a list longer than the folder
   repeats it) at the default warps.

    python benchmarks/bench_gcl.py TRACE_FOLDER [--epochs 3] [--warps 4,8,16,32] [--launches 14,28,56,112]

3. Time against launches (``--scaling 10,100,1000``): synthetic trace folders of the first N
   launches of a transformer decoder (``benchmarks/decoder_workload.py`` with as many decode steps
   as N needs), each planned by the CLI with the defaults (current) and with the previous
   training settings (``--param patience=0 --param epoch_launches=1000000 --param
   validation_max=1000000`` and torch's OpenMP threads spinning, ``OMP_WAIT_POLICY=ACTIVE``: what
   version 1 did), side by side: wall and CPU seconds (the plan process and its workers), epochs
   run, the plan's clusters. Previous settings are skipped above ``--previous-max`` launches
   (they grow with the launches: 40 epochs of every launch).

    python benchmarks/bench_gcl.py TRACE_FOLDER --no-end-to-end --scaling 10,100,1000 --warps '' --launches ''

Needs the gcl extra (torch, torch-geometric).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

POINT = r"""
import json, resource, sys, time
from pathlib import Path
from simsample.plugins.samplers._gcl.build import launch_graphs
from simsample.gcl.streams import InstructionTraces, WarpSelection
from simsample.plugins.samplers._gcl.train import TrainConfig, train_and_embed
from simsample_accelsim.reader import scan_folder
from simsample_accelsim.warps import read_warps
folder, warps, launches, epochs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
files = scan_folder(folder).files
files = (files * (launches // len(files) + 1))[:launches]
t0 = time.perf_counter()
graphs, _ = launch_graphs(InstructionTraces(files, read_warps, "bench"), WarpSelection(warps=warps), cache=None, jobs=1)
t1 = time.perf_counter()
train_and_embed(graphs, TrainConfig(epochs=epochs), seed=0)
t2 = time.perf_counter()
print(json.dumps({"graph_s": t1 - t0, "train_s": t2 - t1, "nodes": sum(g.n_nodes for g in graphs),
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def child_peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def end_to_end(folder: Path, previous: bool = False) -> None:
    exe = Path(sys.executable).with_name("simsample")
    if previous:  # the previous training settings, as version 1 ran them (see PREVIOUS), empty graph cache
        w, c, g = timed_plan(folder, PREVIOUS, {**os.environ, "OMP_WAIT_POLICY": "ACTIVE"})
        print(
            f"  plan, previous settings: {w:7.1f} s wall {c:7.1f} s CPU   {g['training'].get('epochs_run', 40)} "
            f"epochs, K = {g['k']}"
        )
        w, c, g = timed_plan(folder, (), {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"})
        print(
            f"  plan, current defaults:  {w:7.1f} s wall {c:7.1f} s CPU   {g['training']['epochs_run']} epochs, K = "
            f"{g['k']}"
        )
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "SIMSAMPLE_CACHE": tmp}
        for label in ("empty cache", "cache filled"):
            t = time.perf_counter()
            proc = subprocess.run(
                [str(exe), "plan", str(folder), "--sampler", "gcl", "-o", f"{tmp}/plan.json"],
                capture_output=True,
                text=True,
                env=env,
            )
            wall = time.perf_counter() - t
            if proc.returncode:
                sys.exit(proc.stderr)
            print(
                f"  plan, {label:12s}: {wall:7.1f} s wall   peak RSS so far {child_peak_mb():7.0f} MB   "
                f"{proc.stdout.strip()}"
            )


def point(folder: Path, warps: int, launches: int, epochs: int) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", POINT, str(folder), str(warps), str(launches), str(epochs)],
        capture_output=True,
        text=True,
    )
    if proc.returncode:
        sys.exit(proc.stderr)
    return json.loads(proc.stdout.strip().splitlines()[-1])


PREVIOUS = ("--param", "patience=0", "--param", "epoch_launches=1000000", "--param", "validation_max=1000000")


def decoder_folder(root: Path, launches: int) -> Path:
    """The first ``launches`` launches of the decoder workload, with as many decode steps as needed."""
    sys.path.insert(0, str(Path(__file__).parent))
    from decoder_workload import decoder_kernels

    from simsample_accelsim.synth import write_workload

    per_step = 46  # 4 layers: embed, 11 per layer, head
    kernels, memcpys = decoder_kernels(4, max(0, -(-launches // per_step) - 1))
    folder = root / f"decoder-{launches}"
    write_workload(folder, kernels[:launches], seed=0, memcpys=memcpys)
    return folder


def timed_plan(folder: Path, extra: tuple[str, ...], env: dict[str, str]) -> tuple[float, float, dict]:
    """Wall and CPU seconds of one ``simsample plan --sampler gcl`` (empty graph cache), and the plan's GCL record."""
    exe = Path(sys.executable).with_name("simsample")
    with tempfile.TemporaryDirectory() as tmp:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        proc = subprocess.run(
            [str(exe), "plan", str(folder), "--sampler", "gcl", "-o", f"{tmp}/plan.json", "--seed", "0", *extra],
            check=False,
            capture_output=True,
            text=True,
            env={**env, "SIMSAMPLE_CACHE": tmp},
        )
        wall = time.perf_counter() - t
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode:
            sys.exit(proc.stderr)
        doc = json.loads(Path(f"{tmp}/plan.json").read_text())
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, doc["prediction"]["gcl"]


def scaling(points: list[int], previous_max: int) -> None:
    print(f"time against launches (decoder launches; {os.cpu_count()} CPUs; wall and CPU seconds of the plan):")
    print(
        f"  {'launches':>8s} | {'previous wall':>13s} {'cpu':>7s} {'epochs':>6s} {'K':>3s} | {'current wall':>12s} "
        f"{'cpu':>7s} {'epochs':>6s} {'best':>4s} {'K':>3s}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for n in points:
            folder = decoder_folder(Path(tmp), n)
            if n <= previous_max:
                w0, c0, g0 = timed_plan(folder, PREVIOUS, {**os.environ, "OMP_WAIT_POLICY": "ACTIVE"})
                before = f"{w0:13.1f} {c0:7.1f} {g0['training'].get('epochs_run', 40):6d} {g0['k']:3d}"
            else:
                before = f"{'(skipped)':>13s} {'':7s} {'':6s} {'':3s}"
            env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
            w1, c1, g1 = timed_plan(folder, (), env)
            t1 = g1["training"]
            print(
                f"  {n:8d} | {before} | {w1:12.1f} {c1:7.1f} {t1.get('epochs_run', 0):6d} {t1['best_epoch']:4d} "
                f"{g1['k']:3d}",
                flush=True,
            )
            shutil.rmtree(folder)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder", type=Path)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--warps", default="4,8,16,32")
    ap.add_argument("--launches", default="14,28,56,112")
    ap.add_argument("--no-end-to-end", action="store_true")
    ap.add_argument("--scaling", default="", help="launch counts of synthetic decoder folders, e.g. 10,100,1000")
    ap.add_argument(
        "--previous-max", type=int, default=100, help="largest launch count planned with the previous settings too"
    )
    ap.add_argument(
        "--previous-end-to-end", action="store_true", help="also plan the folder with the previous settings (slow)"
    )
    args = ap.parse_args()
    if args.scaling:
        scaling([int(x) for x in args.scaling.split(",")], args.previous_max)
    from simsample_accelsim.reader import scan_folder

    n = len(scan_folder(args.folder).files)
    if args.no_end_to_end and not any(args.warps.split(",") + args.launches.split(",")):
        return
    print(f"{args.folder}: {n} launches, {os.cpu_count()} CPUs")
    if not args.no_end_to_end:
        print("end to end (defaults: 16 warps per launch, up to 40 epochs with early stopping):")
        end_to_end(args.folder, args.previous_end_to_end)
    rows = [(n, int(w)) for w in args.warps.split(",") if w] + [
        (int(k), 16) for k in args.launches.split(",") if k and int(k) != n
    ]
    if not rows:
        return
    print(f"scaling ({args.epochs} epochs per point; per-epoch time = training / epochs):")
    print(f"  {'launches':>8s} {'warps':>5s} {'nodes':>9s} {'graphs s':>9s} {'s/epoch':>8s} {'peak MB':>8s}")
    for launches, warps in rows:
        r = point(args.folder, warps, launches, args.epochs)
        print(
            f"  {launches:8d} {warps:5d} {r['nodes']:9,d} {r['graph_s']:9.2f} "
            f"{r['train_s'] / max(1, args.epochs):8.2f} {r['rss_mb']:8.0f}"
        )


if __name__ == "__main__":
    main()
