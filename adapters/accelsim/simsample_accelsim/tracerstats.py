"""``stats.csv``, the NVBit tracer's list of every launch of the process (traced or not).

The Accel-Sim tracer (``util/tracer_nvbit/tracer_tool/tracer_tool.cu``) writes one line per
``cuLaunchKernel`` it sees, whether or not the launch is in ``DYNAMIC_KERNEL_LIMIT_START``..
``_END``, under a header line that names the twelve fields (:data:`STATS_HEADER`: kernel id, kernel mangled
name, grid_dimX, grid_dimY, grid_dimZ, #blocks, block_dimX, block_dimY, block_dimZ, #threads, total_insts,
total_reported_insts)::

    kernel-1.trace, _Z12sgemm_kernelPKfS0_Pfiii, 8, 8, 1, 64, 128, 1, 1, 128, 25344,25344

The first field is the trace file the launch has (or would have) — ``kernel-N.trace``, with
``.xz`` under ``TRACE_FILE_COMPRESS=1`` — so N is the launch number; the two instruction counts
are written when the kernel ends (a run stopped by ``TERMINATE_UPON_LIMIT`` ends before the next
launch, so its last line is complete). It is what lets a folder holding only some launches be
checked against the whole launch sequence.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from simsample.sdk import FormatError, UserError, parse_int

STATS_FILE = "stats.csv"
_FILE = re.compile(r"^kernel-(\d+)\.trace(?:g)?(?:\.xz)?$")


@dataclass(frozen=True)
class StatsRow:
    """One launch of ``stats.csv``."""

    number: int
    name: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    total_insts: int | None
    text: str


STATS_HEADER = (
    "kernel id, kernel mangled name, grid_dimX, grid_dimY, grid_dimZ, #blocks, block_dimX, block_dimY, block_dimZ, "
    "#threads, total_insts, total_reported_insts"
)


def stats_line(
    number: int,
    name: str,
    grid: tuple[int, int, int],
    block: tuple[int, int, int],
    insts: int | None = 0,
    *,
    xz: bool = False,
) -> str:
    """One line as the tracer writes it (without the counts when ``insts`` is None: the process
    ended inside the kernel)."""
    g, b = grid, block
    head = (
        f"kernel-{number}.trace{'.xz' if xz else ''}, {name}, {g[0]}, {g[1]}, {g[2]}, {g[0] * g[1] * g[2]}, {b[0]}, "
        f"{b[1]}, {b[2]}, {b[0] * b[1] * b[2]}, "
    )
    return head if insts is None else head + f"{insts},{insts}"


#: the longest line a stats.csv may hold (real ones are under a few KiB, even with long template
#: names); a file that holds a longer one (a sparse file of zeros, a damaged copy) is refused
#: before it is read whole (see docs/limits.md, "stats line bytes")
MAX_LINE_BYTES = 1 << 20


def _too_long(p: Path) -> FormatError:
    return FormatError(
        p, f"a line longer than {MAX_LINE_BYTES >> 20} MiB; not a tracer stats.csv (damaged, or not the tracer's)"
    )


def _lines(p: Path):
    """The file's lines as text, read one at a time and each bounded by :data:`MAX_LINE_BYTES`."""
    with open(p, "rb") as fh:
        while True:
            raw = fh.readline(MAX_LINE_BYTES + 1)
            if not raw:
                return
            if len(raw) > MAX_LINE_BYTES:
                raise _too_long(p)
            yield raw.decode("utf-8", errors="replace")


def read_stats(path: str | Path, only: Collection[int] | None = None) -> dict[int, StatsRow]:
    """Launch number -> row of a tracer ``stats.csv`` (a line is refused with its number when it
    does not read as the tracer writes it). ``only``: parse just these launches' lines (a million
    launches' file is scanned in about a second instead of parsed in tens). Read line by line,
    each line bounded: memory follows the rows kept, not the file's size."""
    p = Path(path)
    want = None if only is None else set(int(n) for n in only)
    out: dict[int, StatsRow] = {}
    try:
        from simsample.sdk import check_size

        check_size(p, "log")  # read whole, line by line: held to the limit on tables read whole
        for number, line in enumerate(_lines(p), start=1):
            line = line.rstrip("\r\n")
            if want is not None and line.startswith("kernel-"):
                dot = line.find(".", 7)
                digits = line[7:dot]  # a number too long to be a launch is left to the parser's refusal
                if 7 < dot <= 47 and digits.isascii() and digits.isdigit() and int(digits) not in want:
                    continue
            out.update(parse_stats_lines(p, [line], first_line=number))
    except OSError as e:
        raise FormatError(p, f"cannot read ({e.strerror or e})") from None
    return out


def read_stats_tail(path: str | Path, count: int) -> dict[int, StatsRow]:
    """The last ``count`` launches of a ``stats.csv``, read from its end: a run of a range lists
    every launch from the process start, its own range last. The chunks read backwards are kept
    in a list and joined once (linear in what is read), and no line may be longer than
    :data:`MAX_LINE_BYTES`, so a huge or sparse file is refused after at most that much."""
    p = Path(path)
    step = 1 << 16
    chunks: list[bytes] = []
    newlines = 0
    since_newline = 0  # bytes read back since the last newline seen: the current line's length
    try:
        with open(p, "rb") as fh:
            fh.seek(0, 2)
            pos = fh.tell()
            while pos > 0 and newlines <= count + 1:
                n = min(pos, step)
                pos -= n
                fh.seek(pos)
                chunk = fh.read(n)
                chunks.append(chunk)
                last = chunk.rfind(b"\n")
                if last < 0:
                    since_newline += len(chunk)
                else:  # a chunk is shorter than a line may be: only a line across chunks can be too long
                    if since_newline + (len(chunk) - 1 - last) > MAX_LINE_BYTES:
                        raise _too_long(p)
                    newlines += chunk.count(b"\n")
                    since_newline = chunk.find(b"\n")
                if since_newline > MAX_LINE_BYTES:
                    raise _too_long(p)
    except OSError as e:
        raise FormatError(p, f"cannot read ({e.strerror or e})") from None
    chunks.reverse()
    lines = b"".join(chunks).decode("utf-8", errors="replace").splitlines()
    if pos > 0:
        lines = lines[1:]  # the first may be cut
    return parse_stats_lines(p, lines[-count:] if count > 0 else [], first_line=None)


def parse_stats_lines(p: Path, lines: list[str], first_line: int | None = 1) -> dict[int, StatsRow]:
    """Rows of ``stats.csv`` lines (``first_line``: the file line number of the first, for messages)."""
    out: dict[int, StatsRow] = {}
    for number, line in enumerate(lines, start=first_line or 1):
        if not line.strip() or line.startswith("kernel id"):
            continue
        raw = line.rstrip()
        complete = not raw.endswith(",")  # the counts are written when the kernel ends
        parts = [x.strip() for x in (raw if complete else raw[:-1]).split(",")]
        m = _FILE.match(parts[0])
        tail = 10 if complete else 8
        if m is None or len(parts) < tail + 2:
            raise FormatError(
                p,
                f"{line[:80]!r} is not a tracer stats line (kernel-N.trace, name, grid, blocks, block, threads, insts)",
                line=number if first_line else None,
            )
        name = ",".join(parts[1:-tail])  # a name with commas is rejoined
        where = number if first_line else None
        if not all(x.isascii() and x.lstrip("+-").isdigit() for x in parts[-tail:][:8]):
            raise FormatError(p, f"{line[:80]!r}: launch dimensions are not integers", line=where)
        try:  # bounded: a number of thousands of digits is refused by its length, not converted
            launch = parse_int(m.group(1), "kernel number")
            gx, gy, gz, _blocks, bx, by, bz, _threads = (parse_int(x, "launch dimension") for x in parts[-tail:][:8])
            insts = parse_int(parts[-2], "total_insts") if complete else None
        except UserError as exc:
            raise FormatError(p, str(exc), line=where) from None
        out[launch] = StatsRow(launch, name, (gx, gy, gz), (bx, by, bz), insts, line)
    return out
