"""Fast trace scanner: whole chunks of lines parsed at once with numpy.

The decompressed body is read in chunks of several MB cut after an ``#END_TB`` line, so every
chunk holds whole thread blocks. Within a chunk, line and token boundaries come from two
vectorised byte comparisons (newlines, spaces). Fields are decoded without per-line Python:
hex fields (PC, active mask, addresses) through 8-byte unaligned windows of the buffer decoded
eight digits at a time with bit arithmetic; small decimal fields digit by digit; opcodes through
a lookup table keyed by a hash of the whole opcode text, classified once per distinct opcode.
Per-lane addresses of the three address modes are expanded into a lanes matrix whose sorted rows
give the distinct 32-byte sectors. Python-level work per chunk is proportional to the number of
distinct opcodes, blocks and warp types, not to the number of instructions.

Field decoding lives in :mod:`.fields`. The speed limit is numpy's per-element cost: every pass over the chunk's
instructions costs about 2–3 ns per instruction, and a line needs some 60 such passes (see benchmarks/).

Results equal those of :mod:`.scan_python` (the tests compare both on generated traces).
"""

from __future__ import annotations

import lzma
from pathlib import Path

import numpy as np

from simsample.sdk import FormatError
from simsample_accelsim import opcodes as oc
from simsample_accelsim.fields import (
    LOW_KEEP,
    MAX_REGS,
    BadLine,
    U,
    dec,
    expected_next,
    flat_sectors,
    hex_fields,
    last_token,
    mix,
    next_after,
    nibbles,
    popcount,
    ranks,
    resolve_generic,
    small,
    small_dec,
    windows,
)
from simsample_accelsim.kernelfeatures import LaunchFeatures, types_csr
from simsample_accelsim.traceg import TraceHeader, _check_block_count, _stream_header, open_stream
from simsample_accelsim.warmup import Footprint

CHUNK = 8 << 20
_PADDING = 8  # newlines before each chunk so that 8-byte windows never leave the buffer

_SP, _NL, _HASH = 32, 10, 35
_PAD_TOKENS = 8 + 2 * MAX_REGS + 40  # spaces after each chunk: token lookups never run off the end
_TABLE_BITS = 16
_ADDR_CLASSES = (*oc.SECTOR_CLASSES, oc.GENERIC_LD, oc.GENERIC_ST)
_FULL_MASK = np.frombuffer(b"ffffffff", dtype="<u8")[0]  # an all-active warp, as the tracer prints it
_HASH_K = np.array(
    [
        0x9E3779B97F4A7C15,
        0xC2B2AE3D27D4EB4F,
        0x165667B19E3779F9,
        0xD6E8FEB86659FD93,
        0xFF51AFD7ED558CCD,
        0xC4CEB9FE1A85EC53,
        0x27D4EB2F165667C5,
        0x94D049BB133111EB,
    ],
    dtype=np.uint64,
)


def scan_file(path: str | Path, chunk_size: int = CHUNK) -> tuple[TraceHeader, LaunchFeatures]:
    """Header and features of one trace file (plain or xz), streamed chunk by chunk."""
    header, scanner = _scan(path, chunk_size)
    return header, scanner.finish()


def _scan(path: str | Path, chunk_size: int, record_lines: bool = False) -> tuple[TraceHeader, _Scanner]:
    """Stream one trace through a scanner (which also records cache lines if asked)."""
    p = Path(path)
    try:
        with open_stream(p) as fh:
            header, head, end = _stream_header(fh, p)
            scanner = _Scanner(header, p, first_line=head[:end].count(b"\n") + 1)
            if record_lines:
                scanner.touched = [[], []]
                scanner.read_counts = []
            last = head[-1:]
            carry = head[end:]
            while True:
                block = fh.read(chunk_size)
                if block:
                    last = block[-1:]
                data = carry + block if carry else block
                cut = data.rfind(b"#END_TB")
                nl = data.find(b"\n", cut) if cut >= 0 else -1
                if nl >= 0:
                    scanner.chunk(data, nl + 1)
                    carry = data[nl + 1 :]
                else:
                    carry = data  # a thread block longer than a chunk: read on
                if not block:
                    break
    except (EOFError, lzma.LZMAError) as exc:
        raise FormatError(p, f"truncated or corrupt xz data ({exc})") from exc
    if last != b"\n":
        raise FormatError(p, "does not end with a newline (the simulator asserts on the last line)")
    if carry.strip():
        if b"#BEGIN_TB" in carry:
            raise FormatError(p, "the trace ends inside a thread block (truncated)")
        scanner.chunk(carry, len(carry))
    return header, scanner


class _Scanner:
    """Accumulates one launch's features over chunks of whole thread blocks."""

    def __init__(self, header: TraceHeader, path: Path, first_line: int) -> None:
        self.h = header
        self.path = path
        self.line0 = first_line  # file line number of the next chunk's first line
        self.off = (4 if header.tracer_version < 3 else 0) + (1 if header.lineinfo else 0)
        self.counts = dict.fromkeys(LaunchFeatures().counts, 0)
        self.col_of: dict[int, int] = {}  # block key -> column
        self.bbv = np.zeros(0, np.int64)
        self.types: dict[int, list] = {}  # warp hash -> [count, cols, vals]
        # opcode table: direct-mapped cache of hash -> id, and per-id classification
        self.tbl_hash = np.zeros(1 << _TABLE_BITS, np.uint64)
        self.tbl_id = np.full(1 << _TABLE_BITS, -1, np.int64)
        self.op_ids: dict[int, int] = {}
        self.op_cls = np.zeros(0, np.int64)
        self.op_width = np.zeros(0, np.int64)
        self.op_cf = np.zeros(0, bool)
        self.collisions: dict[int, int] = {}  # opcodes whose table slot another one holds
        self._lines: tuple[np.ndarray, np.ndarray] = (np.zeros(0, np.int64), np.zeros(0, np.int64))
        # cache lines touched (see scan_lines): None unless asked for, else [reads, writes] lists of arrays
        self.touched: list[list[np.ndarray]] | None = None
        self.read_counts: list[np.ndarray] = []  # per array of touched[0]: warp-level loads of each line
        self._spans: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # (rows of need, first byte, last byte)

    # --- one chunk -----------------------------------------------------------------------------
    def chunk(self, data: bytes, end: int) -> None:
        """Scan ``data[:end]`` (whole thread blocks). Tokens are assumed to be separated by single
        spaces (as the tracer writes them); a chunk that fails to parse is normalised (tabs,
        carriage returns, repeated or leading spaces, which the simulator's stream extraction
        tolerates) and scanned again before an error is reported."""
        body = memoryview(data)[:end]
        pad, tail = b"\n" * _PADDING, b" " * _PAD_TOKENS
        buf = b"".join((pad, body, tail))
        try:
            self._scan_buffer(buf)
        except BadLine as bad:
            plain = bytes(body)
            fixed = _normalise(plain)
            if fixed == plain:
                self._report(buf, bad)
            buf = b"".join((pad, fixed, tail))
            try:
                self._scan_buffer(buf)
            except BadLine as bad2:
                self._report(buf, bad2)

    def _scan_buffer(self, buf: bytes) -> None:
        self._spans = []  # a chunk that failed to parse and is retried leaves none behind
        a = np.frombuffer(buf, np.uint8)
        sp = np.flatnonzero(a == _SP)
        nl = np.flatnonzero(a[: len(a) - _PAD_TOKENS] == _NL)
        starts = np.empty(len(nl), np.int64)
        starts[0] = 0
        starts[1:] = nl[:-1] + 1
        self._lines = (starts, nl)
        self._chunk(buf, a, sp, starts, nl)
        self.line0 += len(nl) - _PADDING

    def _report(self, buf: bytes, bad: BadLine) -> None:
        starts, nl = self._lines
        lineno = self.line0 + int(bad.row) - _PADDING
        text = buf[starts[bad.row] : nl[bad.row]][:80].decode(errors="replace") if 0 <= bad.row < len(starts) else ""
        raise FormatError(
            self.path, bad.message + (f": {text!r}" if text else ""), line=lineno if bad.row >= 0 else None
        ) from None

    def _chunk(self, buf: bytes, a: np.ndarray, sp: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> None:
        row_of = np.flatnonzero(ends > starts)  # non-empty lines, as rows of the chunk
        st, en = starts[row_of], ends[row_of]
        c0 = a[st]
        if (c0 == _SP).any():  # leading spaces: the simulator's stream extraction skips them
            raise BadLine(int(row_of[np.flatnonzero(c0 == _SP)[0]]), "line starts with a space")
        is_hash = c0 == _HASH
        c1 = a[st[is_hash] + 1]
        hash_rows = np.flatnonzero(is_hash)
        begin = hash_rows[c1 == ord("B")]
        end = hash_rows[c1 == ord("E")]
        if len(begin) + len(end) != len(hash_rows):
            other = np.setdiff1d(hash_rows, np.concatenate([begin, end]))
            raise BadLine(int(row_of[other[0]]), "unexpected line in the trace body")
        is_warp = c0 == ord("w")
        is_insts = c0 == ord("i")
        is_tb = c0 == ord("t")
        # thread blocks: #BEGIN_TB and #END_TB alternate and enclose every other line
        if len(begin) != len(end) or (len(begin) and ((begin > end).any() or (begin[1:] < end[:-1]).any())):
            k = int(min(begin.min(initial=len(st)), end.min(initial=len(st))))
            raise BadLine(int(row_of[k]), "#BEGIN_TB and #END_TB do not alternate")
        inside = int((end - begin - 1).sum())
        if inside != len(st) - 2 * len(begin):
            outside = np.ones(len(st), bool)
            for b, e in zip(begin.tolist(), end.tolist()):
                outside[b : e + 1] = False
            raise BadLine(int(row_of[np.flatnonzero(outside)[0]]), "line outside a thread block")
        # warps: every instruction and insts line follows a "warp = w" line of its block
        warp_rows = np.flatnonzero(is_warp)
        insts_rows = np.flatnonzero(is_insts)
        is_inst = ~(is_hash | is_warp | is_insts | is_tb)
        ins = np.flatnonzero(is_inst)
        first_body = np.minimum(next_after(ins, begin), next_after(insts_rows, begin))
        first_warp = next_after(warp_rows, begin)
        if (first_body < np.minimum(first_warp, end)).any():
            k = int(np.flatnonzero(first_body < np.minimum(first_warp, end))[0])
            raise BadLine(int(row_of[first_body[k]]), "line before any 'warp =' line of its thread block")
        nseg = len(warp_rows)
        seg = np.cumsum(is_warp) - 1
        warp_ids = dec(a, *last_token(a, st[warp_rows], en[warp_rows]), row_of[warp_rows], "warp id")
        if nseg and warp_ids.max() >= self.h.warps_per_cta:
            k = int(np.flatnonzero(warp_ids >= self.h.warps_per_cta)[0])
            raise BadLine(
                int(row_of[warp_rows[k]]),
                f"warp id beyond the {self.h.warps_per_cta} warps of a {self.h.block_threads}-thread block",
            )
        declared = np.zeros(nseg, np.int64)
        if len(insts_rows):
            iseg_of = seg[insts_rows]
            if len(np.unique(iseg_of)) != len(iseg_of):
                raise BadLine(int(row_of[insts_rows[0]]), "a warp has more than one 'insts =' line")
            declared[iseg_of] = dec(
                a, *last_token(a, st[insts_rows], en[insts_rows]), row_of[insts_rows], "insts count"
            )
        iseg = seg[ins]
        have = np.bincount(iseg, minlength=nseg)
        if (have != declared).any():
            k = int(np.flatnonzero(have != declared)[0])
            raise BadLine(
                int(row_of[warp_rows[k]]),
                f"warp declares insts = {int(declared[k])} but has {int(have[k])} instruction lines",
            )
        if len(ins):  # the simulator sizes a warp's stream at its insts line: it must come first
            first = np.flatnonzero(np.r_[True, iseg[1:] != iseg[:-1]])
            first_ins = ins[first]
            insts_row = np.full(nseg, np.iinfo(np.int64).max)
            insts_row[seg[insts_rows]] = insts_rows
            early = first_ins < insts_row[iseg[first]]
            if early.any():
                raise BadLine(
                    int(row_of[first_ins[np.flatnonzero(early)[0]]]),
                    "instruction line before its warp's 'insts =' line",
                )
        if len(ins):
            self._instructions(buf, a, sp, st[ins], en[ins], row_of[ins], iseg, nseg)
        elif nseg:
            entry = self.types.setdefault(0, [0, np.zeros(0, np.int64), np.zeros(0, np.int64)])
            entry[0] += nseg
        # the chunk parsed: only now is the scanner's state changed (a failed chunk may be retried)
        self.counts["ctas"] += len(begin)
        self.counts["warps"] += nseg

    # --- instructions ------------------------------------------------------------------------
    def _instructions(self, buf, a, sp, st, en, rows, iseg, nseg) -> None:
        n = len(st)
        w8 = windows(buf)
        k0 = np.searchsorted(sp, st)
        o = self.off
        # fixed leading fields: PC, mask, destination count
        s_pc = st if o == 0 else sp[k0 + o - 1] + 1
        e_pc = sp[k0 + o]
        e_mask = sp[k0 + o + 1]
        e_ndst = sp[k0 + o + 2]
        if (e_ndst >= en).any():
            raise BadLine(int(rows[np.flatnonzero(e_ndst >= en)[0]]), "malformed instruction line (too few fields)")
        pc = hex_fields(w8, a, s_pc, e_pc, rows, "PC")
        if ((e_mask - e_pc) != 9).any():
            mask = hex_fields(w8, a, e_pc + 1, e_mask, rows, "active mask")
            lanes = popcount(mask & U(0xFFFFFFFF))
        else:  # eight hex digits: full warps compared as text, the rest counted from their nibbles
            words = w8[e_pc + 1]
            part = np.flatnonzero(words != _FULL_MASK)
            lanes = np.full(n, 32, np.int64)
            if len(part):
                lanes[part] = popcount(nibbles(words[part], rows[part], "active mask"))
            mask = None
        ndst = small(a, e_mask + 1, e_ndst, rows, "destination count")
        t_op = o + 3 + ndst
        s_op = sp[k0 + t_op - 1] + 1
        e_op = sp[k0 + t_op]
        e_nsrc = sp[k0 + t_op + 1]
        nsrc = small(a, e_op + 1, e_nsrc, rows, "source count")
        t_w = t_op + 2 + nsrc
        s_w = sp[k0 + t_w - 1] + 1
        if (s_w >= en).any():
            raise BadLine(int(rows[np.flatnonzero(s_w >= en)[0]]), "malformed instruction line (no memory width)")
        e_w = np.minimum(sp[k0 + t_w], en)
        mem_width = small_dec(a, s_w, e_w, rows, "memory width")

        op = self._opcodes(w8, a, s_op, e_op)
        cls = self.op_cls[op]
        cflow = self.op_cf[op]

        add = dict.fromkeys(self.counts, 0)
        add["warp_insts"] = n
        add["thread_insts"] = int(lanes.sum())
        add["control_flow"] = int(np.count_nonzero(cflow))

        need = np.flatnonzero(np.isin(cls, _ADDR_CLASSES) & (mem_width > 0) & (lanes > 0))
        if len(need):
            cls = cls.copy()
            m_mask = (
                mask[need]
                if mask is not None
                else hex_fields(w8, a, e_pc[need] + 1, e_mask[need], rows[need], "active mask")
            )
            first, sect = self._addresses(
                w8, a, sp, k0[need], en[need], t_w[need] + 1, m_mask, lanes[need], rows[need], self.op_width[op[need]]
            )
            sub = cls[need]
            gen = (sub == oc.GENERIC_LD) | (sub == oc.GENERIC_ST)
            if gen.any():
                sub[gen] = resolve_generic(first[gen], sub[gen] == oc.GENERIC_LD, self.h.shmem_base, self.h.local_base)
                cls[need] = sub
            for k in oc.SECTOR_CLASSES:
                sel = sub == k
                if sel.any():
                    add["sectors_" + oc.MEM_COUNTERS[k]] += int(sect[sel].sum())
            if self.touched is not None:
                self._touch(sub)
        gen_left = (cls == oc.GENERIC_LD) | (cls == oc.GENERIC_ST)
        if gen_left.any():  # generic access without addresses: resolved from address 0
            cls = cls.copy()
            cls[gen_left] = resolve_generic(
                np.zeros(int(gen_left.sum()), U), cls[gen_left] == oc.GENERIC_LD, self.h.shmem_base, self.h.local_base
            )
        per_class = np.bincount(cls, minlength=12)
        for k, name in oc.MEM_COUNTERS.items():
            add[name] += int(per_class[k])
        self._blocks(pc, cflow, iseg, nseg)  # cannot fail on input: commits BBVs and warp types
        for k, v in add.items():
            self.counts[k] += v

    def _opcodes(self, w8, a, s, e) -> np.ndarray:
        """Per-row opcode id (classifications in ``op_cls``/``op_width``/``op_cf``)."""
        L = e - s
        if (L <= 0).any():
            raise BadLine(-1, "empty opcode")
        nw = int(L.max() + 7) // 8
        h = (w8[s] & LOW_KEEP[np.minimum(L, 8)]) * _HASH_K[0] + L.astype(U)
        if nw > 1:
            long_ = np.flatnonzero(L > 8)
            ls, ll = s[long_], L[long_]
            hl = h[long_]
            for j in range(1, min(nw, len(_HASH_K))):
                hl += (w8[ls + 8 * j] & LOW_KEEP[np.clip(ll - 8 * j, 0, 8)]) * _HASH_K[j]
            if nw > len(_HASH_K):  # very long opcodes: the last 8 bytes as well
                hl += w8[e[long_] - 8] * _HASH_K[1] * U(3)
            h[long_] = hl
        slot = ((h * U(0x9E3779B97F4A7C15)) >> U(64 - _TABLE_BITS)).astype(np.int64)
        ids = self.tbl_id[slot]
        miss = np.flatnonzero((self.tbl_hash[slot] != h) | (ids < 0))
        if len(miss):
            ids = ids.copy()
            while len(miss):  # new opcodes: a few distinct strings among many rows
                uh, first = np.unique(h[miss[:256]], return_index=True)
                for hv, f in zip(uh.tolist(), first.tolist()):
                    r = miss[f]
                    i = self._op_id(hv, a[s[r] : e[r]].tobytes())
                    sl = int(slot[r])
                    if self.tbl_id[sl] < 0:
                        self.tbl_hash[sl], self.tbl_id[sl] = hv, i
                    elif int(self.tbl_hash[sl]) != hv:
                        self.collisions[hv] = i
                hm = h[miss]
                got = self.tbl_id[slot[miss]]
                ok = (self.tbl_hash[slot[miss]] == hm) & (got >= 0)
                for hv, i in self.collisions.items():
                    sel = hm == U(hv)
                    got[sel] = i
                    ok |= sel
                ids[miss[ok]] = got[ok]
                miss = miss[~ok]
        return ids

    def _op_id(self, hv: int, text: bytes) -> int:
        i = self.op_ids.get(hv)
        if i is None:
            info = oc.classify(text.decode(errors="replace"))
            i = self.op_ids[hv] = len(self.op_ids)
            self.op_cls = np.append(self.op_cls, info.mem_class)
            self.op_width = np.append(self.op_width, info.width)
            self.op_cf = np.append(self.op_cf, info.control_flow)
        return i

    def _addresses(self, w8, a, sp, k0, en, tm, mask, lanes, rows, width):
        """First active lane's address and distinct 32-byte sectors, per instruction.

        Addresses are decompressed as the simulator does, into flat per-lane arrays. A
        base+stride access over one run of lanes whose accesses overlap or touch
        (|stride| <= width) covers one contiguous byte range and is counted in closed form.
        """
        m = len(k0)
        s_mode = sp[k0 + tm - 1] + 1
        if (s_mode >= en).any():
            raise BadLine(int(rows[np.flatnonzero(s_mode >= en)[0]]), "malformed instruction line (no address mode)")
        mode = small_dec(a, s_mode, np.minimum(sp[k0 + tm], en), rows, "address mode")
        bad = (mode < 0) | (mode > 2)
        if bad.any():
            raise BadLine(int(rows[np.flatnonzero(bad)[0]]), "unknown address mode (expected 0, 1 or 2)")
        first = np.zeros(m, U)
        sect = np.zeros(m, np.int64)
        groups: list[tuple[np.ndarray, np.ndarray]] = []  # (rows of this call, flat lane addresses in row order)
        r0 = np.flatnonzero(mode == 0)
        if len(r0):  # one address per active lane
            owner = np.repeat(r0, lanes[r0])
            tk = np.repeat(k0[r0] + tm[r0], lanes[r0]) + ranks(lanes[r0])
            s = sp[tk] + 1
            e = np.minimum(sp[tk + 1], en[owner])
            if (e <= s).any():
                raise BadLine(int(rows[owner[np.flatnonzero(e <= s)[0]]]), "fewer addresses than active lanes")
            groups.append((r0, hex_fields(w8, a, s, e, rows[owner], "address")))
        r1 = np.flatnonzero(mode == 1)
        if len(r1):  # base and stride over the first run of active lanes; 0 after a gap
            kk = k0[r1] + tm[r1]
            if (sp[kk + 1] + 1 >= en[r1]).any():
                raise BadLine(
                    int(rows[r1][np.flatnonzero(sp[kk + 1] + 1 >= en[r1])[0]]), "malformed instruction line (no stride)"
                )
            base = hex_fields(w8, a, sp[kk] + 1, sp[kk + 1], rows[r1], "base address")
            stride = dec(a, sp[kk + 1] + 1, np.minimum(sp[kk + 2], en[r1]), rows[r1], "stride", signed=True)
            mk = mask[r1] & U(0xFFFFFFFF)
            shifted = mk // (mk & (~mk + U(1)))  # mask moved down to its lowest set bit
            run = popcount(shifted & ~(shifted + U(1)))  # length of the first run of ones
            first[r1] = base
            w = width[r1]
            # one span [lo, hi] stands for the lanes only when it does not wrap below address 0
            # (a negative stride from a low base): those lanes go one by one, wrapping as in C++
            below_zero = base.astype(np.int64) + (run.astype(np.int64) - 1) * stride < 0
            closed = (run == lanes[r1]) & (np.abs(stride) <= w) & (base < U(1 << 62)) & ~below_zero
            if closed.any():
                c = np.flatnonzero(closed)
                b = base[c].astype(np.int64)
                last = b + (run[c] - 1) * stride[c]
                lo = np.minimum(b, last)
                hi = np.maximum(b, last) + w[c]
                sect[r1[c]] = ((hi - 1) >> 5) - (lo >> 5) + 1
                if self.touched is not None:
                    self._spans.append((r1[c], lo.astype(U), (hi - 1).astype(U)))
            o = np.flatnonzero(~closed)
            if len(o):
                k = ranks(lanes[r1[o]])
                ob = np.repeat(base[o], lanes[r1[o]])
                addr = ob + k.astype(U) * np.repeat(stride[o], lanes[r1[o]]).astype(U)  # wraps like C++
                groups.append((r1[o], np.where(k < np.repeat(run[o], lanes[r1[o]]), addr, U(0))))
        r2 = np.flatnonzero(mode == 2)
        if len(r2):  # base, then one delta per further active lane
            kk = k0[r2] + tm[r2]
            base = hex_fields(w8, a, sp[kk] + 1, np.minimum(sp[kk + 1], en[r2]), rows[r2], "base address")
            n2 = lanes[r2]
            rank = ranks(n2)
            owner = np.repeat(np.arange(len(r2)), n2)
            deltas = np.zeros(len(rank), np.int64)
            later = np.flatnonzero(rank > 0)
            if len(later):
                tk = kk[owner[later]] + rank[later]  # delta j is the token after base + j - 1 others
                s = sp[tk] + 1
                e = np.minimum(sp[tk + 1], en[r2][owner[later]])
                if (e <= s).any():
                    raise BadLine(
                        int(rows[r2][owner[later][np.flatnonzero(e <= s)[0]]]), "fewer address deltas than active lanes"
                    )
                deltas[later] = dec(a, s, e, rows[r2][owner[later]], "address delta", signed=True)
            csum = np.cumsum(deltas)
            within = csum - csum[np.cumsum(n2) - n2][owner]  # running sum inside each instruction
            groups.append((r2, np.repeat(base, n2) + within.astype(U)))
        for r, addr in groups:
            counts = lanes[r]
            starts = np.cumsum(counts) - counts
            first[r] = addr[starts]
            sect[r] = flat_sectors(addr, counts, starts, width[r])
            if self.touched is not None:
                owner = np.repeat(r, counts)
                self._spans.append((owner, addr, addr + (np.repeat(width[r], counts).astype(U) - U(1))))
        return first, sect

    def _touch(self, sub: np.ndarray) -> None:
        """Add the cache lines of this chunk's global loads and stores (spans left by
        :meth:`_addresses`, rows indexed like ``sub``) to ``self.touched``."""
        assert self.touched is not None
        for owner, lo, hi in self._spans:
            kind = sub[owner]
            first, last = lo >> U(LINE_BITS), hi >> U(LINE_BITS)
            n = (last - first).astype(np.int64) + 1
            if (n > 1).any():  # an access that crosses line boundaries touches every line between
                # a wild stride over the address space: keep the start's neighbourhood; a last line
                # not above the first (zero width, a wrap past 2**64): the first line only
                n = np.clip(n, 1, 1 << 20)
                lines = np.repeat(first, n) + ranks(n).astype(U)
                kind = np.repeat(kind, n)
                owner = np.repeat(owner, n)
            else:
                lines = first
            for slot, k in ((0, oc.GLOBAL_LD), (1, oc.GLOBAL_ST)):
                sel = kind == k
                if sel.any():
                    if slot == 0:  # count each line once per instruction (lanes of one load share it)
                        o, ln = owner[sel], lines[sel]
                        order = np.lexsort((ln, o))
                        o, ln = o[order], ln[order]
                        first_of_pair = np.ones(len(ln), bool)
                        first_of_pair[1:] = (o[1:] != o[:-1]) | (ln[1:] != ln[:-1])
                        u, c = np.unique(ln[first_of_pair], return_counts=True)
                        self.touched[0].append(u)
                        self.read_counts.append(c)
                    else:
                        self.touched[1].append(np.unique(lines[sel]))
        self._spans = []

    # --- basic blocks and warp types ---------------------------------------------------------
    def _blocks(self, pc: np.ndarray, cflow: np.ndarray, iseg: np.ndarray, nseg: int) -> None:
        n = len(pc)
        pci = pc.astype(np.int64)
        start = np.ones(n, bool)
        if n > 1:
            start[1:] = (
                (iseg[1:] != iseg[:-1]) | cflow[:-1] | (pci[1:] != expected_next(pci[:-1], self.h.binary_version))
            )
        bstart = np.flatnonzero(start)
        blen = np.diff(np.append(bstart, n))
        bpc = pci[bstart]
        bseg = iseg[bstart]
        if (bpc >= 1 << 42).any() or (blen >= 1 << 21).any():
            raise FormatError(self.path, "PC or basic block too large for this scanner")
        key = (bpc << 21) | blen
        ukey, inv = np.unique(key, return_inverse=True)
        cols = np.array([self.col_of.setdefault(k, len(self.col_of)) for k in ukey.tolist()], np.int64)
        bcol = cols[inv.reshape(-1)]
        ncol = len(self.col_of)
        if len(self.bbv) < ncol:
            self.bbv = np.concatenate([self.bbv, np.zeros(ncol - len(self.bbv), np.int64)])
        self.bbv[:ncol] += np.bincount(bcol, weights=blen, minlength=ncol).astype(np.int64)
        # per-warp rows: (segment, column) -> instructions, then a hash per warp
        pair = bseg * ncol + bcol
        upair, pinv = np.unique(pair, return_inverse=True)
        pval = np.bincount(pinv.reshape(-1), weights=blen).astype(np.int64)
        pseg = upair // ncol
        pcol = upair % ncol
        hh = mix(pcol.astype(U) * U(0x9E3779B97F4A7C15) ^ pval.astype(U))
        seg_start = np.searchsorted(pseg, np.arange(nseg))
        seg_end = np.searchsorted(pseg, np.arange(nseg), side="right")
        has = seg_end > seg_start
        whash = np.zeros(nseg, U)
        if len(hh):
            whash[has] = np.add.reduceat(hh, seg_start[has])
        uh, first, cnt = np.unique(whash, return_index=True, return_counts=True)
        for hv, f, k in zip(uh.tolist(), first.tolist(), cnt.tolist()):
            entry = self.types.get(hv)
            if entry is None:
                lo, hi = int(seg_start[f]), int(seg_end[f])
                self.types[hv] = [k, pcol[lo:hi].copy(), pval[lo:hi].copy()]
            else:
                entry[0] += k

    # --- result ------------------------------------------------------------------------------
    def finish(self) -> LaunchFeatures:
        c = self.counts
        _check_block_count(self.path, self.h, c["ctas"])
        keys = np.array(sorted(self.col_of, key=self.col_of.__getitem__), dtype=np.int64)
        bbv_keys = np.stack([keys >> 21, keys & ((1 << 21) - 1)], axis=1) if len(keys) else np.zeros((0, 2), np.int64)
        feats = LaunchFeatures(counts=dict(c), bbv_keys=bbv_keys, bbv_values=self.bbv[: len(keys)].copy())
        rows = [(cols, vals) for _, cols, vals in self.types.values()]
        for name, arr in types_csr(rows, [k for k, _, _ in self.types.values()]).items():
            setattr(feats, name, arr)
        return feats


#: log2 of the cache line the footprint is counted in (128 bytes: the L1 and L2 line of Volta and later).
LINE_BITS = 7


def scan_footprint(path: str | Path, chunk_size: int = CHUNK) -> Footprint:
    """What :func:`scan_lines` gives, and how many warp-level loads read each read line.

    The counts tell a line that one streaming warp reads once from one that many warps of many
    CTAs wait on: on the hetero traces a sgemm that reads a relu's output cold loses about 3,000
    cycles, a relu that reads five times as many lines of a sgemm's output about 400."""
    _, scanner = _scan(path, chunk_size, record_lines=True)
    scanner.finish()  # the same checks as a features scan
    return _footprint(scanner)


def _footprint(scanner: _Scanner) -> Footprint:
    assert scanner.touched is not None
    if scanner.touched[0]:
        reads, where = np.unique(np.concatenate(scanner.touched[0]), return_inverse=True)
        counts = np.bincount(where, weights=np.concatenate(scanner.read_counts), minlength=len(reads)).astype(np.int64)
    else:
        reads, counts = np.zeros(0, U), np.zeros(0, np.int64)
    writes = np.unique(np.concatenate(scanner.touched[1])) if scanner.touched[1] else np.zeros(0, U)
    return Footprint(reads, writes, int(scanner.counts["warp_insts"]), counts)


def scan_file_and_footprint(path: str | Path, chunk_size: int = CHUNK) -> tuple[TraceHeader, LaunchFeatures, Footprint]:
    """:func:`scan_file` and :func:`scan_footprint` in one pass over the trace."""
    header, scanner = _scan(path, chunk_size, record_lines=True)
    feats = scanner.finish()
    return header, feats, _footprint(scanner)


def scan_lines(path: str | Path, chunk_size: int = CHUNK) -> tuple[np.ndarray, np.ndarray, int]:
    """The distinct 128-byte cache lines one launch's global loads and global stores touch (two
    sorted uint64 arrays of line numbers, address >> 7) and its warp instructions, streamed like
    :func:`scan_file`.

    This is the footprint the warm-up choice needs (which earlier launch last touched the lines a
    sampled launch reads); generic accesses count where they resolve to global memory."""
    _, scanner = _scan(path, chunk_size, record_lines=True)
    scanner.finish()  # the same checks as a features scan
    assert scanner.touched is not None
    reads, writes = (np.unique(np.concatenate(t)) if t else np.zeros(0, U) for t in scanner.touched)
    return reads, writes, int(scanner.counts["warp_insts"])


def _normalise(body: bytes) -> bytes:
    """No tabs or carriage returns, single spaces between tokens, none at line starts."""
    body = body.replace(b"\r", b"").replace(b"\t", b" ")
    while b"  " in body:
        body = body.replace(b"  ", b" ")
    body = body.replace(b"\n ", b"\n")
    return body[1:] if body.startswith(b" ") else body
