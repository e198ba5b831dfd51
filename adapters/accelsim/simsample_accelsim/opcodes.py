"""What a SASS opcode in a trace means for the features: memory space, access width, control flow.

The simulator looks an instruction up by the text before the first ``.`` (``LDG.E.128`` →
``LDG``) and takes the access width from the opcode, not from the trace's width field: the first
modifier that is a number of bits (``.128`` → 16 bytes) or ``U<bits>`` (``.U8`` → 1 byte), else
4 bytes (``inst_trace_t::get_datawidth_from_opcode``). Memory spaces follow the simulator's
``trace_warp_inst_t::parse_from_trace_struct``: ``LDG``/``LDGSTS`` global loads, ``STG`` global
stores, ``LDL``/``STL`` local, ``LDS``/``LDSM``/``STS`` shared, ``ATOM``/``ATOMG``/``RED`` global
atomics, ``ATOMS`` shared atomics, and generic ``LD``/``ST`` resolved per instruction from the
first active address (:func:`generic_space`).
"""

from __future__ import annotations

from dataclasses import dataclass

# memory classes (small ints so that the numpy engine can use them as array values)
(
    NONE,
    GLOBAL_LD,
    GLOBAL_ST,
    LOCAL_LD,
    LOCAL_ST,
    SHARED_LD,
    SHARED_ST,
    GLOBAL_ATOM,
    GLOBAL_RED,
    SHARED_ATOM,
    GENERIC_LD,
    GENERIC_ST,
) = range(12)

_CLASS = {
    "LDG": GLOBAL_LD,
    "LDGSTS": GLOBAL_LD,
    "STG": GLOBAL_ST,
    "LDL": LOCAL_LD,
    "STL": LOCAL_ST,
    "LDS": SHARED_LD,
    "LDSM": SHARED_LD,
    "STS": SHARED_ST,
    "ATOM": GLOBAL_ATOM,
    "ATOMG": GLOBAL_ATOM,
    "RED": GLOBAL_RED,
    "ATOMS": SHARED_ATOM,
    "LD": GENERIC_LD,
    "ST": GENERIC_ST,
}

#: The counter (see :data:`.kernelfeatures.COUNTERS`) that each memory class adds to; generic
#: classes have none until :func:`generic_space` has resolved them.
MEM_COUNTERS = {
    GLOBAL_LD: "global_ld",
    GLOBAL_ST: "global_st",
    LOCAL_LD: "local_ld",
    LOCAL_ST: "local_st",
    SHARED_LD: "shared_ld",
    SHARED_ST: "shared_st",
    GLOBAL_ATOM: "global_atom",
    GLOBAL_RED: "global_red",
    SHARED_ATOM: "shared_atom",
}
#: Classes whose distinct 32-byte sectors are counted too (as ``sectors_<counter>``).
SECTOR_CLASSES = (GLOBAL_LD, GLOBAL_ST, LOCAL_LD, LOCAL_ST)

#: Opcodes after which the next instruction starts a new basic block: branches, jumps, calls,
#: returns, exits, and Pascal/Maxwell stack branches (SYNC/BRK/CONT pop the SIMT stack and jump).
CONTROL_FLOW = frozenset("BRA BRX BRXU JMP JMX JMXU CALL RET EXIT BREAK KILL RTT BPT JCAL PRET BRK CONT SYNC".split())

#: Simulator constant: a generic address within this many bytes above the local base is local.
LOCAL_MEM_SIZE_MAX = 1 << 14


@dataclass(frozen=True)
class OpInfo:
    """Classification of one opcode string."""

    base: str
    mem_class: int
    width: int
    control_flow: bool


def data_width(opcode: str) -> int:
    """Bytes per lane as the simulator computes them from the opcode's modifiers."""
    for tok in opcode.split("."):
        if not tok:
            continue
        if tok.isdigit():
            return int(tok) // 8
        if tok[0] == "U" and tok[1:].isdigit():
            return int(tok[1:]) // 8
    return 4


_cache: dict[str, OpInfo] = {}


def classify(opcode: str) -> OpInfo:
    """Memory class, width and control-flow flag of an opcode (cached)."""
    info = _cache.get(opcode)
    if info is None:
        base = opcode.split(".", 1)[0]
        info = OpInfo(base, _CLASS.get(base, NONE), data_width(opcode), base in CONTROL_FLOW)
        _cache[opcode] = info
    return info


def generic_space(first_address: int, shmem_base: int, local_base: int, load: bool) -> int:
    """Resolve a generic LD/ST the way the simulator does, from the first active lane's address."""
    if shmem_base == 0 or local_base == 0:
        return SHARED_LD if load else SHARED_ST
    if shmem_base <= first_address < local_base:
        return SHARED_LD if load else SHARED_ST
    if local_base <= first_address < local_base + LOCAL_MEM_SIZE_MAX:
        return LOCAL_LD if load else LOCAL_ST
    return GLOBAL_LD if load else GLOBAL_ST


def expected_next_pc(pc: int, binary_version: int) -> int:
    """PC of the next instruction in straight-line code.

    Volta and later (binary version 70+) use 16-byte instructions. Maxwell/Pascal (50–69) pack
    three 8-byte instructions after an 8-byte control word in every 32 bytes; Kepler (30–37) seven
    after one in every 64 bytes, so straight-line code skips the control words.
    """
    if binary_version >= 70 or binary_version == 0:
        return pc + 16
    group = 32 if binary_version >= 50 else 64
    nxt = pc + 8
    if nxt % group == 0:
        nxt += 8
    return nxt
