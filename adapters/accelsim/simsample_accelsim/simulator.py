"""Which Accel-Sim a sampled run will use, and whether it carries simsample's warm-up patch.

The best warm-up (functional replay of every launch back to where the L2 turned over, see
:func:`.warmup.reuse_window`) needs the project's patched simulator: an unpatched build skips
``warmup`` lines without a word and runs the samples cold, which biases every estimate. So
``apply`` chooses functional warm-up only where it finds a patched build, and says which it
found: the binary given with ``--accelsim``, else ``$ACCELSIM_ROOT/bin/release/accel-sim.out``
(what Accel-Sim's ``setup_environment.sh`` exports), else ``accel-sim.out`` on ``PATH``. A build
is patched when its binary holds the option name the patch registers (``-functional_warmup``).
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from simsample.errors import UserError

#: The option the warm-up patch registers; its name is in the binary's option table.
PATCH_MARK = b"-functional_warmup"
_CHUNK = 1 << 20


@dataclass(frozen=True)
class Simulator:
    """An Accel-Sim binary and whether it takes functional warm-up lines."""

    path: Path
    patched: bool
    how: str  # how it was found: "--accelsim", "$ACCELSIM_ROOT" or "PATH"


def is_patched(binary: str | Path) -> bool:
    """Whether ``binary`` holds the warm-up patch's option name (read in chunks, overlapping by
    the mark's length, so that a mark across a chunk boundary is found)."""
    keep = len(PATCH_MARK) - 1
    tail = b""
    with open(binary, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            if PATCH_MARK in tail + chunk:
                return True
            tail = chunk[-keep:]
    return False


def find_simulator(explicit: str | Path | None = None) -> Simulator | None:
    """The Accel-Sim binary a run here would use (see the module docstring), or None."""
    if explicit is not None:
        p = Path(explicit)
        if not p.is_file():
            raise UserError(f"--accelsim {explicit}: no such file; give the accel-sim.out binary the sampled run will use")
        return Simulator(p, _patched(p), "--accelsim")
    root = os.environ.get("ACCELSIM_ROOT")
    if root:
        p = Path(root) / "bin" / "release" / "accel-sim.out"
        if p.is_file():
            return Simulator(p, _patched(p), "$ACCELSIM_ROOT")
    found = shutil.which("accel-sim.out")
    if found:
        return Simulator(Path(found), _patched(Path(found)), "PATH")
    return None


def _patched(path: Path) -> bool:
    try:
        return is_patched(path)
    except OSError as e:
        raise UserError(f"{path}: cannot read the simulator binary ({e.strerror or e})") from None
