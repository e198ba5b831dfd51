"""GCL-Sampler's cost: the whole ``simsample plan --sampler gcl`` on a trace folder, and how its
parts grow with launches and with warps per launch.

1. End to end, as a user runs it: the CLI on the folder with the default parameters, once with
   an empty graph cache and once with the cache filled (wall time and peak memory of the process).
2. Scaling, each point in a fresh process: graph building (reading the chosen warps, building,
   no cache) and training time per epoch, with peak memory, for warps per launch in ``--warps``
   at all launches, and for the first ``--launches`` launches (a list longer than the folder
   repeats it) at the default warps.

    python benchmarks/bench_gcl.py TRACE_FOLDER [--epochs 3] [--warps 4,8,16,32] [--launches 14,28,56,112]

Needs the gcl extra (torch, torch-geometric).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

POINT = r"""
import json, resource, sys, time
from pathlib import Path
from simsample.gcl.build import launch_graphs
from simsample.gcl.streams import InstructionTraces, WarpSelection
from simsample.gcl.train import TrainConfig, train_and_embed
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


def end_to_end(folder: Path) -> None:
    exe = Path(sys.executable).with_name("simsample")
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "SIMSAMPLE_CACHE": tmp}
        for label in ("empty cache", "cache filled"):
            t = time.perf_counter()
            proc = subprocess.run([str(exe), "plan", str(folder), "--sampler", "gcl", "-o", f"{tmp}/plan.json"], capture_output=True, text=True, env=env)
            wall = time.perf_counter() - t
            if proc.returncode:
                sys.exit(proc.stderr)
            print(f"  plan, {label:12s}: {wall:7.1f} s wall   peak RSS so far {child_peak_mb():7.0f} MB   {proc.stdout.strip()}")


def point(folder: Path, warps: int, launches: int, epochs: int) -> dict:
    proc = subprocess.run([sys.executable, "-c", POINT, str(folder), str(warps), str(launches), str(epochs)], capture_output=True, text=True)
    if proc.returncode:
        sys.exit(proc.stderr)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder", type=Path)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--warps", default="4,8,16,32")
    ap.add_argument("--launches", default="14,28,56,112")
    ap.add_argument("--no-end-to-end", action="store_true")
    args = ap.parse_args()
    from simsample_accelsim.reader import scan_folder

    n = len(scan_folder(args.folder).files)
    print(f"{args.folder}: {n} launches, {os.cpu_count()} CPUs")
    if not args.no_end_to_end:
        print("end to end (defaults: 16 warps per launch, 40 epochs):")
        end_to_end(args.folder)
    print(f"scaling ({args.epochs} epochs per point; per-epoch time = training / epochs):")
    print(f"  {'launches':>8s} {'warps':>5s} {'nodes':>9s} {'graphs s':>9s} {'s/epoch':>8s} {'peak MB':>8s}")
    rows = [(n, int(w)) for w in args.warps.split(",")] + [(int(k), 16) for k in args.launches.split(",") if int(k) != n]
    for launches, warps in rows:
        r = point(args.folder, warps, launches, args.epochs)
        print(f"  {launches:8d} {warps:5d} {r['nodes']:9,d} {r['graph_s']:9.2f} {r['train_s'] / max(1, args.epochs):8.2f} {r['rss_mb']:8.0f}")


if __name__ == "__main__":
    main()
