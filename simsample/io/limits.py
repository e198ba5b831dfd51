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
count, or ``0`` for no limit; anything else (negative, not finite, beyond 1 EiB, or a fraction that
rounds to 0) is refused naming the variable, never read as "no limit". A few limits are fixed
(:data:`FIXED`); they are documented beside the others.
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
    "document": Limit(
        "SIMSAMPLE_MAX_DOCUMENT_BYTES",
        256 * MiB,
        "a JSON or text document read whole (plan, estimate, evaluation, sample list, config, params, kernel list, "
        "PKP instruction file)",
    ),
    "log": Limit(
        "SIMSAMPLE_MAX_LOG_BYTES",
        8 * GiB,
        "a simulator log or results table read whole (a --truth log, a pkp replay log, the Accel-Sim tracer's "
        "stats.csv)",
    ),
    "profile": Limit(
        "SIMSAMPLE_MAX_PROFILE_BYTES",
        32 * GiB,
        "a profile read whole into memory, after decompression (a Kineto JSON trace, an Nsight Compute CSV)",
    ),
    "unpack": Limit(
        "SIMSAMPLE_MAX_UNPACK_BYTES",
        32 * GiB,
        "the members of one archive unpacked to the temporary folder, or a compressed file decompressed there, "
        "counted by their declared size",
    ),
    "members": Limit("SIMSAMPLE_MAX_UNPACK_MEMBERS", 100_000, "members in one archive", bytes=False),
    "ratio": Limit(
        "SIMSAMPLE_MAX_COMPRESSION_RATIO",
        200,
        "the ratio of decompressed to compressed size, checked as data is unpacked or inflated whole (beyond the "
        "first 64 MiB)",
        bytes=False,
    ),
}

#: the compression ratio is only judged once this much has been inflated: small, very repetitive
#: files (an Accel-Sim trace of one kernel inflates 500 times) are harmless
RATIO_FLOOR = 64 * MiB

_SUFFIX = {"": 1, "K": KiB, "M": MiB, "G": GiB, "T": 1 << 40}

#: the largest value a limit may be set to (1 EiB, or 2**60 items): beyond any machine, far
#: within every integer a read or an allocation takes (a larger value is a typo, not a wish)
MAX_SETTING = 1 << 60

#: how much a bounded read asks for at a time: reading "up to the limit" must never allocate the
#: limit (a limit raised to 64G would make every small plan "out of memory")
READ_CHUNK = 1 << 20

#: fixed limits, not configurable: each is documented in ``docs/limits.md`` (its row shows the
#: value as written here) with what it bounds, as the configurable ones are; a test checks that
#: the code uses these values. name -> (value, as the docs write it, what it bounds)
FIXED: dict[str, tuple[float, str, str]] = {
    "message characters": (1000, "1000", "an error message, cut with an ellipsis beyond it"),
    "trace header bytes": (1 << 20, "1 MiB", "the header of one Accel-Sim kernel trace (kernel-N.traceg)"),
    "join table bytes": (4 * GiB, "4 GiB", "the metric columns profile --join adds to a profile's launches"),
    "stats line bytes": (1 * MiB, "1 MiB", "one line of the Accel-Sim tracer's stats.csv"),
    "kernel name characters shown": (
        200,
        "200",
        "a kernel name in a table that profile info prints (the JSON keeps it whole)",
    ),
    "sampled value magnitude": (1e100, "1e100", "a value estimate sums (a simulator's count, a profile's metric)"),
    "seed": (2**32 - 1, "4294967295", "the seed of a sampler"),
    "time": (2**62, "2^62 ns", "a time given to --time-range or read from a step annotation"),
    "PKP window samples": (1 << 20, "1048576", "the samples in the PKP monitor's window (window / period)"),
    "evaluate repeats": (100_000, "100,000", "the plans evaluate makes per workload and setting (--repeat, repeats=)"),
}


def shown_name(name: str, width: int | None = None) -> str:
    """``name`` cut in the middle with ``…`` to ``width`` characters (by default the fixed limit
    on a kernel name shown in a table), in time independent of its length."""
    cap = int(FIXED["kernel name characters shown"][0]) if width is None else width
    if len(name) <= cap:
        return name
    half = (cap - 1) // 2
    return name[:half] + "…" + name[len(name) - (cap - 1 - half) :]


def accepted(lim: Limit) -> str:
    """The values a limit's variable takes, as its refusal says them."""
    if lim.bytes:
        return "a size from 1 byte to 1 EiB, such as 512M, 4G or 1T (a plain number is bytes), or 0 for no limit"
    return f"a whole number from 1 to {MAX_SETTING}, or 0 for no limit"


def parse_size(text: str, *, whole: bool = False) -> int:
    """``"512M"`` -> 536870912; a plain number is taken as is; ``0`` is no limit. Raises ValueError
    for anything else: not a number, negative, not finite, beyond :data:`MAX_SETTING`, a value
    that rounds to 0 without being 0 (``1e-9`` would otherwise turn the limit off), and with
    ``whole`` a count with a fraction."""
    t = text.strip().upper().removesuffix("IB").removesuffix("B")
    unit = t[-1:] if t[-1:] in _SUFFIX and t[-1:] else ""
    number = t[: len(t) - len(unit)].strip()
    if not number or len(number) > 40:
        raise ValueError(text)
    value = float(number)
    if not (value == value and 0 <= value < float("inf")):
        raise ValueError(text)
    if value == 0:
        return 0
    if whole and (unit or value != int(value)):
        raise ValueError(text)
    scaled = value * _SUFFIX[unit]
    if scaled > MAX_SETTING:
        raise ValueError(text)
    result = int(scaled)
    if result < 1:  # 1e-9, 0.4: not 0, yet it would mean "no limit"
        raise ValueError(text)
    return result


def limit(name: str) -> int:
    """The current value of a limit (its environment variable, else its default); 0 means none.
    A value outside :func:`accepted` is refused in one line naming the variable."""
    lim = LIMITS[name]
    raw = os.environ.get(lim.env, "").strip()
    if not raw:
        return lim.default
    try:
        return parse_size(raw, whole=not lim.bytes)
    except (ValueError, IndexError, OverflowError):
        shown = raw if len(raw) <= 40 else raw[:37] + "..."
        raise UserError(f"{lim.env}={shown!r}: expected {accepted(lim)} (see docs/limits.md)") from None


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
            path,
            "ratio",
            f"{what} {human(inflated)} from {human(compressed)}, {inflated // max(compressed, 1)} times its size, "
            "more than real data inflates (a decompression bomb?)",
        )


def read_bytes_limited(path: str | Path, name: str = "document", *, stream: bool = False) -> bytes:
    """The whole (undecompressed) content of a regular file within limit ``name``: the size is
    checked before reading, and at most one byte more than the limit is read (a file that grows
    while it is read, or a named pipe, which ``stream=True`` accepts, is held to it too)."""
    import stat

    from simsample.io.kinds import special_file

    kind = special_file(Path(path))
    if kind is not None and not (stream and stat.S_ISFIFO(os.stat(path).st_mode)):
        raise UserError(f"{path}: is {kind}, not a regular file; save the data to a file and give that")
    check_size(path, name)
    cap = limit(name)
    parts: list[bytes] = []
    total = 0
    with open(path, "rb") as fh:
        while True:  # in bounded chunks: asking read() for the cap would allocate it
            chunk = fh.read(READ_CHUNK)
            if not chunk:
                break
            total += len(chunk)
            if cap and total > cap:
                raise refusal(path, name, f"more than {human(cap)}")
            parts.append(chunk)
    return b"".join(parts)


def read_text_limited(path: str | Path, name: str = "document", *, errors: str = "strict", stream: bool = False) -> str:
    """:func:`read_bytes_limited` decoded as UTF-8 (``errors`` as for :meth:`bytes.decode`)."""
    return read_bytes_limited(path, name, stream=stream).decode("utf-8", errors=errors)


# The names in :mod:`simsample.sdk` (provisional): a reader that unpacks or inflates its input
# checks the same limits, and refuses in the same words, as the built-in ones.
size_limit = limit
limit_refusal = refusal
human_size = human
