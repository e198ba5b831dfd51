"""Time of the readers that hostile sizes made hang, at growing sizes: they must grow linearly.

Issue 37, item 8: the tail reader of the Accel-Sim tracer's ``stats.csv`` prepended 64 KiB chunks
to what it had read (quadratic in the bytes read back), and a 2 GiB sparse ``stats.csv`` in a run
other than the last kept ``accelsim merge`` busy past two minutes; a 20 MB kernel name folded into
``profile info``'s table took minutes, and stripping the argument list of a name of long blanks
backtracked quadratically. Each row below is one size; a linear reader's time per MB stays flat.

    python benchmarks/bench_hostile_sizes.py
    python benchmarks/bench_hostile_sizes.py --sizes 1,4,16,64

Printed: wall seconds and CPU seconds (the process's user + system time for that step; on a busy
machine the wall time grows with the load, the CPU time much less).
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _timed(fn) -> tuple[float, float]:
    w, c = time.perf_counter(), _cpu()
    fn()
    return time.perf_counter() - w, _cpu() - c


def stats_tail(folder: Path, sizes: list[int]) -> None:
    from simsample_accelsim.tracerstats import STATS_HEADER, read_stats_tail, stats_line

    print("read_stats_tail: the last half of a stats.csv of N MB")
    print(f"{'MB':>6} {'lines':>10} {'wall s':>8} {'cpu s':>8} {'cpu s/MB':>9}")
    for mb in sizes:
        p = folder / f"stats-{mb}.csv"
        line = stats_line(1, "_Z6kernelPfS_i", (8, 8, 1), (128, 1, 1), 25344)
        n = max(mb * (1 << 20) // (len(line) + 1), 2)
        with open(p, "w") as fh:
            fh.write(STATS_HEADER + "\n")
            fh.writelines(
                stats_line(k, "_Z6kernelPfS_i", (8, 8, 1), (128, 1, 1), 25344) + "\n" for k in range(1, n + 1)
            )
        wall, cpu = _timed(lambda p=p, n=n: read_stats_tail(p, n // 2))
        print(f"{mb:>6} {n:>10,} {wall:>8.2f} {cpu:>8.2f} {cpu / mb:>9.3f}")
        p.unlink()


def names(sizes: list[int]) -> None:
    from simsample.cli.tables import kernel_label

    print("kernel_label: a name of N MB (letters; blanks before a qualifier)")
    print(f"{'MB':>6} {'letters s':>10} {'blanks s':>9}")
    for mb in sizes:
        letters = "_Z4" + "a" * (mb << 20) + "Pf"
        blanks = "k" + " " * (mb << 20) + "x(int) const"
        _, c1 = _timed(lambda letters=letters: kernel_label(letters))
        _, c2 = _timed(lambda blanks=blanks: kernel_label(blanks))
        print(f"{mb:>6} {c1:>10.3f} {c2:>9.3f}")


def sparse_merge(folder: Path) -> None:
    """``accelsim merge`` of two runs, the first with a 2 GiB sparse stats.csv: refused, how fast."""
    from simsample_accelsim.synth import KernelSpec, write_workload
    from simsample_accelsim.synthruns import link_trace, write_tracer_runs

    specs = [
        KernelSpec(name="_Z4gemmPf", grid=(1 + i % 4, 1, 1), block=(32, 1, 1), iters=1, body=("LDG.E", "STG.E"))
        for i in range(12)
    ]
    full = folder / "full"
    write_workload(full, specs)
    runs = folder / "runs"
    write_tracer_runs(
        runs,
        [(2, 4), (7, 9)],
        launch=lambda n: (specs[n - 1].name, specs[n - 1].grid, specs[n - 1].block),
        trace=link_trace(full),
    )
    with open(runs / "run-0001" / "stats.csv", "r+b") as fh:
        fh.truncate(2 << 30)
    cmd = [
        sys.executable,
        "-c",
        "from simsample.console import main; main()",
        "accelsim",
        "merge",
        str(runs / "run-0001"),
        str(runs / "run-0002"),
        "--out",
        str(folder / "merged"),
    ]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    w = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    wall = time.perf_counter() - w
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print("accelsim merge, a 2 GiB sparse stats.csv in the first run (a process: interpreter start included)")
    print(f"exit {p.returncode}, {wall:.2f} s wall, {cpu:.2f} s CPU: {p.stderr.strip()[:160]}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1,4,16,32", help="sizes in MB, comma-separated")
    args = ap.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="bench-hostile-") as tmp:
        stats_tail(Path(tmp), sizes)
        print()
        names(sizes)
        print()
        sparse_merge(Path(tmp) / "merge")


if __name__ == "__main__":
    main()
