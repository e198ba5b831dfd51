"""What kind of file a path is, judged with ``stat`` alone (no open: opening a named pipe with no
writer blocks forever). A module of its own because both the file helpers (:mod:`.files`) and the
size limits (:mod:`.limits`) ask it, and neither may import the other back."""

from __future__ import annotations

import stat
from pathlib import Path


def special_file(p: Path) -> str | None:
    """What ``p`` is when it exists but is neither a regular file nor a folder (a named pipe, a
    device, a socket), else None. Checked with ``stat`` alone: opening a pipe with no writer
    blocks forever, reading ``/dev/zero`` never ends."""
    try:
        mode = p.stat().st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"
