"""Which step (an NVTX range) of an Nsight Systems SQLite export each kernel launch belongs to.

Training loops mark their steps with NVTX ranges (``torch.cuda.nvtx.range("step 6")``, or
``ProfilerStep#6`` when the PyTorch profiler emits NVTX). An export keeps them in
``NVTX_EVENTS`` (push/pop ranges, ``eventType`` 59, and start/end ranges, 60), with the text in
``text`` or through ``textId`` in ``StringIds``. A range is a step when its text is
``ProfilerStep#N`` or ``step N`` (also ``step_N``, ``step#N``, any case). As for Kineto
(:mod:`simsample.io.kineto_steps`), a kernel belongs to the step that contains the CPU call that
launched it (``CUPTI_ACTIVITY_KIND_RUNTIME`` with the kernel's ``correlationId``), else its own
start; launches outside every step get -1.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from simsample.errors import FormatError
from simsample.io.sqlite_export import open_sqlite, sqlite_table_columns, sqlite_tables

STEP_TEXT = re.compile(r"^\s*(?:ProfilerStep#|step[\s#_:]*)(\d+)\s*$", re.IGNORECASE)
_RANGES = (59, 60)
#: The latest time kept (2^62 ns): sums of two such times still fit int64.
_TIME_MAX_NS = 2**62


def _is_time(v: Any) -> bool:
    """An integer number of nanoseconds from 0 to 2^62 (SQLite columns hold whatever was written: text, reals, NULL)."""
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= _TIME_MAX_NS


def step_of_launches(path: str | Path, wl: Any) -> np.ndarray | None:
    """Each launch's step number (-1 outside every step), or None when the export has no NVTX
    range named as a step."""
    with open_sqlite(path) as (conn, _uri):
        tables = sqlite_tables(conn)
        if "NVTX_EVENTS" not in tables:
            return None
        cols = set(sqlite_table_columns(conn, "NVTX_EVENTS"))
        text = "ifnull(n.text, s.value)" if "textId" in cols and "StringIds" in tables else "n.text"
        join = "LEFT JOIN StringIds s ON s.id = n.textId" if "textId" in cols and "StringIds" in tables else ""
        rows = conn.execute(
            f"SELECT n.start, n.end, {text} FROM NVTX_EVENTS n {join} WHERE n.eventType IN (59, 60) AND n.end IS NOT "
            "NULL"
        ).fetchall()
        steps = []
        for a, b, t in rows:
            m = STEP_TEXT.match(str(t)) if t is not None else None
            if m is None:
                continue
            if not (_is_time(a) and _is_time(b)) or len(m.group(1)) > 18:
                raise FormatError(
                    Path(path),
                    f"NVTX range {str(t)[:60]!r}: start {a!r} or end {b!r} is no time in ns (or its step number is "
                    "beyond int64); --steps needs the steps' times, or use --time-range",
                )
            steps.append((int(a), int(b), int(m.group(1))))
        steps.sort()
        if not steps:
            return None
        launch_ns: dict[int, int] = {}
        if "CUPTI_ACTIVITY_KIND_RUNTIME" in tables and "correlationId" in sqlite_table_columns(
            conn, "CUPTI_ACTIVITY_KIND_RUNTIME"
        ):
            # a launch call whose id or time is not an integer is as if absent: the kernel's own start is used
            launch_ns = {
                int(c): int(s)
                for c, s in conn.execute("SELECT correlationId, start FROM CUPTI_ACTIVITY_KIND_RUNTIME")
                if _is_time(s) and isinstance(c, int)
            }
    k = wl.kernels
    t = k["start_ns"].to_numpy(np.int64).copy()
    if "correlation" in k.columns and launch_ns:
        for i, c in enumerate(k["correlation"].tolist()):
            try:
                v = launch_ns.get(int(c))
            except (TypeError, ValueError, OverflowError):
                v = None
            if v is not None:
                t[i] = v
    starts = np.array([s[0] for s in steps], np.int64)
    ends = np.array([s[1] for s in steps], np.int64)
    numbers = np.array([s[2] for s in steps], np.int64)
    idx = np.searchsorted(starts, t, side="right") - 1
    out = np.full(len(k), -1, np.int64)
    ok = (idx >= 0) & (t <= ends[np.clip(idx, 0, None)])
    out[ok] = numbers[idx[ok]]
    return out
