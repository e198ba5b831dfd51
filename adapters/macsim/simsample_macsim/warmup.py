"""Which launches MacSim runs before each sampled launch, so that it meets the caches it met in the full run.

MacSim runs the kernels of ``kernel_config.txt`` one after another and never flushes its caches
between them, so a sampled kernel's cycles depend on what ran before it. On the vectormultadd
traces (kernel 2 reads what kernels 0 and 1 wrote) kernel 2 takes 2,887 cycles after kernels 0
and 1 (the full run), 3,631 after kernel 0 alone and 3,820 first in a run. Running some of the
launches that preceded a sample in the real order (warm-up launches) restores that state; their
results are left out of the estimate (weight 0, role ``warmup`` in ``simsample-weights.csv``).

The options are those of the Accel-Sim adapter's ``--warmup``:

* ``K`` (an int): the K launches immediately before each sampled launch (fewer near the start).
* ``targeted``: from the traces' memory addresses (each ``LD``/``LDG``/``ST``/``STG``/``ATOM``/
  ``RED`` record's address is a line the launch touches), each line a sampled launch reads or
  writes is attributed to the launch within ``horizon`` before it that last touched it; each
  sample then gets every launch back to the nearest point that covers ``coverage`` of those
  accesses, and back to the last launch of its own code (its instruction addresses; at least its
  immediate predecessor), while the warm-up's warp instructions stay within ``budget`` x the
  sampled launches' (MacSim has no launch latency: cycles follow instructions). A window, not
  the producers alone: MacSim keeps L1 across kernels, and running only the producers left
  samples too warm (see :func:`targeted`). Reading the addresses is cheap here: one 64-byte
  record per warp instruction, with the address of its first thread, and only the samples and
  the ``horizon`` launches before them are read.
* ``none`` (= 0): cold, as before.

Warm-up launches are positions in the full run (the tracer's ``grid_launch_id``), so the same
choice serves the NVBit tracer's ``SAMPLED_KERNEL_INFO`` file (which then traces them too) and a
trace folder's ``KernelN`` folders.
"""

from __future__ import annotations

import gzip
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from simsample.sdk import UserError, warmup_choice

#: Defaults (see docs/howto/macsim-warmup.md for the measurements behind them).
DEFAULT_WARMUP = "targeted"
DEFAULT_HORIZON = 16
DEFAULT_COVERAGE = 0.8
DEFAULT_BUDGET: float | None = None

#: NVBIT_OPCODE numbers (MacSim src/trace_read.h) of global-memory reads and writes.
READ_OPCODES = (71, 73, 83, 85)  # LD, LDG, ATOM, ATOMG
WRITE_OPCODES = (77, 78, 83, 85, 86)  # ST, STG, ATOM, ATOMG, RED
_RECORD_SIZE = 64  # sizeof(trace_info_nvbit_small_s)
_OPCODE_AT, _PC_AT, _ADDR_AT = 0, 32, 48
LINE = 128


@dataclass(frozen=True)
class WarmupSpec:
    """A warm-up setting: ``k`` launches before each sample, or the ``targeted`` choice (``k`` None)."""

    k: int | None = 0
    horizon: int = DEFAULT_HORIZON
    coverage: float = DEFAULT_COVERAGE
    budget: float | None = DEFAULT_BUDGET
    window: bool = True  # targeted: every launch back to the farthest producer needed, not the producers alone

    @property
    def targeted(self) -> bool:
        return self.k is None

    @property
    def none(self) -> bool:
        return self.k == 0

    def label(self) -> str:
        b = "inf" if self.budget is None else f"{self.budget:g}"
        kind = "targeted" if self.window else "producers"
        return f"{kind}(h={self.horizon},c={self.coverage:g},b={b})" if self.targeted else f"K={self.k}"


def parse_warmup(
    text: str | int,
    horizon: int = DEFAULT_HORIZON,
    coverage: float = DEFAULT_COVERAGE,
    budget: float | None = DEFAULT_BUDGET,
) -> WarmupSpec:
    """``--warmup`` as given: a non-negative int K, ``none`` (= 0) or ``targeted``."""
    if horizon < 1:
        raise UserError(f"--warmup-horizon {horizon}: must be at least 1 (launches looked back for producers)")
    if not 0.0 < coverage <= 1.0:
        raise UserError(
            f"--warmup-coverage {coverage}: must be in (0, 1] (the share of a sample's memory accesses whose last "
            "toucher the window must hold)"
        )
    if budget is not None and not (budget >= 0 and np.isfinite(budget)):  # nan, inf: never a budget
        raise UserError(
            f"--warmup-budget {budget}: must be a finite number >= 0 (warm-up warp instructions as a share of the "
            "sampled launches')"
        )
    choice = warmup_choice(text, ("targeted",))
    return WarmupSpec(None if choice == "targeted" else int(choice), horizon, coverage, budget)


def preceding(samples: Sequence[int], k: int) -> dict[int, list[int]]:
    """The K launch positions before each sampled position (fewer near the start)."""
    return {s: list(range(max(0, s - k), s)) for s in sorted(set(samples))}


@dataclass(frozen=True)
class Footprint:
    """The 128-byte lines a launch's global loads and stores touch (sorted), how many warp-level
    accesses touch each, its warp instructions and the lines its instructions are fetched from."""

    lines: np.ndarray
    counts: np.ndarray
    warp_insts: int
    code: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # the lines of its instructions


def kernel_footprint(folder: Path) -> Footprint:
    """Read a ``KernelN`` folder's ``trace_*.raw`` streams (gzipped records) for their addresses."""
    files = sorted(Path(folder).glob("trace_*.raw"))
    if not files:
        raise UserError(
            f"{folder}: no trace_*.raw files; targeted warm-up reads the traces' addresses (pass --warmup K instead)"
        )
    ops, addrs, pcs = [], [], []
    for f in files:
        try:
            with gzip.open(f, "rb") as fh:
                raw = fh.read()
        except (OSError, EOFError) as e:
            raise UserError(f"{f}: cannot read the gzipped trace ({e}); retrace, or pass --warmup K") from None
        if len(raw) % _RECORD_SIZE:
            raise UserError(
                f"{f}: {len(raw)} bytes is not a whole number of {_RECORD_SIZE}-byte NVBit records; retrace, or pass "
                "--warmup K"
            )
        rec = np.frombuffer(raw, np.uint8).reshape(-1, _RECORD_SIZE)
        ops.append(rec[:, _OPCODE_AT])
        addrs.append(rec[:, _ADDR_AT : _ADDR_AT + 8].copy().view("<u8").ravel())
        pcs.append(np.unique(rec[:, _PC_AT : _PC_AT + 8].copy().view("<u8").ravel() // LINE))
    op = np.concatenate(ops)
    line = np.concatenate(addrs) // LINE
    lines, counts = np.unique(line[np.isin(op, READ_OPCODES + WRITE_OPCODES) & (line > 0)], return_counts=True)
    return Footprint(lines, counts.astype(np.float64), len(op), np.unique(np.concatenate(pcs)))


def targeted(
    samples: Sequence[int],
    footprint: Callable[[int], Footprint],
    *,
    horizon: int = DEFAULT_HORIZON,
    coverage: float = DEFAULT_COVERAGE,
    budget: float | None = DEFAULT_BUDGET,
    window: bool = True,
) -> dict[int, list[int]]:
    """Per sampled position, its targeted warm-up positions (see the module docstring).

    Each line a sample touches is attributed to its last toucher within ``horizon``. With
    ``window`` (the default), the sample gets every launch back to the nearest point that covers
    ``coverage`` of its attributed accesses, back to the last launch of its code (the lines of its
    instruction addresses) if that is farther, and at least its immediate predecessor: MacSim
    keeps its L1 caches across kernels, so the launches between a producer and the sample matter
    too (they evict what the full run did not find in L1), and a launch of the same code warms
    its instruction fetch. Without ``window``, only the producers themselves are run, most accesses
    first (the Accel-Sim adapter's choice; measured too warm here). Sampled launches run anyway
    and cost nothing. Samples are served in launch order; with ``budget``, a sample's window is
    cut (or a producer skipped) where the warm-up would pass ``budget`` x the sampled launches'
    warp instructions.
    """
    kept = sorted(set(int(s) for s in samples))
    keep = set(kept)
    cache: dict[int, Footprint] = {}

    def fp(i: int) -> Footprint:
        if i not in cache:
            cache[i] = footprint(i)
        return cache[i]

    allowed = float("inf") if budget is None else budget * sum(fp(s).warp_insts for s in kept)
    spent = 0.0
    chosen: set[int] = set()
    out: dict[int, list[int]] = {}
    for s in kept:
        need, counts = fp(s).lines, fp(s).counts
        mine: dict[int, float] = {}
        for j in range(s - 1, max(-1, s - 1 - horizon), -1):
            if len(need) == 0:
                break
            hit = np.isin(need, fp(j).lines, assume_unique=True)
            if hit.any():
                mine[j] = float(counts[hit].sum())
                need, counts = (
                    need[~hit],
                    counts[~hit],
                )  # j touched the line last: earlier launches do not matter for it
        goal = coverage * sum(mine.values())
        if window:
            start, covered = s - 1, 0.0
            for j in range(s - 1, max(-1, s - 1 - horizon), -1):
                covered += mine.get(j, 0.0)
                start = j
                if covered >= goal:
                    break
            code = fp(s).code
            if len(code):
                for j in range(s - 1, max(-1, s - 1 - horizon), -1):
                    if np.isin(code, fp(j).code, assume_unique=True).any():
                        start = min(start, j)  # the last launch of the same code: it warms the instruction fetch
                        break
            picks = [j for j in range(s - 1, max(-1, start - 1), -1)]  # nearest first: a cut budget keeps the nearest
        else:
            covered = sum(n for j, n in mine.items() if j in keep or j in chosen)
            picks = [j for j in sorted(mine, key=lambda j: (-mine[j], -j))]
        own: list[int] = []
        for j in picks:
            if not window and covered >= goal:
                break
            if j in keep:
                continue
            if j in chosen:  # already run for an earlier sample
                own.append(j)
                continue
            if spent + fp(j).warp_insts > allowed:
                if window:
                    break
                continue
            spent += fp(j).warp_insts
            chosen.add(j)
            own.append(j)
            covered += mine.get(j, 0.0)
        out[s] = sorted(own)
    return out


def choose(
    samples: Sequence[int], spec: WarmupSpec, footprint: Callable[[int], Footprint] | None = None
) -> dict[int, list[int]]:
    """Per sampled position, the warm-up positions ``spec`` asks for (``footprint`` is needed for
    ``targeted``: it reads the traces)."""
    if spec.none:
        return {int(s): [] for s in samples}
    if spec.targeted:
        if footprint is None:
            raise UserError(
                "--warmup targeted reads the traces' memory addresses: pass --traces, or use --warmup K without traces"
            )
        return targeted(
            samples, footprint, horizon=spec.horizon, coverage=spec.coverage, budget=spec.budget, window=spec.window
        )
    assert spec.k is not None
    return preceding(samples, spec.k)


def warmup_positions(warm: Mapping[int, Sequence[int]], samples: Sequence[int]) -> list[int]:
    """The distinct warm-up positions that are not themselves sampled, in launch order."""
    return sorted({int(j) for w in warm.values() for j in w} - {int(s) for s in samples})


def warmup_info_line(tracer_ids: Sequence[int]) -> str:
    """The ``SAMPLED_KERNEL_INFO`` line that makes the tracer trace the warm-up launches too: a
    cluster of size 0 (it stands for no launch; the tracer reads only the ids) with their ids."""
    ids = sorted(set(int(i) for i in tracer_ids))
    return " ".join(str(x) for x in [0, len(ids), *ids]) + "\n" if ids else ""
