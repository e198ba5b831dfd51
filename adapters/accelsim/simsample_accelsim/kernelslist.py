"""The command list ``kernelslist.g``, read exactly as Accel-Sim's trace parser reads it.

The simulator (``trace_parser::parse_commandlist_file``) takes each line as it is, without
stripping: an empty line is skipped, a line starting with ``MemcpyHtoD`` is a host-to-device copy
(``MemcpyHtoD,<hex address>,<decimal bytes>``, split on commas, anything else aborts), a line
starting with ``kernel`` names a trace file relative to the list's folder, and every other line
(comments, ``MemcpyDtoH``, junk) is ignored without a word. We report those ignored lines as
warnings with their line numbers, and refuse what would make the simulator fail: a malformed
memcpy, a trace name with whitespace (it goes unquoted into a shell), a trace name that does not
end in ``.traceg`` or ``.xz`` (the simulator throws "Unsupported file type"), and a list with
memcpys but no kernel.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from simsample.sdk import FormatError, read_bytes_limited

#: File name the tracer writes and the simulator is usually pointed at.
DEFAULT_LIST = "kernelslist.g"

_MEMCPY = re.compile(r"^MemcpyHtoD,(?:0[xX])?([0-9a-fA-F]+),(\d+)$")
_SHELL_SPECIAL = set(" \t\r\n\v\f'\"`$&|;<>()*?[]{}\\")


@dataclass(frozen=True)
class Memcpy:
    """One ``MemcpyHtoD`` command."""

    line: int
    text: str
    address: int
    nbytes: int


@dataclass(frozen=True)
class KernelEntry:
    """One ``kernel...`` line: the trace file, relative to the list's folder."""

    line: int
    text: str


@dataclass
class KernelsList:
    """The commands of a list in order, plus the lines the simulator ignores."""

    path: Path
    commands: list[Memcpy | KernelEntry] = field(default_factory=list)
    ignored: list[tuple[int, str]] = field(default_factory=list)

    @property
    def folder(self) -> Path:
        return self.path.parent

    @property
    def kernels(self) -> list[KernelEntry]:
        return [c for c in self.commands if isinstance(c, KernelEntry)]

    @property
    def memcpys(self) -> list[Memcpy]:
        return [c for c in self.commands if isinstance(c, Memcpy)]

    def ignored_warnings(self, limit: int = 5) -> list[str]:
        """Warnings for ignored lines (the first ``limit``, then a count of the rest)."""
        out = [
            f"{self.path.name} line {n}: ignored by the simulator: {text[:80]!r}" for n, text in self.ignored[:limit]
        ]
        if len(self.ignored) > limit:
            out.append(f"{self.path.name}: {len(self.ignored) - limit} more lines ignored by the simulator")
        return out


def shell_unsafe(text: str) -> str | None:
    """The first character that a shell would split on or interpret, or None."""
    for ch in text:
        if ch in _SHELL_SPECIAL or ord(ch) < 32:
            return ch
    return None


def parse_kernelslist(path: str | Path) -> KernelsList:
    """Parse a command list; raise :class:`FormatError` (with the line) where the simulator would fail."""
    p = Path(path)
    try:
        raw = read_bytes_limited(p)
    except FileNotFoundError:
        raise FormatError(p, "no such command list") from None
    except IsADirectoryError:
        raise FormatError(p, "is a directory, expected a command list file") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise FormatError(p, "not a text file (a kernelslist.g holds MemcpyHtoD and kernel-N.traceg lines)") from None
    out = KernelsList(path=p)
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # getline() yields no extra line after a final newline
    for number, line in enumerate(lines, start=1):
        if line == "":
            continue
        if line.startswith("MemcpyHtoD"):
            m = _MEMCPY.match(line)
            if m is None:
                raise FormatError(
                    p,
                    f"malformed memcpy {line[:80]!r}: expected MemcpyHtoD,0x<hex address>,<bytes> (the simulator "
                    "aborts on it)",
                    line=number,
                )
            if (
                len(m.group(1)) > 16 or len(m.group(2)) > 20 or int(m.group(2)) >= 1 << 64
            ):  # the simulator reads both as 64-bit
                raise FormatError(
                    p,
                    f"memcpy {line[:80]!r}: address or size beyond 64 bits (the simulator reads them as 64-bit "
                    "numbers)",
                    line=number,
                )
            out.commands.append(Memcpy(number, line, int(m.group(1), 16), int(m.group(2))))
        elif line.startswith("kernel"):
            bad = shell_unsafe(line)
            if bad is not None:
                raise FormatError(
                    p,
                    f"trace name {line[:80]!r} contains {bad!r}: the simulator passes it unquoted to a shell "
                    "(check for trailing spaces or Windows line endings)",
                    line=number,
                )
            if not (line.endswith(".traceg") or line.endswith(".xz")):
                raise FormatError(
                    p,
                    f"trace name {line[:80]!r} must end in .traceg or .traceg.xz (the simulator refuses other names)",
                    line=number,
                )
            out.commands.append(KernelEntry(number, line))
        else:
            out.ignored.append((number, line))
    if not out.kernels:
        if out.memcpys:
            raise FormatError(p, "has memcpys but no kernel line (the simulator aborts on such a list)")
        raise FormatError(p, "names no kernel trace (expected lines such as kernel-1.traceg)")
    return out


def render(commands: list[Memcpy | KernelEntry]) -> str:
    """The text of a command list: one command per line, newline-terminated."""
    return "".join(c.text + "\n" for c in commands)


def looks_like_kernelslist(head: bytes) -> bool:
    """Whether the first bytes of a file read like a command list (for format detection)."""
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        return False
    lines = [ln for ln in text.split("\n")[:50] if ln.strip()]
    if not lines:
        return False
    cmds = [
        ln
        for ln in lines
        if ln.startswith("MemcpyHtoD,") or (ln.startswith("kernel") and (ln.rstrip().endswith((".traceg", ".xz"))))
    ]
    return any(ln.startswith("kernel") for ln in cmds) and len(cmds) >= len(lines) / 2
