"""Throughput and memory of the profile readers on real profiles scaled up by replication.

    python benchmarks/bench_readers.py [--launches 5000000] [--workdir DIR] [--readers a,b]

Each reader's input is built from the development data in ``../shared/data/profiles`` by
replicating real launches, shifted in time (and in correlation id) copy after copy, until there are
at least ``--launches`` of them:

- nsys_sqlite: the CloverLeaf export, its kernel table doubled in SQLite;
- nsys_csv: the same launches (and memcpys) written as an ``nsys stats`` cuda_gpu_trace report;
- nvprof: a gpuperfpredict lud trace (ns units, ``[corrId]`` name suffixes, memcpy rows);
- kineto: one file per rank, each the kernel events of one real trace in the Kineto writer's
  layout (plain ``.json``; ``--kineto-gzip`` writes ``.json.gz``); plus a row for the real traces
  as recorded, where CPU-side events outnumber kernels about ten to one;
- kineto_one: all the launches in one such file, read with the compiled extractor on every
  usable core (one large trace is cut into parts scanned at the same time), then on one thread
  (``SIMSAMPLE_KINETO_THREADS=1``);
- ncu: the microgpusim raw page (400 columns), replicated to 50,000 launches for reference.

Every reader runs in a fresh subprocess, which reports the wall time to read and build the
workload, the CPU time it took (its own threads and any worker processes: the fairer figure on a
busy machine), the peak resident-set growth while reading, and the final table's
``memory_usage(deep=True)``; each per launch. ``--workdir`` keeps the scaled inputs (several GB
at 5 million launches) for the next run. ``--compare-fallback`` runs each reader a second time
with its compiled modules disabled (``SIMSAMPLE_PURE_PYTHON=1``) and prints the ratios.
Goals (from the project issue): >= 1M launches/s for SQLite and CSV, >= 300k/s for Kineto JSON,
<= 120 bytes per launch resident in the loaded workload.
"""

from __future__ import annotations

import argparse
import gzip
import json
import lzma
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "profiles"
GOALS = {"nsys_sqlite": 1e6, "nsys_csv": 1e6, "nvprof": 1e6, "kineto": 3e5}
KINETO_SOURCES = [
    "hta/df_index_resolver/df_index_resolver.json.gz",
    "hta/trace_diff/control/control.json.gz",
    "hta/trace_diff/test/test.json.gz",
    "hta/negative_queue_length_values_check/rank0.json.gz",
    "hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
    "kineto-resnet50/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz",
    "kineto-resnet50/resnet50_num_workers_4/worker0.1623212756351.pt.trace.json.gz",
    "hta/nccl_parser_config/nccl_data.json.gz",
]


# --- building the scaled inputs --------------------------------------------------------------
def build_sqlite(work: Path, n: int) -> Path:
    out = work / f"cloverleaf_x{n}.sqlite"
    if out.exists():
        return out
    tmp = out.with_suffix(".tmp")
    with (
        lzma.open(DATA / "nsys-sqlite" / "pipit-cloverleaf" / "perlmutter-cloverleaf-cuda.sqlite.xz") as src,
        open(tmp, "wb") as dst,
    ):
        shutil.copyfileobj(src, dst)
    con = sqlite3.connect(tmp)
    t = "CUPTI_ACTIVITY_KIND_KERNEL"
    cols = [r[1] for r in con.execute(f"PRAGMA table_info({t})")]
    while con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] < n:
        span, corr = con.execute(f"SELECT max(end) - min(start) + 1000, max(correlationId) + 1 FROM {t}").fetchone()
        sel = ", ".join(
            f"{c} + :s" if c in ("start", "end") else f"{c} + :c" if c == "correlationId" else c for c in cols
        )
        con.execute(f"INSERT INTO {t} SELECT {sel} FROM {t}", {"s": span, "c": corr})
        con.commit()
    con.execute("VACUUM")
    con.close()
    tmp.rename(out)
    return out


def build_nsys_csv(work: Path, n: int, sqlite_path: Path) -> Path:
    out = work / f"cloverleaf_x{n}_cuda_gpu_trace.csv"
    if out.exists():
        return out
    with lzma.open(DATA / "nsys-sqlite" / "pipit-cloverleaf" / "perlmutter-cloverleaf-cuda.sqlite.xz") as src:
        raw = src.read()
    base = work / "base.sqlite"
    base.write_bytes(raw)
    con = sqlite3.connect(base)
    kern = con.execute(
        "SELECT k.start, k.end - k.start, k.correlationId, k.gridX, k.gridY, k.gridZ, k.blockX, k.blockY, k.blockZ, "
        "k.registersPerThread, k.staticSharedMemory, k.dynamicSharedMemory, k.deviceId, k.streamId, s.value "
        "FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName"
    ).fetchall()
    mem = con.execute(
        "SELECT start, end - start, correlationId, bytes, deviceId, streamId FROM CUPTI_ACTIVITY_KIND_MEMCPY"
    ).fetchall()
    con.close()
    base.unlink()
    rows = []
    for s, d, c, gx, gy, gz, bx, by, bz, reg, st, dy, dev, strm, name in kern:
        q = '"' + name.replace('"', '""') + '"'
        rows.append(
            (
                s,
                d,
                c,
                f"{gx},{gy},{gz},{bx},{by},{bz},{reg},{st / 1e6:.3f},{dy / 1e6:.3f},,,,,NVIDIA A100-SXM4-80GB "
                f"({dev}),1,,{strm},{q}",
            )
        )
    for s, d, c, b, dev, strm in mem:
        rows.append(
            (
                s,
                d,
                c,
                f",,,,,,,,,{b / 1e6:.3f},{b / d * 1e3:.3f},Pageable,Device,NVIDIA A100-SXM4-80GB "
                f"({dev}),1,,{strm},[CUDA memcpy Host-to-Device]",
            )
        )
    rows.sort()
    span = max(s + d for s, d, *_ in rows) - min(r[0] for r in rows) + 1000
    corr = max(r[2] for r in rows) + 1
    copies = -(-n // len(kern))
    header = (
        "Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),DymSMem (MB),"
        "Bytes (MB),Throughput (MB/s),SrcMemKd,DstMemKd,Device,Ctx,GreenCtx,Strm,Name\n"
    )
    tmp = out.with_suffix(".tmp")
    with open(tmp, "w") as fh:
        fh.write(f"Processing [{sqlite_path.name}] with [cuda_gpu_trace.py]... \n")
        fh.write(header)
        for k in range(copies):
            fh.write("\n".join(f"{s + k * span},{d},{c + k * corr},{tail}" for s, d, c, tail in rows))
            fh.write("\n")
    tmp.rename(out)
    return out


def build_nvprof(work: Path, n: int) -> Path:
    out = work / f"lud_x{n}_gputrace.csv"
    if out.exists():
        return out
    text = lzma.decompress((DATA / "nvprof" / "gpuperfpredict-k40c" / "lud-7680-run1.csv.xz").read_bytes()).decode()
    lines = text.splitlines()
    pre, header, units, data = lines[:3], lines[3], lines[4], lines[5:]
    assert units.startswith("ns,ns,")
    rows = []
    for line in data:
        start, rest = line.split(",", 1)
        dur_text, tail = rest.split(",", 1)
        name_start = tail.rfind(',"')
        name = tail[name_start + 2 : -1]
        corr = None
        if name.endswith("]") and " [" in name:
            name, c = name.rsplit(" [", 1)
            corr = int(c[:-1])
        rows.append((int(float(start)), tail[:name_start], name, corr, dur_text))
    kernels = sum(1 for line in data if not line.split(",")[2] == "")
    span = max(r[0] for r in rows) - min(r[0] for r in rows) + 10**6
    corr_span = max(r[3] or 0 for r in rows) + 1
    copies = -(-n // kernels)
    tmp = out.with_suffix(".tmp")
    with open(tmp, "w") as fh:
        fh.write("\n".join([*pre, header, units]) + "\n")
        for k in range(copies):
            fh.write(
                "\n".join(
                    f'{s + k * span}.000000,{dur},{mid},"{name}{"" if c is None else f" [{c + k * corr_span}]"}"'
                    for s, mid, name, c, dur in rows
                )
            )
            fh.write("\n")
    tmp.rename(out)
    return out


def _kineto_event(ev: dict, ts_shift: int, corr_shift: int) -> str:
    args = dict(ev["args"])
    if "correlation" in args:
        args["correlation"] = args["correlation"] + corr_shift
    ts = ev["ts"]
    ts_text = f"{int(ts) + ts_shift}" if isinstance(ts, int) else f"{float(ts) + ts_shift:.3f}"
    lines = ",\n".join(f"      {json.dumps(k)}: {json.dumps(v)}" for k, v in args.items())
    return (
        f'  {{\n    "ph": "X", "cat": {json.dumps(ev["cat"])}, "name": {json.dumps(ev["name"])}, "pid": '
        f"{json.dumps(ev.get('pid', 0))}, "
        f'"tid": {json.dumps(ev.get("tid", 0))},\n    "ts": {ts_text}, "dur": {json.dumps(ev["dur"])},\n'
        f'    "args": {{\n{lines}\n    }}\n  }}'
    )


def build_kineto(work: Path, n: int, gz: bool, sources: list[str] = KINETO_SOURCES) -> list[Path]:
    per = -(-n // len(sources))
    suffix = ".json.gz" if gz else ".json"
    outs = [work / f"kineto_rank{r}_x{per}{suffix}" for r in range(len(sources))]
    if all(p.exists() for p in outs):
        return outs
    for rank, (src, out) in enumerate(zip(sources, outs)):
        doc = json.loads(gzip.decompress((DATA / "kineto" / src).read_bytes()))
        kernels = [e for e in doc["traceEvents"] if str(e.get("cat", "")).lower() == "kernel"]
        ts = [float(e["ts"]) for e in kernels]
        span = int(max(ts) - min(ts)) + 1000
        corr = max(int(e["args"].get("correlation", 0)) for e in kernels) + 1
        tmp = out.with_suffix(".tmp")
        opener = (lambda p: gzip.open(p, "wt", compresslevel=1)) if gz else (lambda p: open(p, "w"))
        with opener(tmp) as fh:
            head = {
                "schemaVersion": 1,
                "deviceProperties": doc.get("deviceProperties", []),
                "distributedInfo": {"rank": rank, "world_size": len(outs)},
            }
            fh.write(json.dumps(head)[:-1] + ',\n  "traceEvents": [\n')
            written, k = 0, 0
            while written < per:
                chunk = kernels[: per - written]
                fh.write(",\n".join(_kineto_event(e, k * span, k * corr) for e in chunk))
                written += len(chunk)
                k += 1
                fh.write(",\n" if written < per else "\n")
            fh.write('  ],\n  "traceName": "scaled"\n}\n')
        tmp.rename(out)
    return outs


def build_ncu(work: Path, n: int) -> Path:
    out = work / f"ncu_x{n}.csv"
    if out.exists():
        return out
    lines = (DATA / "ncu" / "microgpusim" / "nsight_vectoradd_100_32_metrics_all.csv").read_text().splitlines()
    header, units, data = lines[0], lines[1], lines[2:]
    tmp = out.with_suffix(".tmp")
    with open(tmp, "w") as fh:
        fh.write(header + "\n" + units + "\n")
        for i in range(n):
            row = data[i % len(data)]
            fh.write(f'"{i}"' + row[row.index(",") :] + "\n")
    tmp.rename(out)
    return out


# --- measuring -------------------------------------------------------------------------------
def _rss_bytes() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def measure(fmt: str | None, files: list[str]) -> dict:
    from simsample.manager import get_host
    from simsample.reading import load_workload

    get_host().load()
    import pandas  # noqa: F401  (imports out of the timing)
    import pyarrow.csv  # noqa: F401

    before = _rss_bytes()
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0, c0 = time.perf_counter(), time.process_time()
    wl = load_workload(files, format=fmt)
    seconds = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = time.process_time() - c0 + (after.ru_utime + after.ru_stime) - (children.ru_utime + children.ru_stime)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    resident = int(wl.kernels.memory_usage(deep=True, index=True).sum())
    return {
        "format": wl.format,
        "launches": len(wl),
        "seconds": seconds,
        "cpu_seconds": cpu,
        "peak_growth": max(peak, peak_before) - before,
        "worker_peak": after.ru_maxrss * 1024 if after.ru_maxrss > children.ru_maxrss else 0,
        "resident": resident,
        "columns": len(wl.kernels.columns),
        "bytes_in": sum(os.path.getsize(f) for f in files),
    }


def run_measure(
    label: str, files: list[Path], fmt: str | None = None, *, fallback: bool = False, env_extra: dict | None = None
) -> dict:
    """One reader run in a fresh process; ``fallback`` disables the compiled modules there,
    ``env_extra`` sets environment variables there."""
    cmd = [sys.executable, __file__, "--measure", fmt or "-", *map(str, files)]
    env = {**os.environ, **(env_extra or {})}
    env.pop("SIMSAMPLE_PURE_PYTHON", None)
    if fallback:
        env["SIMSAMPLE_PURE_PYTHON"] = "1"
    res = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env)
    if res.returncode != 0:
        raise SystemExit(f"{label}: measurement failed:\n{res.stderr}")
    doc = json.loads(res.stdout.strip().splitlines()[-1])
    doc["label"] = label + (" [no C++]" if fallback else "")
    return doc


def speedups(rows: list[dict]) -> str:
    """Wall and CPU time of each fallback run over its compiled run (the row before it)."""
    out = []
    for fast, slow in zip(rows, rows[1:]):
        if slow["label"] == fast["label"] + " [no C++]":
            out.append(
                f"{fast['label']}: compiled modules {slow['seconds'] / fast['seconds']:.1f}x faster in wall time, "
                f"{slow['cpu_seconds'] / fast['cpu_seconds']:.1f}x per CPU-second"
            )
    return "\n".join(out)


def table(rows: list[dict]) -> str:
    head = (
        f"{'input':<44} {'reader':<12} {'launches':>10} {'MB in':>7} {'wall s':>7} {'launches/s':>11} {'CPU s':>7} "
        f"{'per CPU-s':>10} {'goal/s':>10} {'peak B/launch':>14} {'worker MB':>9} {'resident B/launch':>18}"
    )
    out = [head, "-" * len(head)]
    for r in rows:
        n = max(r["launches"], 1)
        rate = r["launches"] / r["seconds"] if r["seconds"] else float("inf")
        cpu_rate = r["launches"] / r["cpu_seconds"] if r["cpu_seconds"] else float("inf")
        goal = GOALS.get(r["format"])
        mark = (
            ""
            if goal is None or "real" in r["label"] or "[no C++]" in r["label"]
            else (" ok" if rate >= goal else (" cpu-ok" if cpu_rate >= goal else " MISS"))
        )
        res = r["resident"] / n
        res_mark = " ok" if res <= 120 else (" MISS" if r["columns"] < 30 else "")
        out.append(
            f"{r['label']:<44} {r['format']:<12} {r['launches']:>10,} {r['bytes_in'] / 1e6:>7.0f} "
            f"{r['seconds']:>7.1f} {rate:>11,.0f} {r['cpu_seconds']:>7.1f} {cpu_rate:>10,.0f} "
            f"{(f'{goal:,.0f}' if goal else '-'):>10}{mark:<7} {r['peak_growth'] / n:>7.0f} "
            f"{r.get('worker_peak', 0) / 1e6:>9.0f} {res:>17.1f}{res_mark}"
        )
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--launches", type=int, default=5_000_000)
    ap.add_argument("--workdir", type=Path, default=None, help="keep (and reuse) the scaled inputs here")
    ap.add_argument("--readers", default="nsys_sqlite,nsys_csv,nvprof,kineto,kineto_real,ncu")
    ap.add_argument("--kineto-gzip", action="store_true", help="write the scaled Kineto traces as .json.gz")
    ap.add_argument(
        "--compare-fallback",
        action="store_true",
        help="also run each reader without its compiled modules (SIMSAMPLE_PURE_PYTHON=1), right after",
    )
    ap.add_argument("--measure", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.measure:
        fmt = None if args.measure[0] == "-" else args.measure[0]
        print(json.dumps(measure(fmt, args.measure[1:])))
        return
    if not DATA.is_dir():
        raise SystemExit(f"development data not found at {DATA}")
    wanted = set(args.readers.split(","))
    load0 = os.getloadavg()
    own = args.workdir is None
    work = Path(tempfile.mkdtemp(prefix="simsample-bench-")) if own else args.workdir
    work.mkdir(parents=True, exist_ok=True)
    rows: list[dict] = []

    def measure_both(label: str, files: list[Path]) -> None:
        rows.append(run_measure(label, files))
        if args.compare_fallback:
            rows.append(run_measure(label, files, fallback=True))

    try:
        n = args.launches
        sq = None
        if wanted & {"nsys_sqlite", "nsys_csv"}:
            t = time.perf_counter()
            sq = build_sqlite(work, n)
            print(f"built {sq.name} in {time.perf_counter() - t:.0f} s", file=sys.stderr)
        if "nsys_sqlite" in wanted:
            measure_both("CloverLeaf nsys export, replicated", [sq])
        if "nsys_csv" in wanted:
            f = build_nsys_csv(work, n, sq)
            measure_both("CloverLeaf as cuda_gpu_trace CSV, replicated", [f])
        if "nvprof" in wanted:
            f = build_nvprof(work, n)
            measure_both("gpuperfpredict lud gpu-trace, replicated", [f])
        if "kineto" in wanted:
            t = time.perf_counter()
            fs = build_kineto(work, n, args.kineto_gzip)
            print(f"built {len(fs)} Kineto rank files in {time.perf_counter() - t:.0f} s", file=sys.stderr)
            measure_both(f"Kineto kernels of 8 traces, {len(fs)} ranks{' (gz)' if args.kineto_gzip else ''}", fs)
        if "kineto_one" in wanted:
            t = time.perf_counter()
            fs = build_kineto(work, n, args.kineto_gzip, KINETO_SOURCES[:1])
            print(f"built one Kineto file in {time.perf_counter() - t:.0f} s", file=sys.stderr)
            measure_both("Kineto kernels of 1 trace, 1 file", fs)
            rows.append(
                run_measure(
                    "Kineto kernels of 1 trace, 1 file, 1 thread", fs, env_extra={"SIMSAMPLE_KINETO_THREADS": "1"}
                )
            )
        if "kineto_real" in wanted:
            for src in KINETO_SOURCES[:1] + KINETO_SOURCES[5:6]:
                measure_both(f"real trace {Path(src).name[:28]}", [DATA / "kineto" / src])
        if "ncu" in wanted:
            f = build_ncu(work, 50_000)
            measure_both("microgpusim ncu raw page (400 cols), x50k", [f])
    finally:
        if own:
            shutil.rmtree(work, ignore_errors=True)
    print(table(rows))
    if args.compare_fallback:
        print("\n" + speedups(rows))
    print(
        f"\n{os.cpu_count()} CPUs; load average {load0[0]:.1f} at the start, {os.getloadavg()[0]:.1f} at the end. "
        "'per CPU-s' counts the CPU time of the reader and of its worker processes: with other work on the "
        "machine it is the fairer figure; 'cpu-ok' means the goal is met per CPU-second but not in wall time here. "
        "'peak B/launch' is the reading process's resident-set growth; 'worker MB' the largest worker process "
        "(SQLite columns, Kineto rank files), of which up to one per core runs at a time."
    )


if __name__ == "__main__":
    main()
