"""Launch graphs for a workload: read the chosen warps of every trace, build, cache, in parallel.

Graphs are cached per trace file, keyed by the file's absolute path, size and modification time,
the reader's format version, :data:`~simsample.plugins.samplers._gcl.graphs.GRAPH_VERSION` and the warp selection
(which includes the seed), so planning again with other training settings, or after adding
traces, only reads what is new. The cache is a folder of compressed ``.npz`` files written
atomically (``cache``: a folder; by default the user's cache folder; ``None`` for none). A cached
file that cannot be read is rebuilt. Files are read in worker processes (``jobs``).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from simsample.plugins.samplers._gcl.graphs import GRAPH_VERSION, KernelGraph, build_graph
from simsample.sdk import InstructionTraces, KernelStream, UserError, WarpSelection, atomic_write_bytes, can_spawn


def default_cache() -> Path:
    """``<user cache folder>/simsample/gcl-graphs`` (``SIMSAMPLE_CACHE`` overrides the base)."""
    base = os.environ.get("SIMSAMPLE_CACHE")
    if base:
        return Path(base) / "gcl-graphs"
    import platformdirs

    return Path(platformdirs.user_cache_dir("simsample")) / "gcl-graphs"


def cache_key(path: Path, fmt: str, selection: WarpSelection) -> str:
    st = path.stat()
    doc = {
        "path": str(path.resolve()),
        "size": st.st_size,
        "mtime_ns": st.st_mtime_ns,
        "format": fmt,
        "graph": GRAPH_VERSION,
        "selection": selection.to_json(),
    }
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:32]


def _build(read: Callable[[Path, WarpSelection], KernelStream], path: Path, selection: WarpSelection) -> bytes | str:
    """Worker: the graph's bytes, or the error's text (errors cross processes as text, as the
    trace features' workers do: the project's exceptions do not survive pickling)."""
    try:
        return build_graph(read(path, selection)).to_bytes()
    except UserError as exc:
        return str(exc)


def launch_graphs(
    traces: InstructionTraces,
    selection: WarpSelection,
    *,
    cache: Path | None,
    jobs: int = 1,
    progress: Callable[[int], None] | None = None,
) -> tuple[list[KernelGraph], int]:
    """The graph of every launch (in the order of ``traces.files``) and how many came from the cache."""
    files = [Path(f) for f in traces.files]
    unique = list(dict.fromkeys(files))
    graphs: dict[Path, KernelGraph] = {}
    todo: list[Path] = []
    keys: dict[Path, str] = {}
    for f in unique:
        keys[f] = cache_key(f, traces.format, selection)
        hit = cache / f"{keys[f]}.npz" if cache is not None else None
        if hit is not None and hit.is_file():
            try:
                graphs[f] = KernelGraph.load(hit)
                if progress:
                    progress(1)
                continue
            except Exception:  # a damaged entry (truncated, not an npz, missing arrays) is rebuilt
                pass
        todo.append(f)
    hits = len(unique) - len(todo)

    def done(f: Path, data: bytes | str) -> None:
        if isinstance(data, str):
            raise UserError(data)
        graphs[f] = KernelGraph.from_bytes(data)
        if cache is not None:
            try:
                cache.mkdir(parents=True, exist_ok=True)
                atomic_write_bytes(cache / f"{keys[f]}.npz", data)
            except OSError:
                pass  # a cache that cannot be written only costs the next plan the rebuild
        if progress:
            progress(1)

    if jobs > 1 and len(todo) > 1 and can_spawn():
        with ProcessPoolExecutor(max_workers=min(jobs, len(todo))) as pool:
            for f, data in zip(todo, pool.map(_build, [traces.read] * len(todo), todo, [selection] * len(todo))):
                done(f, data)
    else:
        for f in todo:
            done(f, _build(traces.read, f, selection))
    return [graphs[f] for f in files], hits
