"""Throughput of Accel-Sim trace feature extraction (``simsample profile features --sim accelsim``).

Generates traces of three kinds (compute loop with coalesced base+stride accesses; memory-bound
with per-lane address lists; divergent with base+delta addresses and partial masks) with
``simsample_accelsim.synth``, replicates them to at least ``--size`` GB of uncompressed trace
(plain, and xz: the xz copies reuse one compressed body per kind behind a small per-file header
stream), then measures:

- headers-only read of the folder (``read_traces``),
- xz decompression alone (Python's lzma, nothing scanned): the bound for scanning xz traces,
- the compiled scanner (``native``, when the C++ extension is built) and the numpy scanner, side
  by side, each with ``--no-context`` and with the default context column (the lines each launch
  touches are recorded in the scanner's own pass), on plain and on xz traces, one process: MB of
  uncompressed trace per second of CPU time of that process (per core) and per second of wall time,
- the same with ``--jobs`` workers (threads for the compiled scanner, which releases the GIL;
  processes for numpy; wall time only),
- the line-by-line reference scanner on a small sample, for comparison.

A summary table repeats the per-core figures, engine by engine.

Then the real-scale workloads (``--workloads decoder,training``: the folders
``benchmarks/decoder_workload.py`` and ``benchmarks/training_workload.py`` write, 230 and 129
launches), with every default column (context included), side by side with the previous way of
computing the same table: the compiled scanner for the features, a second numpy pass per file
for the lines each launch touches, and the context column by merging line sets launch by launch
(kept here as ``previous_warm_read_shares``). Both tables are checked equal. ``--size 0`` skips the
synthetic part.

Everything is written to a temporary folder that is deleted at the end. Timings on a shared
machine vary; CPU time is the steadier per-core figure.

    python benchmarks/bench_accelsim_features.py            # >= 1 GB
    python benchmarks/bench_accelsim_features.py --size 0.2 --jobs 2
"""

from __future__ import annotations

import argparse
import lzma
import os
import shutil
import tempfile
import time
from pathlib import Path

from simsample_accelsim import read_traces, scan_native
from simsample_accelsim.features import compute_features
from simsample_accelsim.scan_python import scan_file as scan_reference
from simsample_accelsim.synth import KernelSpec, header_text, write_kernel

KINDS = {
    "compute": KernelSpec(
        "_Z4gemmPKfS0_Pf",
        grid=(64, 8, 1),
        block=(128, 1, 1),
        shmem=16384,
        nregs=96,
        body=(
            "LDG.E.128",
            "STS.128",
            "BAR.SYNC",
            "LDS.U.128",
            "FFMA",
            "FFMA",
            "FFMA",
            "FFMA",
            "FFMA",
            "FFMA",
            "FFMA",
            "FFMA",
            "IMAD",
            "IADD3",
        ),
        iters=(6, 8),
    ),
    "memory": KernelSpec(
        "_Z6gatherPKfPKiPf",
        grid=(512, 1, 1),
        block=(256, 1, 1),
        nregs=32,
        body=("LDG.E", "LDG.E", "FMUL", "STG.E"),
        iters=(2, 4),
        pattern="random",
        address_mode=0,
    ),
    "divergent": KernelSpec(
        "_Z6reducePKfPf",
        grid=(512, 1, 1),
        block=(128, 1, 1),
        shmem=512,
        nregs=32,
        body=("LDG.E", "FSETP.GT.AND", "FADD", "STS", "BAR.SYNC", "LDS", "FADD", "STG.E"),
        iters=(2, 6),
        pattern="strided",
        stride=12,
        divergence=0.6,
    ),
}


def body_offset(path: Path) -> int:
    """Offset just after the header's '#traces format' line (where thread blocks begin)."""
    with open(path, "rb") as fh:
        head = fh.read(8192)
    return head.index(b"\n", head.index(b"#traces format")) + 1


def build(root: Path, size_gb: float, seed: int) -> tuple[Path, Path, dict[str, float]]:
    """Plain and xz trace folders of at least ``size_gb`` GB of text each."""
    t0 = time.perf_counter()
    base = root / "base"
    base.mkdir()
    bodies: dict[str, tuple[Path, int, bytes]] = {}
    for i, (kind, spec) in enumerate(KINDS.items()):
        path = base / f"{kind}.traceg"
        write_kernel(path, spec, i + 1, seed)
        off = body_offset(path)
        body = path.read_bytes()[off:]
        bodies[kind] = (path, len(body), lzma.compress(body, preset=1))
    t_gen = time.perf_counter() - t0
    plain, xz = root / "plain", root / "xz"
    plain.mkdir()
    xz.mkdir()
    target = size_gb * 1e9
    total, n, kinds = 0, 0, list(KINDS)
    lines_plain, lines_xz = [], []
    t0 = time.perf_counter()
    while total < target:
        kind = kinds[n % len(kinds)]
        n += 1
        src, body_len, body_xz = bodies[kind]
        header = header_text(KINDS[kind], n)
        with open(plain / f"kernel-{n}.traceg", "wb") as out, open(src, "rb") as fin:
            out.write(header.encode())
            fin.seek(body_offset(src))
            shutil.copyfileobj(fin, out, 1 << 22)
        (xz / f"kernel-{n}.traceg.xz").write_bytes(lzma.compress(header.encode(), preset=1) + body_xz)
        lines_plain.append(f"kernel-{n}.traceg")
        lines_xz.append(f"kernel-{n}.traceg.xz")
        total += len(header) + body_len
    (plain / "kernelslist.g").write_text("\n".join(lines_plain) + "\n")
    (xz / "kernelslist.g").write_text("\n".join(lines_xz) + "\n")
    return (
        plain,
        xz,
        {"generate_s": t_gen, "replicate_s": time.perf_counter() - t0, "bytes": float(total), "files": float(n)},
    )


def decompress_all(folder: Path) -> int:
    """Decompress every xz trace of a folder through Python's lzma, discarding the text."""
    total = 0
    buf = bytearray(1 << 20)
    for f in sorted(folder.glob("*.xz")):
        with lzma.open(f, "rb") as fh:
            while n := fh.readinto(buf):
                total += n
    return total


def timed(fn):
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def previous_warm_read_shares(footprints, l2_lines: int, reach: float = 1.0):
    """The context column as it was computed before the compiled scanner recorded lines: for each
    launch, the union of the line sets of the launches before it until it reaches the L2's reach."""
    import numpy as np

    limit = reach * l2_lines
    touched = [np.union1d(f.reads, f.writes) for f in footprints]
    out = np.ones(len(touched))
    for j, f in enumerate(footprints):
        if f.reads.size == 0 or f.read_counts.sum() <= 0:
            continue
        parts, count, seen = [], 0, np.zeros(0, np.uint64)
        for i in range(j - 1, -1, -1):
            parts.append(touched[i])
            count += touched[i].size
            if count >= limit:
                seen = np.unique(np.concatenate([seen, *parts]))
                parts, count = [], seen.size
                if count >= limit:
                    break
        if parts:
            seen = np.unique(np.concatenate([seen, *parts]))
        out[j] = float(np.sum(f.read_counts[np.isin(f.reads, seen, assume_unique=True)])) / float(np.sum(f.read_counts))
    return out


def previous_features(folder: Path):
    """The table as it was computed: compiled features, a numpy pass per file for the lines, the old context merge."""
    from simsample_accelsim.context import CONTEXT_COLUMN
    from simsample_accelsim.occupancy import GpuConfig
    from simsample_accelsim.reader import scan_folder
    from simsample_accelsim.scan_numpy import scan_footprint

    wl = compute_features(folder, engine="native", quiet=True, context=False)
    fps = [scan_footprint(f) for f in scan_folder(folder).files]
    wl.kernels[CONTEXT_COLUMN] = previous_warm_read_shares(fps, GpuConfig().l2_lines)
    return wl


def real_workloads(root: Path, names: list[str], jobs: int) -> None:
    """Decoder and training traces: the previous and the current table, side by side."""
    import subprocess
    import sys

    here = Path(__file__).parent
    print()
    print(
        f"{'workload (every default column)':36} {'MB':>6} | {'previous cpu s':>14} {'MB/s/core':>9} | "
        f"{'current cpu s':>13} {'MB/s/core':>9} {f'--jobs {jobs} wall s':>16}"
    )
    for name in names:
        folder = root / name
        subprocess.run(
            [sys.executable, str(here / f"{name}_workload.py"), str(folder)], check=True, capture_output=True
        )
        mb = sum(f.stat().st_size for f in folder.glob("*.traceg")) / 1e6
        compute_features(folder, quiet=True, store_footprints=False)  # warm the page cache and the imports
        before, _, c0 = timed(lambda f=folder: previous_features(f))
        now, _, c1 = timed(lambda f=folder: compute_features(f, quiet=True, store_footprints=False))
        _, w2, _ = timed(lambda f=folder: compute_features(f, quiet=True, jobs=jobs, store_footprints=False))
        cols = [c for c in before.kernels.columns if c in now.kernels.columns]
        same = before.kernels[cols].equals(now.kernels[cols])
        print(
            f"{name:36} {mb:6.0f} | {c0:14.2f} {mb / c0:9.0f} | {c1:13.2f} {mb / c1:9.0f} {w2:16.2f}"
            + ("" if same else "   TABLES DIFFER")
        )
    if "decoder" in names:
        apply_times(root / "decoder")


def cli(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of one ``simsample`` command."""
    import resource
    import subprocess
    import sys

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "simsample", *args], check=True, capture_output=True, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.perf_counter() - t, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def apply_times(folder: Path) -> None:
    """``apply`` with the reuse and the targeted warm-up on the decoder: the footprints scanned
    (an empty footprint store) and taken from what ``profile features`` left in the store."""
    store = folder.parent / "user-cache"
    env = {**os.environ, "SIMSAMPLE_CACHE": str(store)}
    features, plan = folder.parent / "decoder.parquet", folder.parent / "decoder-plan.json"
    print()
    print(f"{'apply on the decoder (CLI)':36} {'footprints scanned':>22} {'from profile features':>24}")
    for warmup in ("reuse", "targeted"):
        shutil.rmtree(store, ignore_errors=True)
        cli(
            [
                "profile",
                "features",
                "--sim",
                "accelsim",
                str(folder),
                "-o",
                str(features),
                "--no-context",
                "--no-cache",
            ],
            env,
        )
        cli(["plan", str(features), "-o", str(plan), "--seed", "0"], env)
        cold = cli(
            [
                "apply",
                "--sim",
                "accelsim",
                "--plan",
                str(plan),
                "--traces",
                str(folder),
                "--out",
                str(folder.parent / "a1"),
                "--warmup",
                warmup,
            ],
            env,
        )
        shutil.rmtree(store, ignore_errors=True)
        cli(["profile", "features", "--sim", "accelsim", str(folder), "-o", str(features), "--no-cache"], env)
        warm = cli(
            [
                "apply",
                "--sim",
                "accelsim",
                "--plan",
                str(plan),
                "--traces",
                str(folder),
                "--out",
                str(folder.parent / "a2"),
                "--warmup",
                warmup,
            ],
            env,
        )
        for out in ("a1", "a2"):
            shutil.rmtree(folder.parent / out)
        print(
            f"{f'--warmup {warmup}: wall / cpu s':36} {cold[0]:10.2f} / {cold[1]:9.2f} {warm[0]:12.2f} / {warm[1]:9.2f}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=float, default=1.0, help="GB of uncompressed trace per folder (default 1)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="workers for the parallel rows")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--engines", default="native,numpy", help="comma-separated scanners to compare (default native,numpy)"
    )
    ap.add_argument("--tmp", default=None, help="where to create the temporary folder")
    ap.add_argument("--workloads", default="decoder,training", help="real-scale workloads to measure ('' for none)")
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-accelsim-", dir=args.tmp))
    try:
        if args.size > 0:
            synthetic(root, args)
        real_workloads(root, [w for w in args.workloads.split(",") if w], args.jobs)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def synthetic(root: Path, args: argparse.Namespace) -> None:
    """The replicated synthetic folders: engines, context and --jobs (see the module docstring)."""
    plain, xz, info = build(root, args.size, args.seed)
    mb = info["bytes"] / 1e6
    disk_xz = sum(f.stat().st_size for f in xz.glob("*.xz")) / 1e6
    print(
        f"generated {info['files']:.0f} traces, {mb:,.0f} MB of text ({disk_xz:,.1f} MB as xz) "
        f"in {info['generate_s']:.1f} s + {info['replicate_s']:.1f} s replication"
    )
    engines = [e for e in args.engines.split(",") if e]
    if "native" in engines and not scan_native.available():
        print(f"native scanner skipped: {scan_native.unavailable_reason()}")
        engines.remove("native")
    rows = []
    _, w, c = timed(lambda: read_traces(plain, quiet=True))
    rows.append(("headers only, plain folder", f"{info['files']:.0f} files", w, c, None))
    _, w, c = timed(lambda: read_traces(xz, quiet=True))
    rows.append(("headers only, xz folder", f"{info['files']:.0f} files", w, c, None))
    _, w, c = timed(lambda: decompress_all(xz))
    rows.append(("xz decompression only (lzma)", f"{mb:,.0f} MB", w, c, mb))
    per_core: dict[tuple[str, str], float] = {}
    for jobs in (1, args.jobs):
        for kind, folder in (("plain", plain), ("xz", xz)):
            for engine in engines:
                for context in (False, True):  # --no-context, then the default (lines recorded for warm_reads)
                    name = engine if not context else f"{engine} + context"
                    label = f"{name}, {kind}, " + ("1 process" if jobs == 1 else f"--jobs {jobs}")
                    _, w, c = timed(
                        lambda folder=folder, jobs=jobs, engine=engine, context=context: compute_features(
                            folder, jobs=jobs, engine=engine, quiet=True, context=context
                        )
                    )
                    rows.append((label, f"{mb:,.0f} MB", w, c if jobs == 1 else None, mb))
                    if jobs == 1:
                        per_core[name, kind] = mb / c
        if args.jobs == 1:
            break
    sample = next(iter(sorted(plain.glob("kernel-*.traceg"), key=lambda f: f.stat().st_size)))
    smb = sample.stat().st_size / 1e6
    _, w, c = timed(lambda: scan_reference(sample))
    rows.append(("python reference, plain, 1 file", f"{smb:,.0f} MB", w, c, smb))
    print()
    print(f"{'what':36} {'input':>12} {'wall s':>8} {'cpu s':>8} {'MB/s wall':>10} {'MB/s per core (cpu)':>20}")
    for what, inp, w, c, size in rows:
        mbw = f"{size / w:10.1f}" if size else f"{'':>10}"
        mbc = f"{size / c:20.1f}" if size and c else f"{'':>20}"
        print(f"{what:36} {inp:>12} {w:8.2f} {(f'{c:8.2f}' if c is not None else f'{chr(45):>8}')} {mbw} {mbc}")
    print()
    print(f"{'MB/s per core (cpu), 1 process':36} {'plain':>10} {'xz':>10}")
    for name in dict.fromkeys(n for n, _ in per_core):
        print(f"{name:36} {per_core[name, 'plain']:10.1f} {per_core[name, 'xz']:10.1f}")
    if "native" in engines and "numpy" in engines:
        ratio = [per_core["native", k] / per_core["numpy", k] for k in ("plain", "xz")]
        print(f"{'native / numpy':36} {ratio[0]:9.1f}x {ratio[1]:9.1f}x")
    for engine in engines:
        ratio = [per_core[engine, k] / per_core[f"{engine} + context", k] for k in ("plain", "xz")]
        print(f"{f'{engine}: --no-context / default':36} {ratio[0]:9.1f}x {ratio[1]:9.1f}x")


if __name__ == "__main__":
    main()
