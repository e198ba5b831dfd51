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
  global loads read, with how many warp-level loads read each, and the lines its global stores
  write, :func:`.scan_numpy.scan_footprint`), for each sampled launch, the lines it reads are
  attributed to the earlier launch within ``horizon`` launches that last touched them (what the
  full run's L2 would hold). Producers are added by weighted loads of those lines per unit of
  cost (a launch already in the run costs nothing) until each sample has ``coverage`` of its
  attributed loads covered or the warm-up cost would pass ``budget`` x the sampled launches'
  cost. Loads, not lines: a line that many warps of many CTAs re-read stalls them all when it is
  cold (a hetero sgemm reading 480 lines of a relu's output loses 3,000 cycles cold, a relu
  reading 2,560 lines of a sgemm's output 400). Producers outside the horizon are assumed
  evicted or irrelevant; the horizon and coverage are parameters because the right values
  depend on the L2 size relative to the footprints.

The cost is the launch's predicted simulated cycles (:class:`CostModel`): the config's fixed
kernel launch latency plus its warp instructions at an assumed issue rate. Warp instructions
alone mislead where launches are short: on the hetero traces (SM7_QV100, 5,000-cycle launch
latency) a 3,328-instruction relu takes 5,600 cycles and a 174,240-instruction sgemm 17,800, so a
budget in instructions admitted many small producers whose cycles added up to 1.47x the sampled
launches at a nominal 1.25x.

Memcpys are not warm-up: every ``MemcpyHtoD`` before a kept launch stays in place (as
:mod:`.apply` always did), so a warm-up launch sees the copies it saw in the full run.

:func:`warmup_steps` is the one place that says, per sample, what runs before it: the ordered
warm-up launches and memcpys. Per-sample job layouts reuse it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np

from simsample.sdk import UserError, warmup_choice
from simsample_accelsim.kernelslist import KernelEntry, Memcpy


class Footprint(NamedTuple):
    """The cache lines a launch's global loads read and its stores write (sorted 128-byte line
    numbers), its warp instructions, and optionally how many warp-level loads read each read line
    (aligned with ``reads``; without them every line counts once)."""

    reads: np.ndarray
    writes: np.ndarray
    warp_insts: int
    read_counts: np.ndarray | None = None


#: Defaults of the targeted choice (see the module docstring and the README's measurements).
DEFAULT_HORIZON = 5
DEFAULT_COVERAGE = 0.8
#: Warm-up cost allowed, as a share of the sampled launches' predicted cycles (:class:`CostModel`).
DEFAULT_BUDGET: float | None = 0.25
#: The reuse window (:func:`reuse_window`) goes back until this many times the L2's lines were touched.
DEFAULT_REACH = 1.5
#: Lines of SM7_QV100's L2 (6 MiB of 128-byte lines).
DEFAULT_L2_LINES = 49152


@dataclass(frozen=True)
class CostModel:
    """Predicted simulated cycles of a launch: ``launch_latency + warp_insts / (sms x warp_ipc_per_sm)``.

    Only the ratio of warm-up to sampled cost matters, so the model needs to rank launches, not to
    predict them: the fixed part is what makes a small launch cost about as much as a mid-sized
    one. The defaults are those of Accel-Sim's SM7_QV100 config (5,000-cycle launch latency, 80
    SMs); :meth:`from_configs` reads them from the config files the sampled run will use. The
    issue rate of 0.25 warp instructions per SM per cycle is an assumption (the hetero kernels
    run at 0.07-0.17 after the latency, memory-bound ones lower): a launch of many instructions is
    then rather under- than over-counted.
    """

    launch_latency: float = 5000.0
    sms: int = 80
    warp_ipc_per_sm: float = 0.25

    def cycles(self, warp_insts: float) -> float:
        return self.launch_latency + float(warp_insts) / (self.sms * self.warp_ipc_per_sm)

    def label(self) -> str:
        return f"lat={self.launch_latency:g},sms={self.sms}"

    @classmethod
    def from_configs(cls, paths: Iterable[str | Path]) -> CostModel:
        """The launch latency and SM count of GPGPU-Sim config files (later files override
        earlier ones, as ``-config`` does); an option a file does not set keeps the simulator's own
        default (launch latency 0, 10 clusters of 3 cores)."""
        from simsample_accelsim.gpuconfig import int_option, read_options

        paths = list(paths)
        found = read_options(paths, ("-gpgpu_kernel_launch_latency", "-gpgpu_n_clusters", "-gpgpu_n_cores_per_cluster"))
        latency = max(0, int_option(found, "-gpgpu_kernel_launch_latency", 0))
        sms = int_option(found, "-gpgpu_n_clusters", 10) * int_option(found, "-gpgpu_n_cores_per_cluster", 3)
        if sms < 1:
            raise UserError(
                f"{', '.join(map(str, paths))}: the config gives {sms} SMs; fix -gpgpu_n_clusters / "
                "-gpgpu_n_cores_per_cluster"
            )
        return cls(float(latency), sms)


@dataclass(frozen=True)
class WarmupSpec:
    """A warm-up setting: ``k`` launches before each sample, the ``targeted`` footprint choice,
    or the ``reuse`` window (every launch back to where the L2 turned over, :func:`reuse_window`)."""

    k: int | None = 0  # None for targeted and reuse
    horizon: int = DEFAULT_HORIZON
    coverage: float = DEFAULT_COVERAGE
    budget: float | None = DEFAULT_BUDGET
    cost: CostModel = field(default_factory=CostModel)
    reuse: bool = False
    reach: float = DEFAULT_REACH
    l2_lines: int = DEFAULT_L2_LINES

    @property
    def targeted(self) -> bool:
        return self.k is None and not self.reuse

    @property
    def none(self) -> bool:
        return self.k == 0 and not self.reuse

    def label(self) -> str:
        if self.reuse:
            return f"reuse(reach={self.reach:g},l2={self.l2_lines})"
        b = "inf" if self.budget is None else f"{self.budget:g}"
        return (
            f"targeted(h={self.horizon},c={self.coverage:g},b={b},{self.cost.label()})"
            if self.targeted
            else f"K={self.k}"
        )


def parse_warmup(
    text: str | int,
    horizon: int = DEFAULT_HORIZON,
    coverage: float = DEFAULT_COVERAGE,
    budget: float | None = DEFAULT_BUDGET,
    cost: CostModel | None = None,
) -> WarmupSpec:
    """``--warmup`` as given: a non-negative int K, ``none`` (= 0), ``targeted`` or ``reuse``."""
    if budget is not None and not (budget >= 0 and np.isfinite(budget)):  # nan, inf: never a budget
        raise UserError(
            f"--warmup-budget {budget}: must be a finite number >= 0 (warm-up cost as a share of the sampled "
            "launches' predicted cycles)"
        )
    model = cost or CostModel()
    if horizon < 1:
        raise UserError(f"--warmup-horizon {horizon}: must be at least 1 (launches looked back for producers)")
    if not 0.0 < coverage <= 1.0:
        raise UserError(
            f"--warmup-coverage {coverage}: must be in (0, 1] (the share of a sample's producer lines to warm)"
        )
    choice = warmup_choice(text, ("targeted", "reuse"))
    if isinstance(choice, str):
        return WarmupSpec(None, horizon, coverage, budget, model, reuse=choice == "reuse")
    return WarmupSpec(choice, horizon, coverage, budget, model)


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
    footprint: Callable[[int], Footprint | tuple[np.ndarray, np.ndarray, int]],
    *,
    horizon: int = DEFAULT_HORIZON,
    coverage: float = DEFAULT_COVERAGE,
    budget: float | None = DEFAULT_BUDGET,
    cost: Callable[[int], float] | None = None,
    shared: bool = True,
    predecessors: Callable[[int], Iterable[int]] | None = None,
) -> dict[int, list[int]]:
    """The footprint-targeted warm-up rows of each sampled row (see the module docstring).

    ``footprint(row)`` gives a launch's :class:`Footprint` (or its first three fields); ``cost``
    turns its warp instructions into its simulation cost (default: :meth:`CostModel.cycles` of
    the default model). Each sampled launch's read lines are attributed to their last toucher
    within ``horizon`` launches before it, each line counting the warp-level loads that read it
    (once where the footprint has no counts). Producers are then added greedily by benefit per
    cost, the benefit of a producer being the sum over the samples it serves (and that are still
    under ``coverage``) of sample weight x loads attributed to it: a producer of a heavy sample
    (one standing for many launches), or of lines that many warps wait on, is worth more. Sampled
    launches are free (they run anyway). With ``budget``, the producers' summed cost stays within
    ``budget`` x the sampled launches' cost; a producer that does not fit is skipped. With
    ``shared=False`` (one job per sampled launch, ``apply --split``) the other sampled launches
    do not run in a sample's job, so they are producers like any other launch. ``predecessors(s)``:
    the launches to look back over, nearest first (default: the ``horizon`` before ``s``); a folder
    holding some launches gives only those it holds, so that a horizon of 10^11 walks what was traced.
    """
    kept = sorted(set(int(s) for s in samples))
    cache: dict[int, Footprint] = {}
    price = cost or CostModel().cycles

    def fp(row: int) -> Footprint:
        if row not in cache:
            cache[row] = Footprint(*footprint(row))
        return cache[row]

    def cost_of(row: int) -> float:
        return max(1.0, float(price(fp(row).warp_insts)))

    attributed: dict[int, dict[int, float]] = {}
    for s in kept:
        need = fp(s).reads
        counts = fp(s).read_counts
        loads = np.ones(len(need)) if counts is None else np.asarray(counts, np.float64)
        mine: dict[int, float] = {}
        for j in predecessors(s) if predecessors is not None else range(s - 1, max(-1, s - 1 - horizon), -1):
            if len(need) == 0:
                break
            f = fp(j)
            hit = np.isin(need, f.reads, assume_unique=True) | np.isin(need, f.writes, assume_unique=True)
            if hit.any():
                mine[j] = float(loads[hit].sum())
                need, loads = (
                    need[~hit],
                    loads[~hit],
                )  # the line's last toucher is j: earlier launches do not matter for it
        attributed[s] = mine
    keep = set(kept) if shared else set()
    goal = {s: coverage * sum(a.values()) for s, a in attributed.items()}
    covered = {s: sum(n for j, n in a.items() if j in keep) for s, a in attributed.items()}
    allowed = float("inf") if budget is None else budget * sum(cost_of(s) for s in kept)
    spent = 0.0
    chosen: set[int] = set()
    skipped: set[int] = set()
    while True:
        best, best_score = -1, 0.0
        for j in sorted(
            {j for a in attributed.values() for j in a} - keep - chosen - skipped, reverse=True
        ):  # ties: the nearest
            gain = sum(
                float(weights.get(s, 0.0)) * a[j] for s, a in attributed.items() if j in a and covered[s] < goal[s]
            )
            score = gain / cost_of(j)
            if score > best_score:
                best, best_score = j, score
        if best < 0:
            break
        paid = cost_of(best)
        if spent + paid > allowed:
            skipped.add(best)
            continue
        spent += paid
        chosen.add(best)
        for s, a in attributed.items():
            if best in a:
                covered[s] += a[best]
    return {s: sorted(j for j in attributed[s] if j in chosen) for s in kept}


def reuse_window(
    samples: Sequence[int],
    footprint: Callable[[int], Footprint | tuple[np.ndarray, np.ndarray, int]],
    *,
    l2_lines: int,
    reach: float = DEFAULT_REACH,
    shared: bool = True,
) -> dict[int, list[int]]:
    """Every launch back to where the L2 has turned over, for each sampled row.

    Walking back from a sample, the launches before it are taken until the distinct lines they
    touched (read or written) reach ``reach`` x the L2's lines: what any launch before those
    touched has, in all likelihood, been evicted by the full run (the L2 replaces the least
    recently used line of a set). A short warm-up cannot reproduce a state built over many
    launches: a layer's weights evicted by the other layers before the next step reads them are
    still in L2 after a sampled run's few predecessors, and the sample runs too warm; the window
    replays exactly the launches whose lines can still be there, and so evicts what the full run
    evicted. The window can be long (every launch of a small workload): it is meant for the
    functional warm-up of the patched simulator, where a warm-up launch costs a read of its trace
    and no simulated cycle.

    With ``shared`` (one list), sampled launches run anyway and are left out of the windows;
    without (one job per sample), they are warm-up launches like any other.
    """
    if l2_lines < 1:
        raise UserError(f"the L2 holds {l2_lines} lines by the config; fix -gpgpu_cache:dl2 or give --warmup-config")
    if not (reach > 0 and np.isfinite(reach)):  # nan, inf: never a reach
        raise UserError(
            f"--warmup-reach {reach}: must be a finite number > 0 (the L2's lines touched before a sample, in "
            "multiples of its size)"
        )
    kept = sorted(set(int(s) for s in samples))
    keep = set(kept) if shared else set()
    limit = reach * l2_lines
    cache: dict[int, np.ndarray] = {}

    def lines(row: int) -> np.ndarray:
        if row not in cache:
            f = Footprint(*footprint(row))
            cache[row] = np.union1d(f.reads, f.writes)
        return cache[row]

    out: dict[int, list[int]] = {}
    span = 8
    for s in kept:
        while True:  # look back over ``span`` launches, twice as far while the L2 has not turned over
            lo = max(0, s - span)
            found = _turnover_start([lines(j) for j in range(lo, s)], limit)
            if found is not None or lo == 0:
                start = lo + (found or 0)
                break
            span *= 2
        out[s] = [j for j in range(start, s) if j not in keep]
    return out


def _turnover_start(parts: Sequence[np.ndarray], limit: float) -> int | None:
    """Walking back from the last of ``parts`` (line sets of consecutive launches), the index at
    which the distinct lines met reach ``limit``; None if they never do.

    A line is met by the launches i.. exactly when its last occurrence lies among them, so the
    distinct lines of each window are a suffix sum of last occurrences per launch: one sort of all
    the lines instead of a set union per launch."""
    if not parts:
        return None
    sizes = np.array([p.size for p in parts], np.int64)
    flat = np.concatenate(parts) if sizes.sum() else np.zeros(0, np.uint64)
    owner = np.repeat(np.arange(len(parts), dtype=np.int64), sizes)
    order = np.lexsort((owner, flat))  # by line, then launch: the last of each run is the line's last occurrence
    f, o = flat[order], owner[order]
    last = np.ones(f.size, bool)
    last[:-1] = f[1:] != f[:-1]
    per_launch = np.bincount(o[last], minlength=len(parts))
    reached = np.flatnonzero(per_launch[::-1].cumsum() >= limit)
    return len(parts) - 1 - int(reached[0]) if reached.size else None


def l2_lines_of_configs(paths: Iterable[str | Path]) -> int:
    """Lines of the whole L2 by GPGPU-Sim config files: ``-gpgpu_cache:dl2 S:SETS:LINE:WAYS,...``
    per memory sub-partition, times ``-gpgpu_n_mem`` x ``-gpgpu_n_sub_partition_per_mchannel``
    (later files override earlier ones); SM7_QV100's 6 MiB of 128-byte lines where unset; 0 for
    ``none``, GPGPU-Sim's way of leaving the L2 out."""
    from simsample_accelsim.gpuconfig import int_option, read_options

    found = read_options(paths, ("-gpgpu_cache:dl2", "-gpgpu_n_mem", "-gpgpu_n_sub_partition_per_mchannel"))
    dl2 = found["-gpgpu_cache:dl2"][0] if "-gpgpu_cache:dl2" in found else "S:32:128:24"
    if dl2.strip().lower() == "none":
        return 0
    geometry = re.match(r"[A-Z]:(\d+):(\d+):(\d+)", dl2)
    if not geometry:
        raise UserError(
            f"-gpgpu_cache:dl2 {dl2!r}: expected SETS:LINE:WAYS after the first letter; fix the config file"
        )
    sets, line_size, ways = (int(g) for g in geometry.groups())
    parts = int_option(found, "-gpgpu_n_mem", 32) * int_option(found, "-gpgpu_n_sub_partition_per_mchannel", 2)
    return max(0, sets * ways * parts * line_size // LINE_BYTES)


#: The footprints count 128-byte lines.
LINE_BYTES = 128


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
