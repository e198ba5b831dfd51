"""HyFiSS's SM sampling by CTA-sets (HyFiSS, MICRO'24, §III-C): per kernel, simulate the SM whose
CTA-set should take longest.

The CTA-set of an SM is the CTAs the real scheduler placed on it (``issue.config``). For each
execution-unit class i with N_eu units of latency Lat, and N_sm instructions of that class in the
CTA-set (dynamic warp instructions from the ``.sass`` traces, classed through the static
instructions of ``instn.config``)::

    C_i       = N_sm / N_eu + (Lat - 1)                      (0 when the set has no class-i work)
    C_fullIR  = max_i  C_i * N_eu / min(N_eu, IRate)

with IRate the SM's saturated issue rate. The SM with the largest C_fullIR (the lowest id on a
tie) is the kernel's ``-kernel_K_sampling_point``.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from simsample.sdk import FormatError, UserError
from simsample_hyfiss.app import AppPaths, Schedule, StaticInstructions
from simsample_hyfiss.device import Device
from simsample_hyfiss.units import CLASSES, unit_class

_BLOCK_FILE = re.compile(r"^kernel_(\d+)_block_(\d+)\.sass$")


def block_files(app: AppPaths, k: int) -> dict[int, Path]:
    """Block → its ``.sass`` trace, for kernel ``k``."""
    d = app.sass_dir(k)
    if not d.is_dir():
        raise UserError(f"{d}: no such folder: kernel {k} has no split SASS traces (run HyFiSS's sass-split first)")
    out = {}
    for p in d.iterdir():
        m = _BLOCK_FILE.match(p.name)
        if m and int(m.group(1)) == k:
            out[int(m.group(2))] = p
    return out


def block_class_counts(path: Path, k: int, instn: StaticInstructions) -> Counter[str]:
    """Dynamic warp instructions per unit class in one block's trace (``<pc> <mask> <warp>`` lines)."""
    toks = path.read_bytes().split()
    if len(toks) % 3:
        raise FormatError(path, "expected '<pc> <mask> <warp>' lines; the file ends in the middle of one")
    per_pc = Counter(toks[0::3])
    ops = instn.opcode.get(k, {})
    out: Counter[str] = Counter()
    for pc_text, n in per_pc.items():
        try:
            pc = int(pc_text, 16)
        except ValueError:
            raise FormatError(path, f"pc {pc_text.decode(errors='replace')!r} is not hexadecimal") from None
        op = ops.get(pc)
        if op is None:
            raise FormatError(path, f"pc {pc:x} of kernel {k} is not in {instn.path.name}")
        out[unit_class(op)] += n
    return out


def kernel_class_counts(app: AppPaths, k: int, instn: StaticInstructions) -> Counter[str]:
    """Dynamic warp instructions per class over all blocks of kernel ``k``."""
    total: Counter[str] = Counter()
    for _b, p in sorted(block_files(app, k).items()):
        total.update(block_class_counts(p, k, instn))
    return total


def c_full_issue_rate(counts: Counter[str] | dict[str, int], device: Device) -> float:
    """C_fullIR of one CTA-set (see the module docstring)."""
    best = 0.0
    for cls in CLASSES:
        n = counts.get(cls, 0)
        if n <= 0:
            continue
        u = device.unit(cls)
        c_i = n / u.units + (u.latency - 1)
        best = max(best, c_i * u.units / min(u.units, device.issue_rate))
    return best


@dataclass
class SMEstimate:
    sm: int
    ctas: int
    counts: dict[str, int]
    c_full_ir: float


@dataclass
class KernelPick:
    kernel: int
    sm: int
    sms: list[SMEstimate] = field(default_factory=list)

    @property
    def best(self) -> SMEstimate:
        return next(s for s in self.sms if s.sm == self.sm)


def pick_kernel(app: AppPaths, k: int, schedule: Schedule, instn: StaticInstructions, device: Device) -> KernelPick:
    """Estimate every SM's CTA-set of kernel ``k`` and pick the slowest."""
    placed = schedule.blocks(k)
    if not placed:
        raise UserError(f"{schedule.path}: kernel {k} has no CTA in the schedule")
    files = block_files(app, k)
    extra = sorted(set(files) - set(placed))
    if extra:
        raise FormatError(schedule.path, f"block {extra[0]} of kernel {k} has a trace but no SM in the schedule")
    lacking = sorted(set(placed) - set(files))
    if lacking:
        raise UserError(
            f"{app.sass_dir(k)}: block {lacking[0]} of kernel {k} is scheduled but has no trace "
            f"(kernel_{k}_block_{lacking[0]}.sass)"
        )
    too_big = sorted({sm for sm in placed.values() if sm >= device.sms})
    if too_big:
        raise UserError(
            f"{schedule.path} places CTAs on SM {too_big[0]}, but {device.path.name} has {device.sms} SMs: another "
            "device's config?"
        )
    per_sm: dict[int, Counter[str]] = {}
    ctas: Counter[int] = Counter()
    for b, sm in placed.items():
        per_sm.setdefault(sm, Counter()).update(block_class_counts(files[b], k, instn))
        ctas[sm] += 1
    sms = [
        SMEstimate(sm, ctas[sm], {c: int(per_sm[sm].get(c, 0)) for c in CLASSES}, c_full_issue_rate(per_sm[sm], device))
        for sm in sorted(per_sm)
    ]
    best = max(sms, key=lambda s: (s.c_full_ir, -s.sm))
    return KernelPick(k, best.sm, sms)
