"""Pure-Python twin of the C++ PKP monitor (``cpp/pkp_hook/pkp_monitor.hpp``).

Used when the compiled module ``simsample._pkp`` is absent or ``SIMSAMPLE_PURE_PYTHON=1``.
Behaviour is identical, down to the bits of every double: each value is computed with the
same IEEE-754 operations in the same order as the C++ code (integers are converted with
``float()`` before dividing, as C++ casts them; the window's sum and squared deviations are
accumulated oldest sample first; ``math.sqrt`` is correctly rounded like ``std::sqrt``).
Keep the two in step: any change here must be made there too, and the tests compare both on
random signals.
"""

from __future__ import annotations

import math
from operator import index
from typing import Any

WAVE_RULES = ("paper", "artifact")
PROJECTIONS = ("paper", "artifact", "instructions")
_MAX_WINDOW_SAMPLES = 1 << 20
#: Entries of the settle history (as ``Monitor::kHistory`` in C++).
HISTORY = 128
_U64_MAX = (1 << 64) - 1

implementation = "python"


def validate(
    *,
    period: int,
    window: int,
    threshold: float,
    total_ctas: int,
    wave_size: int,
    wave_rule: str,
    projection: str,
    small_grid_fraction: float,
    min_remaining: float = 0.0,
    settle: float = 0.0,
) -> str | None:
    """``None`` when the configuration is valid, else what is wrong (same texts as C++)."""
    if period == 0:
        return "period must be at least 1 cycle"
    if window // period < 2:
        return "window must span at least 2 sample periods"
    if window // period > _MAX_WINDOW_SAMPLES:
        return "window spans too many samples (at most 1048576)"
    if not (threshold > 0.0) or not math.isfinite(threshold):
        return "threshold must be a positive number (percent)"
    if total_ctas == 0:
        return "total_ctas must be at least 1"
    if wave_size == 0:
        return "wave_size must be at least 1"
    if not (small_grid_fraction > 0.0) or not (small_grid_fraction <= 1.0):
        return "small_grid_fraction must be in (0, 1]"
    if not (min_remaining >= 0.0) or not (min_remaining < 1.0):
        return "min_remaining must be in [0, 1)"
    if not (settle >= 0.0) or not (settle < 1.0):
        return "settle must be in [0, 1)"
    return None


def round_projection(x: float) -> int:
    """A projected value as the simulator hook prints it: floor(x + 0.5), 0 for NaN or negatives."""
    if not x >= 0.0:
        return 0
    if x >= 18446744073709551615.0:
        return _U64_MAX
    return int(math.floor(x + 0.5))


def _u64(name: str, v: Any) -> int:
    v = index(v)
    if v < 0 or v > _U64_MAX:
        raise TypeError(f"{name} must be an unsigned 64-bit integer, got {v}")
    return v


class Monitor:
    """IPC-stability monitor of one running kernel; see :mod:`simsample.pkp` for the rules."""

    __slots__ = (
        "_period", "_window", "_threshold", "_total", "_wave", "_wave_rule", "_projection", "_fraction",
        "_n", "_ring", "_head", "_count", "_next_due", "_samples", "_stable_seen", "_stable_since",
        "_stopped", "_last_ipc", "_last_cov", "_stop_cycle", "_stop_insns", "_stop_ctas",
        "_proj_cycles", "_proj_insns", "_latency", "_total_insns", "_min_remaining", "_drain_tail",
        "_finished", "_final_cycles", "_final_insns", "_settle", "_hist_cycle", "_hist_ipc", "_hist_len",
        "_hist_stride", "_last_settle_cov",
    )  # fmt: skip

    def __init__(
        self,
        *,
        period: int = 500,
        window: int = 3000,
        threshold: float = 0.25,
        total_ctas: int = 1,
        wave_size: int = 1,
        wave_rule: str = "paper",
        projection: str = "paper",
        small_grid_fraction: float = 0.3,
        launch_latency: int = 0,
        total_insns: int = 0,
        min_remaining: float = 0.0,
        drain_tail: bool = False,
        settle: float = 0.0,
    ) -> None:
        self._latency = _u64("launch_latency", launch_latency)
        period, window = _u64("period", period), _u64("window", window)
        total_ctas, wave_size = _u64("total_ctas", total_ctas), _u64("wave_size", wave_size)
        threshold, small_grid_fraction, min_remaining = (
            float(threshold),
            float(small_grid_fraction),
            float(min_remaining),
        )
        settle = float(settle)
        if wave_rule not in WAVE_RULES:
            raise ValueError(f"wave_rule must be 'paper' or 'artifact', not '{wave_rule}'")
        if projection not in PROJECTIONS:
            raise ValueError(f"projection must be 'paper', 'artifact' or 'instructions', not '{projection}'")
        err = validate(
            period=period, window=window, threshold=threshold, total_ctas=total_ctas, wave_size=wave_size,
            wave_rule=wave_rule, projection=projection, small_grid_fraction=small_grid_fraction,
            min_remaining=min_remaining, settle=settle,
        )  # fmt: skip
        if err is not None:
            raise ValueError(err)
        self._period = period
        self._window = window
        self._threshold = threshold
        self._wave_rule = wave_rule
        self._projection = projection
        self._fraction = small_grid_fraction
        self._min_remaining = min_remaining
        self._drain_tail = bool(drain_tail)
        self._settle = settle
        self._hist_cycle = [0] * HISTORY
        self._hist_ipc = [0.0] * HISTORY
        self._n = window // period
        self._ring = [0.0] * self._n
        self.restart(total_ctas, wave_size, total_insns)

    def restart(self, total_ctas: int, wave_size: int, total_insns: int = 0) -> None:
        """Start over for a new kernel (same period, window, threshold and rules); ``total_insns``
        is the new kernel's instruction count if known (0: unknown)."""
        total_ctas, wave_size = _u64("total_ctas", total_ctas), _u64("wave_size", wave_size)
        self._total_insns = _u64("total_insns", total_insns)
        if total_ctas == 0:
            raise ValueError("total_ctas must be at least 1")
        if wave_size == 0:
            raise ValueError("wave_size must be at least 1")
        self._total = total_ctas
        self._wave = wave_size
        self._next_due = self._period
        self._head = 0
        self._count = 0
        self._samples = 0
        self._stable_seen = False
        self._stable_since = 0
        self._stopped = False
        self._last_ipc = 0.0
        self._last_cov = math.nan
        self._stop_cycle = self._stop_insns = self._stop_ctas = 0
        self._proj_cycles = self._proj_insns = math.nan
        self._finished = False
        self._final_cycles = self._final_insns = math.nan
        for i in range(self._n):
            self._ring[i] = 0.0
        self._hist_len = 0
        self._hist_stride = 1
        self._last_settle_cov = math.nan

    def update(self, cycle: int, insns: int, completed_ctas: int) -> bool:
        """Feed the kernel's cycle, cumulative instructions and completed CTAs; True once it may stop."""
        cycle, insns, completed_ctas = (
            _u64("cycle", cycle),
            _u64("insns", insns),
            _u64("completed_ctas", completed_ctas),
        )
        if self._stopped:
            return True
        if cycle < self._next_due:
            return False
        return self._sample(cycle, insns, completed_ctas)

    def _sample(self, cycle: int, insns: int, completed: int) -> bool:
        n = self._n
        ring = self._ring
        self._next_due = (cycle // self._period + 1) * self._period
        if cycle <= self._latency:  # launch latency apart: no sample before the first CTA can run
            return False
        self._samples += 1
        ipc = float(insns) / float(cycle - self._latency)
        self._last_ipc = ipc
        ring[self._head] = ipc
        self._head = 0 if self._head + 1 == n else self._head + 1
        kept = self._remember(cycle, ipc)
        if self._count < n:
            self._count += 1
        if self._count == n:
            total = 0.0
            i = self._head
            for _ in range(n):
                total += ring[i]
                i = 0 if i + 1 == n else i + 1
            mean = total / float(n)
            ss = 0.0
            i = self._head
            for _ in range(n):
                d = ring[i] - mean
                sq = d * d
                ss += sq
                i = 0 if i + 1 == n else i + 1
            sd = math.sqrt(ss / float(n - 1))
            self._last_cov = sd / mean * 100.0 if mean > 0.0 else math.inf
            if (
                not self._stable_seen
                and mean > 0.0
                and self._last_cov < self._threshold
                and self._settled(cycle, ipc, kept)
            ):
                self._stable_seen = True
                self._stable_since = cycle
        if self._stable_seen and self.wave_ok(completed) and self.remaining_ok(completed):
            self._stopped = True
            self._stop_cycle = cycle
            self._stop_insns = insns
            self._stop_ctas = completed
            self._proj_cycles = self.project_cycles(cycle, completed, insns)
            self._proj_insns = self.project_insns(insns, completed)
        return self._stopped

    def _remember(self, cycle: int, ipc: float) -> bool:
        """Keep every stride-th sample; when full, drop every other entry and double the stride."""
        if self._samples % self._hist_stride != 0:
            return False
        if self._hist_len == HISTORY:
            hc, hi = self._hist_cycle, self._hist_ipc
            for q, p in enumerate(range(1, HISTORY, 2)):
                hc[q] = hc[p]
                hi[q] = hi[p]
            self._hist_len = HISTORY // 2
            self._hist_stride *= 2
            if self._samples % self._hist_stride != 0:
                return False
        self._hist_cycle[self._hist_len] = cycle
        self._hist_ipc[self._hist_len] = ipc
        self._hist_len += 1
        return True

    def _settled(self, cycle: int, ipc: float, kept: bool) -> bool:
        """Whether the cumulative IPC held over the last ``settle`` of the run (see the C++)."""
        self._last_settle_cov = math.nan
        if not self._settle > 0.0:
            return True
        run = float(cycle - self._latency)
        start = float(self._latency) + run * (1.0 - self._settle)
        n = self._hist_len
        first = n
        for p in range(n):
            if float(self._hist_cycle[p]) >= start:
                first = p
                break
        count = (n - first) + (0 if kept else 1)
        if count < 2:
            return True
        total = 0.0
        for p in range(first, n):
            total += self._hist_ipc[p]
        if not kept:
            total += ipc
        mean = total / float(count)
        ss = 0.0
        for p in range(first, n):
            d = self._hist_ipc[p] - mean
            sq = d * d
            ss += sq
        if not kept:
            d = ipc - mean
            sq = d * d
            ss += sq
        sd = math.sqrt(ss / float(count - 1))
        if not mean > 0.0:
            self._last_settle_cov = math.inf
            return False
        self._last_settle_cov = sd / mean * 100.0
        return self._last_settle_cov < self._threshold

    def finish(self, cycle: int, insns: int, completed_ctas: int) -> bool:
        """The stopped kernel has ended, its resident CTAs drained: these are its final counts.

        Sets the final projections; False, changing nothing, if it was not stopped or is
        already finished. With ``drain_tail`` the drain stands for the kernel's own tail (its
        last CTAs running out with nothing to overlap them, which no sample before the stop can
        see): only the steady part is projected, total minus what the drain did, and the drain's
        cycles are added as measured. Without it the final values are the stop's projections."""
        cycle, insns, completed = _u64("cycle", cycle), _u64("insns", insns), _u64("completed_ctas", completed_ctas)
        if not self._stopped or self._finished:
            return False
        self._finished = True
        if not self._drain_tail:
            self._final_cycles, self._final_insns = self._proj_cycles, self._proj_insns
            return True
        tail_cycles = cycle - self._stop_cycle if cycle > self._stop_cycle else 0
        tail_insns = insns - self._stop_insns if insns > self._stop_insns else 0
        tail_ctas = completed - self._stop_ctas if completed > self._stop_ctas else 0
        lat = self._latency
        run = self._stop_cycle - lat if self._stop_cycle > lat else 0
        if self.by_instructions(self._stop_insns):
            steady = self._total_insns - tail_insns if self._total_insns > tail_insns else 0
            body = float(lat) + float(run) * float(steady) / float(self._stop_insns)
            self._final_cycles = body + float(tail_cycles)
            self._final_insns = float(self._total_insns)
        else:
            steady = self._total - tail_ctas if self._total > tail_ctas else 0
            denom = self._stop_ctas + 1 if self._projection == "artifact" else self._stop_ctas
            if denom == 0:  # unreachable after a stop (one completed CTA is required)
                self._final_cycles = self._final_insns = math.nan
                return True
            body = float(lat) + float(run) * float(steady) / float(denom)
            self._final_cycles = body + float(tail_cycles)
            self._final_insns = float(self._stop_insns) * float(steady) / float(denom) + float(tail_insns)
        return True

    def wave_ok(self, completed_ctas: int) -> bool:
        """Whether ``completed_ctas`` satisfy the wave rule (and the at-least-one-CTA guard)."""
        completed = _u64("completed_ctas", completed_ctas)
        if completed < 1:
            return False
        if self._total < self._wave:
            if self._wave_rule == "paper":
                return True
            return float(completed) >= self._fraction * float(self._total)
        return completed >= self._wave

    def remaining_ok(self, completed_ctas: int) -> bool:
        """Whether at least ``min_remaining`` of the grid is still to be issued with
        ``completed_ctas`` done and one wave resident (always, when ``min_remaining`` is 0)."""
        completed = _u64("completed_ctas", completed_ctas)
        if not self._min_remaining > 0.0:
            return True
        issued = float(completed) + float(self._wave)
        return issued <= (1.0 - self._min_remaining) * float(self._total)

    def project(self, value: int, completed_ctas: int) -> float:
        """value * total / completed (paper, instructions) or / (completed + 1) (artifact); NaN for 0."""
        value, completed = _u64("value", value), _u64("completed_ctas", completed_ctas)
        denom = completed + 1 if self._projection == "artifact" else completed
        if denom == 0:
            return math.nan
        return float(value) * float(self._total) / float(denom)

    def by_instructions(self, insns: int) -> bool:
        """Whether a stop with ``insns`` done projects by instructions (that projection, a known
        total and some progress); otherwise it projects by CTAs."""
        return self._projection == "instructions" and self._total_insns > 0 and _u64("insns", insns) > 0

    def project_cycles(self, cycle: int, completed_ctas: int, insns: int = 0) -> float:
        """Projected cycles of a kernel stopped at ``cycle``.

        The launch latency is a fixed cost of every launch, not work that grows with the grid:
        it is added once and only the cycles after it are scaled, by CTAs (``launch_latency=0``:
        the paper's ``cycle * total / completed``, the same double) or, projecting by
        instructions, by ``total_insns / insns``.
        """
        cycle = _u64("cycle", cycle)
        run = cycle - self._latency if cycle > self._latency else 0
        if self.by_instructions(insns):
            return float(self._latency) + float(run) * float(self._total_insns) / float(insns)
        return float(self._latency) + self.project(run, completed_ctas)

    def project_insns(self, insns: int, completed_ctas: int) -> float:
        """Projected instructions: the known total when projecting by instructions, else by CTAs."""
        if self.by_instructions(insns):
            return float(self._total_insns)
        return self.project(insns, completed_ctas)

    # --- read-only state -----------------------------------------------------------------------
    @property
    def stopped(self) -> bool:
        return self._stopped

    @property
    def stable_seen(self) -> bool:
        return self._stable_seen

    @property
    def stable_since(self) -> int | None:
        return self._stable_since if self._stable_seen else None

    @property
    def samples(self) -> int:
        return self._samples

    @property
    def window_samples(self) -> int:
        return self._n

    @property
    def last_ipc(self) -> float:
        return self._last_ipc

    @property
    def last_cov(self) -> float | None:
        return None if math.isnan(self._last_cov) else self._last_cov

    @property
    def stop_cycle(self) -> int | None:
        return self._stop_cycle if self._stopped else None

    @property
    def stop_insns(self) -> int | None:
        return self._stop_insns if self._stopped else None

    @property
    def stop_ctas(self) -> int | None:
        return self._stop_ctas if self._stopped else None

    @property
    def projected_cycles(self) -> float | None:
        return self._proj_cycles if self._stopped else None

    @property
    def projected_insns(self) -> float | None:
        return self._proj_insns if self._stopped else None

    @property
    def last_settle_cov(self) -> float | None:
        """CoV (percent) over the settle span at the last sample it was computed; None if never."""
        return None if math.isnan(self._last_settle_cov) else self._last_settle_cov

    @property
    def finished(self) -> bool:
        return self._finished

    @property
    def final_cycles(self) -> float | None:
        """Projected cycles after finish(): with ``drain_tail``, steady part plus the drain."""
        return self._final_cycles if self._finished else None

    @property
    def final_insns(self) -> float | None:
        return self._final_insns if self._finished else None

    @property
    def config(self) -> dict[str, Any]:
        return {
            "period": self._period,
            "window": self._window,
            "threshold": self._threshold,
            "total_ctas": self._total,
            "wave_size": self._wave,
            "wave_rule": self._wave_rule,
            "projection": self._projection,
            "small_grid_fraction": self._fraction,
            "launch_latency": self._latency,
            "total_insns": self._total_insns,
            "min_remaining": self._min_remaining,
            "drain_tail": self._drain_tail,
            "settle": self._settle,
        }
