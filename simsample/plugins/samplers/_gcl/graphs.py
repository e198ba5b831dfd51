"""GCL-Sampler's heterogeneous relational graph of a launch (``gcl-sampler.txt`` §3.2), with numpy.

Per warp, and the launch's graph is the union of its warps' graphs:

- **instruction nodes**, one per executed instruction, token = the opcode (``LDG.E.128``), with
  its PC normalised by the largest PC of the launch (the positional part of its features);
- **pseudo nodes**, one memory reference per memory instruction, token ``MEMREF.<space>.<kind>``:
  the operation inside the instruction that touches memory;
- **variable nodes**, versioned: a register or a memory location gets a new node at every write,
  and a read connects to the latest version (or to the location's initial version, made once, when
  it is read before any write). Tokens ``REG.<class>`` (``R``, ``UR``, ``P``...) and
  ``MEM.<space>``. A memory location is the 128-byte line of the first active lane's address.
  Initial versions carry eight statistics of the values observed in the trace (mean, std, median,
  min, max, p25, p75, skewness), other versions zeros, as the paper does: the network
  "computes" them from their producers. Accel-Sim traces record addresses but no register values,
  so registers' statistics are zero and a memory location's are those of the lane offsets of the
  loads that read it (``sign · log1p(|address − first lane's address| / width)``): the access
  pattern, coalesced, strided or scattered.

Relations (``RELATIONS``): ``control`` from each instruction to the next one of its warp;
``use`` from a variable version to the instruction (or memory reference) that reads it; ``def``
from an instruction (or memory reference) to the version it writes; ``mem`` between an
instruction and its memory reference (reference → instruction for a load's result, instruction →
reference for a store, both for an atomic).

Versioning is done on whole arrays: read and write events are sorted by (warp, location,
instruction, reads first), and a running maximum over write positions gives each read its latest
write, so the cost is a few sorts of the launch's events.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from simsample.sdk import MEM_ATOMIC, MEM_KINDS, MEM_LOAD, MEM_STORE, KernelStream

RELATIONS = ("control", "use", "def", "mem")
CONTROL, USE, DEF, MEM = range(4)
KINDS = ("instruction", "variable", "pseudo")
INSTRUCTION, VARIABLE, PSEUDO = range(3)
STATS = ("mean", "std", "median", "min", "max", "p25", "p75", "skewness")
#: bytes of the memory location a memory variable stands for
LINE_BYTES = 128
#: bumped whenever what a graph holds changes (part of the cache key)
GRAPH_VERSION = "1"


@dataclass
class KernelGraph:
    """One launch's graph: node arrays, typed edges, and the token strings nodes index."""

    kind: np.ndarray  # int8 (N)
    token: np.ndarray  # int32 (N), index into tokens
    pos: np.ndarray  # float32 (N): normalised PC of instruction nodes, else 0
    stats: np.ndarray  # float32 (N × 8): variable nodes' value statistics, else 0
    warp: np.ndarray  # int32 (N): the warp each node belongs to
    edge_index: np.ndarray  # int64 (2 × E): source, target
    edge_type: np.ndarray  # int8 (E), index into RELATIONS
    tokens: list[str] = field(default_factory=list)

    @property
    def n_nodes(self) -> int:
        return len(self.kind)

    @property
    def n_edges(self) -> int:
        return len(self.edge_type)

    @property
    def n_warps(self) -> int:
        return int(self.warp.max()) + 1 if len(self.warp) else 0

    def to_bytes(self) -> bytes:
        buf = io.BytesIO()
        np.savez_compressed(
            buf,
            kind=self.kind,
            token=self.token,
            pos=self.pos,
            stats=self.stats,
            warp=self.warp,
            edge_index=self.edge_index,
            edge_type=self.edge_type,
            tokens=np.array(self.tokens, dtype=str),
        )
        return buf.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> KernelGraph:
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            return cls(
                kind=z["kind"],
                token=z["token"],
                pos=z["pos"],
                stats=z["stats"],
                warp=z["warp"],
                edge_index=z["edge_index"],
                edge_type=z["edge_type"],
                tokens=[str(t) for t in z["tokens"]],
            )

    @classmethod
    def load(cls, path: str | Path) -> KernelGraph:
        return cls.from_bytes(Path(path).read_bytes())


def _csr_rows(ptr: np.ndarray) -> np.ndarray:
    """The row of every element of a CSR array."""
    return np.repeat(np.arange(len(ptr) - 1, dtype=np.int64), np.diff(ptr))


def _reg_class(name: str) -> str:
    """``R12`` → ``R``, ``UR4`` → ``UR``, ``P0`` → ``P``: the register file a name lives in."""
    return name.rstrip("0123456789") or name


def _versions(key: np.ndarray, inst: np.ndarray, is_write: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For events (location ``key``, instruction ``inst``, read or write), the write event that
    each read sees (its index into the events, or -1 when the location was not written before).

    Returns ``(reads, seen)``: the read events' indices and the write event each one sees.
    """
    order = np.lexsort((is_write, inst, key))  # by key, then instruction, reads before writes
    k = key[order]
    w = is_write[order]
    last = np.maximum.accumulate(np.where(w, np.arange(len(order)), -1)) if len(order) else np.zeros(0, np.int64)
    reads_sorted = np.flatnonzero(~w)
    lw = last[reads_sorted]
    ok = (lw >= 0) & (k[np.maximum(lw, 0)] == k[reads_sorted])
    seen = np.where(ok, order[np.maximum(lw, 0)], -1)
    return order[reads_sorted], seen


def _group_stats(group: np.ndarray, values: np.ndarray, n_groups: int) -> np.ndarray:
    """The eight :data:`STATS` of ``values`` per group (zeros for empty groups)."""
    out = np.zeros((n_groups, len(STATS)), np.float64)
    if len(values) == 0:
        return out
    order = np.lexsort((values, group))
    g, v = group[order], values[order]
    counts = np.bincount(g, minlength=n_groups)
    start = np.zeros(n_groups, np.int64)
    np.cumsum(counts[:-1], out=start[1:])
    have = counts > 0
    c = np.maximum(counts, 1)
    mean = np.bincount(g, weights=v, minlength=n_groups) / c
    d = v - mean[g]
    var = np.bincount(g, weights=d * d, minlength=n_groups) / c
    std = np.sqrt(var)
    m3 = np.bincount(g, weights=d * d * d, minlength=n_groups) / c
    skew = np.divide(m3, std**3, out=np.zeros(n_groups), where=std > 1e-12)

    def quantile(q: float) -> np.ndarray:
        idx = start + np.floor(q * (c - 1)).astype(np.int64)
        return np.where(have, v[np.minimum(idx, len(v) - 1)], 0.0)

    out[:, 0] = mean
    out[:, 1] = std
    out[:, 2] = quantile(0.5)
    out[:, 3] = quantile(0.0)
    out[:, 4] = np.where(have, v[np.minimum(start + c - 1, len(v) - 1)], 0.0)
    out[:, 5] = quantile(0.25)
    out[:, 6] = quantile(0.75)
    out[:, 7] = skew
    out[~have] = 0.0
    return out


def build_graph(s: KernelStream) -> KernelGraph:
    """The launch graph of a stream (see the module's docstring)."""
    n = len(s)
    tokens: dict[str, int] = {}

    def tok(names: list[str]) -> np.ndarray:
        return np.array([tokens.setdefault(t, len(tokens)) for t in names], dtype=np.int32)

    kinds: list[np.ndarray] = []
    toks: list[np.ndarray] = []
    warps: list[np.ndarray] = []
    stats: list[np.ndarray] = []
    edges: list[tuple[np.ndarray, np.ndarray, int]] = []
    next_id = 0

    def add_nodes(kind: int, token: np.ndarray, warp: np.ndarray, stat: np.ndarray | None = None) -> np.ndarray:
        nonlocal next_id
        m = len(token)
        kinds.append(np.full(m, kind, np.int8))
        toks.append(token.astype(np.int32))
        warps.append(warp.astype(np.int32))
        stats.append(stat.astype(np.float32) if stat is not None else np.zeros((m, len(STATS)), np.float32))
        ids = np.arange(next_id, next_id + m, dtype=np.int64)
        next_id += m
        return ids

    # instruction nodes and control flow
    op_tok = tok(list(s.opcodes))
    inst = add_nodes(INSTRUCTION, op_tok[s.opcode] if n else np.zeros(0, np.int32), s.warp)
    same = s.warp[1:] == s.warp[:-1] if n > 1 else np.zeros(0, bool)
    edges.append((inst[:-1][same], inst[1:][same], CONTROL))
    pos = np.zeros(n, np.float32)
    if n:
        pos = (s.pc / float(s.pc.max() + 1)).astype(np.float32)

    # memory references (pseudo nodes)
    mem_rows = np.flatnonzero(s.mem > 0)
    combo = s.space[mem_rows].astype(np.int64) * len(MEM_KINDS) + s.mem[mem_rows]
    uniq, which = np.unique(combo, return_inverse=True)
    ref_tok = tok([f"MEMREF.{s.spaces[c // len(MEM_KINDS)]}.{MEM_KINDS[c % len(MEM_KINDS)]}" for c in uniq.tolist()])
    ref = add_nodes(PSEUDO, ref_tok[which.ravel()] if len(uniq) else np.zeros(0, np.int32), s.warp[mem_rows])
    kind = s.mem[mem_rows]
    loads = (kind == MEM_LOAD) | (kind == MEM_ATOMIC)
    stores = (kind == MEM_STORE) | (kind == MEM_ATOMIC)
    edges.append((ref[loads], inst[mem_rows[loads]], MEM))
    edges.append((inst[mem_rows[stores]], ref[stores], MEM))

    # register versions
    zero = np.array([r in s.zero_regs for r in s.regs], dtype=bool)
    n_regs = max(1, len(s.regs))
    r_rows, r_regs = _csr_rows(s.src_ptr), s.src.astype(np.int64)
    w_rows, w_regs = _csr_rows(s.dst_ptr), s.dst.astype(np.int64)
    if len(zero):
        keep = ~zero[r_regs] if len(r_regs) else np.zeros(0, bool)
        r_rows, r_regs = r_rows[keep], r_regs[keep]
        keep = ~zero[w_regs] if len(w_regs) else np.zeros(0, bool)
        w_rows, w_regs = w_rows[keep], w_regs[keep]
    reg_tok = tok([f"REG.{_reg_class(r)}" for r in s.regs]) if s.regs else np.zeros(0, np.int32)
    _connect(
        add_nodes,
        edges,
        inst,
        inst,
        read_rows=r_rows,
        read_key=s.warp[r_rows].astype(np.int64) * n_regs + r_regs,
        write_rows=w_rows,
        write_key=s.warp[w_rows].astype(np.int64) * n_regs + w_regs,
        token_of_key=lambda key: reg_tok[key % n_regs],
        warp_of_key=lambda key: key // n_regs,
        initial_stats=None,
    )

    # memory versions: the 128-byte line of the first active lane, per warp and space
    has_addr = np.diff(s.addr_ptr)[mem_rows] > 0
    rows = mem_rows[has_addr]
    refs = ref[has_addr]
    first = s.addr[s.addr_ptr[rows]] if len(rows) else np.zeros(0, np.uint64)
    line = (first // np.uint64(LINE_BYTES)).astype(np.uint64)
    _, line_id = np.unique(line, return_inverse=True)
    n_spaces = max(1, len(s.spaces))
    key = (s.warp[rows].astype(np.int64) * n_spaces + s.space[rows]) * max(
        1, int(line_id.max()) + 1 if len(line_id) else 1
    ) + line_id.ravel()
    lk = kind[has_addr]
    is_load = (lk == MEM_LOAD) | (lk == MEM_ATOMIC)
    is_store = (lk == MEM_STORE) | (lk == MEM_ATOMIC)
    space_tok = tok([f"MEM.{sp}" for sp in s.spaces])
    lane_values = _lane_offsets(s, rows)
    _connect(
        add_nodes,
        edges,
        refs,
        refs,
        read_rows=np.flatnonzero(is_load),
        read_key=key[is_load],
        write_rows=np.flatnonzero(is_store),
        write_key=key[is_store],
        token_of_key=lambda k: space_tok[s.space[rows][_first_index(key, k)]],
        warp_of_key=lambda k: s.warp[rows][_first_index(key, k)],
        initial_stats=lane_values,
    )

    all_pos = np.zeros(next_id, np.float32)
    all_pos[:n] = pos
    src = np.concatenate([e[0] for e in edges]).astype(np.int64) if edges else np.zeros(0, np.int64)
    dst = np.concatenate([e[1] for e in edges]).astype(np.int64) if edges else np.zeros(0, np.int64)
    etype = np.concatenate([np.full(len(e[0]), e[2], np.int8) for e in edges]) if edges else np.zeros(0, np.int8)
    return KernelGraph(
        kind=np.concatenate(kinds),
        token=np.concatenate(toks),
        pos=all_pos,
        stats=np.concatenate(stats).astype(np.float32),
        warp=np.concatenate(warps),
        edge_index=np.stack([src, dst]),
        edge_type=etype,
        tokens=list(tokens),
    )


def _first_index(keys: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """For each of ``wanted``, the position of its first occurrence in ``keys``."""
    uniq, first = np.unique(keys, return_index=True)
    return first[np.searchsorted(uniq, wanted)]


def _lane_offsets(s: KernelStream, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per memory instruction (positions into ``rows``), its lanes' offsets from the first lane in
    units of the access width, as ``sign · log1p(|offset|)``: ``(instruction position, value)``."""
    counts = np.diff(s.addr_ptr)[rows]
    owner = np.repeat(np.arange(len(rows), dtype=np.int64), counts)
    if len(owner) == 0:
        return owner, np.zeros(0)
    starts = np.zeros(len(rows), np.int64)
    np.cumsum(counts[:-1], out=starts[1:])
    idx = np.repeat(s.addr_ptr[rows], counts) + np.arange(len(owner)) - np.repeat(starts, counts)
    addr = s.addr[idx].astype(np.float64)
    base = s.addr[s.addr_ptr[rows]].astype(np.float64)
    width = np.maximum(s.width[rows], 1).astype(np.float64)
    off = (addr - base[owner]) / width[owner]
    return owner, np.sign(off) * np.log1p(np.abs(off))


def _connect(
    add_nodes,
    edges,
    reader_nodes,
    writer_nodes,
    *,
    read_rows,
    read_key,
    write_rows,
    write_key,
    token_of_key,
    warp_of_key,
    initial_stats,
) -> None:
    """Version nodes for the writes, initial nodes for reads before any write, and their edges.

    ``reader_nodes[read_rows]`` read locations ``read_key``; ``writer_nodes[write_rows]`` write
    ``write_key``. ``initial_stats`` (reader position, value) gives the observed values whose
    statistics initial versions carry.
    """
    write_key = np.asarray(write_key, np.int64)
    read_key = np.asarray(read_key, np.int64)
    # write versions, one node each
    wnodes = add_nodes(
        VARIABLE,
        token_of_key(write_key) if len(write_key) else np.zeros(0, np.int32),
        warp_of_key(write_key) if len(write_key) else np.zeros(0, np.int32),
    )
    edges.append((writer_nodes[write_rows], wnodes, DEF))
    key = np.concatenate([read_key, write_key])
    rows = np.concatenate([read_rows, write_rows]).astype(np.int64)
    is_write = np.concatenate([np.zeros(len(read_key), bool), np.ones(len(write_key), bool)])
    reads, seen = _versions(key, rows, is_write)
    if len(reads) == 0:
        return
    nr = len(read_key)
    source = np.where(seen >= 0, wnodes[np.maximum(seen - nr, 0)] if len(wnodes) else -1, -1)
    fresh = seen < 0
    if fresh.any():
        fkeys, inv = np.unique(key[reads[fresh]], return_inverse=True)
        stat = None
        if initial_stats is not None:
            owner, values = initial_stats
            # the values observed by each fresh read's instruction, grouped by the initial node
            size = max(int(owner.max()) + 1 if len(owner) else 0, int(read_rows.max()) + 1)
            g = np.full(size, -1, np.int64)
            g[read_rows[reads[fresh]]] = inv.ravel()
            member = g[owner] if len(owner) else np.zeros(0, np.int64)
            keep = member >= 0
            stat = _group_stats(member[keep], values[keep], len(fkeys))
        inodes = add_nodes(VARIABLE, token_of_key(fkeys), warp_of_key(fkeys), stat)
        source = source.copy()
        source[fresh] = inodes[inv.ravel()]
    edges.append((source, reader_nodes[read_rows[reads]], USE))
