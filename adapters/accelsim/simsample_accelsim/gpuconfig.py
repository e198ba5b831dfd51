"""Options of GPGPU-Sim config files, read as the simulator reads repeated ``-config`` files.

Several parts need a few numbers of the config the sampled run will use: the warm-up's cost
model (launch latency, SMs), the occupancy of a launch (threads, registers, shared memory and
CTAs an SM holds) and the reuse window (the L2's size). They read them here, one way: ``#``
starts a comment, an option is its first word and its value the second, and a later file
overrides an earlier one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from simsample.sdk import UserError, read_text_limited


def read_options(paths: Iterable[str | Path], names: Iterable[str]) -> dict[str, tuple[str, Path]]:
    """The value of each of ``names`` the files set, and the file that set it last."""
    wanted = set(names)
    found: dict[str, tuple[str, Path]] = {}
    for path in paths:
        try:
            text = read_text_limited(path, errors="replace")
        except OSError as e:
            raise UserError(
                f"{path}: cannot read the simulator config ({e.strerror or e}); give the gpgpusim.config the run uses"
            ) from None
        for line in text.splitlines():
            parts = line.split("#", 1)[0].split()
            if len(parts) >= 2 and parts[0] in wanted:
                found[parts[0]] = (parts[1], Path(path))
    return found


def int_option(found: dict[str, tuple[str, Path]], name: str, default: int) -> int:
    """An integer option of :func:`read_options`' result, ``default`` where no file sets it; a
    value that is not an integer is one line naming the file and the option."""
    if name not in found:
        return default
    value, path = found[name]
    if not re.fullmatch(r"[+-]?\d+", value):
        raise UserError(f"{path}: {name} {value!r} is not an integer; fix the config file")
    n = int(value) if len(value) <= 12 else INT32_MAX + 1  # more digits than any option holds: refused, never converted
    if not -INT32_MAX - 1 <= n <= INT32_MAX:  # GPGPU-Sim reads these options as 32-bit ints
        raise UserError(
            f"{path}: {name} {value[:30]!r} is beyond the 32-bit integers GPGPU-Sim reads it as; fix the config file"
        )
    return n


#: The largest value of a 32-bit option (GPGPU-Sim parses its integer options into C ``int``).
INT32_MAX = (1 << 31) - 1
