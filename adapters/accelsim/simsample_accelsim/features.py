"""Trace-derived features: one streaming pass over every trace body, cached and in parallel.

Per launch (columns of the workload table): ``warp_insts``, ``thread_insts``, ``ctas``,
``warps``, the PKA metric set under Nsight Compute names (instruction counts per memory space,
global/local sectors, ``smsp__inst_executed.sum``, the thread-per-warp-instruction ratio,
``launch__grid_size``) and ``control_flow_insts``; then what the launch's shape makes of its
instructions on the simulated GPU (:mod:`.occupancy`): ``ctas_per_sm``, ``waves`` and
``predicted_cycles``, the design metric samplers use by default on trace features; and the cache
context the launch meets (:mod:`.context`): ``warm_reads``, the share of its loads that read lines
recent launches touched.

Beside the table (``Workload.extras``, saved to ``<output>.extras.npz``):

- ``bbv``: CSR matrix launches × basic blocks, executed instructions per block summed over warps;
- ``bbv_blocks``: (columns × 2) int64, the block's start PC and length in instructions;
- ``bbv_block_kernel``: the kernel name each column belongs to (PCs are offsets within a
  kernel, so a block is identified by kernel name, start PC and length);
- ``warp_types``: CSR matrix, one row per distinct per-warp BBV of a launch (same columns);
- ``warp_type_launch``: the launch row of each warp type; ``warp_type_count``: its warps.

Results are cached per trace file, keyed by the file's path, size and modification time (and the
scanner version), in a folder beside the output, so a re-run after adding traces only scans the
new ones. Files are scanned in parallel (``jobs``: threads with the compiled scanner, which releases the GIL
while it scans; processes with the others); xz traces are decompressed on the
fly, never to disk.
"""

from __future__ import annotations

import hashlib
import io
import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

import lazy_loader as lazy
import numpy as np

from simsample.sdk import FormatError, UserError, Workload, atomic_write_bytes
from simsample_accelsim.context import CONTEXT_COLUMN, warm_read_shares
from simsample_accelsim.footprints import FootprintStore
from simsample_accelsim.kernelfeatures import (
    COLUMNS,
    COUNTERS,
    GRID_COLUMN,
    INST_COLUMN,
    RATIO_COLUMN,
    SCANNER_VERSION,
    LaunchFeatures,
)
from simsample_accelsim.notes import warn
from simsample_accelsim.occupancy import SHAPE_FEATURES, GpuConfig, shape_columns
from simsample_accelsim.reader import (
    TraceFolder,
    folder_notes,
    scan_folder,
    workload_of,
)
from simsample_accelsim.warmup import Footprint

sp = lazy.load("scipy.sparse", suppress_warning=True)

#: Scanners, fastest first: compiled C++ (optional, see :mod:`.scan_native`), numpy, the reference.
ENGINES = ("native", "numpy", "python")


def feature_columns() -> list[str]:
    """Names of the feature columns :func:`compute_features` adds, in table order."""
    cols = [COLUMNS[c] for c in COUNTERS]
    return cols[:4] + [INST_COLUMN, RATIO_COLUMN, GRID_COLUMN] + cols[4:] + list(SHAPE_FEATURES) + [CONTEXT_COLUMN]


def default_engine() -> str:
    """The scanner ``auto`` stands for: ``native`` when the compiled one is usable, else ``numpy``."""
    from simsample_accelsim import scan_native

    return "native" if scan_native.available() else "numpy"


def engine_note() -> str:
    """Which scanner ``auto`` picks here, and why not the compiled one when it is not."""
    from simsample_accelsim import scan_native

    return "native" if scan_native.available() else f"numpy ({scan_native.unavailable_reason()})"


def resolve_engine(engine: str) -> str:
    """``auto`` resolved; an unknown or unusable engine is a :class:`UserError`."""
    if engine == "auto":
        return default_engine()
    if engine not in ENGINES:
        raise UserError(f"unknown scan engine {engine!r} (known: auto, {', '.join(ENGINES)})")
    if engine == "native" and default_engine() != "native":
        from simsample_accelsim import scan_native

        raise UserError(
            f"the compiled trace scanner cannot be used here ({scan_native.unavailable_reason()}); use --engine numpy"
        )
    return engine


def scan_trace(path: str | Path, engine: str = "auto") -> tuple[object, LaunchFeatures]:
    """Header and features of one trace file with the chosen engine."""
    engine = resolve_engine(engine)
    if engine == "native":
        from simsample_accelsim.scan_native import scan_file
    elif engine == "numpy":
        from simsample_accelsim.scan_numpy import scan_file
    else:
        from simsample_accelsim.scan_python import scan_file
    return scan_file(path)


def _scan_job(args: tuple[str, str, bool]) -> tuple[str, dict[str, np.ndarray] | str]:
    """Worker: features of one file as arrays, or the error message (errors cross processes as
    text). With ``context``, also the launch's footprint (the lines its loads read, with how many
    warp-level loads read each, and the lines its stores write), in the same pass: the compiled
    and the numpy scanners record it; after the reference scanner a numpy pass does (the features
    stay the chosen engine's)."""
    path, engine, context = args
    fp = None
    try:
        if context and engine == "native":
            from simsample_accelsim.scan_native import (
                scan_file_and_footprint as native_scan,
            )

            header, feats, fp = native_scan(path)
        elif context and engine == "numpy":
            from simsample_accelsim.scan_numpy import scan_file_and_footprint

            header, feats, fp = scan_file_and_footprint(path)
        else:
            header, feats = scan_trace(path, engine)
            if context:
                from simsample_accelsim.scan_numpy import scan_footprint

                fp = scan_footprint(path)
    except FormatError as exc:
        return path, f"error:{exc}"
    out = feats.to_arrays()
    out["header_check"] = np.array([header.name, str(header.grid), str(header.block)])
    if fp is not None:
        out["fp_reads"], out["fp_writes"] = fp.reads, fp.writes
        out["fp_read_counts"] = fp.read_counts if fp.read_counts is not None else np.ones(fp.reads.size, np.int64)
    return path, out


class FeatureCache:
    """Per-file scan results in ``folder``, keyed by path, size, mtime and scanner version."""

    def __init__(self, folder: Path | None, engine: str, context: bool = True) -> None:
        self.folder = folder
        self.engine = engine
        self.context = context
        self.used: set[str] = set()

    def key(self, path: Path) -> str:
        st = path.stat()
        raw = f"{SCANNER_VERSION}|{self.engine}|{int(self.context)}|{path.resolve()}|{st.st_size}|{st.st_mtime_ns}"
        return hashlib.blake2b(raw.encode(), digest_size=16).hexdigest()

    def get(self, path: Path) -> dict[str, np.ndarray] | None:
        if self.folder is None:
            return None
        k = self.key(path)
        f = self.folder / f"{k}.npz"
        if not f.exists():
            return None
        try:
            with np.load(f, allow_pickle=False) as z:
                data = {name: z[name] for name in z.files}
        except Exception:  # a damaged entry is recomputed
            return None
        self.used.add(f.name)
        return data

    def put(self, path: Path, arrays: dict[str, np.ndarray]) -> None:
        if self.folder is None:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        buf = io.BytesIO()
        np.savez(buf, **arrays)
        name = f"{self.key(path)}.npz"
        atomic_write_bytes(self.folder / name, buf.getvalue())
        self.used.add(name)

    def prune(self) -> None:
        """Remove entries this run did not use (traces deleted or changed since)."""
        if self.folder is None or not self.folder.is_dir():
            return
        for f in self.folder.glob("*.npz"):
            if f.name not in self.used:
                f.unlink(missing_ok=True)


def compute_features(
    path: str | Path,
    *,
    jobs: int = 1,
    cache_dir: str | Path | None = None,
    engine: str = "auto",
    progress: Callable[[int], None] | None = None,
    quiet: bool = False,
    folder: TraceFolder | None = None,
    gpu: GpuConfig | None = None,
    context: bool = True,
    store_footprints: bool = True,
) -> Workload:
    """The folder's workload with feature columns and BBV extras (see the module docstring).

    ``progress(n)`` is called with the (compressed) bytes of each finished file; ``folder`` is a
    :func:`scan_folder` result to reuse; ``gpu`` the simulated GPU's limits for the shape
    columns (default: SM7_QV100's). Without ``context`` the ``warm_reads`` column is left out
    (and the samplers' ``group=auto`` groups by occupancy only), and the numpy pass that records
    the lines it needs is saved. With context and ``store_footprints``, each file's footprint is
    also left in the user's footprint store (:mod:`.footprints`), where ``apply``'s warm-up finds
    it instead of reading the trace bodies again.
    """
    engine = resolve_engine(engine)  # before the cache: its entries are per engine
    if jobs < 1:
        raise UserError(f"--jobs must be at least 1, got {jobs}")
    tf = folder if folder is not None else scan_folder(path)
    if not quiet:
        for note in folder_notes(tf):
            warn(note)
    wl = workload_of(tf)
    cache = FeatureCache(Path(cache_dir) if cache_dir is not None else None, engine, context)
    store = FootprintStore() if context and store_footprints else None

    def keep_footprint(f: Path, arrays: dict[str, np.ndarray]) -> None:
        if store is not None and "fp_reads" in arrays and not store.has(f):
            store.put(
                f,
                Footprint(
                    arrays["fp_reads"],
                    arrays["fp_writes"],
                    int(arrays["counts"][COUNTERS.index("warp_insts")]),
                    arrays["fp_read_counts"],
                ),
            )

    results: dict[str, dict[str, np.ndarray]] = {}
    todo: list[Path] = []
    for f in dict.fromkeys(tf.files):
        hit = cache.get(f)
        if hit is not None:
            results[str(f)] = hit
            keep_footprint(f, hit)
            if progress:
                progress(f.stat().st_size)
        else:
            todo.append(f)
    todo.sort(key=lambda f: -f.stat().st_size)  # largest first: better balance across workers

    def done(path_s: str, res: dict[str, np.ndarray] | str) -> None:
        if isinstance(res, str):
            raise UserError(res.removeprefix("error:"))
        results[path_s] = res
        cache.put(Path(path_s), res)
        keep_footprint(Path(path_s), res)
        if progress:
            progress(Path(path_s).stat().st_size)

    args = [(str(f), engine, context) for f in todo]
    if jobs > 1 and len(todo) > 1:
        # the compiled scanner releases the GIL while it scans (and Python's file reads and lzma
        # do too): threads share the work without starting processes; the others need processes
        pool_type = ThreadPoolExecutor if engine == "native" else ProcessPoolExecutor
        with pool_type(max_workers=min(jobs, len(todo))) as pool:
            for path_s, res in pool.map(_scan_job, args):
                done(path_s, res)
    else:
        for a in args:
            done(*_scan_job(a))
    cache.prune()
    if store is not None:
        store.prune()
    return _assemble(wl, tf, [results[str(f)] for f in tf.files], gpu or GpuConfig())


def _assemble(wl: Workload, tf: TraceFolder, per_launch: list[dict[str, np.ndarray]], gpu: GpuConfig) -> Workload:
    n = len(per_launch)
    feats = []
    for i, arrays in enumerate(per_launch):
        h = tf.headers[i]
        check = [str(x) for x in arrays.get("header_check", [])]
        if check and check != [h.name, str(h.grid), str(h.block)]:
            raise UserError(f"{tf.files[i]}: changed while it was read; run again")
        feats.append(LaunchFeatures.from_arrays(arrays))
    k = wl.kernels.copy()
    counts = np.array([[f.counts[c] for c in COUNTERS] for f in feats], dtype=np.int64).reshape(n, len(COUNTERS))
    for j, c in enumerate(COUNTERS):
        k[COLUMNS[c]] = counts[:, j]
    warp = k["warp_insts"].to_numpy(np.float64)
    k[INST_COLUMN] = counts[:, COUNTERS.index("warp_insts")]
    k[RATIO_COLUMN] = np.divide(k["thread_insts"].to_numpy(np.float64), warp, out=np.zeros(n), where=warp > 0)
    k[GRID_COLUMN] = wl.grid_size()
    shape = shape_columns(k, gpu)
    for c in SHAPE_FEATURES:
        k[c] = shape[c]
    if gpu.l2_lines > 0 and all("fp_reads" in a for a in per_launch):  # a config without L2 (dl2 none): no context
        footprints = [Footprint(a["fp_reads"], a["fp_writes"], 0, a["fp_read_counts"]) for a in per_launch]
        k[CONTEXT_COLUMN] = warm_read_shares(footprints, l2_lines=gpu.l2_lines)
    k = k[[c for c in k.columns if c not in feature_columns()] + [c for c in feature_columns() if c in k.columns]]

    # basic-block columns: (kernel name, start PC, length) in order of first appearance
    col_of: dict[tuple[str, int, int], int] = {}
    bbv_rows, bbv_cols, bbv_vals = [], [], []
    t_indptr, t_indices, t_data, t_launch, t_count = [0], [], [], [], []
    for i, f in enumerate(feats):
        name = tf.headers[i].name
        local = np.array(
            [col_of.setdefault((name, int(pc), int(ln)), len(col_of)) for pc, ln in f.bbv_keys.tolist()], dtype=np.int64
        )
        bbv_rows.append(np.full(len(local), i, np.int64))
        bbv_cols.append(local)
        bbv_vals.append(f.bbv_values)
        for t in range(len(f.type_counts)):
            lo, hi = f.types_indptr[t], f.types_indptr[t + 1]
            cols = local[f.types_indices[lo:hi]]
            order = np.argsort(cols, kind="stable")
            t_indices.append(cols[order])
            t_data.append(f.types_data[lo:hi][order])
            t_indptr.append(t_indptr[-1] + (hi - lo))
            t_launch.append(i)
            t_count.append(int(f.type_counts[t]))
    ncol = len(col_of)
    cat = lambda parts, dt: np.concatenate(parts).astype(dt) if parts else np.zeros(0, dt)  # noqa: E731
    bbv = sp.csr_matrix(
        (cat(bbv_vals, np.int64), (cat(bbv_rows, np.int64), cat(bbv_cols, np.int64))), shape=(n, ncol), dtype=np.int64
    )
    bbv.sort_indices()
    types = sp.csr_matrix(
        (cat(t_data, np.int64), cat(t_indices, np.int64), np.array(t_indptr, np.int64)),
        shape=(len(t_launch), ncol),
        dtype=np.int64,
    )
    keys = list(col_of)
    extras = {
        "bbv": bbv,
        "bbv_blocks": np.array([[pc, ln] for _, pc, ln in keys], dtype=np.int64).reshape(-1, 2),
        "bbv_block_kernel": np.array([nm for nm, _, _ in keys], dtype=str) if keys else np.zeros(0, dtype="<U1"),
        "warp_types": types,
        "warp_type_launch": np.array(t_launch, dtype=np.int64),
        "warp_type_count": np.array(t_count, dtype=np.int64),
    }
    meta = dict(wl.meta)
    meta["features"] = {
        "scanner_version": SCANNER_VERSION,
        "basic_blocks": ncol,
        "warp_types": len(t_launch),
        "gpu": {"sms": gpu.sms, "launch_latency": gpu.launch_latency, "l2_lines": gpu.l2_lines},
    }
    out = Workload(k, source=wl.source, format=wl.format, memcpy_count=wl.memcpy_count, meta=meta)
    out.extras = extras
    return out


def default_cache_dir(output: str | Path) -> Path:
    """Where ``profile features -o OUTPUT`` keeps its per-file cache."""
    p = Path(output)
    return p.with_name(p.name + ".cache")


def total_bytes(tf: TraceFolder) -> int:
    """Bytes on disk of the traces a folder names (for progress bars)."""
    return int(sum(os.path.getsize(f) for f in dict.fromkeys(tf.files)))


__all__ = [
    "ENGINES",
    "FeatureCache",
    "compute_features",
    "default_cache_dir",
    "default_engine",
    "engine_note",
    "feature_columns",
    "resolve_engine",
    "scan_trace",
]
