"""What one pass over a trace body yields for its launch, whichever engine computed it.

Counts are warp-level (one per executed instruction line) unless named otherwise; sectors are
distinct 32-byte sectors touched per warp instruction, summed, from the per-lane addresses and the
opcode's access width. The basic-block vector (BBV) counts executed instructions per block,
summed over warps; a block is keyed by (start PC, length in instructions) and ends after a
control-flow opcode or before a PC discontinuity. Warps with identical per-warp BBVs form a
*warp type* (Photon's GPU BBV is built from them).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

#: Bumped whenever what a scan computes changes: older cache entries (features, footprints) are then ignored.
SCANNER_VERSION = "2"

#: Internal counter names, in output order.
COUNTERS: tuple[str, ...] = (
    "ctas",
    "warps",
    "warp_insts",
    "thread_insts",
    "global_ld",
    "global_st",
    "local_ld",
    "local_st",
    "shared_ld",
    "shared_st",
    "global_atom",
    "global_red",
    "shared_atom",
    "sectors_global_ld",
    "sectors_global_st",
    "sectors_local_ld",
    "sectors_local_st",
    "control_flow",
)

#: Output column for each counter: Nsight Compute metric names where one exists, so that the
#: PKA sampler reads trace features and ncu profiles alike.
COLUMNS: dict[str, str] = {
    "ctas": "ctas",
    "warps": "warps",
    "warp_insts": "warp_insts",
    "thread_insts": "thread_insts",
    "global_ld": "smsp__inst_executed_op_global_ld.sum",
    "global_st": "smsp__inst_executed_op_global_st.sum",
    "local_ld": "smsp__inst_executed_op_local_ld.sum",
    "local_st": "smsp__inst_executed_op_local_st.sum",
    "shared_ld": "smsp__inst_executed_op_shared_ld.sum",
    "shared_st": "smsp__inst_executed_op_shared_st.sum",
    "global_atom": "smsp__sass_inst_executed_op_global_atom.sum",
    "global_red": "smsp__sass_inst_executed_op_global_red.sum",
    "shared_atom": "smsp__sass_inst_executed_op_shared_atom.sum",
    "sectors_global_ld": "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "sectors_global_st": "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "sectors_local_ld": "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum",
    "sectors_local_st": "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum",
    "control_flow": "control_flow_insts",
}
#: Derived columns (computed in the table, not counted).
INST_COLUMN = "smsp__inst_executed.sum"
RATIO_COLUMN = "smsp__thread_inst_executed_per_inst_executed.ratio"
GRID_COLUMN = "launch__grid_size"


@dataclass
class LaunchFeatures:
    """Features of one launch. ``bbv_keys`` is (n, 2): start PC, length; ``types_*`` in CSR form
    over the same columns, one row per warp type, with ``type_counts`` warps each."""

    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COUNTERS, 0))
    bbv_keys: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), np.int64))
    bbv_values: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    types_indptr: np.ndarray = field(default_factory=lambda: np.zeros(1, np.int64))
    types_indices: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    types_data: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    type_counts: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))

    def to_arrays(self) -> dict[str, np.ndarray]:
        """Flat arrays for the cache file (``np.savez``, no pickles)."""
        return {
            "counts": np.array([self.counts[c] for c in COUNTERS], dtype=np.int64),
            "bbv_keys": self.bbv_keys,
            "bbv_values": self.bbv_values,
            "types_indptr": self.types_indptr,
            "types_indices": self.types_indices,
            "types_data": self.types_data,
            "type_counts": self.type_counts,
        }

    @classmethod
    def from_arrays(cls, d: dict[str, np.ndarray]) -> LaunchFeatures:
        counts = d["counts"]
        if len(counts) != len(COUNTERS):
            raise ValueError("cache entry from another version")
        return cls(
            counts={c: int(v) for c, v in zip(COUNTERS, counts)},
            bbv_keys=d["bbv_keys"].reshape(-1, 2).astype(np.int64),
            bbv_values=d["bbv_values"].astype(np.int64),
            types_indptr=d["types_indptr"].astype(np.int64),
            types_indices=d["types_indices"].astype(np.int64),
            types_data=d["types_data"].astype(np.int64),
            type_counts=d["type_counts"].astype(np.int64),
        )

    def canonical(self) -> LaunchFeatures:
        """Same content with blocks sorted by key and warp types sorted by row (for comparisons)."""
        order = np.lexsort((self.bbv_keys[:, 1], self.bbv_keys[:, 0])) if len(self.bbv_keys) else np.zeros(0, np.int64)
        newcol = np.empty(len(order), np.int64)
        newcol[order] = np.arange(len(order))
        rows = []
        for t in range(len(self.type_counts)):
            lo, hi = self.types_indptr[t], self.types_indptr[t + 1]
            cols = newcol[self.types_indices[lo:hi]]
            vals = self.types_data[lo:hi]
            o = np.argsort(cols, kind="stable")
            rows.append((tuple(cols[o].tolist()), tuple(vals[o].tolist()), int(self.type_counts[t])))
        rows.sort()
        return LaunchFeatures(
            counts=dict(self.counts),
            bbv_keys=self.bbv_keys[order],
            bbv_values=self.bbv_values[order],
            **_types_csr([(np.array(c, np.int64), np.array(v, np.int64)) for c, v, _ in rows], [n for _, _, n in rows]),
        )


def _types_csr(rows: list[tuple[np.ndarray, np.ndarray]], counts: list[int]) -> dict[str, np.ndarray]:
    indptr = np.zeros(len(rows) + 1, np.int64)
    for i, (c, _) in enumerate(rows):
        indptr[i + 1] = indptr[i] + len(c)
    return {
        "types_indptr": indptr,
        "types_indices": np.concatenate([c for c, _ in rows]).astype(np.int64) if rows else np.zeros(0, np.int64),
        "types_data": np.concatenate([v for _, v in rows]).astype(np.int64) if rows else np.zeros(0, np.int64),
        "type_counts": np.array(counts, dtype=np.int64),
    }


def types_csr(rows: list[tuple[np.ndarray, np.ndarray]], counts: list[int]) -> dict[str, np.ndarray]:
    """CSR parts for warp types given as (columns, values) rows."""
    return _types_csr(rows, counts)
