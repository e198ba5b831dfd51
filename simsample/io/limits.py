"""Limits on what an input may make simsample read, unpack or write, each one configurable.

A user's input is trusted with nothing: a 10 kB archive may declare a 2 GiB member, a 1 MB gzip
file may inflate to a gigabyte of zeros, a path may name ``/dev/zero`` or a 100 GB log. Every
boundary that reads a document whole, unpacks an archive or decompresses into memory or onto
disk checks one of these limits *before* (or, for compressed data, *while*) doing it, and
refuses in one line that names the limit and the environment variable that raises it. The
defaults are far above any real profile, plan or log (the largest real Kineto trace at hand
inflates 30 times; Accel-Sim logs of hours of simulation are a few GB and are streamed, not
read whole), so only hostile or mistaken inputs meet them. ``docs/limits.md`` lists them all.

A value is a number of bytes with an optional binary suffix (``512M``, ``4G``, ``1T``), a plain
count, or ``0`` for no limit.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from simsample.errors import UserError

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30


@dataclass(frozen=True)
class Limit:
    """One limit: the environment variable that sets it, its default, and what it bounds."""

    env: str
    default: int
    what: str
    bytes: bool = True


#: every limit, by short name (the order of ``docs/limits.md``)
LIMITS: dict[str, Limit] = {
    "document": Limit("SIMSAMPLE_MAX_DOCUMENT_BYTES", 256 * MiB, "a JSON or text document read whole (plan, estimate, evaluation, sample list, config, params, kernel list, PKP instruction file)"),
    "log": Limit("SIMSAMPLE_MAX_LOG_BYTES", 8 * GiB, "a simulator log or results table read whole (a --truth log, a pkp replay log)"),
    "profile": Limit("SIMSAMPLE_MAX_PROFILE_BYTES", 32 * GiB, "a profile read whole into memory, after decompression (a Kineto JSON trace, an Nsight Compute CSV)"),
    "unpack": Limit("SIMSAMPLE_MAX_UNPACK_BYTES", 32 * GiB, "the members of one archive unpacked to the temporary folder, or a compressed file decompressed there, counted by their declared size"),
    "members": Limit("SIMSAMPLE_MAX_UNPACK_MEMBERS", 100_000, "members in one archive", bytes=False),
    "ratio": Limit("SIMSAMPLE_MAX_COMPRESSION_RATIO", 200, "the ratio of decompressed to compressed size, checked as data is unpacked or inflated whole (beyond the first 64 MiB)", bytes=False),
}

#: the compression ratio is only judged once this much has been inflated: small, very repetitive
#: files (an Accel-Sim trace of one kernel inflates 500 times) are harmless
RATIO_FLOOR = 64 * MiB

_SUFFIX = {"": 1, "K": KiB, "M": MiB, "G": GiB, "T": 1 << 40}


def parse_size(text: str) -> int:
    """``"512M"`` -> 536870912; a plain number is taken as is. Raises ValueError."""
    t = text.strip().upper().removesuffix("IB").removesuffix("B")
    unit = t[-1:] if t[-1:] in _SUFFIX and t[-1:] else ""
    number = t[: len(t) - len(unit)].strip()
    value = float(number) * _SUFFIX[unit]
    if not (value >= 0 and value == value and value != float("inf")):
        raise ValueError(text)
    return int(value)


def limit(name: str) -> int:
    """The current value of a limit (its environment variable, else its default); 0 means none."""
    lim = LIMITS[name]
    raw = os.environ.get(lim.env, "").strip()
    if not raw:
        return lim.default
    try:
        return parse_size(raw)
    except (ValueError, IndexError):
        raise UserError(f"{lim.env}={raw!r}: expected a number{' of bytes such as 512M or 4G' if lim.bytes else ''} (0 for no limit)") from None


def human(n: float) -> str:
    """A byte count as people write it (``2.0 GiB``)."""
    for unit, size in (("TiB", 1 << 40), ("GiB", GiB), ("MiB", MiB), ("KiB", KiB)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{int(n)} bytes"


def how_to_raise(name: str) -> str:
    """The tail every refusal ends with: the limit and how to change it."""
    lim = LIMITS[name]
    value = limit(name)
    shown = human(value) if lim.bytes else str(value)
    return f"the limit is {shown}; if the input is genuine, raise it with {lim.env}=... (see docs/limits.md)"


def refusal(path: str | Path, name: str, detail: str) -> UserError:
    """The one-line error for an input beyond limit ``name``."""
    return UserError(f"{path}: {detail}; {how_to_raise(name)}")


def check_size(path: str | Path, name: str, size: int | None = None) -> None:
    """Refuse a file larger than limit ``name`` before anything of it is read."""
    cap = limit(name)
    if not cap:
        return
    n = os.stat(path).st_size if size is None else size
    if n > cap:
        raise refusal(path, name, f"{human(n)}, larger than {LIMITS[name].what.split(' (')[0]} may be")


def check_ratio(path: str | Path, inflated: int, compressed: int, *, what: str = "inflates to") -> None:
    """Refuse data that inflates more than the ratio limit allows (judged past :data:`RATIO_FLOOR`);
    ``what`` says how ``inflated`` is known (``"its members declare"`` for an archive's listing)."""
    cap = limit("ratio")
    if cap and inflated > RATIO_FLOOR and inflated > cap * max(compressed, 1):
        raise refusal(
            path, "ratio",
            f"{what} {human(inflated)} from {human(compressed)}, {inflated // max(compressed, 1)} times its size, more than real data inflates (a decompression bomb?)",
        )


def read_bytes_limited(path: str | Path, name: str = "document", *, stream: bool = False) -> bytes:
    """The whole (undecompressed) content of a regular file within limit ``name``: the size is
    checked before reading, and at most one byte more than the limit is read (a file that grows
    while it is read, or a named pipe, which ``stream=True`` accepts, is held to it too)."""
    import stat

    from simsample.io.files import special_file

    kind = special_file(Path(path))
    if kind is not None and not (stream and stat.S_ISFIFO(os.stat(path).st_mode)):
        raise UserError(f"{path}: is {kind}, not a regular file; save the data to a file and give that")
    check_size(path, name)
    cap = limit(name)
    with open(path, "rb") as fh:
        data = fh.read(cap + 1) if cap else fh.read()
    if cap and len(data) > cap:
        raise refusal(path, name, f"more than {human(cap)}")
    return data


def read_text_limited(path: str | Path, name: str = "document", *, errors: str = "strict", stream: bool = False) -> str:
    """:func:`read_bytes_limited` decoded as UTF-8 (``errors`` as for :meth:`bytes.decode`)."""
    return read_bytes_limited(path, name, stream=stream).decode("utf-8", errors=errors)
