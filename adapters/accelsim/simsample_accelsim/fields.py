"""Vectorised decoding of trace fields: many tokens of a text buffer at once, no Python loops.

Hex fields (PCs, active masks, addresses) are decoded eight digits at a time from 8-byte
unaligned windows of the buffer with bit arithmetic (SWAR), and checked to be hex digits;
decimal fields one or two digits at a time, or eight at a time for long ones. Every helper
takes the token boundaries ``[s, e)`` and the rows they belong to, and raises :class:`BadLine`
naming the first bad row, so that the scanner can report the file's line.
"""

from __future__ import annotations

import numpy as np

from simsample_accelsim import opcodes as oc

U = np.uint64
ONES = U(0xFFFFFFFFFFFFFFFF)
_LO_NIB = U(0x0F0F0F0F0F0F0F0F)
_BYTE1 = U(0x0101010101010101)
_HIGH = U(0x8080808080808080)
_LOW7 = U(0x7F7F7F7F7F7F7F7F)
_SP, _DASH = 32, 45
MAX_REGS = 16  # register operands per instruction we accept (the simulator allows fewer)
#: masks keeping the low / high k bytes of a little-endian word
LOW_KEEP = np.array([0] + [(1 << (8 * k)) - 1 for k in range(1, 8)] + [0xFFFFFFFFFFFFFFFF], dtype=np.uint64)
HIGH_KEEP = np.array(
    [0] + [(0xFFFFFFFFFFFFFFFF << (8 * (8 - k))) & 0xFFFFFFFFFFFFFFFF for k in range(1, 9)], dtype=np.uint64
)


class BadLine(Exception):
    """A malformed line: its row in the scanned buffer and what is wrong."""

    def __init__(self, row: int, message: str) -> None:
        super().__init__(message)
        self.row = row
        self.message = message


def windows(buf: bytes) -> np.ndarray:
    """``w[i]`` = the 8 bytes of ``buf`` starting at ``i``, as a little-endian uint64 (a view)."""
    return np.ndarray((len(buf) - 7,), dtype="<u8", buffer=buf, strides=(1,))


def next_after(sorted_rows: np.ndarray, after: np.ndarray) -> np.ndarray:
    """For each value in ``after``, the first of ``sorted_rows`` above it (a large sentinel if none)."""
    ext = np.append(sorted_rows, np.iinfo(np.int64).max)
    return ext[np.searchsorted(sorted_rows, after, side="right")]


def last_token(a: np.ndarray, s: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start and end of the last space-separated token of each line (``warp = N``, ``insts = K``)."""
    if not len(s):
        return s, e
    width = int((e - s).max())
    idx = s[:, None] + np.arange(width)[None, :]
    spaces = (a[np.minimum(idx, len(a) - 1)] == _SP) & (idx < e[:, None])
    pos = np.where(spaces, np.arange(width)[None, :], -1).max(axis=1)
    return np.where(pos < 0, e, s + pos + 1), e


def nibbles(v: np.ndarray, rows: np.ndarray, what: str, keep: np.ndarray | None = None) -> np.ndarray:
    """Eight ASCII hex digits per uint64 (little-endian bytes) -> one nibble per byte; checks the digits."""
    if keep is not None:
        v = v & keep
    v7 = v & _LOW7
    ascii_ = ~v & _HIGH
    digit = (v7 + U(0x5050505050505050)) & ~(v7 + U(0x4646464646464646)) & _HIGH
    low = v7 | U(0x2020202020202020)
    alpha = (low + U(0x1F1F1F1F1F1F1F1F)) & ~(low + U(0x1919191919191919)) & _HIGH
    ok = (digit | alpha) & ascii_
    expect = _HIGH if keep is None else keep & _HIGH
    bad = ok != expect
    if bad.any():
        raise BadLine(int(rows[np.flatnonzero(bad)[0]]), f"malformed {what} (not hexadecimal)")
    return (v & _LO_NIB) + U(9) * ((v >> U(6)) & _BYTE1)


def pack(nib: np.ndarray) -> np.ndarray:
    """Nibble per byte (first digit in the lowest byte) -> the 32-bit value of the eight digits."""
    x = ((nib & U(0x000F000F000F000F)) << U(4)) | ((nib >> U(8)) & U(0x000F000F000F000F))
    x = ((x & U(0x000000FF000000FF)) << U(8)) | ((x >> U(16)) & U(0x000000FF000000FF))
    return ((x & U(0xFFFF)) << U(16)) | ((x >> U(32)) & U(0xFFFF))


def hex_fields(w8: np.ndarray, a: np.ndarray, s: np.ndarray, e: np.ndarray, rows: np.ndarray, what: str) -> np.ndarray:
    """Hex tokens [s, e) (optional 0x prefix, up to 16 digits) as uint64."""
    if not len(s):
        return np.zeros(0, U)
    x = (e - s >= 2) & (a[s] == ord("0")) & ((a[s + 1] | 0x20) == ord("x"))
    s = s + 2 * x
    L = e - s
    lmin, lmax = int(L.min()), int(L.max())
    if lmin < 1 or lmax > 16:
        raise BadLine(int(rows[np.flatnonzero((L < 1) | (L > 16))[0]]), f"malformed {what}")
    # the low eight digits end at the token's end; keep only the token's own bytes of the window
    keep = HIGH_KEEP[min(lmin, 8)] if lmin == lmax or lmin >= 8 else HIGH_KEEP[np.minimum(L, 8)]
    out = pack(nibbles(w8[e - 8], rows, what, None if lmin >= 8 else keep))
    if lmax > 8:
        long_ = slice(None) if lmin > 8 else np.flatnonzero(L > 8)
        Ll = L[long_]
        keep = None if lmin == 16 else HIGH_KEEP[Ll - 8] if lmin != lmax else HIGH_KEEP[lmax - 8]
        hi = pack(nibbles(w8[e[long_] - 16], rows[long_], what, keep))
        out[long_] |= hi << U(32)
    return out


def small(a: np.ndarray, s: np.ndarray, e: np.ndarray, rows: np.ndarray, what: str) -> np.ndarray:
    """Register counts: one decimal digit almost always."""
    if len(s) and ((e - s) == 1).all():
        v = a[s].astype(np.int64) - 48
        if ((v < 0) | (v > 9)).any():
            raise BadLine(int(rows[np.flatnonzero((v < 0) | (v > 9))[0]]), f"malformed {what}")
        return v
    v = dec(a, s, e, rows, what)
    if len(v) and v.max() > MAX_REGS:
        raise BadLine(int(rows[int(np.argmax(v))]), f"{what} above {MAX_REGS}")
    return v


def small_dec(a: np.ndarray, s: np.ndarray, e: np.ndarray, rows: np.ndarray, what: str) -> np.ndarray:
    """Unsigned decimal fields that are one digit almost always (fast path), else :func:`dec`."""
    if len(s) and ((e - s) == 1).all():
        v = a[s].astype(np.int64) - 48
        if ((v < 0) | (v > 9)).any():
            raise BadLine(int(rows[np.flatnonzero((v < 0) | (v > 9))[0]]), f"malformed {what}")
        return v
    return dec(a, s, e, rows, what)


def dec(a: np.ndarray, s: np.ndarray, e: np.ndarray, rows: np.ndarray, what: str, signed: bool = False) -> np.ndarray:
    """Decimal tokens [s, e) as int64 (with a leading '-' when ``signed``), digit column by column."""
    if not len(s):
        return np.zeros(0, np.int64)
    neg = None
    if signed:
        neg = a[s] == _DASH
        s = s + neg
    L = e - s
    if (L < 1).any() or (L > 18).any():
        raise BadLine(int(rows[np.flatnonzero((L < 1) | (L > 18))[0]]), f"malformed {what}")
    W = int(L.max())
    if W <= 2:  # one or two digits: the common case, without a loop
        d1 = a[e - 1] - np.uint8(48)  # uint8: anything but a digit wraps above 9
        two = L == 2
        d0 = np.where(two, a[e - 2] - np.uint8(48), np.uint8(0))
        bad = (d1 > 9) | (d0 > 9)
        if bad.any():
            raise BadLine(int(rows[np.flatnonzero(bad)[0]]), f"malformed {what}")
        v = d0.astype(np.int64) * 10 + d1
        return np.where(neg, -v, v) if neg is not None else v
    if W <= 16:  # eight digits at a time from 8-byte windows
        v = dec8(a, e, np.minimum(L, 8), rows, what)
        long_ = np.flatnonzero(L > 8)
        if len(long_):
            v[long_] += dec8(a, e[long_] - 8, L[long_] - 8, rows[long_], what) * 100_000_000
        return np.where(neg, -v, v) if neg is not None else v
    v = np.zeros(len(s), np.int64)
    bad = np.zeros(len(s), bool)
    for j in range(W):
        pos = e - W + j
        d = a[np.maximum(pos, 0)].astype(np.int64) - 48
        use = pos >= s
        bad |= use & ((d < 0) | (d > 9))
        v = np.where(use, v * 10 + d, v)
    if bad.any():
        raise BadLine(int(rows[np.flatnonzero(bad)[0]]), f"malformed {what}")
    return np.where(neg, -v, v) if neg is not None else v


def dec8(a: np.ndarray, e: np.ndarray, n: np.ndarray, rows: np.ndarray, what: str) -> np.ndarray:
    """The ``n`` (1..8) decimal digits ending before ``e``, eight at a time (SWAR)."""
    w8 = windows(a.data)
    keep = HIGH_KEEP[n]
    v = (w8[e - 8] & keep) | (U(0x3030303030303030) & ~keep)  # bytes before the token read as '0'
    hi_nib = U(0xF0F0F0F0F0F0F0F0)
    bad = ((v & hi_nib) != U(0x3030303030303030)) | (((v + U(0x0606060606060606)) & hi_nib) != U(0x3030303030303030))
    if bad.any():
        raise BadLine(int(rows[np.flatnonzero(bad)[0]]), f"malformed {what}")
    v = v & U(0x0F0F0F0F0F0F0F0F)
    v = (v * U(2561)) >> U(8)  # pairs of digits: first digit (low byte) x 10 + second
    v = ((v & U(0x00FF00FF00FF00FF)) * U(6553601)) >> U(16)
    v = ((v & U(0x0000FFFF0000FFFF)) * U(42949672960001)) >> U(32)
    return v.astype(np.int64)


def popcount(x: np.ndarray) -> np.ndarray:
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(x).astype(np.int64)
    x = x.astype(U)
    x = x - ((x >> U(1)) & U(0x5555555555555555))
    x = (x & U(0x3333333333333333)) + ((x >> U(2)) & U(0x3333333333333333))
    x = (x + (x >> U(4))) & U(0x0F0F0F0F0F0F0F0F)
    return ((x * U(0x0101010101010101)) >> U(56)).astype(np.int64)


def mix(x: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser (a well-spread 64-bit hash of each value)."""
    x = x.astype(U)
    x = (x ^ (x >> U(30))) * U(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> U(27))) * U(0x94D049BB133111EB)
    return x ^ (x >> U(31))


def expected_next(pc: np.ndarray, binary_version: int) -> np.ndarray:
    if binary_version >= 70 or binary_version == 0:
        return pc + 16
    group = 32 if binary_version >= 50 else 64
    nxt = pc + 8
    return np.where(nxt % group == 0, nxt + 8, nxt)


def resolve_generic(first: np.ndarray, load: np.ndarray, shmem_base: int, local_base: int) -> np.ndarray:
    first = first.astype(U)
    sh = np.where(load, oc.SHARED_LD, oc.SHARED_ST)
    if shmem_base == 0 or local_base == 0:
        return sh
    shared = (first >= U(shmem_base)) & (first < U(local_base))
    local = (first >= U(local_base)) & (first < U(local_base + oc.LOCAL_MEM_SIZE_MAX))
    return np.where(
        shared,
        sh,
        np.where(local, np.where(load, oc.LOCAL_LD, oc.LOCAL_ST), np.where(load, oc.GLOBAL_LD, oc.GLOBAL_ST)),
    )


def ranks(counts: np.ndarray) -> np.ndarray:
    """0, 1, ..., c-1 for each count c, concatenated."""
    total = int(counts.sum())
    starts = np.cumsum(counts) - counts
    return np.arange(total) - np.repeat(starts, counts)


def flat_sectors(addr: np.ndarray, counts: np.ndarray, starts: np.ndarray, width: np.ndarray) -> np.ndarray:
    """Distinct 32-byte sectors per instruction from its lanes' addresses (flat, row after row).

    The lanes go into a (rows x 32) matrix whose sorted rows are counted: numpy sorts such short
    rows faster than any sort-free pass over the flat lanes (measured).
    """
    m = len(counts)
    valid = np.arange(32)[None, :] < counts[:, None]
    s0 = np.full((m, 32), ONES, U)
    s0[valid] = addr >> U(5)
    end = (addr + (np.repeat(width, counts).astype(U) - U(1))) >> U(5)
    if np.array_equal(end, s0[valid]):  # no access crosses a sector boundary
        both = s0
    else:
        s1 = np.full((m, 32), ONES, U)
        s1[valid] = end
        both = np.concatenate([s0, s1], axis=1)
    both.sort(axis=1)
    new = np.ones(both.shape, bool)
    new[:, 1:] = both[:, 1:] != both[:, :-1]
    return (new & (both != ONES)).sum(axis=1)
