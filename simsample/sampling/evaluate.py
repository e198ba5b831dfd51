"""Evaluating a sampler on profiles, without a simulator (the STEM paper's §4.1 methodology).

The profile's own per-launch values are the ground truth: plan with seeds 0..R-1, estimate the
total as Σ weight·x over the samples, and score

- error = |T̂ − T| / T, averaged (arithmetic mean) over the repeats;
- speedup = T / Σ x over the distinct sampled launches, averaged harmonically (equal work);
- the number of distinct sampled launches;
- coverage, for plans with a statistical design: the fraction of repeats whose interval at the
  plan's confidence (by :func:`simsample.sampling.estimate.estimate_total`, from the sampled launches'
  own values) contains T. Plans of representative samplers have no interval: coverage is None.

Suite figures are the same means over workloads. Cross-hardware (``against``): plan on one
profile and score against another profile of the same launch sequence (same kernels and
shapes in the same order), refusing when the sequences differ.

Cross-metric (``truth``): the plan is made on the design input as a user would make it (a
profile, or trace features with the design metric ``warp_insts``), and scored against per-launch
values of another metric: a full simulation's cycles (read by the simulator adapter) or a
``kernel_id,value`` table. This is what sampled simulation must stand up to: the interval is
computed from the truth's values of the sampled launches, as ``simsample estimate`` would from
a (warm) sampled run, and must cover the truth's total. The truth must hold exactly the
workload's launches; the first difference is named.

Works with any registered sampler.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import lazy_loader as lazy
import numpy as np

from simsample.errors import UserError, UserFileNotFoundError
from simsample.io.files import missing_message
from simsample.planfile import Plan
from simsample.plugin_base import Sampler
from simsample.sampling.audit import has_audit
from simsample.sampling.estimate import UnsupportedConfidence, estimate_total
from simsample.workload import Workload

if TYPE_CHECKING:
    from simsample.io.loading import ReaderSource

pd = lazy.load("pandas")


@dataclass
class RepeatScore:
    """One plan scored against the truth."""

    seed: int
    truth: float
    estimate: float
    error: float | None  # relative, None when the truth is 0
    speedup: float | None  # None when the sampled launches took no time
    sampled_launches: int
    covered: bool | None  # None when the plan gives no interval
    half_width: float | None = None  # the interval's half-width relative to the truth; None without one
    #: the plan's degrees of freedom cannot support an interval at its confidence: ``simsample
    #: estimate`` refuses it (one line) rather than print a degenerate one
    refused: bool = False


@dataclass
class WorkloadResult:
    """R repeats of one sampler with one parameter set on one workload."""

    name: str
    launches: int
    sampler: str
    params: dict[str, Any]
    scores: list[RepeatScore] = field(default_factory=list)
    #: the workload's fingerprint, so that a report can tell an evaluation of its plan's workload
    fingerprint: str | None = None

    @property
    def error_mean_pct(self) -> float | None:
        errs = [s.error for s in self.scores if s.error is not None]
        return 100.0 * float(np.mean(errs)) if errs else None

    @property
    def error_max_pct(self) -> float | None:
        errs = [s.error for s in self.scores if s.error is not None]
        return 100.0 * float(np.max(errs)) if errs else None

    @property
    def speedup_hmean(self) -> float | None:
        return harmonic_mean([s.speedup for s in self.scores])

    @property
    def sampled_launches_mean(self) -> float:
        return float(np.mean([s.sampled_launches for s in self.scores])) if self.scores else 0.0

    @property
    def coverage(self) -> float | None:
        """Share of the intervals given that hold the truth (plans refused an interval left out:
        :attr:`refused` counts them)."""
        given = [s for s in self.scores if not s.refused]
        cov = [s.covered for s in given if s.covered is not None]
        if not cov or len(cov) < len(given):
            return None
        return float(np.mean(cov))

    @property
    def refused(self) -> int:
        """Plans whose degrees of freedom could not support an interval at their confidence."""
        return sum(s.refused for s in self.scores)

    @property
    def half_width_median_pct(self) -> float | None:
        """Median over the repeats of the interval's half-width in percent of the truth: what
        coverage is bought with (an interval wide enough always covers)."""
        hw = [s.half_width for s in self.scores if s.half_width is not None]
        return 100.0 * float(np.median(hw)) if hw else None

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "launches": self.launches,
            "sampler": self.sampler,
            "params": dict(self.params),
            "error_mean_pct": self.error_mean_pct,
            "error_max_pct": self.error_max_pct,
            "speedup_hmean": self.speedup_hmean,
            "sampled_launches_mean": self.sampled_launches_mean,
            "coverage": self.coverage,
            "half_width_median_pct": self.half_width_median_pct,
            "refused": self.refused,
            "fingerprint": self.fingerprint,
        }


def harmonic_mean(values: Iterable[float | None]) -> float | None:
    """Equal-work mean of speedups; an unknown (None) speedup makes it unknown."""
    vals = list(values)
    if not vals or any(v is None or not v > 0 for v in vals):
        return None
    inv = [0.0 if math.isinf(v) else 1.0 / v for v in vals]
    s = sum(inv)
    return len(vals) / s if s > 0 else None


def suite_summary(results: Sequence[WorkloadResult]) -> dict[str, float | None]:
    """Means over workloads: arithmetic for the error and coverage, harmonic for the speedup."""
    errs = [r.error_mean_pct for r in results if r.error_mean_pct is not None]
    covs = [r.coverage for r in results]
    hws = [s.half_width for r in results for s in r.scores if s.half_width is not None]
    return {
        "error_mean_pct": float(np.mean(errs)) if errs else None,
        "speedup_hmean": harmonic_mean([r.speedup_hmean for r in results]),
        "coverage": float(np.mean(covs)) if covs and all(c is not None for c in covs) else None,
        "half_width_median_pct": 100.0 * float(np.median(hws)) if hws else None,
    }


def score_plan(
    plan: Plan, values: np.ndarray, kernel_ids: np.ndarray, *, truth: float | None = None, metric: str = "value"
) -> RepeatScore:
    """Score a plan against per-launch ``values`` (indexed by launch position) of ``metric``: its
    interval is the one ``simsample estimate`` gives that metric (the cycles', on trace features,
    takes the spread of the features' model of the cycles)."""
    launches = plan.samples["launch"].to_numpy(np.int64)
    weights = plan.samples["weight"].to_numpy(np.float64)
    t = float(values.sum()) if truth is None else truth
    est = float(np.sum(weights * values[launches]))
    distinct = np.unique(launches)
    simulated = float(values[distinct].sum())
    speedup = t / simulated if simulated > 0 else (math.inf if t > 0 else None)
    error = abs(est - t) / t if t > 0 else (0.0 if est == 0 else None)
    covered: bool | None = None
    half_width: float | None = None
    refused = False
    if plan.estimator.get("kind") == "stratified" or has_audit(plan.estimator):
        series = pd.Series(values[distinct], index=kernel_ids[distinct])
        conf = plan.prediction.get("confidence") or 0.95
        try:
            e = estimate_total(plan, series, metric=metric, confidence=conf, strict=True)  # as simsample estimate does
        except UnsupportedConfidence:
            e, refused = None, True
        if e is not None and e.ci_low is not None:
            tol = 1e-9 * max(abs(t), 1.0)
            covered = bool(e.ci_low - tol <= t <= e.ci_high + tol)
            if t > 0:
                half_width = (e.ci_high - e.ci_low) / 2 / t
    return RepeatScore(
        seed=int(plan.sampler.get("seed", 0)),
        truth=t,
        estimate=est,
        error=error,
        speedup=speedup,
        sampled_launches=int(distinct.size),
        covered=covered,
        half_width=half_width,
        refused=refused,
    )


def read_truth_csv(path: str | Path) -> pd.DataFrame:
    """``kernel_id, value`` per launch from a CSV with those two columns (a header row; other
    columns are ignored); every value must be a finite number and every id appear once."""
    from simsample.errors import FormatError
    from simsample.io.files import check_input_file, read_head
    from simsample.io.limits import check_size

    p = check_input_file(path)
    check_size(p, "log")
    first = read_head(p, 4096).split(b"\n", 1)[0]
    if b"kernel_id" not in first and b"value" not in first:  # not even a try at the table: a log
        raise FormatError(
            p,
            "not a kernel_id,value CSV; for a simulator's output, name the simulator with --sim (accelsim, macsim, "
            "hyfiss)",
            line=1,
        )
    try:
        df = pd.read_csv(p)
    except Exception as exc:  # pandas raises several types for malformed CSV
        raise FormatError(p, f"not a readable CSV ({exc})") from exc
    for col in ("kernel_id", "value"):
        if col not in df.columns:
            raise FormatError(p, f"expected a header with columns kernel_id,value; no column {col!r}", line=1)
    ids = pd.to_numeric(df["kernel_id"], errors="coerce")
    vals = pd.to_numeric(df["value"], errors="coerce")
    bad = ids.isna() | (ids != ids.round()) | ~np.isfinite(vals.fillna(np.nan).to_numpy(np.float64))
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise FormatError(
            p,
            f"kernel_id must be an integer and value a finite number, got {df['kernel_id'].iloc[i]!r}, "
            f"{df['value'].iloc[i]!r}",
            line=i + 2,
        )
    out = pd.DataFrame({"kernel_id": ids.astype(np.int64), "value": vals.astype(np.float64)})
    dup = out["kernel_id"].duplicated()
    if dup.any():
        i = int(np.flatnonzero(dup.to_numpy())[0])
        raise FormatError(p, f"kernel_id {int(out['kernel_id'].iloc[i])} appears twice", line=i + 2)
    return out


def truth_by_launch(
    workload: Workload, truth: pd.DataFrame, *, source: str = "the truth", metric: str = "value"
) -> np.ndarray:
    """The truth's ``metric`` for each launch of ``workload`` in launch order.

    ``truth`` has ``kernel_id``, ``metric`` and optionally ``name``. It must hold the workload's
    launches and no others (and the same kernel names where both have them); the first
    difference, in launch order, is one user error."""
    if metric not in truth.columns:
        have = ", ".join(c for c in truth.columns if c not in ("kernel_id", "name", "status")) or "none"
        raise UserError(f"{source}: no metric {metric!r} (it has: {have}); choose one with --truth-metric")
    wl_ids = workload.kernels["kernel_id"].to_numpy(np.int64)
    t = truth.drop_duplicates("kernel_id").set_index("kernel_id")
    where = f"{workload.source or 'the workload'}"
    in_truth = pd.Index(wl_ids).isin(t.index)
    if not in_truth.all():
        i = int(np.flatnonzero(~in_truth)[0])
        raise UserError(
            f"{source} does not match {where}: launch {i} (kernel id {wl_ids[i]}, "
            f"{workload.kernels['name'].iloc[i]}) has no value in the truth ({len(t):,} launches there, "
            f"{len(wl_ids):,} here)"
        )
    extra = ~t.index.isin(wl_ids)
    if extra.any():
        k = int(t.index[extra][0])
        raise UserError(
            f"{source} does not match {where}: the truth has kernel id {k}, which is not a launch of the workload "
            f"({len(t):,} launches there, {len(wl_ids):,} here)"
        )
    if "name" in t.columns and "name" in workload.kernels.columns:
        theirs = t["name"].reindex(wl_ids).astype(str).to_numpy()
        ours = workload.kernels["name"].astype(str).to_numpy()
        differ = np.flatnonzero(theirs != ours)
        if differ.size:
            i = int(differ[0])
            raise UserError(
                f"{source} does not match {where}: kernel id {wl_ids[i]} is {theirs[i]} in the truth but {ours[i]} "
                "in the workload"
            )
    vals = pd.to_numeric(t[metric], errors="coerce").reindex(wl_ids).to_numpy(np.float64)
    bad = ~np.isfinite(vals)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise UserError(
            f"{source}: kernel id {wl_ids[i]} has no finite {metric} ({vals[i]}); the truth must be complete"
        )
    from simsample.sampling.estimate import MAX_VALUE

    huge = np.abs(vals) > MAX_VALUE
    if huge.any():  # its total and every estimate of it would overflow to inf
        i = int(np.flatnonzero(huge)[0])
        raise UserError(
            f"{source}: kernel id {wl_ids[i]} has {metric} {vals[i]:g}, beyond {MAX_VALUE:.0e}: too large to sum "
            "without overflow; check it, or give the metric in larger units"
        )
    return vals


def check_same_sequence(a: Workload, b: Workload) -> None:
    """Refuse to score a plan for ``a`` against ``b`` unless they are the same launch sequence."""
    if len(a) != len(b) or a.shape_fingerprint != b.shape_fingerprint:
        raise UserError(
            f"{b.source or 'the --against profile'} ({len(b):,} launches) is not the launch sequence of "
            f"{a.source or 'the profile'} ({len(a):,} launches): kernels or launch shapes differ; "
            "cross-hardware evaluation needs profiles of the same run"
        )


def evaluate_workload(
    workload: Workload,
    sampler: Sampler,
    params: Mapping[str, Any],
    repeats: int,
    *,
    name: str | None = None,
    against: Workload | None = None,
    truth: np.ndarray | None = None,
    truth_metric: str = "value",
    first_seed: int = 0,
    on_repeat: Callable[[], None] | None = None,
) -> WorkloadResult:
    """Plan with seeds first_seed..first_seed+repeats-1 on ``workload`` (resolved ``params``),
    score each plan.

    ``truth``: per-launch values in launch order (:func:`truth_by_launch`) to score against
    instead of the design metric (cross-metric); ``truth_metric`` names them (``cycles`` for a
    full simulation's). ``first_seed``: seeds 0.. are what ``simsample evaluate --repeat`` scores;
    later ones check a setting chosen on those without the choice's bias."""
    if repeats < 1:
        raise UserError("--repeat must be at least 1")
    if len(workload) == 0:
        raise UserError(f"{workload.source or 'workload'}: no kernel launches to evaluate")
    sampler.check_workload(workload, params)
    if truth is not None and len(truth) != len(workload):
        raise UserError(f"the truth has {len(truth):,} launches, the workload {len(workload):,}")
    truth_wl = workload
    if against is not None:
        check_same_sequence(workload, against)
        truth_wl = against
    out = WorkloadResult(
        name or workload.source, len(workload), sampler.name, dict(params), fingerprint=workload.fingerprint
    )
    ids = workload.kernels["kernel_id"].to_numpy(np.int64)
    cache: dict[str, tuple[np.ndarray, float]] = {}
    for seed in range(first_seed, first_seed + repeats):
        plan = sampler.plan(workload, params, seed)
        if truth is not None:
            out.scores.append(score_plan(plan, truth, ids, truth=float(truth.sum()), metric=truth_metric))
            if on_repeat is not None:
                on_repeat()
            continue
        metric = plan.workload.get("metric") or workload.default_metric()
        if metric == "none":
            metric = truth_wl.default_metric()
        if metric not in cache:
            vals = truth_wl.values(metric)
            cache[metric] = (vals, float(vals.sum()))
        vals, total = cache[metric]
        out.scores.append(score_plan(plan, vals, ids, truth=total, metric=metric))
        if on_repeat is not None:
            on_repeat()
    return out


def sweep_points(sweeps: Sequence[str]) -> list[dict[str, str]]:
    """``["eps=0.03,0.05", "replace=true,false"]`` → the cartesian product as parameter dicts."""
    axes: list[list[tuple[str, str]]] = []
    for item in sweeps:
        if "=" not in item:
            raise UserError(f"--sweep {item!r}: expected NAME=V1,V2,...")
        k, vs = item.split("=", 1)
        k = k.strip()
        values = [v.strip() for v in vs.split(",") if v.strip()]
        if not k or not values:
            raise UserError(f"--sweep {item!r}: expected NAME=V1,V2,...")
        axes.append([(k, v) for v in values])
    if not axes:
        return [{}]
    return [dict(combo) for combo in itertools.product(*axes)]


def discover_profiles(
    paths: Sequence[str | Path],
    *,
    host: ReaderSource,
    format: str | None = None,
    skipped: list[str] | None = None,
) -> list[tuple[Path, bool]]:
    """``(path, found_in_folder)`` for each workload, as the readers of ``host`` see them (the
    plugin host, passed in by the layer above: the core knows no plugin host).

    Each path is a workload; a directory that no reader takes as a whole is searched
    (recursively, in sorted order) for files and folders that a reader detects (``format``:
    that reader), so a suite's folder can be evaluated in one command. Files found in a folder
    may still turn out not to be workloads (a detector looks at the first bytes only); callers
    skip those with a note rather than fail. ``skipped``: a list that receives one line per file
    in a folder that no reader takes (an Nsight Systems report names its export command).
    """
    if format is not None:
        host.reader(format)  # unknown names fail here, with the known ones listed
    out: list[tuple[Path, bool]] = []
    for raw in paths:
        p = Path(raw)
        if not p.exists():
            raise UserFileNotFoundError(missing_message(p))  # a broken link or a loop is named as such
        if not p.is_dir() or _reader_of(p, format, host) is not None:
            out.append((p, False))
            continue
        passed: list[str] = []
        found = list(_walk(p, format, host, passed))
        if skipped is not None:
            skipped.extend(passed)
        if not found:
            hint = next((m for m in passed if "nsys export" in m), None)
            what = f"no {format} profile" if format else "no profile"
            raise UserError(
                f"{p}: is a directory with {what} inside that a reader recognises" + (f" ({hint})" if hint else "")
            )
        out.extend((f, True) for f in found)
    return out


def _reader_of(p: Path, format: str | None, host: ReaderSource) -> str | None:
    """The reader that takes ``p`` (a directory only if the reader reads directories)."""
    from simsample.io.files import read_head

    try:
        head = b"" if p.is_dir() else read_head(p)
    except (OSError, UserError):
        return None
    if not p.is_dir() and not head:
        return None
    names = [format] if format is not None else list(host.readers())
    for name in names:
        reader = host.reader(name)
        if p.is_dir() and not getattr(reader, "reads_directories", False):
            continue
        try:
            if reader.detect(p, head):
                return name
        except Exception:  # a detector must not break the search
            continue
    return None


def _walk(folder: Path, format: str | None, host: ReaderSource, passed: list[str]) -> Iterable[Path]:
    from simsample.io.loading import export_hint

    for child in sorted(folder.iterdir(), key=lambda c: c.name):
        if child.name.startswith("."):
            continue
        if _reader_of(child, format, host) is not None:
            yield child
        elif child.is_dir():
            yield from _walk(child, format, host, passed)
        else:
            passed.append(export_hint(child) or f"{child}: not a format any reader recognises")
