"""Which Accel-Sim a sampled run will use, and whether it carries simsample's warm-up patch.

The best warm-up (functional replay of every launch back to where the L2 turned over, see
:func:`.warmup.reuse_window`) needs the project's patched simulator: an unpatched build skips
``warmup`` lines without a word and runs the samples cold, which biases every estimate. So
``apply`` chooses functional warm-up only where it finds a patched build, and says which it
found: the binary given with ``--accelsim``, else ``$ACCELSIM_ROOT/bin/release/accel-sim.out``
(what Accel-Sim's ``setup_environment.sh`` exports), else ``accel-sim.out`` on ``PATH``.

A build is patched when ``accel-sim.out`` holds the warm-up's log text (``GPGPU-Sim functional
warm-up:``, from the patch's trace-driven code, which is linked into ``accel-sim.out``; the
option table is in GPGPU-Sim's ``libcudart.so``, so the option name is not there). Builds of the
first patch replayed each warm-up trace with tag times ending at the clock, which loses the LRU
order of traces played at one cycle (all of them at a run's start); the current patch orders the
replay by the L2 partitions' memcpy ticks and says so once per run, which is :data:`ORDER_MARK`.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from simsample.sdk import UserError

#: Text of the warm-up patch's log lines, compiled into accel-sim.out by every revision.
PATCH_MARK = b"GPGPU-Sim functional warm-up:"
#: Text only the current revision holds (its once-per-run line).
ORDER_MARK = b"replay ordered by the L2 partitions' memcpy ticks"
#: What a build is, by the marks it holds: 0 unpatched, 1 the first warm-up patch, 2 the current one.
CURRENT_REVISION = 2
_CHUNK = 1 << 20


@dataclass(frozen=True)
class Simulator:
    """An Accel-Sim binary and which revision of the warm-up patch it carries (0: none)."""

    path: Path
    revision: int
    how: str  # how it was found: "--accelsim", "$ACCELSIM_ROOT" or "PATH"

    @property
    def patched(self) -> bool:
        """Whether it plays ``warmup`` lines at all."""
        return self.revision > 0


def patch_revision(binary: str | Path) -> int:
    """0, 1 or 2 (see :data:`CURRENT_REVISION`) by the marks ``binary`` holds, read in chunks
    overlapping by the longest mark's length, so that a mark across a chunk boundary is found."""
    marks = (PATCH_MARK, ORDER_MARK)
    keep = max(map(len, marks)) - 1
    found = set()
    tail = b""
    with open(binary, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            window = tail + chunk
            found.update(m for m in marks if m in window)
            if len(found) == len(marks):
                break
            tail = window[-keep:]
    if PATCH_MARK not in found:
        return 0
    return CURRENT_REVISION if ORDER_MARK in found else 1


def is_patched(binary: str | Path) -> bool:
    """Whether ``binary`` carries any revision of the warm-up patch."""
    return patch_revision(binary) > 0


def find_simulator(explicit: str | Path | None = None) -> Simulator | None:
    """The Accel-Sim binary a run here would use (see the module docstring), or None."""
    if explicit is not None:
        p = Path(explicit)
        if not p.is_file():
            raise UserError(
                f"--accelsim {explicit}: no such file; give the accel-sim.out binary the sampled run will use"
            )
        return Simulator(p, _revision(p), "--accelsim")
    root = os.environ.get("ACCELSIM_ROOT")
    if root:
        p = Path(root) / "bin" / "release" / "accel-sim.out"
        if p.is_file():
            return Simulator(p, _revision(p), "$ACCELSIM_ROOT")
    found = shutil.which("accel-sim.out")
    if found:
        return Simulator(Path(found), _revision(Path(found)), "PATH")
    return None


def _revision(path: Path) -> int:
    try:
        return patch_revision(path)
    except OSError as e:
        raise UserError(f"{path}: cannot read the simulator binary ({e.strerror or e})") from None
