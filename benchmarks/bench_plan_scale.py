"""The default path at scale: reading, planning and writing 10^6 launches, beside an earlier version.

    python benchmarks/bench_plan_scale.py [--launches 1e6] [--formats nsys_csv,nsys_sqlite,kineto]
        [--baseline DIR] [--startup] [--memory 5e7] [--profile] [--repeat N] [--workdir DIR]
        [--kineto-threads 1,2] [--best-by cpu|wall]

For each format it writes the synthetic profile of ``bench_end_to_end.py`` (about 300 kernels,
as Nsight Systems and the PyTorch profiler write them) and runs, each in a fresh process as a
user types it: ``simsample profile info`` (the time to read the file, start-up included), ``simsample
plan`` (the default sampler) and ``simsample plan --sampler stem``, printing wall time, CPU time
(user + system: the fairer figure on a shared machine) and peak RSS. The goals (issue: the default
plan of 10^6 launches in at most 1 s on an idle core and at most 1.5x the time to read the file,
stem in at most 1.5 s) are printed beside the figures.

``--baseline DIR`` runs the same commands with the Python sources of another checkout (``git
worktree add DIR COMMIT``; the compiled modules of the installed package are linked into it), side
by side with the current ones, and checks that both wrote the same plan bytes. ``--repeat N`` runs
each command N times in a row and keeps the run of least CPU time, which a
shared machine's load disturbs least (``--best-by wall``: of least wall time, the figure to compare
where threads trade CPU time for wall time). ``--startup`` times
``simsample --version``, ``simsample samplers`` and ``simsample plan`` of the bundled example
profile (best of 5). ``--profile`` prints where the time of each current plan goes (cProfile, top
entries). ``--memory N`` plans ``N`` launches built in memory (the same generator, no file: a
5·10^7-launch CSV is 7 GB) with the default sampler and writes the plan, in a fresh process, and
prints its peak RSS and the RSS of the workload alone. ``--kineto-threads 1,2`` runs the Kineto
commands again with the compiled extractor held to each number of threads
(``SIMSAMPLE_KINETO_THREADS``; by default it scans one large trace on every usable core), and times
the extractor alone with each, in one process (best of ``--repeat`` by wall time), side by side.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from bench_end_to_end import WRITERS, timed  # noqa: E402  (benchmarks/ is put on sys.path above)

EXAMPLE = ROOT / "examples" / "profile" / "train_step.pt.trace.json.gz"
GOALS = {"plan default": 1.0, "plan stem": 1.5}

#: Runs the CLI from another checkout's sources: the editable install's import hook would
#: otherwise send ``simsample`` to this checkout whatever ``sys.path`` says.
BASELINE_LAUNCHER = """
import sys
sys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != "ScikitBuildRedirectingFinder"]
sys.path.insert(0, {root!r})
sys.argv[0] = "simsample"
from simsample.console import main
main()
"""

PROFILE_RUN = """
import cProfile, pstats, sys
from simsample.cli import run
prof = cProfile.Profile()
prof.enable()
run(sys.argv[1:])
prof.disable()
pstats.Stats(prof, stream=sys.stderr).sort_stats("tottime").print_stats(12)
"""

PHASES_RUN = """
import sys, time
cpu, wall = time.process_time(), time.perf_counter()
marks = []
def mark(label):
    global cpu, wall
    marks.append((label, time.process_time() - cpu, time.perf_counter() - wall))
    cpu, wall = time.process_time(), time.perf_counter()
import pandas, click
from simsample.library import plan, read
from simsample.sampling.filters import LaunchFilter, attach_process, prepare
mark("imports (click, pandas, simsample)")
path, sampler = sys.argv[1], sys.argv[2]
wl = read(path)
mark("read the profile")
prep = prepare(wl, [path], LaunchFilter())
mark("filters and launch numbers")
p = plan(prep.workload, sampler, seed=1)
mark(f"sampler ({sampler})")
attach_process(p, prep)
mark("process section")
p.write(sys.argv[3])
mark(f"check and write ({len(p.samples):,} samples)")
print(" | ".join(f"{label}: {c:.2f} s CPU" for label, c, w in marks))
"""

EXTRACT_RUN = """
import mmap, sys, time
from simsample.plugins.readers._kineto import native as kn
path, repeat, threads = sys.argv[1], int(sys.argv[2]), [int(t) for t in sys.argv[3].split(",")]
with open(path, "rb") as fh:
    pages = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
kn.extract(pages)  # the file's pages in the page cache, the module loaded
best = {}
for _ in range(repeat):
    for t in threads:
        cpu, wall = time.process_time(), time.perf_counter()
        got = kn.extract(pages, threads=t)
        took = (time.perf_counter() - wall, time.process_time() - cpu)
        best[t] = min(best.get(t, took), took)
print(" | ".join(f"{t} thread(s): {w:.3f} s wall, {c:.3f} s CPU" for t, (w, c) in best.items()))
"""

MEMORY_RUN = """
import resource, sys, time
import numpy as np
sys.path.insert(0, {here!r})
from bench_end_to_end import CHUNK, _chunk, _kernels
import pandas as pd
from simsample.io.tables import launch_table, make_workload, narrow
from simsample.library import plan
from simsample.sampling.filters import LaunchFilter, attach_process, prepare

n = {n}
rng = np.random.default_rng(0)
kern = _kernels(rng)
parts, t0 = [], 1_000_000
for lo in range(0, n, CHUNK):
    c = _chunk(rng, kern, min(CHUNK, n - lo), t0)
    t0 = int(c["start"][-1] + c["dur"][-1])
    parts.append({{"k": c["k"].astype(np.int16), "start": c["start"], "dur": c["dur"],
                  "grid": c["grid"].astype(np.uint32), "block": c["block"].astype(np.uint16)}})
cols = {{key: np.concatenate([p[key] for p in parts]) for key in parts[0]}}
del parts
ones = np.ones(n, dtype=np.uint8)
table = launch_table({{
    "name": pd.Categorical.from_codes(cols.pop("k"), categories=pd.Index(kern["name"].tolist(), dtype=object)),
    "start_ns": cols.pop("start"), "duration_ns": cols.pop("dur"),
    "grid_x": narrow(cols.pop("grid")), "grid_y": ones, "grid_z": ones,
    "block_x": narrow(cols.pop("block")), "block_y": ones, "block_z": ones, "stream": np.zeros(n, np.uint8),
}})
wl = make_workload(table, source="memory", format="nsys_sqlite")
del table, cols
wl.fingerprint
built = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
cpu = time.process_time()
prep = prepare(wl, [], LaunchFilter())
p = plan(prep.workload, {sampler!r}, seed=1)
attach_process(p, prep)
p.write({out!r})
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(f"{{built / 2**20:.2f}} {{peak / 2**20:.2f}} {{time.process_time() - cpu:.2f}} {{len(p.samples)}}")
"""


def cli_for(baseline: Path | None) -> list[str]:
    if baseline is None:
        exe = Path(sys.executable).with_name("simsample")
        return [str(exe)] if exe.exists() else [sys.executable, "-m", "simsample"]
    return [sys.executable, "-c", BASELINE_LAUNCHER.format(root=str(baseline.resolve()))]


def link_compiled(baseline: Path) -> None:
    """Link the installed package's compiled modules into the baseline's sources."""
    import importlib.util

    spec = importlib.util.find_spec("simsample._csv_columns")
    if spec is None or spec.origin is None:
        return
    for so in Path(spec.origin).parent.glob("_*.so"):
        target = baseline / "simsample" / so.name
        if not target.exists():
            target.symlink_to(so)


def fresh_bytecode(trees: list[Path]) -> None:
    """Compile what changed since the last run (``PYTHONDONTWRITEBYTECODE`` would otherwise make
    every process compile the modules whose cached bytecode is stale, or all of them in a fresh
    checkout, and time that instead of the command)."""
    import compileall

    for tree in trees:
        for pkg in [tree / "simsample", *sorted((tree / "adapters").glob("*/simsample_*"))]:
            if pkg.is_dir():
                compileall.compile_dir(pkg, quiet=2)


def fmt(r: dict | None) -> str:
    if r is None:
        return "-"
    if not r["ok"]:
        return f"failed ({r['error'][:50]})"
    return f"{r['wall_s']:.2f} s ({r['cpu_s']:.2f} s CPU), {r['rss_gib']:.2f} GiB"


#: which figure picks the best of ``--repeat`` runs: "cpu_s" (the default) or "wall_s" (``--best-by wall``)
BEST_BY = "cpu_s"


def best(cmd: list[str], times: int, env: dict[str, str] | None = None) -> dict:
    return min((timed(cmd, env=env) for _ in range(times)), key=lambda r: r[BEST_BY])


TREES: list[Path] = [ROOT]


def startup(versions: dict[str, list[str]], work: Path) -> None:
    print("\n| start-up (best of 5, by CPU) | " + " | ".join(versions) + " | goal |")
    print("|---|" + "---|" * len(versions) + "---|")
    rows = [
        ("simsample --version", ["--version"], None),
        ("simsample samplers", ["samplers"], 0.3),
        ("simsample plan (bundled example)", ["plan", str(EXAMPLE), "-o", str(work / "startup_plan.json")], 1.5),
    ]
    for label, args, goal in rows:
        fresh_bytecode(TREES)
        cells = [fmt(best(cli + args, 5)) for cli in versions.values()]
        print(f"| {label} | " + " | ".join(cells) + f" | {'≤ ' + str(goal) + ' s' if goal else ''} |", flush=True)


def memory(n: int, work: Path, sampler: str = "margin") -> None:
    out = work / "memory_plan.json"
    t = time.perf_counter()
    code = MEMORY_RUN.format(here=str(HERE), n=n, out=str(out), sampler=sampler)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t
    if proc.returncode:
        print(f"\nmemory at {n:,} launches: failed: {proc.stderr.strip().splitlines()[-1:]}")
        return
    built, peak, cpu, samples = proc.stdout.split()
    print(
        "\n| launches (in memory) | workload built, peak RSS | after the plan and its file, peak RSS | plan + write "
        "CPU | samples | goal |"
    )
    print("|---|---|---|---|---|---|")
    print(
        f"| {n:,} ({sampler}) | {built} GiB | {peak} GiB | {cpu} s (whole run {wall:.0f} s wall) | {int(samples):,} "
        "| < 6 GB |",
        flush=True,
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--launches", default="1e6", help="launches in each synthetic profile (default 1e6)")
    ap.add_argument("--formats", default="nsys_csv,nsys_sqlite,kineto", help=f"profile formats: {','.join(WRITERS)}")
    ap.add_argument("--baseline", type=Path, help="a checkout of an earlier version, run side by side")
    ap.add_argument(
        "--startup", action="store_true", help="also time start-up (--version, samplers, plan of the example)"
    )
    ap.add_argument("--memory", type=float, help="also plan this many launches built in memory and print the peak RSS")
    ap.add_argument(
        "--memory-samplers",
        default="margin",
        help="samplers for --memory, comma-separated (default: margin, the default)",
    )
    ap.add_argument(
        "--repeat", type=int, default=1, help="run each command this many times and keep the run of least CPU time"
    )
    ap.add_argument("--profile", action="store_true", help="print where each current plan's time goes (cProfile)")
    ap.add_argument("--workdir", type=Path, help="keep the generated profiles here for the next run")
    ap.add_argument(
        "--kineto-threads",
        help="Kineto: also run its commands with the extractor held to each of these thread counts "
        "(comma-separated, e.g. 1,2), and time the extractor alone with each",
    )
    ap.add_argument(
        "--best-by", choices=("cpu", "wall"), default="cpu", help="keep the run of least CPU (default) or wall time"
    )
    args = ap.parse_args(argv)
    global BEST_BY
    BEST_BY = f"{args.best_by}_s"

    n = int(float(args.launches))
    work = args.workdir or Path(tempfile.mkdtemp(prefix="simsample-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    versions = {}
    if args.baseline:
        link_compiled(args.baseline)
        versions["before"] = cli_for(args.baseline)
        TREES.append(args.baseline)
    versions["now"] = cli_for(None)

    print(
        f"# load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; {sys.platform}, Python "
        f"{sys.version.split()[0]}; best of {args.repeat} by {args.best_by} time"
    )
    if args.startup:
        startup(versions, work)
    print("\n| launches | format | command | " + " | ".join(versions) + " | now ÷ read (CPU) | goal |")
    print("|---|---|---|" + "---|" * len(versions) + "---|---|")
    for fmt_name in [f for f in args.formats.split(",") if f]:
        writer, suffix = WRITERS[fmt_name]
        path = work / f"profile_{n}{suffix}"
        if not path.exists():
            t = time.perf_counter()
            writer(path, n)
            print(
                f"# wrote {path.name} ({path.stat().st_size / 2**20:.0f} MiB) in {time.perf_counter() - t:.0f} s",
                flush=True,
            )
        runs: list[tuple[str, list[str], int | None]] = [
            ("profile info", ["profile", "info", str(path), "--json"], None),
            ("plan default", ["plan", str(path), "--seed", "1"], None),
            ("plan stem", ["plan", str(path), "--sampler", "stem", "--seed", "1"], None),
        ]
        held = [int(t) for t in args.kineto_threads.split(",")] if args.kineto_threads and fmt_name == "kineto" else []
        runs += [(label, cmd, t) for t in held for label, cmd, _ in runs]
        read: dict[int | None, dict[str, dict]] = {}
        for label, cmd, threads in runs:
            results = {}
            env = None if threads is None else {**os.environ, "SIMSAMPLE_KINETO_THREADS": str(threads)}
            tag = "" if threads is None else f"_{threads}threads"
            for version, cli in versions.items():
                out = work / f"{fmt_name}_{label.replace(' ', '_')}{tag}_{version}.json"
                fresh_bytecode(TREES)
                results[version] = best(
                    cli + cmd + (["-o", str(out)] if label != "profile info" else []), args.repeat, env
                )
            if label == "profile info":
                read[threads] = results
            now = results["now"]
            ratio = (
                f"{now['cpu_s'] / read[threads]['now']['cpu_s']:.2f}"
                if label != "profile info" and now["ok"] and read[threads]["now"]["ok"]
                else ""
            )
            goal = (
                f"≤ {GOALS[label]} s wall idle, ≤ 1.5× read"
                if label == "plan default"
                else (f"≤ {GOALS[label]} s" if label in GOALS else "")
            )
            same = ""
            if label != "profile info" and (len(versions) > 1 or threads is not None):
                files = [(work / f"{fmt_name}_{label.replace(' ', '_')}{tag}_{v}.json") for v in versions]
                if threads is not None:  # the plan of the default thread count: the same bytes
                    files.append(work / f"{fmt_name}_{label.replace(' ', '_')}_now.json")
                if all(f.exists() for f in files):
                    same = " (same bytes)" if len({f.read_bytes() for f in files}) == 1 else " (plans differ)"
            held_label = "" if threads is None else f", extractor on {threads} thread{'s' if threads > 1 else ''}"
            print(
                f"| {n:,} | {fmt_name} | {label}{held_label}{same} | "
                + " | ".join(fmt(results[v]) for v in versions)
                + f" | {ratio} | {goal} |",
                flush=True,
            )
        if held:
            proc = subprocess.run(
                [sys.executable, "-c", EXTRACT_RUN, str(path), str(args.repeat), ",".join(map(str, held))],
                capture_output=True,
                text=True,
                check=False,
            )
            print(
                "# the extractor alone (native.extract of the mapped file), best of "
                f"{args.repeat} by wall: " + (proc.stdout.strip() or proc.stderr.strip()[-300:]),
                flush=True,
            )
        for sampler in ("margin", "stem"):
            proc = subprocess.run(
                [sys.executable, "-c", PHASES_RUN, str(path), sampler, str(work / "phases.json")],
                capture_output=True,
                text=True,
                check=False,
            )
            print(
                f"# {fmt_name}, {sampler}, in one process: " + (proc.stdout.strip() or proc.stderr.strip()[-300:]),
                flush=True,
            )
        if args.profile:
            for label, cmd in runs[1:]:
                print(f"\n# where the time of '{label}' ({fmt_name}) goes, current code:")
                proc = subprocess.run(
                    [sys.executable, "-c", PROFILE_RUN, *cmd, "-o", str(work / "profiled.json")],
                    capture_output=True,
                    text=True,
                    check=False,
                )
                print("\n".join(line for line in proc.stderr.splitlines() if line.strip())[:4000], flush=True)
    if args.memory:
        for sampler in args.memory_samplers.split(","):
            memory(int(args.memory), work, sampler)
    if not args.workdir:
        import shutil

        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
