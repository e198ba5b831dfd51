"""Write MacSim NVBit traces (version 14) of element-wise kernels: for warm-up measurements and tests.

Each launch is ``out[i] = a[i] op b[i]`` over doubles, one element per thread, the program the
NVBit tracer recorded for the vectormultadd kernels MacSim ships (14 warp instructions: ``MOV``,
two ``S2R``, ``IMAD``, ``ISETP``, ``MOV``, two ``IMAD``, two ``LDG``, ``IMAD``, ``DADD`` or
``DMUL``, ``STG``, ``EXIT``; each memory instruction with the address of the warp's first
thread and an 8-byte access, as that tracer wrote them). Records are MacSim's
``trace_info_nvbit_small_s`` (64 bytes, little-endian), gzipped per warp in ``trace_<warp>.raw``;
warp ids are ``block * 65536 + warp``; ``trace.txt``, ``trace_info.txt``, ``kernel_config.txt``
and ``kernel_names.txt`` are written as the tracer writes them.

Arrays are named; each gets its own 1 MiB-aligned region, so a workload says which launches
read what others wrote (or read) and MacSim's caches see that reuse.
"""

from __future__ import annotations

import gzip
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from simsample_macsim.traces import KERNEL_CONFIG, KERNEL_NAMES, TRACE_TYPE, TRACE_VERSION

#: MacSim's ``trace_info_nvbit_small_s`` (src/trace_read.h), with its C padding.
RECORD = np.dtype(
    [
        ("opcode", "u1"),
        ("is_fp", "u1"),
        ("is_load", "u1"),
        ("cf_type", "u1"),
        ("num_read_regs", "u1"),
        ("num_dest_regs", "u1"),
        ("src", "<u2", 4),
        ("dst", "<u2", 4),
        ("size", "u1"),
        ("_pad0", "u1"),
        ("active_mask", "<u4"),
        ("br_taken_mask", "<u4"),
        ("inst_addr", "<u8"),
        ("br_target_addr", "<u8"),
        ("mem_addr", "<u8"),
        ("mem_access_size", "u1"),
        ("_pad1", "u1"),
        ("num_barrier_threads", "<u2"),
        ("addr_space", "u1"),
        ("cache_level", "u1"),
        ("cache_operator", "u1"),
        ("_pad2", "u1"),
    ]
)
assert RECORD.itemsize == 64

#: MacSim's NVBIT_OPCODE numbers used here.
MOV, S2R, IMAD, ISETP, DADD, DMUL, LDG, STG, EXIT = 60, 159, 36, 43, 22, 24, 73, 78, 139
_BASE = 0x7F0000000000
_REGION = 1 << 20
_ELEMENT = 8


@dataclass(frozen=True)
class ElementwiseKernel:
    """One launch: ``out = a op b`` over ``elements`` doubles (``op``: ``add`` or ``mul``)."""

    name: str
    a: str
    b: str
    out: str
    elements: int = 4096
    op: str = "add"
    block: int = 1024


def _program(k: ElementwiseKernel, first: int, addr: dict[str, int], pc0: int) -> np.ndarray:
    """The 14 records of the warp whose first element is ``first``."""
    off = first * _ELEMENT
    rows = [  # opcode, reads, dests, mem address
        (MOV, [], [1], 0),
        (S2R, [], [8], 0),
        (S2R, [], [3], 0),
        (IMAD, [8, 3], [8], 0),
        (ISETP, [7, 8, 7], [], 0),
        (MOV, [], [9], 0),
        (IMAD, [8, 9], [4], 0),
        (IMAD, [8, 9], [2], 0),
        (LDG, [], [4], addr[k.a] + off),
        (LDG, [], [2], addr[k.b] + off),
        (IMAD, [8, 9], [8], 0),
        (DADD if k.op == "add" else DMUL, [4, 2], [6], 0),
        (STG, [6], [], addr[k.out] + off),
        (EXIT, [], [], 0),
    ]
    rec = np.zeros(len(rows), RECORD)
    for i, (op, src, dst, mem) in enumerate(rows):
        r = rec[i]
        r["opcode"], r["is_fp"], r["is_load"] = op, op in (DADD, DMUL), op == LDG
        r["num_read_regs"], r["num_dest_regs"] = len(src), len(dst)
        r["src"][: len(src)], r["dst"][: len(dst)] = src, dst
        r["size"], r["active_mask"] = 16, 0xFFFFFFFF
        r["inst_addr"], r["br_target_addr"] = pc0 + 16 * i, pc0 + 16 * (i + 1)
        r["mem_addr"], r["mem_access_size"] = mem, _ELEMENT if mem else 4
        r["addr_space"] = 3 if mem else 0
    return rec


def write_workload(out: Path, kernels: Sequence[ElementwiseKernel]) -> dict[str, int]:
    """Write the trace folder ``out`` (must not exist) for these launches, ``KernelN`` in order.
    Returns each array's base address."""
    out = Path(out)
    out.mkdir(parents=True)
    arrays: dict[str, int] = {}
    for k in kernels:
        if k.op not in ("add", "mul") or k.elements % 32 or k.block % 32 or k.elements % k.block:
            raise ValueError(f"{k.name}: op add|mul, elements and block multiples of 32, elements a multiple of block")
        for a in (k.a, k.b, k.out):
            arrays.setdefault(a, _BASE + len(arrays) * _REGION)
            if k.elements * _ELEMENT > _REGION:
                raise ValueError(f"{k.name}: {k.elements} elements do not fit one array region")
    config = [TRACE_TYPE, str(TRACE_VERSION), "-1"]
    names = []
    code: dict[str, int] = {}
    for n, k in enumerate(kernels):
        d = out / f"Kernel{n}"
        d.mkdir()
        wpb, blocks = k.block // 32, k.elements // k.block
        wids = [b * 65536 + w for b in range(blocks) for w in range(wpb)]
        pc0 = code.setdefault(
            k.name, 0x7F5000000000 + len(code) * 0x1000
        )  # one function, one code address: launches of it share it
        for b in range(blocks):
            for w in range(wpb):
                rec = _program(k, (b * wpb + w) * 32, arrays, pc0)
                with gzip.open(d / f"trace_{b * 65536 + w}.raw", "wb") as fh:
                    fh.write(rec.tobytes())
        per_core = max(1, min(32, 2048 // k.block))
        (d / "trace.txt").write_text(
            f"{TRACE_TYPE}\n{TRACE_VERSION}\n{per_core}\n{len(wids)}\n" + "".join(f"{w} 0\n" for w in wids)
        )
        (d / "trace_info.txt").write_text("".join(f"{w} 14\n" for w in wids))
        config.append(f"./Kernel{n}/trace.txt")
        names.append(
            f"Kernel{n} name: {k.name}\n  Grid size: ({blocks}, 1, 1), Block size: ({k.block}, 1, 1), "
            f"maxBlockPerCore: {per_core}, # of regs: 16, static shared mem: 0, dynamic shared mem: 0\n"
        )
    (out / KERNEL_CONFIG).write_text("\n".join(config) + "\n")
    (out / KERNEL_NAMES).write_text("".join(names))
    return arrays
