"""Reader of PyTorch-profiler / Kineto traces (``.json`` or ``.json.gz``, one file per rank).

GPU kernels are the ``traceEvents`` with ``"cat": "kernel"`` (``"Kernel"`` in older versions); ``ts``
and ``dur`` are microseconds, written as integers or decimals, and are converted to integer
nanoseconds exactly (``4458676983543.183`` µs → ``4458676983543183`` ns), with
``baseTimeNanoseconds`` added when the trace gives one. ``args`` give grid, block, stream,
correlation id, registers per thread, shared memory and device. The GPU name comes from
``deviceProperties``, the rank from ``distributedInfo``.

Several files (one per rank of a distributed run) are read into one workload with a ``rank``
column: a file's rank is ``distributedInfo.rank`` when present, else the number in a
``rank<N>``/``rank-<N>``/``rank_<N>`` file name, else its position on the command line. Launch ids
are then renumbered over all files in global start order (ties by rank, then correlation id).
``--rank R`` keeps only rank R.

Kernel events are extracted by the compiled extractor (:mod:`simsample.plugins.readers._kineto.native`,
one pass of C++ over the JSON text) when it is built; a file it does not take goes to a typed
decoder (:mod:`simsample.plugins.readers._kineto.decode`, with the optional ``msgspec`` package) that builds
nothing for the other events' contents, then to the regex scanner
(:mod:`simsample.plugins.readers._kineto.scan`), and a file that defeats the scanner is parsed with
``json.loads``, which names what is wrong with it. All of them give the same launches, to the
nanosecond.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import lazy_loader as lazy
import numpy as np

from simsample.plugins.readers._kineto import decode as kd
from simsample.plugins.readers._kineto import native as kn
from simsample.plugins.readers._kineto import scan as ks
from simsample.sdk import (
    FormatError,
    Reader,
    UserError,
    Workload,
    can_spawn,
    categorical,
    compression_of,
    hookimpl,
    launch_table,
    looks_binary,
    narrow,
    read_all,
    source_label,
    task,
    usable_cpus,
)

pd = lazy.load("pandas")

_DECODER = json.JSONDecoder()
_RANK_IN_NAME = re.compile(r"rank[-_]?(\d+)", re.IGNORECASE)
#: below this much input, reading the rank files at the same time costs more than it saves
PARALLEL_MIN_BYTES = 64 << 20
_MEMCPY_CATS = ks.MEMCPY_CATS
#: the whole-file extractors, fastest first; each hands a file it does not take to the next
_EXTRACTORS = {"native": kn.extract, "decode": kd.decode}


class KinetoReader(Reader):
    name = "kineto"
    description = (
        "PyTorch profiler / Kineto trace JSON (.json, .json.gz); one file per rank, or a folder or .tar.gz of them"
    )
    multi_file = True
    reads_directories = True

    def detect(self, path: Path, head: bytes) -> bool:
        if path.is_dir():
            return any(_looks_kineto(f) for f in _rank_files(path)[:4])
        if is_tar(head):  # the only reader of archives: one without a trace is told so when read
            return True
        if looks_binary(head):
            return False
        text = head.lstrip()
        if not text.startswith((b"{", b"[")):
            return False
        return b'"traceEvents"' in head or b'"ph"' in head and (b'"ts"' in head)

    def read(self, paths: Sequence[Path], options: Mapping[str, Any]) -> Workload:
        with expanded_rank_files(paths) as (files, labels):
            try:
                wl = self._read_files(files, options)
            except UserError as exc:
                msg = str(exc)
                for f, label in labels.items():
                    msg = msg.replace(str(f), label)
                if msg == str(exc):
                    raise
                raise UserError(msg) from None
        if "files" in wl.meta:
            wl.meta["files"] = [labels.get(Path(f), str(f)) for f in wl.meta["files"]]
        if any(p.is_dir() or Path(p) not in files for p in paths):
            wl.source = source_label(list(paths))
        return wl

    def _read_files(self, paths: Sequence[Path], options: Mapping[str, Any]) -> Workload:
        want = options.get("rank")
        parts: list[dict[str, Any]] = []
        todo: list[tuple[int, Path]] = []
        for order, path in enumerate(paths):
            rank_hint = _rank_from_head(path)
            if want is not None and rank_hint is not None and rank_hint != want:
                parts.append({"path": path, "rank": rank_hint, "skipped": True, "order": order})
            else:
                todo.append((order, path))
        with task("reading Kineto traces", len(todo)) as advance:
            for order, path, part in _read_all([p for _, p in todo], [o for o, _ in todo]):
                part["rank"] = _rank(part, path, order)
                part["order"] = order
                parts.append(part)
                advance()
        parts.sort(key=lambda p: p["order"])
        ranks = [p["rank"] for p in parts]
        if want is not None:
            parts = [p for p in parts if p["rank"] == want]
            if not parts:
                raise UserError(
                    f"--rank {want}: no such rank among the traces given (ranks: "
                    f"{', '.join(map(str, sorted(set(ranks))))})"
                )
        elif len(set(ranks)) != len(ranks):
            dup = sorted({r for r in ranks if ranks.count(r) > 1})
            raise UserError(
                f"several traces claim rank {', '.join(map(str, dup))}; give one file per rank (or pick one with "
                "--rank)"
            )
        return _combine([p for p in parts if not p.get("skipped")], paths, want)


#: names of Kineto trace files inside a folder or an archive of per-rank traces
_TRACE_SUFFIXES = (".json", ".json.gz", ".json.xz", ".json.bz2")


def is_tar(head: bytes) -> bool:
    """Whether decompressed bytes start a tar archive (the ``ustar`` magic at offset 257)."""
    return len(head) >= 262 and head[257:262] == b"ustar"


def _rank_files(folder: Path) -> list[Path]:
    """Trace files directly in a folder of per-rank traces (hidden files skipped), in name order.

    Only the folder itself is looked at, not its subfolders: a folder of folders is a suite of
    runs (which ``evaluate`` walks one by one), not the ranks of one run.
    """
    try:
        entries = sorted(folder.iterdir())
    except OSError:
        return []
    return [f for f in entries if f.is_file() and f.name.endswith(_TRACE_SUFFIXES) and not f.name.startswith(".")]


def _looks_kineto(path: Path) -> bool:
    from simsample.sdk import read_head

    try:
        head = read_head(path, 4096)
    except Exception:
        return False
    text = head.lstrip()
    return text.startswith((b"{", b"[")) and (
        b'"traceEvents"' in head or b'"schemaVersion"' in head or b'"deviceProperties"' in head
    )


def _unpack_traces(path: Path, dest: Path) -> list[tuple[Path, str]]:
    """Unpack an archive's trace members (only those) into ``dest``, within the unpack budget.

    The members are listed first and their declared sizes (a sparse member counts by the size it
    declares, not the few bytes it stores) summed against the unpack limit and the archive's own
    size (the compression ratio), so that an archive that would fill the disk is refused before
    a byte is written; the copy then checks both again as it streams. Members are written flat,
    numbered, so no member path can leave ``dest``. Returns (unpacked file, member name) pairs.
    """
    import tarfile

    from simsample.sdk import (
        DECOMPRESSION_ERRORS,
        check_ratio,
        copy_bounded,
        human_size,
        limit_refusal,
        size_limit,
    )

    size = path.stat().st_size
    max_members = size_limit("members")
    cap = size_limit("unpack")
    try:
        with tarfile.open(path, "r:*") as tar:
            members = []
            for count, m in enumerate(tar, 1):
                if max_members and count > max_members:
                    raise limit_refusal(path, "members", f"more than {max_members} members")
                if m.isfile() and m.name.endswith(_TRACE_SUFFIXES):
                    members.append(m)
            if not members:
                raise UserError(f"{path}: no Kineto trace in this archive (no member named *.json or *.json.gz)")
            declared = sum(m.size for m in members)
            if cap and declared > cap:
                raise limit_refusal(path, "unpack", f"its trace members declare {human_size(declared)}")
            check_ratio(path, declared, size, what="its trace members declare")
            out: list[tuple[Path, str]] = []
            written = 0
            for i, m in enumerate(sorted(members, key=lambda m: m.name)):
                src = tar.extractfile(m)
                if src is None:
                    continue
                target = dest / f"{i:06d}-{Path(m.name).name}"
                with src, open(target, "wb") as dst:
                    written = copy_bounded(src, dst, path, size, written=written)
                out.append((target, m.name))
            return out
    except (tarfile.TarError, EOFError, OSError, *DECOMPRESSION_ERRORS) as exc:
        from simsample.sdk import temporary_full

        if temporary_full(exc):  # the temporary folder's disk full (or a size limit), not the archive
            raise UserError(
                f"{path}: cannot unpack it into the temporary folder {dest} ({temporary_full(exc)}); "
                "set TMPDIR to a folder with more room"
            ) from None
        raise FormatError(path, f"unreadable tar archive ({exc}); check that the archive is complete") from None


@contextlib.contextmanager
def expanded_rank_files(paths: Sequence[Path]) -> Iterator[tuple[list[Path], dict[Path, str]]]:
    """Every trace file the inputs stand for: a file as is, a folder's trace files, a tar
    archive's members (unpacked into a private temporary folder, removed afterwards).

    PyTorch users keep multi-rank traces as a folder with one file per rank, or packed as a
    ``.tar.gz``; both read as all their ranks, as if each file were named (``--rank`` picks one).
    The second value maps an unpacked member back to ``ARCHIVE:member`` for the workload's meta.
    """
    import shutil
    import tempfile

    from simsample.sdk import read_head, signals_deferred

    files: list[Path] = []
    labels: dict[Path, str] = {}
    tmp: Path | None = None
    try:
        for p in map(Path, paths):
            if p.is_dir():
                found = _rank_files(p)
                if not found:
                    raise UserError(f"{p}: no Kineto trace files (*.json, *.json.gz) in this folder")
                files.extend(found)
            elif is_tar(read_head(p, 512)):
                if tmp is None:
                    with signals_deferred():  # a signal between the two would leak the folder
                        tmp = Path(tempfile.mkdtemp(prefix="simsample-ranks-"))
                dest = tmp / str(len(files))
                dest.mkdir()
                for out, member in _unpack_traces(p, dest):
                    files.append(out)
                    labels[out] = f"{p}:{member}"
            else:
                files.append(p)
        yield files, labels
    finally:
        if tmp is not None:
            with signals_deferred():  # a signal during the removal (the command's last moments) would leave half of it
                shutil.rmtree(tmp, ignore_errors=True)


def _read_one(path: Path, threads: int | None = None) -> dict[str, Any]:
    """:func:`read_file` for a worker: a user error travels back as text (exceptions with
    keyword-only arguments do not survive pickling), raised in file order by :func:`_read_all`."""
    try:
        return read_file(path, threads=threads)
    except UserError as exc:
        return {"error": str(exc)}


def _workers(paths: Sequence[Path]) -> int:
    """Workers for several rank files: one per core, as many as memory allows (a file needs about
    four times its decompressed size while the Python paths scan it)."""
    if len(paths) < 2 or sum(p.stat().st_size for p in paths) < PARALLEL_MIN_BYTES:
        return 1
    try:
        avail = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 1
    biggest = max(p.stat().st_size * (20 if compression_of(p) else 1) for p in paths)
    return max(1, min(len(paths), usable_cpus(), 8, int(avail // max(4 * biggest, 1))))


def _read_all(paths: Sequence[Path], orders: Sequence[int]) -> Iterator[tuple[int, Path, dict[str, Any]]]:
    """Each file's :func:`read_file` result, in order. Several large files (one per rank) are read
    at the same time when there are cores to spare: in threads when the compiled extractor reads
    them (it releases the GIL while it scans, and its columns need no pickling), else in worker
    processes."""
    workers = _workers(paths)
    results: list[dict[str, Any]] | None = None
    if workers > 1 and kn.AVAILABLE:
        from concurrent.futures import ThreadPoolExecutor
        from functools import partial

        # the cores are shared among the files read at once: each file's scan gets its part of them
        with ThreadPoolExecutor(max_workers=workers) as pool:
            results = list(pool.map(partial(_read_one, threads=kn.threads(workers)), paths))
    elif workers > 1 and can_spawn():
        try:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn")) as pool:
                results = list(pool.map(_read_one, paths))
        except (OSError, RuntimeError):
            results = None  # no worker processes here: read in this process
    for i, (order, path) in enumerate(zip(orders, paths)):
        part = results[i] if results is not None else read_file(path)
        if "error" in part:
            raise UserError(part["error"])
        yield order, path, part


def _rank_from_head(path: Path) -> int | None:
    """The rank written in ``distributedInfo`` within the first 64 KiB, if it is there."""
    from simsample.sdk import read_head

    try:
        head = read_head(path).decode("utf-8", errors="replace")
    except Exception:
        return None
    m = re.search(r'"distributedInfo"\s*:\s*\{[^{}]*?"rank"\s*:\s*(\d+)', head)
    return int(m.group(1)) if m else None


def _rank(part: dict[str, Any], path: Path, order: int) -> int:
    info = part["meta"].get("distributedInfo") or {}
    if isinstance(info, dict) and isinstance(info.get("rank"), int):
        return int(info["rank"])
    m = _RANK_IN_NAME.search(path.name)
    return int(m.group(1)) if m else order


def _top_level(text: str, key: str) -> Any:
    """The value of a top-level key found by text search (``deviceProperties`` etc.), or None."""
    m = re.search(rf'"{re.escape(key)}"\s*:\s*', text)
    if not m:
        return None
    try:
        return _DECODER.raw_decode(text, m.end())[0]
    except json.JSONDecodeError:
        return None


def read_file(
    path: Path, *, fast: bool = True, engine: str | None = None, threads: int | None = None
) -> dict[str, Any]:
    """Kernel columns and metadata of one trace file.

    ``engine``: ``"native"`` (the compiled extractor, the default when it is built), ``"decode"``
    (typed msgspec decoding, the default otherwise when msgspec is installed), ``"scan"`` (the
    regex scanner) or ``"json"`` (the json module, the reference path; also what ``fast=False``
    selects). The faster paths hand a file they cannot take to the next one; ``scan["engine"]``
    says which path read it. ``threads``: how many threads the compiled extractor may scan one
    large file with (default :func:`~simsample.plugins.readers._kineto.native.threads`: every
    usable core); its result does not depend on it.
    """
    if engine is None:
        engine = ("native" if kn.AVAILABLE else "decode" if kd.AVAILABLE else "scan") if fast else "json"
    if engine not in ("native", "decode", "scan", "json"):
        raise ValueError(f"unknown engine {engine!r}")
    fast = engine != "json"
    order = list(_EXTRACTORS)
    chain = order[order.index(engine) :] if engine in _EXTRACTORS else []
    if threads is None and chain[:1] == ["native"]:
        threads = kn.threads()
    if chain[:1] == ["native"] and kn.AVAILABLE and path.is_file() and compression_of(path) is None:
        chain.pop(0)  # a plain file is scanned in place, without reading it into a copy first
        got = kn.extract_mapped(path, threads=threads or 1)
        if got is not None:
            return _whole_file_part(path, got, "native")
    raw = read_all(path)
    if not raw[:65536].strip() and not raw.strip():
        raise UserError(f"{path}: file is empty")
    if chain and raw[-4096:].rstrip().endswith((b"}", b"]")):
        for name in chain:
            got = kn.extract(raw, threads=threads or 1) if name == "native" else _EXTRACTORS[name](raw)
            if got is not None:
                return _whole_file_part(path, got, name)
    text = raw.decode("utf-8", errors="replace")
    del raw
    if not text[-4096:].rstrip().endswith(("}", "]")):
        raise FormatError(path, "truncated JSON: the trace does not end with '}' (an interrupted profiler run?)")
    try:
        cols = ks.scan(text) if fast else None
    except (KeyError, ValueError, TypeError):
        cols = None  # a malformed kernel event: the json-module path names it
    if cols is not None and len(cols) == 0:
        cols = None  # no kernels found by text search: let the json module confirm (and validate)
    meta: dict[str, Any] = {}
    memcpy = 0
    if cols is not None:
        memcpy = cols.memcpy
        if '"traceEvents"' not in text:
            raise FormatError(path, "not a Kineto trace: no traceEvents list")
        # top-level keys sit before or after the traceEvents list: look at both ends only
        ends = text[: 1 << 20] + "\n" + text[-(1 << 20) :] if len(text) > 1 << 21 else text
        for key in ("deviceProperties", "distributedInfo", "baseTimeNanoseconds"):
            val = _top_level(ends, key)
            if val is not None:
                meta[key] = val
    else:
        try:
            doc = json.loads(text, parse_float=ks.FloatText)  # floats as text: times convert exactly
        except json.JSONDecodeError as exc:
            raise FormatError(path, f"not valid JSON: {exc.msg}", line=exc.lineno) from None
        except RecursionError:
            raise FormatError(
                path, "JSON nested too deeply to be a Kineto trace (thousands of levels); check the file"
            ) from None
        if not isinstance(doc, (dict, list)):
            raise FormatError(path, "not a Kineto trace: expected a JSON object with a traceEvents list")
        if isinstance(doc, dict):
            if not isinstance(doc.get("traceEvents"), list):
                raise FormatError(path, "not a Kineto trace: no traceEvents list")
            for key in ("deviceProperties", "distributedInfo", "baseTimeNanoseconds"):
                if key in doc:
                    meta[key] = doc[key]
        events = doc.get("traceEvents") if isinstance(doc, dict) else doc
        memcpy = sum(1 for ev in events or () if isinstance(ev, dict) and ev.get("cat") in _MEMCPY_CATS)
        cols = ks.KernelColumns()
        for i, ev in enumerate(ks.iter_kernel_events(doc)):
            try:
                ks.add_event(cols, ev)
            except (KeyError, ValueError, TypeError, OverflowError) as exc:
                what = (
                    f"kernel event lacks the field {exc.args[0]!r}"
                    if isinstance(exc, KeyError)
                    else f"kernel event with an unusable value: {exc}"
                )
                raise FormatError(
                    path, what, record=f"traceEvents kernel #{i + 1} ({str(ev.get('name'))[:60]!r})"
                ) from None
        del doc
    del text
    try:
        arrays = _arrays(cols, meta)
    except ValueError as exc:
        raise FormatError(path, f"kernel events with unreadable numbers ({exc})") from None
    scan = {
        "engine": "scan" if fast and cols.layouts + cols.decoded_alone else "json",
        "layouts": cols.layouts,
        "decoded_alone": cols.decoded_alone,
    }
    return {"path": path, "arrays": arrays, "meta": meta, "memcpy": memcpy, "scan": scan}


def _whole_file_part(path: Path, got: tuple[dict[str, Any], dict[str, Any], int], engine: str) -> dict[str, Any]:
    """:func:`read_file`'s result from a whole-file extractor's ``(arrays, meta, memcpy)``."""
    arrays, meta, memcpy = got
    return {
        "path": path,
        "arrays": arrays,
        "meta": meta,
        "memcpy": memcpy,
        "scan": {"engine": engine, "layouts": 0, "decoded_alone": 0},
    }


def _arrays(cols: ks.KernelColumns, meta: dict[str, Any]) -> dict[str, Any]:
    start = kd.add_base_time(ks.micros_to_ns(cols.ts_int, cols.ts_frac), meta)
    grid = ks.triples(cols.grid)
    block = ks.triples(cols.block)
    out: dict[str, Any] = {
        "name": categorical(cols.names),
        "grid_x": grid[:, 0],
        "grid_y": grid[:, 1],
        "grid_z": grid[:, 2],
        "block_x": block[:, 0],
        "block_y": block[:, 1],
        "block_z": block[:, 2],
        "start_ns": start,
        "duration_ns": ks.micros_to_ns(cols.dur_int, cols.dur_frac),
    }
    for col, default in kd.ARG_DEFAULTS.items():
        vals = cols.args[col]
        if col in kd.SPARSE_COLUMNS and all(v is None for v in vals):
            continue
        out[col] = ks.arg_column(vals, default)
    return out


def _gpu_names(meta: dict[str, Any]) -> list[str]:
    props = meta.get("deviceProperties")
    if not isinstance(props, list):
        return []
    return sorted({str(p.get("name")) for p in props if isinstance(p, dict) and p.get("name")})


def _combine(parts: list[dict[str, Any]], paths: Sequence[Path], rank: int | None) -> Workload:
    multi = len(parts) > 1
    columns: dict[str, Any] = {}
    keys = [
        "name",
        "grid_x",
        "grid_y",
        "grid_z",
        "block_x",
        "block_y",
        "block_z",
        "stream",
        "start_ns",
        "duration_ns",
        "correlation",
        "regs",
        "shmem",
        "device",
    ]
    for key in keys:
        pieces = [p["arrays"].get(key) for p in parts]
        if any(x is None for x in pieces):
            if key in ("regs", "shmem"):
                continue
        if key == "name":
            columns[key] = (
                pd.api.types.union_categoricals(pieces)
                if len(pieces) > 1
                else (pieces[0] if pieces else categorical([]))
            )
        elif len(pieces) == 1:
            columns[key] = pieces[0]  # one file: its column as it is (a copy of 10^6 rows costs 10 ms)
        else:
            columns[key] = np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int64)
    tie = ["correlation"]
    if multi:
        columns["rank"] = np.concatenate(
            [np.full(len(p["arrays"]["start_ns"]), p["rank"], dtype=np.int64) for p in parts]
        )
        tie = ["rank", "correlation"]
    for key in list(columns):
        if key not in ("name", "start_ns", "duration_ns"):
            columns[key] = narrow(columns[key])
    df = launch_table(columns, tie_break=tie)
    gpus = sorted({g for p in parts for g in _gpu_names(p["meta"])})
    meta: dict[str, Any] = {"profiler": "kineto"}
    if gpus:
        meta["gpu"] = gpus[0] if len(gpus) == 1 else gpus
    if len(parts) == 1:
        info = parts[0]["meta"].get("distributedInfo")
        if isinstance(info, dict):
            meta["rank"] = parts[0]["rank"]
            if "world_size" in info:
                meta["world_size"] = info["world_size"]
        elif rank is not None:
            meta["rank"] = parts[0]["rank"]
    else:
        meta["ranks"] = [p["rank"] for p in parts]
        meta["files"] = [str(p["path"]) for p in parts]
    if any("baseTimeNanoseconds" in p["meta"] for p in parts):
        meta["base_time_ns_added"] = True
    used = [p["path"] for p in parts] if rank is not None else list(paths)
    memcpy = sum(p["memcpy"] for p in parts)
    return Workload(df, source=source_label(used), format="kineto", memcpy_count=memcpy, meta=meta)


@hookimpl
def register_readers(register):
    register(KinetoReader())
