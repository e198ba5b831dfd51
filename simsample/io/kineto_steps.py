"""Which ``ProfilerStep#N`` of a PyTorch-profiler (Kineto) trace each kernel launch belongs to.

``torch.profiler`` wraps each step in a CPU-side annotation ``ProfilerStep#N`` (``cat``
``user_annotation`` in recent versions, ``Operator`` in older ones). Kernels run on the GPU
later than they are launched, often past the end of the step that launched them, so a kernel is
given the step whose annotation contains the CPU call that launched it (the ``cuda_runtime`` /
``Runtime`` event with the kernel's ``correlation`` id); a kernel whose launch call is not found
falls back to its own start time. Launches outside every step get -1.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from simsample.errors import FormatError
from simsample.io.files import read_all

_STEP = re.compile(r"^ProfilerStep#(\d+)$")
_RUNTIME_CATS = ("cuda_runtime", "Runtime", "cuda_driver")


def _events(path: Path) -> tuple[list[dict[str, Any]], int]:
    """The trace's events and its ``baseTimeNanoseconds`` (which the reader adds to launch times)."""
    try:
        doc = json.loads(read_all(path))
    except (ValueError, UnicodeDecodeError) as e:
        raise FormatError(path, f"not a readable PyTorch-profiler trace for --steps ({e})") from None
    events = doc.get("traceEvents") if isinstance(doc, dict) else None
    if not isinstance(events, list):
        raise FormatError(path, "no traceEvents list (not a PyTorch-profiler trace)")
    try:
        base = int(doc.get("baseTimeNanoseconds") or 0)
    except (TypeError, ValueError):
        base = 0
    return events, base


def _us_to_ns(v: Any, base: int = 0) -> int:
    return base + int(round(float(v) * 1000))


def step_of_launches(paths: Sequence[str | Path], wl: Any) -> np.ndarray | None:
    """Each launch's step number (-1 outside every step), or None when the trace has no
    ``ProfilerStep#N`` annotation. ``wl`` is the workload read from ``paths`` (one file, or ranks
    whose launches carry ``rank``); times are compared in the trace's own microseconds."""
    steps: list[tuple[int, int, int]] = []  # (start_ns, end_ns, N)
    launch_ns: dict[int, int] = {}
    for path in paths[:1]:  # ranks: the first file's steps and launch calls (correlation ids are per rank)
        events, base = _events(Path(path))
        for e in events:
            if not isinstance(e, dict):
                continue
            name = e.get("name")
            if isinstance(name, str) and name.startswith("ProfilerStep#") and e.get("ph") == "X":
                m = _STEP.match(name)
                if m and "ts" in e and "dur" in e:
                    t0 = _us_to_ns(e["ts"], base)
                    steps.append((t0, t0 + _us_to_ns(e["dur"]), int(m.group(1))))
            elif e.get("cat") in _RUNTIME_CATS and isinstance(e.get("args"), dict) and "correlation" in e["args"] and "ts" in e:
                try:
                    launch_ns[int(e["args"]["correlation"])] = _us_to_ns(e["ts"], base)
                except (TypeError, ValueError):
                    continue
    if not steps:
        return None
    steps.sort()
    starts = np.array([s[0] for s in steps], np.int64)
    ends = np.array([s[1] for s in steps], np.int64)
    numbers = np.array([s[2] for s in steps], np.int64)
    k = wl.kernels
    t = k["start_ns"].to_numpy(np.int64).copy()
    if "correlation" in k.columns and ("rank" not in k.columns or k["rank"].nunique() <= 1):
        corr = k["correlation"].to_numpy()
        for i, c in enumerate(corr.tolist()):
            try:
                v = launch_ns.get(int(c))
            except (TypeError, ValueError):
                v = None
            if v is not None:
                t[i] = v
    idx = np.searchsorted(starts, t, side="right") - 1
    out = np.full(len(k), -1, np.int64)
    ok = (idx >= 0) & (t <= ends[np.clip(idx, 0, None)])
    out[ok] = numbers[idx[ok]]
    return out
