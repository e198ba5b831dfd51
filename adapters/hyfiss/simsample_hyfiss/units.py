"""Which execution-unit class a SASS opcode is dispatched to, for the CTA-set estimate.

Six classes, each with a unit count and a latency in the device configuration
(:mod:`simsample_hyfiss.device`): ``sp`` (FP32 and FP16 arithmetic, conversions), ``sfu``
(transcendentals), ``int`` (integer, logic, moves, predicates, control flow: the default for
anything not listed), ``dp`` (FP64), ``tensor`` (matrix multiply-accumulate) and ``ldst``
(loads, stores, atomics, texture and surface accesses, fences). The grouping follows the
NVIDIA SASS opcode families of Volta and later; the estimate only ranks SMs, so what matters is
that the same opcode always lands in the same class.
"""

from __future__ import annotations

CLASSES: tuple[str, ...] = ("sp", "sfu", "int", "dp", "tensor", "ldst")

_SP = {
    "FADD",
    "FADD32I",
    "FFMA",
    "FFMA32I",
    "FMUL",
    "FMUL32I",
    "FMNMX",
    "FSEL",
    "FSET",
    "FSETP",
    "FCHK",
    "FSWZADD",
    "HADD2",
    "HADD2_32I",
    "HFMA2",
    "HFMA2_32I",
    "HFMA2_MMA",
    "HMUL2",
    "HMUL2_32I",
    "HSET2",
    "HSETP2",
    "HMNMX2",
    "F2F",
    "F2FP",
    "F2I",
    "I2F",
    "I2FP",
    "F2IP",
}
_SFU = {"MUFU", "RRO"}
_DP = {"DADD", "DFMA", "DMUL", "DMNMX", "DSET", "DSETP"}
_TENSOR = {"HMMA", "IMMA", "BMMA", "DMMA", "HGMMA", "IGMMA", "QGMMA", "BGMMA"}
_LDST = {
    "LD",
    "LDG",
    "LDS",
    "LDL",
    "LDC",
    "LDSM",
    "LDGSTS",
    "LDGDEPBAR",
    "ST",
    "STG",
    "STS",
    "STL",
    "ATOM",
    "ATOMG",
    "ATOMS",
    "RED",
    "CCTL",
    "CCTLL",
    "CCTLT",
    "MEMBAR",
    "ERRBAR",
    "TEX",
    "TLD",
    "TLD4",
    "TXD",
    "TXQ",
    "TMML",
    "SULD",
    "SUST",
    "SUATOM",
    "SURED",
    "MATCH",
}

_TABLE: dict[str, str] = {}
for _name, _ops in (("sp", _SP), ("sfu", _SFU), ("dp", _DP), ("tensor", _TENSOR), ("ldst", _LDST)):
    for _op in _ops:
        _TABLE[_op] = _name


def unit_class(opcode: str) -> str:
    """The class of an opcode (``LDG.E.SYS`` and ``LDG`` alike); ``int`` when not listed."""
    return _TABLE.get(opcode.split(".", 1)[0].upper(), "int")
