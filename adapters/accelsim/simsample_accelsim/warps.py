"""Per-warp instruction streams of a trace, for GCL-Sampler's graphs (:mod:`simsample.gcl`).

Only the thread blocks of the chosen SM are parsed (see :class:`simsample.gcl.streams.WarpSelection`):
the body is read in large chunks and the other blocks are skipped by searching for the next
``#BEGIN_TB``, so a launch costs about one decompression pass plus the parsing of the few warps
kept. Reading stops after the last wanted block. Lines follow the simulator's grammar as
:mod:`.scan_python` parses it (register lists, the opcode, memory width and the three address
modes); generic ``LD``/``ST`` are resolved to a space from the first active address, as the
simulator does.
"""

from __future__ import annotations

import lzma
from pathlib import Path

from simsample.sdk import (
    MEM_ATOMIC,
    MEM_LOAD,
    MEM_NONE,
    MEM_STORE,
    FormatError,
    KernelStream,
    StreamBuilder,
    WarpSelection,
)
from simsample_accelsim import opcodes as oc
from simsample_accelsim.scan_python import addresses
from simsample_accelsim.traceg import TraceHeader, _stream_header, open_stream

CHUNK = 1 << 22
#: bumped whenever what :func:`read_warps` returns changes (part of the graph cache's key)
FORMAT_VERSION = "1"

_KIND = {
    oc.GLOBAL_LD: (MEM_LOAD, "global"),
    oc.GLOBAL_ST: (MEM_STORE, "global"),
    oc.LOCAL_LD: (MEM_LOAD, "local"),
    oc.LOCAL_ST: (MEM_STORE, "local"),
    oc.SHARED_LD: (MEM_LOAD, "shared"),
    oc.SHARED_ST: (MEM_STORE, "shared"),
    oc.GLOBAL_ATOM: (MEM_ATOMIC, "global"),
    oc.GLOBAL_RED: (MEM_ATOMIC, "global"),
    oc.SHARED_ATOM: (MEM_ATOMIC, "shared"),
}


def read_warps(path: str | Path, selection: WarpSelection) -> KernelStream:
    """The chosen warps of one trace file (plain or xz) as a :class:`KernelStream`."""
    p = Path(path)
    try:
        with open_stream(p) as fh:
            header, head, end = _stream_header(fh, p)
            return _read_body(fh, head[end:], header, selection, p)
    except (EOFError, lzma.LZMAError) as exc:
        raise FormatError(p, f"truncated or corrupt xz data ({exc})") from exc


def _read_body(fh, buf: bytes, header: TraceHeader, selection: WarpSelection, path: Path) -> KernelStream:
    kernel_id = header.kernel_id if header.kernel_id is not None else 0
    pairs = selection.chosen(header.grid_size, header.warps_per_cta, kernel_id)
    wanted: dict[int, dict[int, int]] = {}
    for index, (cta, warp) in enumerate(pairs.tolist()):
        wanted.setdefault(cta, {})[warp] = index
    last = max(wanted) if wanted else -1
    out = StreamBuilder()
    off = (4 if header.tracer_version < 3 else 0) + (1 if header.lineinfo else 0)
    cta, pos, eof = -1, 0, False
    while cta < last:
        b = buf.find(b"#BEGIN_TB", pos)
        e = buf.find(b"#END_TB", b) if b >= 0 else -1
        if e < 0:
            if eof:
                raise FormatError(
                    path, f"the trace ends after {cta + 1} thread blocks, inside or before block {cta + 2} (truncated?)"
                )
            more = fh.read(CHUNK)
            eof = not more
            buf = buf[pos:] + more
            pos = 0
            continue
        cta += 1
        if cta in wanted:
            _parse_block(buf[b:e], wanted[cta], header, off, out, path, selection.max_insts)
        pos = e + 7
    return out.build()


def _parse_block(
    block: bytes, warps: dict[int, int], header: TraceHeader, off: int, out: StreamBuilder, path: Path, max_insts: int
) -> None:
    current: int | None = None
    kept = 0
    for raw in block.split(b"\n"):
        words = raw.split()
        if not words:
            continue
        w0 = words[0]
        if w0 == b"warp":
            current = warps.get(int(words[-1]))
            kept = 0
            continue
        if current is None or kept >= max_insts or w0[:1] == b"#" or w0 == b"thread" or w0 == b"insts":
            continue
        try:
            _instruction(words[off:], header, current, out)
        except (ValueError, IndexError) as exc:
            raise FormatError(
                path, f"malformed instruction line ({exc}): {raw[:80].decode(errors='replace')!r}"
            ) from None
        kept += 1


def _instruction(w: list[bytes], header: TraceHeader, warp: int, out: StreamBuilder) -> None:
    pc = int(w[0], 16)
    mask = int(w[1], 16)
    ndst = int(w[2])
    dests = [t.decode() for t in w[3 : 3 + ndst]]
    opcode = w[3 + ndst].decode()
    nsrc = int(w[4 + ndst])
    srcs = [t.decode() for t in w[5 + ndst : 5 + ndst + nsrc]]
    mem_width = int(w[5 + ndst + nsrc])
    info = oc.classify(opcode)
    cls = info.mem_class
    if mem_width <= 0 or cls == oc.NONE:
        out.add(warp, pc, opcode, dests, srcs)
        return
    addrs = addresses(int(w[6 + ndst + nsrc]), w[7 + ndst + nsrc :], mask)
    if cls in (oc.GENERIC_LD, oc.GENERIC_ST):
        cls = oc.generic_space(addrs[0] if addrs else 0, header.shmem_base, header.local_base, cls == oc.GENERIC_LD)
    kind, space = _KIND.get(cls, (MEM_NONE, ""))
    out.add(warp, pc, opcode, dests, srcs, kind, space, info.width, addrs)
