"""Named GPU configurations: how many warps a GPU holds at once.

Photon treats a kernel as *small* when it launches fewer warps than the GPU can hold resident at
the same time (streaming multiprocessors × maximum resident warps per SM): such a kernel never
fills the machine, so its timing depends on its exact warp count and it may only stand for
kernels with the same count. The official code hard-codes this for its simulated AMD R9 Nano
(64 compute units × 40 wavefronts = 2560); here the number comes from a named configuration.

Names are matched loosely: case, spaces, dashes and underscores are ignored, vendor words
(``NVIDIA``, ``GeForce``, ``Tesla``) and Accel-Sim's ``SMxx_`` prefixes are dropped, and the
longest known name that starts the given one wins, so ``SM7_QV100``, ``Tesla V100-SXM2-32GB``
and ``v100`` all find the V100.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from simsample.sdk import UserError


@dataclass(frozen=True)
class GPU:
    """One GPU: its SM (compute unit) count and the most warps (wavefronts) one SM holds."""

    name: str
    sms: int
    max_warps_per_sm: int
    note: str = ""

    @property
    def resident_warps(self) -> int:
        """Warps the whole GPU holds at once."""
        return self.sms * self.max_warps_per_sm


_LIST = (
    GPU("QV100", 80, 64, "Volta V100 as Accel-Sim's SM7_QV100 configuration"),
    GPU("V100", 80, 64, "Volta"),
    GPU("TITANV", 80, 64, "Volta"),
    GPU("A100", 108, 64, "Ampere GA100"),
    GPU("H100", 132, 64, "Hopper, SXM5"),
    GPU("H100PCIE", 114, 64, "Hopper, PCIe"),
    GPU("H200", 132, 64, "Hopper"),
    GPU("RTX2060", 30, 32, "Turing (1024 threads per SM)"),
    GPU("RTX2080TI", 68, 32, "Turing"),
    GPU("T4", 40, 32, "Turing"),
    GPU("RTX3070", 46, 48, "Ampere GA104 (1536 threads per SM)"),
    GPU("RTX3080", 68, 48, "Ampere GA102"),
    GPU("RTX3090", 82, 48, "Ampere GA102"),
    GPU("A10", 72, 48, "Ampere GA102"),
    GPU("L4", 58, 48, "Ada"),
    GPU("RTX4090", 128, 48, "Ada"),
    GPU("L40S", 142, 48, "Ada"),
    GPU("GTX1080", 20, 64, "Pascal"),
    GPU("GTX1080TI", 28, 64, "Pascal"),
    GPU("TITANX", 28, 64, "Pascal (Accel-Sim SM6_TITANX)"),
    GPU("P100", 56, 64, "Pascal"),
    GPU("K40C", 15, 64, "Kepler"),
    GPU("K40", 15, 64, "Kepler"),
    GPU("R9NANO", 64, 40, "AMD GCN3, the GPU of Photon's official code (2560 wavefronts)"),
    GPU("MI100", 120, 40, "AMD CDNA"),
)

#: Known configurations by normalised name.
GPUS: dict[str, GPU] = {g.name: g for g in _LIST}

_VENDOR = re.compile(r"NVIDIA|GEFORCE|TESLA|QUADRO|AMD|RADEON")
_SM_PREFIX = re.compile(r"^SM\d+_")


def normalise(name: str) -> str:
    """The lookup key of a GPU name (``'Tesla V100-SXM2-32GB'`` → ``'V100SXM232GB'``)."""
    key = _SM_PREFIX.sub("", str(name).strip().upper())
    key = _VENDOR.sub("", key)
    return re.sub(r"[^A-Z0-9]", "", key)


def lookup(name: str) -> GPU:
    """The configuration whose name is the longest prefix of ``name``; UserError if none."""
    key = normalise(name)
    best = None
    for known in GPUS:
        if key.startswith(known) and (best is None or len(known) > len(best)):
            best = known
    if best is None or not key:
        raise UserError(
            f"unknown GPU {name!r}: known are {', '.join(sorted(GPUS))}; "
            "or give the number of warps it holds at once (gpu_warps=SMs×warps per SM)"
        )
    return GPUS[best]


def resident_warps(name: str) -> int:
    """Warps the named GPU holds at once (SMs × maximum warps per SM)."""
    return lookup(name).resident_warps
