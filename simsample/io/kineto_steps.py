"""Which ``ProfilerStep#N`` of a PyTorch-profiler (Kineto) trace each kernel launch belongs to.

``torch.profiler`` wraps each step in a CPU-side annotation ``ProfilerStep#N`` (``cat``
``user_annotation`` in recent versions, ``Operator`` in older ones). Kernels run on the GPU
later than they are launched, often past the end of the step that launched them, so a kernel is
given the step whose annotation contains the CPU call that launched it (the ``cuda_runtime`` /
``Runtime`` event with the kernel's ``correlation`` id, on whichever thread: the backward pass
launches from the autograd engine's own thread); a kernel whose launch call is not found falls
back to its own start time. Launches outside every step get -1.

Recent versions also copy each annotation onto the GPU's timeline (``gpu_user_annotation``):
a range from the step's first kernel to its last, shorter than the CPU-side one and starting
inside it. Those are not matched against launch calls (a backward launch after the GPU range
of its step had ended fell outside every step: two thirds of a training step's launches were
lost); where a trace has only them, they are matched against the kernels' own start times.
"""

from __future__ import annotations

import json
import math
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
        base = _us_to_ns(doc.get("baseTimeNanoseconds") or 0, scale=1)
    except ValueError:
        base = 0
    return events, base


#: The latest time kept (2^62 ns, 146 years): sums of two such times still fit int64.
_TIME_MAX_NS = 2**62


def _us_to_ns(v: Any, base: int = 0, *, scale: int = 1000) -> int:
    """A trace time in microseconds (``scale`` 1: nanoseconds) as integer nanoseconds plus
    ``base``; ``ValueError`` for what is no time: text, null, a boolean, NaN, infinities, a
    negative value or one beyond 2^62 ns (``1e300``)."""
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        # one kind of refusal (ValueError) for every value that is no time
        raise ValueError(f"{v!r} is not a number")  # noqa: TRY004
    if isinstance(v, str) and (len(v) > 40 or not v.strip()):
        raise ValueError(f"{v[:40]!r} is not a number")
    x = float(v) * scale  # ValueError for text
    if not math.isfinite(x) or x < 0 or x > _TIME_MAX_NS:
        raise ValueError(f"{v!r} is not a time from 0 to {_TIME_MAX_NS // scale:,}")
    out = base + round(x)
    if out > _TIME_MAX_NS * 2:
        raise ValueError(f"{v!r} plus the trace's base time is beyond int64 nanoseconds")
    return out


def step_of_launches(paths: Sequence[str | Path], wl: Any) -> np.ndarray | None:
    """Each launch's step number (-1 outside every step), or None when the trace has no
    ``ProfilerStep#N`` annotation. ``wl`` is the workload read from ``paths`` (one file, or ranks
    whose launches carry ``rank``); times are compared in the trace's own microseconds."""
    steps: list[tuple[int, int, int]] = []  # (start_ns, end_ns, N): CPU-side annotations
    gpu_steps: list[tuple[int, int, int]] = []  # their copies on the GPU's timeline
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
                    try:
                        t0 = _us_to_ns(e.get("ts"), base)
                        dur = _us_to_ns(e.get("dur"))
                    except ValueError as err:
                        raise FormatError(
                            Path(path),
                            f"{name}: its ts or dur is no time ({err}); --steps needs the steps' times, "
                            "or use --time-range",
                        ) from None
                    if len(m.group(1)) > 18:
                        raise FormatError(Path(path), f"{name[:40]}...: a step number beyond int64")
                    (gpu_steps if e.get("cat") == "gpu_user_annotation" else steps).append(
                        (t0, t0 + dur, int(m.group(1)))
                    )
            elif (
                e.get("cat") in _RUNTIME_CATS
                and isinstance(e.get("args"), dict)
                and "correlation" in e["args"]
                and "ts" in e
            ):
                try:  # a launch call whose id or time does not read is as if absent: the kernel's own start is used
                    c = e["args"]["correlation"]
                    if isinstance(c, bool) or not isinstance(c, (int, str)) or len(str(c)) > 19:
                        continue
                    launch_ns[int(c)] = _us_to_ns(e["ts"], base)
                except (TypeError, ValueError):
                    continue
    on_gpu = not steps
    if on_gpu:
        steps = gpu_steps
    if not steps:
        return None
    steps.sort()
    starts = np.array([s[0] for s in steps], np.int64)
    ends = np.array([s[1] for s in steps], np.int64)
    numbers = np.array([s[2] for s in steps], np.int64)
    k = wl.kernels
    t = k["start_ns"].to_numpy(np.int64).copy()
    if not on_gpu and "correlation" in k.columns and ("rank" not in k.columns or k["rank"].nunique() <= 1):
        corr = k["correlation"].to_numpy()
        for i, c in enumerate(corr.tolist()):
            try:
                v = launch_ns.get(int(c))
            except (TypeError, ValueError, OverflowError):
                v = None
            if v is not None:
                t[i] = v
    idx = np.searchsorted(starts, t, side="right") - 1
    out = np.full(len(k), -1, np.int64)
    ok = (idx >= 0) & (t <= ends[np.clip(idx, 0, None)])
    out[ok] = numbers[idx[ok]]
    return out
