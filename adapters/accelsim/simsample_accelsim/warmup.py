"""Which launches to run before each sampled launch, so that it meets the caches it met in the full run.

A sampled launch simulated right after a different predecessor finds a different L2 (Accel-Sim
flushes L1 at every kernel end but never L2): cold where the full run had the lines its
producers wrote, warm where the full run had evicted them. Running some of the launches that
preceded it in the real order (warm-up launches) restores that state; their results are left
out of the estimate (weight 0).

Two choices are offered:

* ``K`` (an int): the K launches immediately before each sampled launch. Simple and
  workload-agnostic, but it pays for K launches per sample, most of which warm nothing.
* ``targeted``: the footprint choice. From the trace bodies (the cache lines each launch's
  global loads read and its global stores write, :func:`.scan_numpy.scan_lines`), for each
  sampled launch, the lines it reads are attributed to the earlier launch within ``horizon``
  launches that last touched them (what the full run's L2 would hold). Candidates are added,
  cheapest per attributed line first (a launch already in the run costs nothing), until
  ``coverage`` of the attributed lines are covered. Producers outside the horizon are assumed
  evicted or irrelevant; the horizon and coverage are parameters because the right values
  depend on the L2 size relative to the footprints.

Memcpys are not warm-up: every ``MemcpyHtoD`` before a kept launch stays in place (as
:mod:`.apply` always did), so a warm-up launch sees the copies it saw in the full run.

:func:`warmup_steps` is the one place that says, per sample, what runs before it: the ordered
warm-up launches and memcpys. Per-sample job layouts reuse it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from simsample.errors import UserError
from simsample_accelsim.kernelslist import KernelEntry, Memcpy

#: Defaults of the targeted choice (see the module docstring and the README's measurements).
DEFAULT_HORIZON = 5
DEFAULT_COVERAGE = 0.8


@dataclass(frozen=True)
class WarmupSpec:
    """A warm-up setting: ``k`` launches before each sample, or the ``targeted`` footprint choice."""

    k: int | None = 0  # None for targeted
    horizon: int = DEFAULT_HORIZON
    coverage: float = DEFAULT_COVERAGE

    @property
    def targeted(self) -> bool:
        return self.k is None

    @property
    def none(self) -> bool:
        return self.k == 0

    def label(self) -> str:
        return f"targeted(h={self.horizon},c={self.coverage:g})" if self.targeted else f"K={self.k}"


def parse_warmup(text: str | int, horizon: int = DEFAULT_HORIZON, coverage: float = DEFAULT_COVERAGE) -> WarmupSpec:
    """``--warmup`` as given: a non-negative int K, ``none`` (= 0) or ``targeted``."""
    if horizon < 1:
        raise UserError(f"--warmup-horizon {horizon}: must be at least 1 (launches looked back for producers)")
    if not 0.0 < coverage <= 1.0:
        raise UserError(f"--warmup-coverage {coverage}: must be in (0, 1] (the share of a sample's producer lines to warm)")
    t = str(text).strip().lower()
    if t == "targeted":
        return WarmupSpec(None, horizon, coverage)
    if t == "none":
        return WarmupSpec(0, horizon, coverage)
    try:
        k = int(t)
    except ValueError:
        raise UserError(f"--warmup {text!r}: expected a number of launches K >= 0, 'none' or 'targeted'") from None
    if k < 0:
        raise UserError(f"--warmup {k}: K must be >= 0 (the number of launches run before each sampled launch)")
    return WarmupSpec(k, horizon, coverage)


def preceding(samples: Sequence[int], k: int) -> tuple[dict[int, list[int]], int]:
    """The K launch rows before each sampled row (fewer near the start), and how many samples got fewer."""
    out: dict[int, list[int]] = {}
    short = 0
    for s in sorted(set(samples)):
        first = max(0, s - k)
        if s - first < k:
            short += 1
        out[s] = list(range(first, s))
    return out, short


def targeted(
    samples: Sequence[int],
    weights: Mapping[int, float],
    footprint: Callable[[int], tuple[np.ndarray, np.ndarray, int]],
    *,
    horizon: int = DEFAULT_HORIZON,
    coverage: float = DEFAULT_COVERAGE,
) -> dict[int, list[int]]:
    """The footprint-targeted warm-up rows of each sampled row (see the module docstring).

    ``footprint(row)`` gives the sorted line arrays (reads, writes) of a launch and its
    simulation cost (warp instructions). Samples are served heaviest weight first so that the
    launches they pull in are free for lighter samples that share producers.
    """
    kept = set(int(s) for s in samples)
    cache: dict[int, tuple[np.ndarray, np.ndarray, int]] = {}

    def fp(row: int) -> tuple[np.ndarray, np.ndarray, int]:
        if row not in cache:
            cache[row] = footprint(row)
        return cache[row]

    chosen: set[int] = set()
    out: dict[int, list[int]] = {}
    for s in sorted(kept, key=lambda r: (-float(weights.get(r, 0.0)), r)):
        need = fp(s)[0]
        attributed: dict[int, int] = {}
        for j in range(s - 1, max(-1, s - 1 - horizon), -1):
            if len(need) == 0:
                break
            reads, writes, _ = fp(j)
            hit = np.isin(need, reads, assume_unique=True) | np.isin(need, writes, assume_unique=True)
            n = int(hit.sum())
            if n:
                attributed[j] = n
                need = need[~hit]  # the line's last toucher is j: earlier launches do not matter for it
        total = sum(attributed.values())
        picked: list[int] = []
        covered = 0
        free = lambda j: j in kept or j in chosen  # noqa: E731 - already in the run
        order = sorted(attributed, key=lambda j: (0.0 if free(j) else float(fp(j)[2]) / attributed[j], -j))
        for j in order:
            if covered >= coverage * total:
                break
            covered += attributed[j]
            if j not in kept:
                picked.append(j)
                chosen.add(j)
        out[s] = sorted(picked)
    return {s: out[s] for s in sorted(out)}


def warmup_steps(
    commands: Sequence[Memcpy | KernelEntry], samples: Sequence[int], warm: Mapping[int, Sequence[int]]
) -> dict[int, list[Memcpy | int]]:
    """Per sampled row, in real order, what runs before it: its warm-up launch rows (ints) and
    every memcpy of the list that precedes it (as in the full run)."""
    out: dict[int, list[Memcpy | int]] = {}
    for s in sorted(set(samples)):
        rows = set(warm.get(s, ()))
        steps: list[Memcpy | int] = []
        position = 0
        for cmd in commands:
            if isinstance(cmd, KernelEntry):
                if position >= s:
                    break
                if position in rows:
                    steps.append(position)
                position += 1
            else:
                steps.append(cmd)
        out[s] = steps
    return out
