"""What a user waits for: the CLI end to end on profiles of 10^6 to 5·10^7 launches.

    python benchmarks/bench_end_to_end.py [--sizes 1e6,1e7,5e7] [--formats nsys_csv,nsys_sqlite,kineto]
        [--samplers stem,root,default] [--evaluate] [--artifact STEM-AE/figure7] [--workdir DIR]

For each size it writes a synthetic profile of about 300 kernels (durations drawn per kernel from
lognormal mixtures, launch shapes varying within a kernel), in each format as the real tools
write it: an ``nsys stats --report cuda_kern_exec_trace`` CSV (the report STEM's artifact reads),
an Nsight Systems SQLite export (``CUPTI_ACTIVITY_KIND_KERNEL`` + ``StringIds``) and one Kineto
trace file. Then it runs, each in a fresh process as a user types it, ``simsample --version``,
``simsample samplers``, ``simsample profile info``, ``simsample plan`` per sampler (``default``
is ``plan`` without ``--sampler``) and, with ``--evaluate``, ``simsample evaluate --repeat 1``;
and prints wall time and peak resident memory of each (from ``wait4``, so the figure is the
process's own).

``--artifact`` points at the ``figure7`` folder of a checkout of the STEM authors' artifact
(ejchung0406/STEM-AE): its ``parse_stem`` runs on the same CSV, single-threaded
(``OMP_NUM_THREADS=1`` and friends), in the same way, up to ``--artifact-max`` launches (it needs
about 70 µs and 1.2 KB per launch), and the ratios are printed beside the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

KERNELS = 300
CHUNK = 1_000_000
SINGLE_THREAD = {k: "1" for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS")}


# --- synthetic profiles ----------------------------------------------------------------------
def _kernels(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """300 kernels: names of several lengths, launch frequencies from a Zipf law, one to three
    duration modes each, one to four launch shapes each."""
    names = np.array(
        [
            f"void kernel_{i:03d}<float, {i % 7}>(float*, const float*, int)" if i % 3 else f"k{i}"
            for i in range(KERNELS)
        ]
    )
    freq = 1.0 / np.arange(1, KERNELS + 1) ** 1.1
    return {
        "name": names,
        "p": freq / freq.sum(),
        "mu": rng.uniform(np.log(2e3), np.log(2e6), KERNELS),
        "modes": rng.integers(1, 4, KERNELS),
        "shapes": rng.integers(1, 5, KERNELS),
    }


def _chunk(rng: np.random.Generator, kern: dict[str, np.ndarray], n: int, t0: int) -> dict[str, np.ndarray]:
    k = rng.choice(KERNELS, size=n, p=kern["p"])
    mode = rng.integers(0, 3, n) % kern["modes"][k]
    dur = np.exp(kern["mu"][k] + 0.7 * mode + rng.normal(0, 0.15, n)).astype(np.int64) + 1
    shape = rng.integers(0, 4, n) % kern["shapes"][k]
    grid = (k % 64 + 1) * (shape + 1)
    gaps = rng.integers(1_000, 5_000, n)
    start = t0 + np.cumsum(dur + gaps) - dur
    return {"k": k, "dur": dur, "start": start, "grid": grid, "block": np.where(k % 2 == 0, 256, 128)}


def write_kern_exec_csv(path: Path, n: int, seed: int = 0) -> None:
    """``nsys stats --report cuda_kern_exec_trace --format csv``: one row per launch."""
    rng = np.random.default_rng(seed)
    kern = _kernels(rng)
    quoted = np.array(['"' + s.replace('"', '""') + '"' if "," in s else s for s in kern["name"]], dtype=object)
    tmp = path.with_suffix(".partial")
    t0 = 1_000_000
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(
            "API Start (ns),API Dur (ns),Queue Start (ns),Queue Dur (ns),Kernel Start (ns),Kernel Dur (ns),"
            "Total Dur (ns),PID,TID,DevId,API Function,GridXYZ,BlockXYZ,Kernel Name\n"
        )
        for lo in range(0, n, CHUNK):
            c = _chunk(rng, kern, min(CHUNK, n - lo), t0)
            t0 = int(c["start"][-1] + c["dur"][-1])
            api = c["start"] - 20_000
            rows = (
                f"{a},5210,,,{s},{d},{d + 20_000},4242,4242,0,cudaLaunchKernel,{g:4d}    1    1,{b:4d}    1    1,{nm}\n"
                for a, s, d, g, b, nm in zip(
                    api.tolist(),
                    c["start"].tolist(),
                    c["dur"].tolist(),
                    c["grid"].tolist(),
                    c["block"].tolist(),
                    quoted[c["k"]].tolist(),
                )
            )
            fh.writelines(rows)
    tmp.rename(path)


def write_nsys_sqlite(path: Path, n: int, seed: int = 0) -> None:
    """An Nsight Systems export's kernel table and string table (the columns nsys 2023+ writes)."""
    rng = np.random.default_rng(seed)
    kern = _kernels(rng)
    tmp = path.with_suffix(".partial")
    tmp.unlink(missing_ok=True)
    con = sqlite3.connect(tmp)
    con.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL)")
    con.executemany("INSERT INTO StringIds VALUES (?, ?)", [(i + 1, s) for i, s in enumerate(kern["name"])])
    con.execute(
        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT "
        "NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, "
        "demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER, launchType INTEGER, "
        "cacheConfig INTEGER, registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, "
        "gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL, "
        "staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL, localMemoryPerThread INTEGER NOT "
        "NULL, localMemoryTotal INTEGER NOT NULL, gridId INTEGER NOT NULL, sharedMemoryExecuted INTEGER, graphNodeId "
        "INTEGER, sharedMemoryLimitConfig INTEGER)"
    )
    t0, corr = 1_000_000, 1
    for lo in range(0, n, CHUNK):
        c = _chunk(rng, kern, min(CHUNK, n - lo), t0)
        m = len(c["k"])
        t0 = int(c["start"][-1] + c["dur"][-1])
        ids = (c["k"] + 1).tolist()
        rows = zip(
            c["start"].tolist(),
            (c["start"] + c["dur"]).tolist(),
            [0] * m,
            [1] * m,
            [7] * m,
            range(corr, corr + m),
            [1] * m,
            ids,
            ids,
            ids,
            [0] * m,
            [0] * m,
            [32] * m,
            c["grid"].tolist(),
            [1] * m,
            [1] * m,
            c["block"].tolist(),
            [1] * m,
            [1] * m,
            [0] * m,
            [0] * m,
            [0] * m,
            [0] * m,
            range(corr, corr + m),
            [0] * m,
            [None] * m,
            [0] * m,
        )
        con.executemany(f"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES ({','.join('?' * 27)})", rows)
        corr += m
    con.commit()
    con.close()
    tmp.rename(path)


def write_kineto(path: Path, n: int, seed: int = 0) -> None:
    """One rank's PyTorch-profiler trace with ``n`` kernel events (``ts``/``dur`` in µs)."""
    rng = np.random.default_rng(seed)
    kern = _kernels(rng)
    names = [json.dumps(s) for s in kern["name"]]
    tmp = path.with_suffix(".partial")
    t0, corr = 1_000_000, 1
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(
            '{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}], "traceEvents": [\n'
        )
        first = True
        for lo in range(0, n, CHUNK):
            c = _chunk(rng, kern, min(CHUNK, n - lo), t0)
            t0 = int(c["start"][-1] + c["dur"][-1])
            parts = []
            for k, s, d, g, b in zip(
                c["k"].tolist(), c["start"].tolist(), c["dur"].tolist(), c["grid"].tolist(), c["block"].tolist()
            ):
                parts.append(
                    f'{"" if first else ","}{{"ph": "X", "cat": "kernel", "name": {names[k]}, "pid": 0, "tid": 7, '
                    f'"ts": {s / 1000:.3f}, "dur": {d / 1000:.3f}, '
                    f'"args": {{"device": 0, "stream": 7, "correlation": {corr}, "registers per thread": 32, "shared '
                    'memory": 0, '
                    f'"grid": [{g}, 1, 1], "block": [{b}, 1, 1]}}}}\n'
                )
                first = False
                corr += 1
            fh.writelines(parts)
        fh.write('], "traceName": "bench"}\n')
    tmp.rename(path)


WRITERS = {
    "nsys_csv": (write_kern_exec_csv, ".csv"),
    "nsys_sqlite": (write_nsys_sqlite, ".sqlite"),
    "kineto": (write_kineto, ".pt.trace.json"),
}


# --- measuring ---------------------------------------------------------------------------------
def timed(cmd: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None) -> dict:
    """Run ``cmd``; wall seconds, CPU seconds (user + system, all its threads: the fairer figure
    on a busy machine), the process's own peak RSS (GiB) and its exit status."""
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    err = proc.stderr.read().decode(errors="replace").strip() if proc.stderr else ""
    proc.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    return {
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "rss_gib": usage.ru_maxrss / 2**20,
        "ok": code == 0,
        "error": err.splitlines()[-1] if code and err else "",
    }


ARTIFACT_RUN = """
import sys
sys.argv = ["-m"]                      # its package __init__ then skips importing every sampler module
sys.path.insert(0, {folder!r})
from sampling_methods import stem
stem.parse_stem("bench", "bench", "x", 0.05, True)
"""


def run_artifact(folder: Path, csv: Path, work: Path) -> dict:
    """The artifact's ``parse_stem`` on ``csv``, laid out where it looks (``results_ncu-example``)."""
    run_dir = work / "artifact-run"
    shutil.rmtree(run_dir, ignore_errors=True)
    (run_dir / "results_ncu-example" / "bench" / "x").mkdir(parents=True)
    (run_dir / "results_ncu-example" / "bench" / "x" / "nsys_bench.csv").symlink_to(csv.resolve())
    env = {**os.environ, **SINGLE_THREAD}
    return timed([sys.executable, "-c", ARTIFACT_RUN.format(folder=str(folder.resolve()))], cwd=run_dir, env=env)


def fmt(r: dict | None) -> str:
    if r is None:
        return "-"
    if not r["ok"]:
        return f"failed ({r['error'][:60]})"
    return f"{r['wall_s']:.2f} s ({r['cpu_s']:.2f} s CPU), {r['rss_gib']:.2f} GiB"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1e6,1e7", help="launch counts, comma-separated (e.g. 1e6,1e7,5e7)")
    ap.add_argument("--formats", default="nsys_csv", help=f"profile formats to write and read: {','.join(WRITERS)}")
    ap.add_argument("--samplers", default="stem,root,default", help="samplers to plan with; 'default' = no --sampler")
    ap.add_argument("--evaluate", action="store_true", help="also time 'simsample evaluate --repeat 1' with root")
    ap.add_argument(
        "--artifact", type=Path, help="the figure7 folder of a STEM-AE checkout, to run its STEM on the same CSV"
    )
    ap.add_argument("--artifact-max", type=float, default=1e6, help="largest size the artifact runs at (default 1e6)")
    ap.add_argument("--workdir", type=Path, help="keep the generated profiles here for the next run")
    args = ap.parse_args(argv)

    sizes = [int(float(s)) for s in args.sizes.split(",")]
    formats = [f for f in args.formats.split(",") if f]
    samplers = [s for s in args.samplers.split(",") if s]
    work = args.workdir or Path(tempfile.mkdtemp(prefix="simsample-e2e-"))
    work.mkdir(parents=True, exist_ok=True)
    exe = [sys.executable, "-m", "simsample"]
    simsample_bin = Path(sys.executable).with_name("simsample")
    cli = [str(simsample_bin)] if simsample_bin.exists() else exe

    print("# start-up (best of 5): ", end="")
    for cmd in (["--version"], ["samplers"]):
        best = min((timed(cli + cmd) for _ in range(5)), key=lambda r: r["wall_s"])
        print(f"simsample {' '.join(cmd)}: {best['wall_s']:.2f} s, {best['rss_gib'] * 1024:.0f} MiB; ", end="")
    print()

    print(f"# load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print("| launches | format | command | wall (CPU), peak RSS | artifact | ratio |")
    print("|---|---|---|---|---|---|")
    for n in sizes:
        for fmt_name in formats:
            writer, suffix = WRITERS[fmt_name]
            path = work / f"profile_{n}{suffix}"
            if not path.exists():
                t = time.perf_counter()
                writer(path, n)
                print(
                    f"# wrote {path.name} ({path.stat().st_size / 2**30:.2f} GiB) in {time.perf_counter() - t:.0f} s",
                    flush=True,
                )
            art = None
            if args.artifact and fmt_name == "nsys_csv" and n <= args.artifact_max:
                art = run_artifact(args.artifact, path, work)
                print(f"| {n:,} | {fmt_name} | STEM artifact, single-threaded | {fmt(art)} | | |", flush=True)
            runs: list[tuple[str, list[str]]] = [("profile info", ["profile", "info", str(path), "--json"])]
            for s in samplers:
                sel = [] if s == "default" else ["--sampler", s]
                runs.append((f"plan {s}", ["plan", str(path), *sel, "--seed", "1", "-o", str(work / f"plan_{s}.json")]))
            if args.evaluate:
                runs.append(("evaluate root", ["evaluate", str(path), "--sampler", "root", "--repeat", "1", "--json"]))
            for label, cmd in runs:
                r = timed(cli + cmd)
                ratio = (
                    f"{art['wall_s'] / r['wall_s']:.1f}x wall, {art['cpu_s'] / r['cpu_s']:.1f}x CPU"
                    if art and art["ok"] and r["ok"] and label.startswith("plan")
                    else ""
                )
                print(
                    f"| {n:,} | {fmt_name} | {label} | {fmt(r)} | {fmt(art) if ratio else ''} | {ratio} |", flush=True
                )
    if not args.workdir:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
