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

from simsample.io.sqlite_export import columns, open_export
from simsample.io.sqlite_export import tables as export_tables

STEP_TEXT = re.compile(r"^\s*(?:ProfilerStep#|step[\s#_:]*)(\d+)\s*$", re.IGNORECASE)
_RANGES = (59, 60)


def step_of_launches(path: str | Path, wl: Any) -> np.ndarray | None:
    """Each launch's step number (-1 outside every step), or None when the export has no NVTX
    range named as a step."""
    with open_export(path) as (conn, _uri):
        tables = export_tables(conn)
        if "NVTX_EVENTS" not in tables:
            return None
        cols = set(columns(conn, "NVTX_EVENTS"))
        text = "ifnull(n.text, s.value)" if "textId" in cols and "StringIds" in tables else "n.text"
        join = "LEFT JOIN StringIds s ON s.id = n.textId" if "textId" in cols and "StringIds" in tables else ""
        rows = conn.execute(
            f"SELECT n.start, n.end, {text} FROM NVTX_EVENTS n {join} WHERE n.eventType IN (59, 60) AND n.end IS NOT NULL"
        ).fetchall()
        steps = sorted((int(a), int(b), int(m.group(1))) for a, b, t in rows if t is not None and (m := STEP_TEXT.match(str(t))))
        if not steps:
            return None
        launch_ns: dict[int, int] = {}
        if "CUPTI_ACTIVITY_KIND_RUNTIME" in tables and "correlationId" in columns(conn, "CUPTI_ACTIVITY_KIND_RUNTIME"):
            launch_ns = {int(c): int(s) for c, s in conn.execute("SELECT correlationId, start FROM CUPTI_ACTIVITY_KIND_RUNTIME")}
    k = wl.kernels
    t = k["start_ns"].to_numpy(np.int64).copy()
    if "correlation" in k.columns and launch_ns:
        for i, c in enumerate(k["correlation"].tolist()):
            v = launch_ns.get(int(c))
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
