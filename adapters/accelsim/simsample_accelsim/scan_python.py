"""Reference trace scanner: one instruction line at a time, written to be obviously right.

It follows the simulator's body grammar (``trace_parser::get_next_threadblock_traces`` and
``inst_trace_t::parse_from_string``) and is the oracle the fast engine (:mod:`.scan_numpy`) is
tested against. It runs at a few MB/s; use it for small traces and for checking.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np

from simsample.sdk import FormatError
from simsample_accelsim import opcodes as oc
from simsample_accelsim.kernelfeatures import LaunchFeatures, types_csr
from simsample_accelsim.traceg import TraceHeader, _check_block_count, _header_end, open_stream, parse_header


def scan_file(path: str | Path) -> tuple[TraceHeader, LaunchFeatures]:
    """Header and features of one trace file (plain or xz), streamed."""
    p = Path(path)
    import lzma

    try:
        with open_stream(p) as fh:
            data = fh.read()
    except (EOFError, lzma.LZMAError) as exc:
        raise FormatError(p, f"truncated or corrupt xz data ({exc})") from exc
    end = _header_end(data, at_eof=True)
    if end is None:
        raise FormatError(p, "no trace body: the header is not followed by a '#' line and thread blocks")
    header = parse_header(data[:end], p, body_offset=end)
    if data and not data.endswith(b"\n"):
        raise FormatError(p, "does not end with a newline (the simulator asserts on the last line)")
    first_line = data[:end].count(b"\n") + 1
    return header, scan_lines(header, data[end:].split(b"\n"), p, first_line=first_line)


def _lanes(mask: int) -> list[int]:
    return [i for i in range(32) if mask >> i & 1]


def addresses(mode: int, toks: list[bytes], mask: int) -> list[int]:
    """Per-active-lane addresses, decompressed as the simulator does (``inst_memadd_info_t``)."""
    lanes = _lanes(mask)
    if not lanes:
        return []
    if mode == 0:
        if len(toks) < len(lanes):
            raise ValueError("fewer addresses than active lanes")
        return [int(t, 16) for t in toks[: len(lanes)]]
    if mode == 1:
        base, stride = int(toks[0], 16), int(toks[1])
        out, run, prev = [], True, None
        for lane in lanes:
            if prev is not None and lane != prev + 1:
                run = False  # after the first gap in the mask the simulator leaves address 0
            out.append(base + stride * len(out) if run else 0)
            prev = lane
        return [a & 0xFFFFFFFFFFFFFFFF for a in out]
    if mode == 2:
        if len(toks) < len(lanes):
            raise ValueError("fewer address deltas than active lanes")
        addr = int(toks[0], 16)
        out = [addr]
        for t in toks[1 : len(lanes)]:
            addr += int(t)
            out.append(addr)
        return [a & 0xFFFFFFFFFFFFFFFF for a in out]
    raise ValueError(f"unknown address mode {mode}")


def sectors(addrs: list[int], width: int) -> int:
    """Distinct 32-byte sectors touched by the lanes' accesses of ``width`` bytes."""
    found = set()
    for a in addrs:
        found.add(a >> 5)
        found.add((a + width - 1) >> 5)
    return len(found)


def scan_lines(header: TraceHeader, lines: Iterable[bytes], path: Path, first_line: int = 1) -> LaunchFeatures:
    """Features of a trace body given as lines (without newlines)."""
    feats = LaunchFeatures()
    c = feats.counts
    off = (4 if header.tracer_version < 3 else 0) + (1 if header.lineinfo else 0)
    bv = header.binary_version
    in_tb = False
    warp: int | None = None
    declared = 0
    stream: list[tuple[int, bool]] = []  # (pc, control flow) of the current warp
    bbv: dict[tuple[int, int], int] = {}
    types: dict[tuple[tuple[tuple[int, int], int], ...], int] = {}

    def end_warp(lineno: int) -> None:
        nonlocal warp
        if warp is None:
            return
        if len(stream) != declared:
            raise FormatError(
                path, f"warp {warp} declares insts = {declared} but has {len(stream)} instruction lines", line=lineno
            )
        row: dict[tuple[int, int], int] = {}
        start = 0
        for i in range(1, len(stream) + 1):
            if i == len(stream) or stream[i - 1][1] or stream[i][0] != oc.expected_next_pc(stream[i - 1][0], bv):
                key = (stream[start][0], i - start)
                row[key] = row.get(key, 0) + (i - start)
                start = i
        for key, v in row.items():
            bbv[key] = bbv.get(key, 0) + v
        sig = tuple(sorted(row.items()))
        types[sig] = types.get(sig, 0) + 1
        c["warps"] += 1
        stream.clear()
        warp = None

    lineno = first_line - 1
    for raw in lines:
        lineno += 1
        line = raw.rstrip(b"\r")
        words = line.split()
        if not words:
            continue
        w0 = words[0]
        if w0 == b"#BEGIN_TB":
            if in_tb:
                raise FormatError(path, "#BEGIN_TB before the previous thread block's #END_TB", line=lineno)
            in_tb = True
            continue
        if w0 == b"#END_TB":
            if not in_tb:
                raise FormatError(path, "#END_TB without #BEGIN_TB", line=lineno)
            end_warp(lineno)
            in_tb = False
            c["ctas"] += 1
            continue
        if not in_tb:
            raise FormatError(path, f"line outside a thread block: {line[:60].decode(errors='replace')!r}", line=lineno)
        if w0 == b"thread" and len(words) > 1 and words[1] == b"block":
            continue
        if w0 == b"warp":
            end_warp(lineno)
            warp = int(words[-1])
            if warp >= header.warps_per_cta:
                raise FormatError(
                    path, f"warp {warp} does not exist in a block of {header.block_threads} threads", line=lineno
                )
            declared = 0
            continue
        if w0 == b"insts":
            if warp is None:
                raise FormatError(path, "insts line before any warp line", line=lineno)
            declared = int(words[-1])
            continue
        if w0.startswith(b"#"):
            raise FormatError(path, f"unexpected line {line[:60].decode(errors='replace')!r}", line=lineno)
        if warp is None:
            raise FormatError(path, "instruction line before any warp line", line=lineno)
        try:
            _instruction(words[off:], header, feats, stream)
        except (ValueError, IndexError) as exc:
            raise FormatError(
                path, f"malformed instruction line ({exc}): {line[:80].decode(errors='replace')!r}", line=lineno
            ) from None
    if in_tb:
        raise FormatError(path, "the trace ends inside a thread block (truncated)")
    _check_block_count(path, header, c["ctas"])
    keys = sorted(bbv)
    col = {k: i for i, k in enumerate(keys)}
    feats.bbv_keys = np.array(keys, dtype=np.int64).reshape(-1, 2)
    feats.bbv_values = np.array([bbv[k] for k in keys], dtype=np.int64)
    rows = [(np.array([col[k] for k, _ in sig], np.int64), np.array([v for _, v in sig], np.int64)) for sig in types]
    for name, arr in types_csr(rows, list(types.values())).items():
        setattr(feats, name, arr)
    return feats


def _instruction(w: list[bytes], header: TraceHeader, feats: LaunchFeatures, stream: list[tuple[int, bool]]) -> None:
    c = feats.counts
    pc = int(w[0], 16)
    mask = int(w[1], 16)
    ndst = int(w[2])
    opcode = w[3 + ndst].decode()
    nsrc = int(w[4 + ndst])
    mem_width = int(w[5 + ndst + nsrc])
    info = oc.classify(opcode)
    stream.append((pc, info.control_flow))
    c["warp_insts"] += 1
    c["thread_insts"] += bin(mask).count("1")
    c["control_flow"] += int(info.control_flow)
    cls = info.mem_class
    addrs: list[int] = []
    if mem_width > 0 and cls != oc.NONE:
        mode = int(w[6 + ndst + nsrc])
        addrs = addresses(mode, w[7 + ndst + nsrc :], mask)
    if cls in (oc.GENERIC_LD, oc.GENERIC_ST):
        first = addrs[0] if addrs else 0
        cls = oc.generic_space(first, header.shmem_base, header.local_base, cls == oc.GENERIC_LD)
    name = oc.MEM_COUNTERS.get(cls)
    if name is None:
        return
    c[name] += 1
    if cls in oc.SECTOR_CLASSES:
        c["sectors_" + name] += sectors(addrs, info.width)
