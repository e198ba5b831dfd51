"""Sieve: stratified sampling by instruction-count variability (Naderan-Tahan et al., ISPASS'23).

Per launch Sieve needs the kernel name, the instructions executed (``smsp__inst_executed.sum``
from Nsight Compute, or ``warp_insts``/``instructions`` from trace features: ``instructions``),
the threads of the launch (grid × block) and its cycles (or duration). Launches are grouped by
kernel name and each name is put in a tier by the coefficient of variation (population std /
mean) of its instruction counts, with θ = ``theta`` (0.4):

* **tier 1**, CoV = 0: one stratum; representative = the first launch (the official
  ``scripts/analyze_kernels.py`` takes the first launch with the largest thread count, which is
  the first launch when, as it asserts, the thread count is constant);
* **tier 2**, CoV < θ: one stratum; representative = the first launch with the most common thread
  count and, among those, the most common instruction count (the official code; the paper says
  "the first launch with the dominant CTA size"). Ties go to the value seen first;
* **tier 3**, CoV ≥ θ: the *unique* instruction counts are split by a Gaussian kernel density
  estimate (bandwidth 1, scikit-learn's ``KernelDensity``) evaluated at 50 evenly spaced points
  between their minimum and maximum, cutting at every local minimum (``argrelextrema`` with
  ``less_equal``); a part whose unique counts have CoV > 0.5 is split once more the same way.
  Representative = the first launch with the part's median unique count (the upper one of two).
  ``kde=false`` keeps a tier-3 kernel whole (the STEM paper's setting for CASIO).

``representative`` replaces these rules: ``first`` (first launch of the stratum; in tier 2 the
first with the most common thread count, as the paper words it and STEM re-implemented it),
``random`` (seeded; in tier 2 among the launches with the most common thread count, as the STEM
paper hand-tuned it for heartwall and gaussian) or ``center`` (instruction count nearest the
stratum's mean).

Weighting and prediction (``weighting``):

* ``instructions`` (official, ``scripts/compare_ipcs.py``): stratum s has instruction share
  w_s = I_s / I; the application's IPC is the weighted harmonic mean 1 / Σ_s (w_s / IPC_s) of the
  representatives' IPCs (IPC_s = i_r / c_r) and the predicted cycles are I / IPC. Expanding,
  Ĉ = I · Σ_s (I_s / I) · (c_r / i_r) = Σ_s (I_s / i_r) · c_r, which is Σ w·x with the weight
  **w_s = I_s / i_r** on the representative: the stratum's instructions over the
  representative's. A simulator's cycles for the representatives give the official prediction
  through the ordinary weighted sum. (A representative with no instructions, or a stratum with
  none, falls back to the launch count.)
* ``launches`` (the STEM paper's re-implementation): w_s = the stratum's launch count, i.e. the
  representative's time stands for every launch of the stratum.

One representative per stratum gives no error bound.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from simsample.sdk import (
    AUDIT_BY_PARAM,
    AUDIT_PARAM,
    Param,
    Plan,
    Sampler,
    UserError,
    Workload,
    hookimpl,
    representative_plan,
    resolve_metric,
    rng,
)

#: Instruction columns accepted, in order of preference.
INSTRUCTION_COLUMNS = ("smsp__inst_executed.sum", "warp_insts", "instructions")
SIEVE_HINT = (
    "Sieve needs per-launch instruction counts (one of "
    + ", ".join(INSTRUCTION_COLUMNS)
    + "): profile with Nsight Compute (ncu --csv --metrics smsp__inst_executed.sum,gpc__cycles_elapsed.avg) "
    "or compute them from traces with `simsample profile features --sim accelsim TRACES -o features.parquet`"
)
KDE_POINTS = 50
SECOND_SPLIT_COV = 0.5


class SieveSampler(Sampler):
    name = "sieve"
    version = "2"  # 2: the audit follows the cycles (audit_by=cycles; version 1: audit_by=cost)
    description = "Sieve: per-kernel instruction-count CoV tiers (θ), KDE strata, one launch per stratum"
    params = (
        Param("theta", float, 0.4, "CoV threshold between tier 2 and tier 3", minimum=0.0),
        Param(
            "weighting",
            str,
            "instructions",
            "instructions: official (instruction share, harmonic-mean IPC); launches: STEM's",
            choices=("instructions", "launches"),
        ),
        Param(
            "representative",
            str,
            "sieve",
            "sieve: the official per-tier rules; or first, random, center",
            choices=("sieve", "first", "random", "center"),
        ),
        Param("kde", bool, True, "split tier-3 kernels by kernel density (false: one stratum per tier-3 kernel)"),
        Param("instructions", str, "auto", "instruction column: auto = first of " + ", ".join(INSTRUCTION_COLUMNS)),
        Param("metric", str, "auto", "per-launch cost column: auto = cycles, else duration_ns"),
        AUDIT_PARAM,
        AUDIT_BY_PARAM,
    )
    requires = ("smsp__inst_executed.sum",)
    requires_hint = SIEVE_HINT
    bounded = False

    def required_columns(self, params: Mapping[str, Any]) -> tuple[str, ...]:
        col = params.get("instructions", "auto")
        return (INSTRUCTION_COLUMNS[0],) if col == "auto" else (col,)

    def check_workload(self, workload: Workload, params: Mapping[str, Any]) -> None:
        if params.get("instructions", "auto") == "auto":
            if _instruction_column(workload) is None:
                raise UserError(
                    f"sampler sieve needs an instruction count column ({' or '.join(INSTRUCTION_COLUMNS)}), "
                    f"which {workload.source or 'the workload'} lacks; {SIEVE_HINT}"
                )
            return
        super().check_workload(workload, params)

    def plan(self, workload: Workload, params: Mapping[str, Any], seed: int) -> Plan:
        n = len(workload)
        if n == 0:
            raise UserError(f"{workload.source or 'workload'} has no kernel launches to sample")
        self.check_workload(workload, params)
        inst_col = _instruction_column(workload) if params["instructions"] == "auto" else params["instructions"]
        metric = resolve_metric(workload, params["metric"])
        values = workload.values(metric)
        inst = workload.values(inst_col)
        if (inst < 0).any():
            raise UserError(f"{workload.source or 'workload'}: column {inst_col} has negative instruction counts")
        threads = workload.grid_size() * workload.block_size()
        strata = stratify(
            workload.kernels["name"].cat.codes.to_numpy(np.int64), inst, params["theta"], kde=params["kde"]
        )
        gen = rng(seed)
        labels = np.empty(n, dtype=np.int64)
        reps = np.empty(len(strata), dtype=np.int64)
        weights = np.empty(len(strata), dtype=np.float64)
        keys = []
        names = workload.kernels["name"].to_numpy()
        tiers = {1: 0, 2: 0, 3: 0}
        for s, (tier, part, rows) in enumerate(strata):
            labels[rows] = s
            r = choose_representative(
                rows, inst, threads, tier, part_values=part, rule=params["representative"], gen=gen
            )
            reps[s] = r
            size = len(rows)
            stratum_inst = float(inst[rows].sum())
            if params["weighting"] == "instructions" and inst[r] > 0 and stratum_inst > 0:
                weights[s] = stratum_inst / float(inst[r])
            else:
                weights[s] = float(size)
            keys.append(f"{names[rows[0]]} tier {tier}" + (f" part {s}" if tier == 3 else ""))
            tiers[tier] += 1
        method = (
            (
                "Sieve official: predicted cycles = Σ_s I_s × CPI(representative), i.e. instruction share with "
                "harmonic-mean IPC"
            )
            if params["weighting"] == "instructions"
            else "Sieve as re-implemented by STEM: estimate = Σ stratum launches × representative"
        )
        extra = {
            "method": method,
            "instructions_column": inst_col,
            "strata_by_tier": {str(t): c for t, c in tiers.items()},
        }
        return representative_plan(
            workload,
            self,
            params,
            seed,
            metric=metric,
            values=values,
            labels=labels,
            reps=reps,
            weights=weights,
            keys=keys,
            extra_prediction=extra,
            audit=params["audit"],
            audit_by=params["audit_by"],
            apportion=inst if params["weighting"] == "instructions" else None,
        )


def _instruction_column(workload: Workload) -> str | None:
    for c in INSTRUCTION_COLUMNS:
        if workload.has(c):
            return c
    return None


def stratify(
    name_codes: np.ndarray, inst: np.ndarray, theta: float, *, kde: bool = True
) -> list[tuple[int, np.ndarray | None, np.ndarray]]:
    """Sieve's strata: ``(tier, unique counts of the part or None, launch rows)`` per stratum.

    Kernels come in order of first launch, rows in launch order.
    """
    order = np.argsort(name_codes, kind="stable")
    codes_sorted = name_codes[order]
    starts = np.flatnonzero(np.r_[True, codes_sorted[1:] != codes_sorted[:-1]])
    ends = np.r_[starts[1:], len(order)]
    groups = sorted((order[a:b] for a, b in zip(starts, ends)), key=lambda rows: int(rows[0]))
    out: list[tuple[int, np.ndarray | None, np.ndarray]] = []
    for rows in groups:
        v = inst[rows]
        mean, std = float(v.mean()), float(v.std())
        if std == 0:
            out.append((1, None, rows))
        elif std / mean < theta:
            out.append((2, None, rows))
        elif not kde:
            out.append((3, np.unique(v), rows))
        else:
            parts = kde_parts(np.unique(v))
            # parts are contiguous ranges of the sorted unique counts: find each launch's by its lower end
            which = np.searchsorted(np.array([p[0] for p in parts]), v, side="right") - 1
            order_in = np.argsort(which, kind="stable")
            bounds = np.r_[0, np.cumsum(np.bincount(which, minlength=len(parts)))]
            for i, part in enumerate(parts):
                out.append((3, part, rows[order_in[bounds[i] : bounds[i + 1]]]))
    return out


def kde_split(unique_sorted: np.ndarray) -> list[np.ndarray]:
    """One KDE pass of the official ``my_kde``: contiguous parts of the sorted unique counts.

    The density (Gaussian, bandwidth 1) is evaluated at 50 points from the minimum to the
    maximum; every local minimum (``<=`` both neighbours, the ends compared with themselves)
    is a cut, and a value goes to the first part whose cut lies above it.
    """
    from scipy.signal import argrelextrema
    from sklearn.neighbors import KernelDensity

    u = np.asarray(unique_sorted, dtype=np.float64)
    if len(u) < 2:
        return [u]
    kde = KernelDensity(kernel="gaussian", bandwidth=1).fit(u.reshape(-1, 1))
    s = np.linspace(u[0], u[-1], KDE_POINTS)
    e = kde.score_samples(s.reshape(-1, 1))
    cuts = s[argrelextrema(e, np.less_equal, order=1)[0]]
    part = np.searchsorted(cuts, u, side="right")
    bounds = np.flatnonzero(np.r_[True, part[1:] != part[:-1], True])
    return [u[a:b] for a, b in zip(bounds[:-1], bounds[1:])]


def kde_parts(unique_sorted: np.ndarray) -> list[np.ndarray]:
    """The official two-level split: KDE, then KDE again on parts whose CoV exceeds 0.5."""
    out = []
    for part in kde_split(unique_sorted):
        mean = float(part.mean())
        if mean > 0 and float(part.std()) / mean > SECOND_SPLIT_COV:
            out.extend(kde_split(part))
        else:
            out.append(part)
    return out


def _mode_first(values: np.ndarray) -> Any:
    """The most common value; ties go to the value that appears first (pandas value_counts)."""
    uniq, first, counts = np.unique(values, return_index=True, return_counts=True)
    best = np.lexsort((first, -counts))[0]
    return uniq[best]


def choose_representative(
    rows: np.ndarray,
    inst: np.ndarray,
    threads: np.ndarray,
    tier: int,
    *,
    part_values: np.ndarray | None,
    rule: str,
    gen: np.random.Generator,
) -> int:
    """Row of the launch that stands for a stratum (``rows`` in launch order)."""
    v = inst[rows]
    if rule == "center":
        return int(rows[int(np.argmin(np.abs(v - v.mean())))])
    if tier == 2 and rule in ("sieve", "first", "random"):
        t = threads[rows]
        pool = rows[t == _mode_first(t)]
        if rule == "first":
            return int(pool[0])
        if rule == "random":
            return int(pool[gen.integers(len(pool))])
        return int(pool[np.flatnonzero(inst[pool] == _mode_first(inst[pool]))[0]])
    if rule == "first":
        return int(rows[0])
    if rule == "random":
        return int(rows[gen.integers(len(rows))])
    if tier == 1:
        t = threads[rows]
        return int(rows[np.flatnonzero(t == t.max())[0]])
    # tier 3: first launch with the part's median unique count (upper median)
    u = np.unique(v) if part_values is None else np.asarray(part_values)
    med = u[len(u) // 2]
    return int(rows[np.flatnonzero(v == med)[0]])


@hookimpl
def register_samplers(register):
    register(SieveSampler())
