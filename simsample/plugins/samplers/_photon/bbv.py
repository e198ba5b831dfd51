"""GPU basic-block vectors for Photon's kernel-level sampling.

Photon (MICRO'23; official code lchangxii/sampled-mgpu-sim) describes a launch by how its warps
walk the program:

1. **Per-warp BBV.** A basic block ends at a branch or at the end of the program and is keyed by
   its start PC and length. Each time a warp finishes a block, the block's length is added,
   through a random projection, to a 16-dimensional vector: dimension ``d`` receives
   ``length × w_d(pc)``, where ``w_d(pc)`` is the ``d // 4 + 1``-th 16-bit output of a drand48
   generator seeded with ``pc + d % 4`` (``profiler/wf_feature.go``: four interleaved
   generators, no stored matrix). So a warp's vector is ``Σ_b insts_b · w(pc_b)``, where
   ``insts_b`` = executions × length is the instructions the warp executed in block ``b``.
2. **GPU BBV.** Warps with identical vectors form a *type*. Each type's vector is L2-normalised
   and multiplied by its share of the launch's warps; the launch's GPU BBV is these scaled
   vectors concatenated in descending order of share (``sampledanalysis.py``, class
   ``GPUBBV``). Two GPU BBVs of different length are compared after zero-padding the shorter.

**Block identity.** The official code runs on MGPUSim, where a block's PC is its address in the
loaded program, so blocks of different kernels have different PCs and different projection
weights. Accel-Sim traces give PCs as offsets from the start of each kernel (every kernel starts
at ``0000``): keyed by those alone, the first blocks of all kernels would share their weights,
and short straight-line kernels of equal warp counts would get nearly equal GPU BBVs whatever
their code. When the features name each block's kernel (``bbv_block_kernel``), the blocks are
given the addresses a loader would: each kernel's code is placed in its own range
(:func:`block_addresses`: kernels in name order, each range starting on a 4 KiB boundary after
the previous kernel's last block), and the weights are seeded with these addresses. Two
launches of one kernel therefore keep identical weights, and two different kernels share none.
Without kernel names the PCs are taken as addresses, as the official code does.

The inputs come from the Accel-Sim adapter's trace features, kept in ``Workload.extras``:
``warp_types`` (a sparse matrix: one row per distinct per-warp BBV of a launch, one column per
basic block, values = instructions one warp of the type executed in that block), ``warp_type_launch``
(the launch row of each type), ``warp_type_count`` (warps of that type), ``bbv_blocks`` (per
column: ``start_pc``, ``length`` in instructions; ``bbv_keys`` is accepted as well) and, optional,
``bbv_block_kernel`` (per column: the name of the kernel whose code the block belongs to).

Ties in share are ordered by the vectors themselves (largest first) rather than by the order in
which the official code happened to meet the warps, so that identical launches always get
identical GPU BBVs whatever order a trace lists their warps in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import lazy_loader as lazy
import numpy as np

from simsample.sdk import UserError, lazy_module

pd = lazy.load("pandas")
sp = lazy_module("scipy.sparse")  # not lazy.load: that imports scipy itself at once

#: Dimensions of Photon's projected per-warp BBV (``BbvDim`` in the official code).
BBV_DIMS = 16
_RNG_A = np.uint64(0x5DEECE66D)
_RNG_C = np.uint64(0xB)
_RNG_M = np.uint64((1 << 48) - 1)

#: Extras the trace features must provide.
EXTRAS = ("warp_types", "warp_type_launch", "warp_type_count", "bbv_blocks")
#: Optional extra: the kernel each block column belongs to (its PCs are offsets within that kernel).
KERNEL_EXTRA = "bbv_block_kernel"
#: Each kernel's code range starts on a boundary of this many bytes (a page, as a loader would).
CODE_ALIGN = 4096
#: Only the low 32 bits of a seed reach drand48's state, so code ranges must fit in 2**32 bytes.
_SEED_SPACE = 1 << 32
FEATURES_HINT = (
    "Photon needs per-warp basic-block vectors from simulator traces: "
    "run `simsample profile features --sim accelsim TRACES -o features.parquet` and plan on that"
)


def projection_weights(start_pcs: np.ndarray, dims: int = BBV_DIMS) -> np.ndarray:
    """Photon's random-projection weights, one row per block PC (float64, values < 2**16).

    Weight ``d`` of PC ``p`` is the ``(d // 4 + 1)``-th output ``(state >> 16) & 0xffff`` of
    drand48 seeded with ``p + d % 4`` (seed ``(s << 16) + 0x330E``, step
    ``state = (0x5DEECE66D·state + 0xB) mod 2**48``), exactly as the official Go code.
    """
    if dims % 4:
        raise ValueError("dims must be a multiple of 4")
    pcs = np.asarray(start_pcs).astype(np.uint64)
    out = np.empty((len(pcs), dims), dtype=np.float64)
    with np.errstate(over="ignore"):
        for lane in range(4):
            state = ((pcs + np.uint64(lane)) << np.uint64(16)) + np.uint64(0x330E)
            for step in range(dims // 4):
                state = (_RNG_A * state + _RNG_C) & _RNG_M  # uint64 wraps mod 2**64; 2**48 divides it
                out[:, 4 * step + lane] = ((state >> np.uint64(16)) & np.uint64(0xFFFF)).astype(np.float64)
    return out


def block_addresses(start_pc: np.ndarray, kernel: np.ndarray | None) -> np.ndarray:
    """Each block's address in a program holding every kernel's code in its own range.

    ``kernel`` names the kernel of each block (``None``: the PCs are already addresses and are
    returned as they are). Kernels are laid out in name order, so the layout does not depend on
    launch order; kernel ``k`` starts at the first multiple of :data:`CODE_ALIGN` beyond the
    previous kernel's largest start PC plus four (the projection seeds ``pc + 0..3``), so no two
    blocks of different kernels share a seed. Blocks of one kernel keep their relative PCs.
    """
    pcs = np.asarray(start_pc, dtype=np.int64)
    if kernel is None or len(pcs) == 0:
        return pcs
    names, which = np.unique(np.asarray(kernel).astype(str), return_inverse=True)
    which = which.ravel()
    top = np.full(len(names), -1, dtype=np.int64)
    np.maximum.at(top, which, pcs)
    span = (top + 4 + CODE_ALIGN) // CODE_ALIGN * CODE_ALIGN  # room for pc + 3, rounded up to a page
    base = np.zeros(len(names), dtype=np.int64)
    np.cumsum(span[:-1], out=base[1:])
    if int(base[-1] + span[-1]) > _SEED_SPACE:
        raise UserError(
            f"the kernels' code ({int(base[-1] + span[-1]):,} bytes of PCs) does not fit in the 2**32 addresses "
            "Photon's projection can tell apart; plan on fewer kernels at once"
        )
    return base[which] + pcs


@dataclass
class WarpFeatures:
    """The per-warp BBV extras of a workload, checked and in canonical types."""

    types: sp.csr_matrix  # T × B instructions one warp of each type executed in each block
    launch: np.ndarray  # T, launch row of each type
    count: np.ndarray  # T, warps of each type
    start_pc: np.ndarray  # B, relative to its kernel when ``kernel`` is given
    length: np.ndarray  # B
    kernel: np.ndarray | None = None  # B, kernel name of each block, or None (PCs are addresses)

    @property
    def address(self) -> np.ndarray:
        """Each block's address, the key of its projection weights (see :func:`block_addresses`)."""
        return block_addresses(self.start_pc, self.kernel)

    @classmethod
    def from_extras(cls, extras: dict[str, Any], n_launches: int, *, source: str = "workload") -> WarpFeatures:
        """Validate the extras; every problem is one :class:`UserError` that says what to do."""
        if "bbv_blocks" not in extras and "bbv_keys" in extras:
            extras = {**extras, "bbv_blocks": extras["bbv_keys"]}
        missing = [k for k in EXTRAS if k not in extras]
        if missing:
            if callable(
                getattr(extras, "message", None)
            ):  # workload.MissingExtras: the file was not moved with the table
                raise UserError(f"no per-warp basic-block vectors: {extras.message()}")
            raise UserError(
                f"{source} has no per-warp basic-block vectors ({', '.join(missing)} missing); {FEATURES_HINT}"
            )
        types = sp.csr_matrix(extras["warp_types"])
        launch = np.asarray(extras["warp_type_launch"], dtype=np.int64).ravel()
        count = np.asarray(extras["warp_type_count"], dtype=np.int64).ravel()
        start_pc, length = _blocks(extras["bbv_blocks"], source)
        t, b = types.shape
        if len(launch) != t or len(count) != t:
            raise UserError(
                f"{source}: warp_types has {t} rows but warp_type_launch/warp_type_count have "
                f"{len(launch)}/{len(count)}; regenerate the trace features"
            )
        if len(start_pc) != b:
            raise UserError(
                f"{source}: warp_types has {b} block columns but bbv_blocks describes {len(start_pc)}; regenerate "
                "the trace features"
            )
        if t and (launch.min() < 0 or launch.max() >= n_launches):
            raise UserError(
                f"{source}: warp_type_launch names launch rows outside 0..{n_launches - 1}; regenerate the trace "
                "features"
            )
        if (count < 0).any() or (types.data < 0).any() or (length < 0).any():
            raise UserError(f"{source}: negative warp or block counts in the trace features; regenerate them")
        kernel = None
        if extras.get(KERNEL_EXTRA) is not None:
            kernel = np.asarray(extras[KERNEL_EXTRA]).astype(str).ravel()
            if len(kernel) != b:
                raise UserError(
                    f"{source}: warp_types has {b} block columns but {KERNEL_EXTRA} names {len(kernel)}; regenerate "
                    "the trace features"
                )
        if (start_pc < 0).any():
            raise UserError(f"{source}: negative block PCs in the trace features; regenerate them")
        return cls(types, launch, count, start_pc, length, kernel)

    def warps(self, n_launches: int) -> np.ndarray:
        """Warps per launch (int64)."""
        return np.bincount(self.launch, weights=self.count, minlength=n_launches).astype(np.int64)

    def instructions(self, n_launches: int) -> np.ndarray:
        """Warp instructions per launch: Σ over types of warps × the type's instructions."""
        per_warp = np.asarray(self.types.sum(axis=1), dtype=np.float64).ravel()
        return np.bincount(self.launch, weights=per_warp * self.count, minlength=n_launches)


def _blocks(blocks: Any, source: str) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(blocks, pd.DataFrame):
        if not {"start_pc", "length"} <= set(blocks.columns):
            raise UserError(f"{source}: bbv_blocks needs columns start_pc and length; regenerate the trace features")
        return blocks["start_pc"].to_numpy(np.int64), blocks["length"].to_numpy(np.int64)
    if isinstance(blocks, dict):
        return np.asarray(blocks["start_pc"], dtype=np.int64), np.asarray(blocks["length"], dtype=np.int64)
    arr = np.asarray(blocks)
    if arr.dtype.names and {"start_pc", "length"} <= set(arr.dtype.names):
        return arr["start_pc"].astype(np.int64), arr["length"].astype(np.int64)
    if arr.ndim == 2 and arr.shape[1] == 2:
        return arr[:, 0].astype(np.int64), arr[:, 1].astype(np.int64)
    raise UserError(f"{source}: bbv_blocks must give start_pc and length per block; regenerate the trace features")


@dataclass
class GpuBBVs:
    """All launches' GPU BBVs, stored flat.

    Launch ``i``'s GPU BBV is ``rows[offsets[i]:offsets[i+1]].ravel()``: its types' scaled
    16-d vectors in descending share. ``sqnorm[i]`` is its squared length.
    """

    rows: np.ndarray
    offsets: np.ndarray
    sqnorm: np.ndarray

    def vector(self, i: int) -> np.ndarray:
        return self.rows[self.offsets[i] : self.offsets[i + 1]].ravel()

    def length(self, i: int) -> int:
        return int(self.offsets[i + 1] - self.offsets[i]) * self.rows.shape[1]


def gpu_bbvs(features: WarpFeatures, n_launches: int) -> GpuBBVs:
    """Project the per-warp vectors and build every launch's GPU BBV (vectorised, O(T log T))."""
    weights = projection_weights(features.address)
    proj = np.asarray(features.types @ weights)  # T × 16: Σ_b insts_b · w(pc_b)
    launch, count = features.launch, features.count.astype(np.float64)
    keep = count > 0
    proj, launch, count = proj[keep], launch[keep], count[keep]
    # Types are identical projected vectors within a launch: merge rows that coincide.
    if len(proj):
        order = np.lexsort(tuple(proj[:, d] for d in range(proj.shape[1] - 1, -1, -1)) + (launch,))
        proj, launch, count = proj[order], launch[order], count[order]
        new = np.ones(len(proj), dtype=bool)
        new[1:] = (launch[1:] != launch[:-1]) | np.any(proj[1:] != proj[:-1], axis=1)
        group = np.cumsum(new) - 1
        count = np.bincount(group, weights=count)
        proj, launch = proj[new], launch[new]
    warps = np.bincount(launch, weights=count, minlength=n_launches)
    share = count / warps[launch] if len(count) else count
    norms = np.sqrt(np.einsum("ij,ij->i", proj, proj))
    unit = np.divide(proj, norms[:, None], out=np.zeros_like(proj), where=norms[:, None] > 0)
    scaled = unit * share[:, None]
    # Within a launch: descending share, ties by the vector (largest first): stable and content-based.
    keys = tuple(-scaled[:, d] for d in range(scaled.shape[1] - 1, -1, -1)) + (-share, launch)
    order = np.lexsort(keys) if len(scaled) else np.arange(0)
    scaled, launch = scaled[order], launch[order]
    offsets = np.zeros(n_launches + 1, dtype=np.int64)
    np.cumsum(np.bincount(launch, minlength=n_launches), out=offsets[1:])
    sq = np.bincount(launch, weights=np.einsum("ij,ij->i", scaled, scaled), minlength=n_launches)
    return GpuBBVs(rows=np.ascontiguousarray(scaled), offsets=offsets, sqnorm=sq)
