"""A trace folder (``kernelslist.g`` + ``kernel-N.traceg[.xz]``) as a :class:`Workload`, headers only.

One row per ``kernel...`` line of the list, in list order (the simulator's launch order):
``kernel_id`` is the header's ``-kernel id`` (1-based in NVBit traces), ``name`` the mangled name,
grid, block, ``shmem``, ``regs`` (``-nregs``), ``stream``, ``binary_version`` and
``tracer_version``. Traces carry no time, so ``duration_ns`` is entirely missing. The memcpys of
the list are kept in order in ``meta["memcpys"]`` as ``[row, address, bytes]`` (``row`` = the
launch row they precede).

A list may name ``kernel-N.traceg`` while only ``kernel-N.traceg.xz`` is present (traces are
often stored compressed); the compressed file is read then, with a warning, and ``apply`` writes
list lines that name what exists.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import lazy_loader as lazy
import numpy as np

from simsample.sdk import FormatError, Reader, UserError, Workload, missing_message
from simsample_accelsim.kernelslist import (
    DEFAULT_LIST,
    KernelEntry,
    KernelsList,
    looks_like_kernelslist,
    parse_kernelslist,
)
from simsample_accelsim.notes import warn
from simsample_accelsim.traceg import TraceHeader, read_header

pd = lazy.load("pandas")

FORMAT = "accelsim"


@dataclass
class TraceFolder:
    """A parsed command list with every kernel line's header and the file actually read."""

    kernels_list: KernelsList
    headers: list[TraceHeader]
    files: list[Path]
    #: list positions (into ``kernels_list.kernels``) whose trace exists only under the other name
    substituted: list[int] = field(default_factory=list)

    @property
    def folder(self) -> Path:
        return self.kernels_list.folder

    def entry_name(self, i: int) -> str:
        """The list line to write for kernel ``i``: the name of the file that exists."""
        return (
            self.kernels_list.kernels[i].text
            if i not in set(self.substituted)
            else _other_name(self.kernels_list.kernels[i].text)
        )


def resolve_list(path: str | Path) -> Path:
    """The command list for a folder (its ``kernelslist.g``) or a list file given directly."""
    p = Path(path)
    if not p.exists():
        raise UserError(missing_message(p))  # a broken link or a loop is named as such
    if p.is_dir():
        lst = p / DEFAULT_LIST
        if not lst.is_file():
            others = sorted(x.name for x in p.glob("*.g"))
            hint = f" (lists here: {', '.join(others[:5])}; pass one of them instead of the folder)" if others else ""
            raise UserError(f"{p}: no {DEFAULT_LIST} in this folder{hint}")
        return lst
    return p


def _other_name(text: str) -> str:
    return text[:-3] if text.endswith(".xz") else text + ".xz"


def scan_folder(path: str | Path, *, threads: int | None = None) -> TraceFolder:
    """Parse the list and read every trace header (a few KB per file, in parallel threads)."""
    lst = parse_kernelslist(resolve_list(path))
    files: list[Path] = []
    substituted: list[int] = []
    for i, entry in enumerate(lst.kernels):
        f = lst.folder / entry.text
        if not f.exists():
            alt = lst.folder / _other_name(entry.text)
            if not alt.exists():
                raise FormatError(
                    lst.path,
                    f"trace {entry.text} does not exist (nor {alt.name}); the simulator would stop at it with "
                    "'unsupported binary version: 0'",
                    line=entry.line,
                )
            f = alt
            substituted.append(i)
        files.append(f)
    workers = threads or min(16, (os.cpu_count() or 1) * 4)
    if len(files) > 64 and workers > 1:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            headers = list(pool.map(read_header, files, chunksize=64))
    else:
        headers = [read_header(f) for f in files]
    return TraceFolder(lst, headers, files, substituted)


def folder_notes(tf: TraceFolder) -> list[str]:
    """Warnings a user should see about a folder: ignored list lines, substituted file names."""
    notes = tf.kernels_list.ignored_warnings()
    if tf.substituted:
        first = tf.kernels_list.kernels[tf.substituted[0]].text
        notes.append(
            f"{tf.kernels_list.path.name}: {len(tf.substituted)} trace(s) named in the list exist only under the "
            f"other name (e.g. {first} -> {_other_name(first)}); read those instead (simsample apply writes the "
            "names that exist)"
        )
    return notes


def workload_of(tf: TraceFolder) -> Workload:
    """The launch table of a scanned folder."""
    hs = tf.headers
    n = len(hs)
    ids = [h.kernel_id for h in hs]
    if any(i is None for i in ids):
        missing = sum(i is None for i in ids)
        warn(f"{missing} trace header(s) have no '-kernel id' line; using their 1-based position in the list instead")
        ids = [h.kernel_id if h.kernel_id is not None else pos + 1 for pos, h in enumerate(hs)]
    seen: dict[int, int] = {}
    for pos, k in enumerate(ids):
        if k in seen:
            a, b = tf.kernels_list.kernels[seen[k]], tf.kernels_list.kernels[pos]
            raise FormatError(
                tf.kernels_list.path,
                f"{a.text} (line {a.line}) and {b.text} (line {b.line}) both have '-kernel id = {k}'; "
                "kernel ids must be unique (is a trace listed twice?)",
                line=b.line,
            )
        seen[k] = pos
    df = pd.DataFrame(
        {
            "kernel_id": np.array(ids, dtype=np.int64),
            "name": pd.Categorical([h.name for h in hs]),
            "grid_x": [h.grid[0] for h in hs],
            "grid_y": [h.grid[1] for h in hs],
            "grid_z": [h.grid[2] for h in hs],
            "block_x": [h.block[0] for h in hs],
            "block_y": [h.block[1] for h in hs],
            "block_z": [h.block[2] for h in hs],
            "stream": [h.stream for h in hs],
            "start_ns": np.zeros(n, np.int64),
            "duration_ns": pd.array([pd.NA] * n, dtype="Int64"),
            "regs": [h.nregs for h in hs],
            "shmem": [h.shmem for h in hs],
            "binary_version": np.array([h.binary_version for h in hs], dtype=np.uint16),
            "tracer_version": np.array([h.tracer_version for h in hs], dtype=np.uint16),
        }
    )
    memcpys: list[list[Any]] = []
    row = 0
    for cmd in tf.kernels_list.commands:
        if isinstance(cmd, KernelEntry):
            row += 1
        else:
            memcpys.append([row, f"0x{cmd.address:016x}", cmd.nbytes])
    meta: dict[str, Any] = {
        "list": tf.kernels_list.path.name,
        "memcpys": memcpys,
        "binary_versions": sorted({h.binary_version for h in hs}),
        "tracer_versions": sorted({h.tracer_version for h in hs}),
        "nvbit_versions": sorted({h.nvbit_version for h in hs if h.nvbit_version}),
        "compressed_traces": int(sum(h.compressed for h in hs)),
    }
    if tf.kernels_list.ignored:
        meta["ignored_lines"] = [[n_, t[:200]] for n_, t in tf.kernels_list.ignored[:100]]
    return Workload(df, source=str(tf.folder), format=FORMAT, memcpy_count=len(memcpys), meta=meta)


def read_traces(path: str | Path, *, quiet: bool = False) -> Workload:
    """Read a trace folder (or a command list file) into a workload, headers only."""
    tf = scan_folder(path)
    if not quiet:
        for note in folder_notes(tf):
            warn(note)
    return workload_of(tf)


class AccelSimReader(Reader):
    """Accel-Sim trace folders for ``plan`` and ``profile info`` (content detected by the list)."""

    name = FORMAT
    description = "Accel-Sim trace folder: kernelslist.g with kernel-N.traceg[.xz] (headers only)"
    reads_directories = True

    def detect(self, path: Path, head: bytes) -> bool:
        try:
            if path.is_dir():
                return (path / DEFAULT_LIST).is_file()
            return looks_like_kernelslist(head)
        except OSError:
            return False

    def read(self, paths: Sequence[Path], options: Mapping[str, Any]) -> Workload:
        return read_traces(paths[0])
