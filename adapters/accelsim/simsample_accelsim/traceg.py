"""Headers of ``kernel-N.traceg`` files, read the way Accel-Sim reads them, and nothing more.

The simulator (``trace_parser::parse_kernel_info``) reads lines until the first one starting
with ``#`` (normally the ``#traces format`` comment), takes ``-key = value`` lines as header
fields and skips everything else. Reading a folder must stay fast on 100 GB of traces, so we
read only the first few kilobytes of each file: for ``.xz`` files a streaming decompressor is fed
small compressed blocks until the header is complete.

The simulator opens ``.xz`` names through ``xz -dc`` and ``.traceg`` names through ``cat``, so a
compressed file named ``.traceg`` (or a plain one named ``.xz``) cannot be simulated: both are
refused here with the fix.
"""

from __future__ import annotations

import lzma
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from simsample.sdk import INT64_MAX, FormatError, fits_int64

XZ_MAGIC = b"\xfd7zXZ\x00"
GZIP_MAGIC = b"\x1f\x8b"
#: A header is a few hundred bytes; give up looking for its end after this much text.
MAX_HEADER_BYTES = 1 << 20
_READ = 1 << 14

_DIM = re.compile(r"\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\)")
_INT = re.compile(r"^\s*(\d+)")
_HEX = re.compile(r"^\s*(?:0[xX])?([0-9a-fA-F]+)")
#: The largest grid or block dimension read (CUDA's limit, 2^31 - 1).
_DIM_MAX = (1 << 31) - 1


@dataclass
class TraceHeader:
    """Launch parameters from a trace header. ``kernel_id`` is None when the header has none."""

    path: Path
    name: str
    kernel_id: int | None
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shmem: int = 0
    nregs: int = 0
    binary_version: int = 0
    stream: int = 0
    shmem_base: int = 0
    local_base: int = 0
    nvbit_version: str = ""
    tracer_version: int = 0
    lineinfo: int = 0
    compressed: bool = False
    #: offset in the decompressed text where the body starts (after the first ``#`` line)
    body_offset: int = 0
    lines: list[str] = field(default_factory=list)

    @property
    def grid_size(self) -> int:
        return self.grid[0] * self.grid[1] * self.grid[2]

    @property
    def block_threads(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def warps_per_cta(self) -> int:
        return (self.block_threads + 31) // 32


def compression(path: Path) -> str | None:
    """``"xz"``, ``"gzip"`` or None from the file's magic bytes, after checking the name fits."""
    try:
        with open(path, "rb") as fh:
            magic = fh.read(6)
    except FileNotFoundError:
        raise FormatError(path, "no such trace file") from None
    if not magic:
        raise FormatError(path, "trace file is empty")
    kind = "xz" if magic.startswith(XZ_MAGIC) else "gzip" if magic.startswith(GZIP_MAGIC) else None
    if path.name.endswith(".xz") and kind != "xz":
        raise FormatError(path, "named .xz but is not an xz file (the simulator would run 'xz -dc' on it and fail)")
    if not path.name.endswith(".xz") and kind is not None:
        raise FormatError(
            path,
            (
                f"is {kind}-compressed but named {path.suffix or 'without .xz'}: the simulator reads such names with "
                "'cat'; "
            )
            + ("name it *.traceg.xz" if kind == "xz" else "decompress it, or recompress it with xz as *.traceg.xz"),
        )
    return kind


def open_stream(path: str | Path) -> IO[bytes]:
    """The decompressed bytes of a trace, streamed (xz is decompressed on the fly, never to disk)."""
    p = Path(path)
    kind = compression(p)
    return lzma.open(p, "rb") if kind == "xz" else open(p, "rb")


def _head_chunks(path: Path, kind: str | None) -> Iterator[bytes]:
    """Decompressed text from the start of the file, in small pieces."""
    with open(path, "rb") as fh:
        if kind != "xz":
            while True:
                block = fh.read(_READ)
                if not block:
                    return
                yield block
        dec = lzma.LZMADecompressor()
        while not dec.eof:
            if dec.needs_input:
                raw = fh.read(_READ)
                if not raw:
                    raise FormatError(path, "truncated xz file (the stream ends inside the header)")
            else:
                raw = b""
            try:
                out = dec.decompress(raw, max_length=_READ)
            except lzma.LZMAError as exc:
                raise FormatError(path, f"corrupt xz data ({exc})") from exc
            if out:
                yield out


def read_header(path: str | Path) -> TraceHeader:
    """Parse the header of one trace; read only as far as the end of the header."""
    p = Path(path)
    kind = compression(p)
    buf = bytearray()
    for piece in _head_chunks(p, kind):
        buf += piece
        end = _header_end(buf)
        if end is not None:
            return parse_header(bytes(buf[:end]), p, compressed=kind == "xz", body_offset=end)
        if len(buf) > MAX_HEADER_BYTES:
            break
    end = _header_end(buf, at_eof=True)
    if end is not None:
        return parse_header(bytes(buf[:end]), p, compressed=kind == "xz", body_offset=end)
    raise FormatError(p, "no trace body: the header is not followed by a '#' line and thread blocks")


def _header_end(buf: bytes | bytearray, at_eof: bool = False) -> int | None:
    """Offset just after the first line that starts with '#', or None if not in ``buf`` yet."""
    pos = 0
    n = len(buf)
    while pos < n:
        nl = buf.find(b"\n", pos)
        if nl < 0:
            if at_eof and buf[pos : pos + 1] == b"#":
                return n
            return None
        if buf[pos : pos + 1] == b"#":
            return nl + 1
        pos = nl + 1
    return None


def _stream_header(fh: IO[bytes], path: Path) -> tuple[TraceHeader, bytes, int]:
    """The header of a trace being scanned from ``fh`` (see :func:`open_stream`), the bytes read
    so far, and the offset in them where the body starts: the streaming scanners read the header
    in small pieces and go on scanning the body from the rest of what they read."""
    head = b""
    while (end := _header_end(head)) is None:
        block = fh.read(1 << 16)
        if not block:
            end = _header_end(head, at_eof=True)
            break
        head += block
        if len(head) > MAX_HEADER_BYTES:
            break
    if end is None:
        raise FormatError(path, "no trace body: the header is not followed by a '#' line and thread blocks")
    return parse_header(head[:end], path, body_offset=end), head, end


def _check_block_count(path: Path, header: TraceHeader, ctas: int) -> None:
    """A scanned body must hold as many thread blocks as the header's grid: the simulator crashes
    on fewer and never reads the others."""
    if ctas != header.grid_size:
        raise FormatError(
            path,
            f"has {ctas} thread blocks but the grid {header.grid} needs {header.grid_size} "
            + (
                "(truncated trace: the simulator would crash)"
                if ctas < header.grid_size
                else "(more blocks than the grid)"
            ),
        )


def parse_header(data: bytes, path: Path, *, compressed: bool = False, body_offset: int | None = None) -> TraceHeader:
    """Header fields from the text up to and including the first ``#`` line."""
    text = data.decode("utf-8", errors="replace")
    lines = text.split("\n")
    fields: dict[str, str] = {}
    kept: list[str] = []
    stop = ""
    for number, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r")
        if not line:
            continue
        if line.startswith("#"):
            stop = line
            break
        if line.startswith("-"):
            kept.append(line)
            words = line[1:].split()
            key = " ".join(words[:2]) if len(words) >= 2 else (words[0] if words else "")
            value = line.split("=", 1)[1] if "=" in line else ""
            # keys are the first two words: "kernel name", "grid dim", "shmem =" (one-word fields
            # such as "-shmem = B" and "-nregs = R" keep their '='), as the simulator compares them
            fields.setdefault(key, value)
            continue
        raise FormatError(
            path,
            f"unexpected line {line[:60]!r} before the end of the header"
            + ("; the trace has no header (it must start with '-kernel name = ...' lines)" if not kept else ""),
            line=number,
        )
    if not kept:
        raise FormatError(path, "the trace has no header (it must start with '-kernel name = ...' lines)")
    if stop.startswith("#BEGIN_TB"):
        raise FormatError(
            path,
            "the header is followed directly by #BEGIN_TB: the simulator takes the first '#' line as the end of the "
            "header (normally '#traces format = ...'), so it would lose this #BEGIN_TB and crash",
        )

    def need(key: str, what: str) -> str:
        if key not in fields:
            raise FormatError(path, f"header has no '-{key} = ' line ({what})")
        return fields[key]

    name = need("kernel name", "the kernel's mangled name")
    name = name[1:] if name.startswith(" ") else name  # the simulator keeps what follows '= '
    name = name.rstrip()
    if not name:
        raise FormatError(path, "empty kernel name in the header")
    grid = _dims(need("grid dim", "the launch grid"), path, "grid dim")
    block = _dims(need("block dim", "the thread block shape"), path, "block dim")
    if 0 in grid or 0 in block:
        raise FormatError(path, f"grid {grid} or block {block} has a zero dimension")
    return TraceHeader(
        path=path,
        name=name,
        kernel_id=_int(fields.get("kernel id"), path, "kernel id", None),
        grid=grid,
        block=block,
        shmem=_int(fields.get("shmem ="), path, "shmem", 0),
        nregs=_int(fields.get("nregs ="), path, "nregs", 0),
        binary_version=_int(fields.get("binary version"), path, "binary version", 0),
        stream=_int(fields.get("cuda stream"), path, "cuda stream id", 0),
        shmem_base=_hex(fields.get("shmem base_addr"), path, "shmem base_addr"),
        local_base=_hex(fields.get("local mem"), path, "local mem base_addr"),
        nvbit_version=fields.get("nvbit version", "").strip(),
        tracer_version=_int(fields.get("accelsim tracer"), path, "accelsim tracer version", 0),
        lineinfo=_int(fields.get("enable lineinfo"), path, "enable lineinfo", 0),
        compressed=compressed,
        body_offset=len(data) if body_offset is None else body_offset,
        lines=kept,
    )


def _dims(value: str, path: Path, what: str) -> tuple[int, int, int]:
    m = _DIM.search(value)
    if m is None:
        raise FormatError(path, f"header '-{what} = {value.strip()}': expected (x,y,z)")
    dims = tuple(int(g) if len(g) <= 12 else _DIM_MAX + 1 for g in m.groups())
    if any(d > _DIM_MAX for d in dims):  # CUDA's own limit is 2^31 - 1; more is a damaged header, not a launch
        raise FormatError(
            path, f"header '-{what} = {value.strip()}': a dimension beyond {_DIM_MAX:,} (CUDA's limit is 2^31-1)"
        )
    return dims  # type: ignore[return-value]


def _int(value: str | None, path: Path, what: str, default: int | None) -> int | None:
    if value is None:
        return default
    m = _INT.match(value)
    if m is None:
        raise FormatError(path, f"header '-{what} = {value.strip()}': expected a number")
    digits = m.group(1)
    n = (
        int(digits) if len(digits) <= 20 else INT64_MAX + 1
    )  # more digits than int64 holds: refused below, never converted
    if not fits_int64(n):
        raise FormatError(
            path, f"header '-{what} = {value.strip()}': beyond the 64-bit integers a trace can hold (damaged header?)"
        )
    return n


def _hex(value: str | None, path: Path, what: str) -> int:
    if value is None:
        return 0
    m = _HEX.match(value)
    if m is None:
        raise FormatError(path, f"header '-{what} = {value.strip()}': expected a hex address")
    n = int(m.group(1), 16)
    if n >= 1 << 64:
        raise FormatError(path, f"header '-{what} = {value.strip()}': an address beyond 64 bits (damaged header?)")
    return n


def header_of_text(text: str, path: str | Path = "trace") -> TraceHeader:
    """Parse a header given as text (tests, synthetic traces)."""
    data = text.encode()
    end = _header_end(data, at_eof=True)
    return parse_header(data[: end or len(data)], Path(path), body_offset=end)


__all__ = ["TraceHeader", "compression", "header_of_text", "open_stream", "parse_header", "read_header"]
