"""MacSim trace folders as MacSim itself reads them.

A folder written by MacSim's NVBit tracer holds ``kernel_config.txt`` (``nvbit``, ``14``,
``-1``, then one ``./KernelN/trace.txt`` per kernel, run in list order), one ``KernelN`` folder
per traced launch (``trace.txt``: type, version, max blocks per core, warp count and a
``<warp> <start>`` line per warp; ``trace_info.txt``: ``<warp> <instructions>`` per warp;
gzipped ``trace_<warp>.raw`` streams) and, from recent tracers, ``kernel_names.txt`` with every
launch's name and shape. ``N`` is the launch's 0-based index in the traced process (the tracer's
``grid_launch_id``), so it is the kernel id here.

MacSim keeps only the last two path components of a kernel line and appends them to the folder
of ``kernel_config.txt``; a line with fewer than two ``/`` crashes it. This module applies the
same rule, and refuses what MacSim would crash on, with the file and line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from simsample.sdk import FormatError, UserError, missing_message, read_bytes_limited, read_text_limited

KERNEL_CONFIG = "kernel_config.txt"
TRACE_FILE_LIST = "trace_file_list"
KERNEL_NAMES = "kernel_names.txt"
#: trace types MacSim accepts for GPU traces from the NVBit tracer, and the one version it reads
TRACE_TYPE = "nvbit"
TRACE_VERSION = 14
_KERNEL_DIR = re.compile(r"^Kernel(\d+)$")


@dataclass
class KernelEntry:
    """One kernel line of ``kernel_config.txt``: where MacSim will look for it."""

    number: int  # N of KernelN
    line: int  # 1-based line in kernel_config.txt
    text: str  # the line as written
    folder: Path  # <config dir>/KernelN, as MacSim resolves it
    trace: Path  # <config dir>/KernelN/<file>


@dataclass
class KernelConfig:
    """A parsed ``kernel_config.txt``."""

    path: Path
    trace_type: str
    version: int
    kernels: list[KernelEntry]

    @property
    def folder(self) -> Path:
        return self.path.parent


@dataclass
class KernelTrace:
    """What the per-kernel files say about one launch (headers and warp counts only)."""

    number: int
    max_blocks_per_core: int
    warps: int
    instructions: int | None  # sum over warps, from trace_info.txt
    max_warp_instructions: int | None


@dataclass
class LaunchName:
    """One entry of ``kernel_names.txt``."""

    number: int
    name: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    regs: int | None = None
    shmem: int | None = None
    max_blocks_per_core: int | None = None
    text: str = field(default="", repr=False)  # the entry's lines, verbatim


def _tokens_with_lines(text: str) -> list[tuple[str, int]]:
    out = []
    for i, line in enumerate(text.splitlines(), start=1):
        out.extend((tok, i) for tok in line.split())
    return out


def parse_kernel_config(path: Path) -> KernelConfig:
    """Parse and check ``kernel_config.txt`` the way MacSim reads it."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: no such file")
    text = read_text_limited(path, errors="replace")
    toks = _tokens_with_lines(text)
    if not toks:
        raise FormatError(path, "file is empty; expected 'nvbit', '14', '-1' and one KernelN/trace.txt line per kernel")
    ttype, line = toks[0]
    if ttype != TRACE_TYPE:
        raise FormatError(
            path,
            f"trace type {ttype!r}: simsample reads GPU traces from MacSim's NVBit tracer (type {TRACE_TYPE})",
            line=line,
        )
    if len(toks) < 3:
        raise FormatError(path, "header ends early; expected 'nvbit', '14', '-1'", line=toks[-1][1])
    try:
        version = int(toks[1][0])
    except ValueError:
        raise FormatError(path, f"trace version {toks[1][0]!r} is not a number", line=toks[1][1]) from None
    if version != TRACE_VERSION:
        raise FormatError(path, f"trace version {version}: MacSim reads only version {TRACE_VERSION}", line=toks[1][1])
    if toks[2][0] != "-1":
        raise FormatError(
            path,
            f"expected -1 (one folder per kernel) after the version, got {toks[2][0]!r}: "
            "this is a single-kernel trace, not a trace folder of the NVBit tracer",
            line=toks[2][1],
        )
    kernels: list[KernelEntry] = []
    seen: dict[int, int] = {}
    for tok, line in toks[3:]:
        parts = tok.split("/")
        if len(parts) < 3:
            raise FormatError(
                path,
                f"kernel entry {tok!r} has fewer than two path components; MacSim keeps the last two "
                f"(KernelN/trace.txt) and crashes on this line: write it as ./{tok}"
                if len(parts) == 2
                else f"kernel entry {tok!r} is not a path of the form ./KernelN/trace.txt (MacSim crashes on it)",
                line=line,
            )
        folder_name, file_name = parts[-2], parts[-1]
        m = _KERNEL_DIR.match(folder_name)
        if not m:
            raise FormatError(path, f"kernel entry {tok!r}: expected a KernelN folder, got {folder_name!r}", line=line)
        if "." not in file_name:
            raise FormatError(
                path, f"kernel entry {tok!r}: the trace file name needs an extension (MacSim asserts on it)", line=line
            )
        number = int(m.group(1))
        if number in seen:
            raise FormatError(path, f"Kernel{number} is listed twice (first on line {seen[number]})", line=line)
        seen[number] = line
        folder = path.parent / folder_name
        kernels.append(KernelEntry(number, line, tok, folder, folder / file_name))
    if not kernels:
        raise FormatError(path, "lists no kernels (expected ./KernelN/trace.txt lines after the header)")
    return KernelConfig(path, ttype, version, kernels)


def parse_trace_file_list(path: Path) -> list[Path]:
    """Paths named by a ``trace_file_list`` (a count, then that many ``kernel_config.txt`` paths).

    MacSim opens relative paths from its working folder; here they are taken relative to the
    list's folder, which is where MacSim is normally run from.
    """
    path = Path(path)
    text = read_text_limited(path, errors="replace")
    toks = _tokens_with_lines(text)
    if not toks:
        raise FormatError(path, "file is empty; expected a count, then that many kernel_config.txt paths")
    try:
        count = int(toks[0][0])
    except ValueError:
        raise FormatError(
            path, f"expected the number of applications first, got {toks[0][0]!r}", line=toks[0][1]
        ) from None
    names = toks[1:]
    if count < 1 or len(names) < count:
        raise FormatError(path, f"says {count} application(s) but names {len(names)}", line=toks[0][1])
    out = []
    for tok, line in names[:count]:
        p = Path(tok)
        if not p.is_absolute():
            p = path.parent / p
        if not p.is_file():
            raise UserError(f"{path}, line {line}: names {tok}, which does not exist ({p})")
        out.append(p)
    return out


def find_kernel_config(path: Path) -> Path:
    """The ``kernel_config.txt`` behind a trace folder, a ``trace_file_list`` or the file itself."""
    path = Path(path)
    if not path.exists():
        raise UserError(missing_message(path))  # a broken link or a loop is named as such
    if path.is_dir():
        if (path / KERNEL_CONFIG).is_file():
            return path / KERNEL_CONFIG
        if (path / TRACE_FILE_LIST).is_file():
            return find_kernel_config(path / TRACE_FILE_LIST)
        raise UserError(
            f"{path}: no {KERNEL_CONFIG} (or {TRACE_FILE_LIST}) in this folder; is it a MacSim trace folder?"
        )
    with open(path, "rb") as fh:
        head = fh.read(4096).split()
    if head[:1] == [TRACE_TYPE.encode()]:
        return path
    configs = parse_trace_file_list(path)
    if len(configs) > 1:
        raise UserError(
            f"{path}: names {len(configs)} applications, which MacSim runs side by side; "
            f"simsample reads one application at a time: pass one of its {KERNEL_CONFIG} files"
        )
    return configs[0]


def read_kernel_trace(entry: KernelEntry, config: KernelConfig) -> KernelTrace:
    """Header of ``KernelN/trace.txt`` and the warp counts of ``trace_info.txt``."""
    if not entry.folder.is_dir():
        raise FormatError(
            config.path,
            f"Kernel{entry.number}: folder {entry.folder} does not exist (MacSim would fail to open it)",
            line=entry.line,
        )
    if not entry.trace.is_file():
        raise FormatError(config.path, f"Kernel{entry.number}: {entry.trace} does not exist", line=entry.line)
    with open(entry.trace, "rb") as fh:
        head = fh.read(512).split()[:4]
    if len(head) < 4:
        raise FormatError(entry.trace, "ends after its header (no warp count): the tracer did not finish writing it")
    if head[0].decode(errors="replace") != config.trace_type:
        raise FormatError(
            entry.trace,
            f"trace type {head[0].decode(errors='replace')!r} differs from {config.trace_type!r} in {config.path.name}",
            line=1,
        )
    try:
        max_blocks, warps = int(head[2]), int(head[3])
    except ValueError:
        raise FormatError(
            entry.trace, "expected the max blocks per core and the warp count as numbers on lines 3 and 4"
        ) from None
    if warps <= 0:
        raise FormatError(entry.trace, f"invalid warp count {warps} (MacSim asserts on it)", line=4)
    info = entry.folder / "trace_info.txt"
    instructions = max_warp = None
    if info.is_file():
        data = read_bytes_limited(info).split()
        if len(data) % 2:
            raise FormatError(info, "expected '<warp> <instructions>' pairs; the file ends in the middle of one")
        try:
            counts = np.array(data[1::2], dtype=np.int64) if data else np.zeros(0, dtype=np.int64)
        except ValueError:
            raise FormatError(info, "instruction counts must be whole numbers") from None
        if len(counts) != warps:
            raise FormatError(info, f"lists {len(counts)} warps but {entry.trace.name} says {warps}")
        instructions = int(counts.sum())
        max_warp = int(counts.max()) if len(counts) else 0
    return KernelTrace(entry.number, max_blocks, warps, instructions, max_warp)


_NAME_START = re.compile(r"^Kernel(\d+) name: ?", re.M)
_SHAPE = re.compile(r"Grid size: \((\d+), (\d+), (\d+)\), Block size: \((\d+), (\d+), (\d+)\)")
_EXTRA = {
    "max_blocks_per_core": re.compile(r"maxBlockPerCore: (\d+)"),
    "regs": re.compile(r"# of regs: (\d+)"),
    "static": re.compile(r"static shared mem: (\d+)"),
    "dynamic": re.compile(r"dynamic shared mem: (\d+)"),
}


def parse_kernel_names(path: Path) -> dict[int, LaunchName]:
    """Every launch the tracer saw, traced or not, by its number N."""
    text = read_text_limited(path, errors="replace")
    starts = list(_NAME_START.finditer(text))
    if not starts and text.strip():
        raise FormatError(path, "expected 'KernelN name: ...' entries", line=1)
    out: dict[int, LaunchName] = {}
    for i, m in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(text)
        chunk = text[m.start() : end]
        body = text[m.end() : end]
        line = text.count("\n", 0, m.start()) + 1
        first = body.split("\n", 1)[0]
        name = first.split("Grid size:", 1)[0].strip().rstrip(",").strip()
        shape = _SHAPE.search(body)
        if not name or shape is None:
            raise FormatError(
                path, "expected a kernel name and 'Grid size: (x, y, z), Block size: (x, y, z)'", line=line
            )
        number = int(m.group(1))
        if number in out:
            raise FormatError(path, f"Kernel{number} appears twice", line=line)
        g = tuple(int(x) for x in shape.groups())
        extra = {k: (int(r.group(1)) if (r := rx.search(body)) else None) for k, rx in _EXTRA.items()}
        shmem = None
        if extra["static"] is not None or extra["dynamic"] is not None:
            shmem = (extra["static"] or 0) + (extra["dynamic"] or 0)
        out[number] = LaunchName(number, name, g[:3], g[3:], extra["regs"], shmem, extra["max_blocks_per_core"], chunk)
    return out


def kernel_names_text(names: dict[int, LaunchName], numbers: Sequence[int]) -> str:
    """The entries of ``kernel_names.txt`` for these launches, verbatim, in this order."""
    parts = []
    for n in numbers:
        if n in names:
            chunk = names[n].text
            parts.append(chunk if chunk.endswith("\n") else chunk + "\n")
    return "".join(parts)
