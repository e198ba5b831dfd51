"""Per-warp instruction streams, the input of GCL-Sampler's graphs, independent of trace formats.

An adapter that can read its simulator's instruction traces (Accel-Sim's ``.traceg``) hands over
the warps of one launch as a :class:`KernelStream`: flat arrays over the chosen warps'
instructions in execution order, with registers and lane addresses in CSR form, so that graph
construction (:mod:`simsample.plugins.samplers._gcl.graphs`) works on whole arrays. This module
imports numpy only.

Which warps: GCL-Sampler traces one representative SM per launch, all its CTAs. The CTA set of
SM ``sm`` is taken as the simulator deals CTAs out at launch, round-robin in trace order over
``sms`` SMs (CTA positions ``sm, sm + sms, ...``); from its warps, at most ``warps`` are kept,
drawn without replacement from a generator seeded by the plan's seed and the launch's kernel id,
so that large launches stay tractable and the choice is recorded and repeatable. Each warp
keeps at most ``max_insts`` instructions (its first ones).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

#: memory access kinds of an instruction (``KernelStream.mem``)
MEM_NONE, MEM_LOAD, MEM_STORE, MEM_ATOMIC = range(4)
MEM_KINDS = ("none", "load", "store", "atomic")


@dataclass(frozen=True)
class WarpSelection:
    """Which warps of a launch to read (recorded in the plan and in the graph cache's key)."""

    sms: int = 80
    sm: int = 0
    warps: int = 16
    max_insts: int = 4096
    seed: int = 0

    def to_json(self) -> dict[str, int]:
        return asdict(self)

    def chosen(self, ctas: int, warps_per_cta: int, kernel_id: int) -> np.ndarray:
        """Sorted (cta position, warp) pairs to read, as an (n × 2) int64 array."""
        positions = np.arange(self.sm % max(1, min(self.sms, ctas)), ctas, self.sms, dtype=np.int64)
        pairs = np.stack(
            np.meshgrid(positions, np.arange(warps_per_cta, dtype=np.int64), indexing="ij"), axis=-1
        ).reshape(-1, 2)
        if len(pairs) > self.warps:
            rng = np.random.default_rng([self.seed, int(kernel_id) & 0xFFFFFFFF])
            keep = np.sort(rng.choice(len(pairs), size=self.warps, replace=False))
            pairs = pairs[keep]
        return pairs


@dataclass
class KernelStream:
    """The chosen warps of one launch: ``n`` instructions over ``W`` warps, in warp order.

    Registers and opcodes are indices into ``regs`` and ``opcodes``; ``dst``/``src`` and
    ``addr`` are CSR arrays (``*_ptr`` of length ``n + 1``). ``space`` names the memory space of
    a memory instruction (an index into ``spaces``), ``mem`` its kind (:data:`MEM_KINDS`).
    """

    warp: np.ndarray  # int32 (n)
    pc: np.ndarray  # int64 (n)
    opcode: np.ndarray  # int32 (n)
    dst_ptr: np.ndarray  # int64 (n + 1)
    dst: np.ndarray  # int32
    src_ptr: np.ndarray  # int64 (n + 1)
    src: np.ndarray  # int32
    mem: np.ndarray  # int8 (n)
    space: np.ndarray  # int16 (n)
    width: np.ndarray  # int32 (n)
    addr_ptr: np.ndarray  # int64 (n + 1)
    addr: np.ndarray  # uint64
    opcodes: list[str] = field(default_factory=list)
    regs: list[str] = field(default_factory=list)
    spaces: list[str] = field(default_factory=list)
    #: registers that always read as zero (``RZ``, written ``R255`` in traces): never variables
    zero_regs: tuple[str, ...] = ("R255", "RZ", "URZ", "PT")

    def __len__(self) -> int:
        return len(self.warp)

    @property
    def n_warps(self) -> int:
        return int(self.warp.max()) + 1 if len(self.warp) else 0


class StreamBuilder:
    """Collects instructions one at a time (the adapters' parsers) and packs them into arrays."""

    def __init__(self) -> None:
        self._warp: list[int] = []
        self._pc: list[int] = []
        self._op: list[int] = []
        self._dst: list[int] = []
        self._dst_n: list[int] = []
        self._src: list[int] = []
        self._src_n: list[int] = []
        self._mem: list[int] = []
        self._space: list[int] = []
        self._width: list[int] = []
        self._addr: list[int] = []
        self._addr_n: list[int] = []
        self._ops: dict[str, int] = {}
        self._regs: dict[str, int] = {}
        self._spaces: dict[str, int] = {"": 0}

    def add(
        self,
        warp: int,
        pc: int,
        opcode: str,
        dests: list[str],
        srcs: list[str],
        mem: int = MEM_NONE,
        space: str = "",
        width: int = 0,
        addresses: list[int] | None = None,
    ) -> None:
        """One instruction of warp ``warp`` (warps numbered 0.. in the order they are added)."""
        self._warp.append(warp)
        self._pc.append(pc)
        self._op.append(self._ops.setdefault(opcode, len(self._ops)))
        regs = self._regs
        self._dst.extend(regs.setdefault(r, len(regs)) for r in dests)
        self._dst_n.append(len(dests))
        self._src.extend(regs.setdefault(r, len(regs)) for r in srcs)
        self._src_n.append(len(srcs))
        self._mem.append(mem)
        self._space.append(self._spaces.setdefault(space, len(self._spaces)))
        self._width.append(width)
        addrs = addresses or []
        self._addr.extend(addrs)
        self._addr_n.append(len(addrs))

    def build(self) -> KernelStream:
        def ptr(counts: list[int]) -> np.ndarray:
            out = np.zeros(len(counts) + 1, np.int64)
            np.cumsum(counts, out=out[1:])
            return out

        return KernelStream(
            warp=np.asarray(self._warp, np.int32),
            pc=np.asarray(self._pc, np.int64),
            opcode=np.asarray(self._op, np.int32),
            dst_ptr=ptr(self._dst_n),
            dst=np.asarray(self._dst, np.int32),
            src_ptr=ptr(self._src_n),
            src=np.asarray(self._src, np.int32),
            mem=np.asarray(self._mem, np.int8),
            space=np.asarray(self._space, np.int16),
            width=np.asarray(self._width, np.int32),
            addr_ptr=ptr(self._addr_n),
            addr=np.asarray(self._addr, np.uint64),
            opcodes=list(self._ops),
            regs=list(self._regs),
            spaces=list(self._spaces),
        )


@dataclass(frozen=True)
class InstructionTraces:
    """What an adapter hands GCL-Sampler: one trace file per launch row, and a reader of chosen
    warps (a module-level function, so that worker processes can run it)."""

    files: list[Path]
    read: Callable[[Path, WarpSelection], KernelStream]
    #: names what ``read`` parses (part of the graph cache's key)
    format: str
