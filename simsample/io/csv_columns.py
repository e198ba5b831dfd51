"""``--columns name=Name,duration_ns=Duration``: which column of a per-kernel CSV holds what.

The ``csv`` reader (:mod:`simsample.plugins.readers.generic_csv`) reads the table; the mapping is
parsed here, in the core, because the command line and the public API check it before anything
is read (and neither imports a plugin).
"""

from __future__ import annotations

from simsample.errors import UserError

#: nanoseconds per unit of a time column's suffix
CSV_UNITS = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
_WHOLE = ("grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z", "stream", "regs", "shmem", "cycles")
CSV_KEYS = ("name", *(f"{t}_{u}" for t in ("duration", "start") for u in CSV_UNITS), *_WHOLE)


def parse_columns(text: str) -> dict[str, str]:
    """``"name=Name,duration_ns=Duration"`` → ``{"name": "Name", "duration_ns": "Duration"}``;
    an unknown key, a pair without ``=`` or a key given twice is a user error naming it."""
    out: dict[str, str] = {}
    for pair in filter(None, (p.strip() for p in text.split(","))):
        key, sep, col = pair.partition("=")
        key, col = key.strip(), col.strip()
        if not sep or not key or not col:
            raise UserError(f"--columns {pair!r}: expected KEY=COLUMN, such as name=Name,duration_ns=Duration")
        if key not in CSV_KEYS:
            raise UserError(f"--columns {pair!r}: unknown key {key!r} (known: {', '.join(CSV_KEYS)})")
        if key in out:
            raise UserError(f"--columns: {key!r} is given twice")
        out[key] = col
    if "name" not in out:
        raise UserError("--columns: name=COLUMN is required (the column with kernel names)")
    times = [k for k in out if k.startswith("duration_")]
    if len(times) > 1 or len([k for k in out if k.startswith("start_")]) > 1:
        raise UserError("--columns: give one duration_UNIT and at most one start_UNIT")
    if not times and "cycles" not in out:
        raise UserError(
            "--columns: a duration (duration_ns, duration_us, duration_ms or duration_s) or cycles column is required"
        )
    return out
