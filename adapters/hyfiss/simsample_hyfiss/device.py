"""The parts of a HyFiSS device configuration (``DEV-Def/*.config``) the CTA-set estimate needs.

``-key value`` lines, ``#`` starting a comment. Per unit class: the number of units in an SM and
one instruction's latency; per SM: the saturated issue rate (instructions per cycle over all
warp schedulers); and the number of SMs. Latencies come from HyFiSS's per-class
``-gpgpu_trace_opcode_latency_initiation_<class> <latency>,<interval>`` when present, else from
the GPGPU-Sim style ``-gpgpu_opcode_latency_<class> <add>,...`` (first value); the load/store
latency is the L1 data-cache hit latency.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from simsample.sdk import FormatError, UserError, read_text_limited
from simsample_hyfiss.units import CLASSES

UNIT_KEYS = {
    "sp": "-gpgpu_num_sp_units",
    "sfu": "-gpgpu_num_sfu_units",
    "int": "-gpgpu_num_int_units",
    "dp": "-gpgpu_num_dp_units",
    "tensor": "-gpgpu_num_tensor_core_units",
    "ldst": "-gpgpu_num_mem_units",
}
LATENCY_KEYS = {
    "sp": ("-gpgpu_trace_opcode_latency_initiation_sp", "-gpgpu_opcode_latency_fp"),
    "sfu": ("-gpgpu_trace_opcode_latency_initiation_sfu", "-gpgpu_opcode_latency_sfu"),
    "int": ("-gpgpu_trace_opcode_latency_initiation_int", "-gpgpu_opcode_latency_int"),
    "dp": ("-gpgpu_trace_opcode_latency_initiation_dp", "-gpgpu_opcode_latency_dp"),
    "tensor": ("-gpgpu_trace_opcode_latency_initiation_tensor", "-gpgpu_opcode_latency_tensor_core"),
    "ldst": ("-gpgpu_l1d_latency", "-gpgpu_l1_cache_access_latency"),
}
ISSUE_KEY = "-gpgpu_num_sched_per_sm"
SM_KEYS = ("-gpgpu_num_clusters", "-gpgpu_num_sms_per_cluster")


@dataclass(frozen=True)
class UnitClass:
    units: int
    latency: int


@dataclass(frozen=True)
class Device:
    """What the estimate needs of a device: classes, issue rate, SM count."""

    path: Path
    classes: dict[str, UnitClass | None]  # None: the config does not describe this class
    issue_rate: int
    sms: int

    def unit(self, cls: str) -> UnitClass:
        u = self.classes.get(cls)
        if u is None:
            keys = (UNIT_KEYS[cls], *LATENCY_KEYS[cls])
            raise UserError(f"{self.path}: instructions of class {cls} need {keys[0]} and {keys[1]} (or {keys[2]})")
        return u


def _read(path: Path) -> dict[str, tuple[str, int]]:
    if not path.is_file():
        raise UserError(f"{path}: no such file (pass HyFiSS's DEV-Def/<device>.config)")
    out: dict[str, tuple[str, int]] = {}
    for i, raw in enumerate(read_text_limited(path, errors="replace").splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line.startswith("-"):
            continue
        parts = line.split(None, 1)
        out[parts[0]] = (parts[1].strip() if len(parts) > 1 else "", i)
    return out


def _int(opts: dict[str, tuple[str, int]], key: str, path: Path, *, first: bool = False) -> int | None:
    if key not in opts:
        return None
    value, line = opts[key]
    text = value.split(",")[0].strip() if first else value
    try:
        n = int(text)
    except ValueError:
        raise FormatError(path, f"{key}: expected a whole number, got {value!r}", line=line) from None
    if n < 0 or (n == 0 and not first):
        raise FormatError(path, f"{key}: must be positive, got {n}", line=line)
    return n


def read_device(path: Path) -> Device:
    path = Path(path)
    opts = _read(path)
    classes: dict[str, UnitClass | None] = {}
    for cls in CLASSES:
        units = _int(opts, UNIT_KEYS[cls], path)
        lat = None
        for key in LATENCY_KEYS[cls]:
            lat = _int(opts, key, path, first=True)
            if lat is not None:
                break
        classes[cls] = UnitClass(units, max(lat, 1)) if units is not None and lat is not None else None
    issue = _int(opts, ISSUE_KEY, path)
    if issue is None:
        raise UserError(f"{path}: no {ISSUE_KEY} (the SM's issue rate: warp schedulers per SM)")
    clusters = _int(opts, SM_KEYS[0], path)
    if clusters is None:
        raise UserError(f"{path}: no {SM_KEYS[0]} (the number of SMs)")
    per = _int(opts, SM_KEYS[1], path) or 1
    return Device(path, classes, issue, clusters * per)
