"""The public Python API: what the commands do, as functions a notebook can call.

Every command of the ``simsample`` CLI is a thin layer over one of these functions, so a
script and a shell session give the same plans and the same numbers. ``simsample``
re-exports them lazily (``import simsample`` stays as light as ``simsample --version``).

A session on the bundled example profile, from reading it to scoring a sampler:

```pycon
>>> import simsample
>>> wl = simsample.read("examples/profile/train_step.pt.trace.json.gz")
>>> len(wl), wl.format
(5320, 'kineto')
>>> p = simsample.plan(wl, seed=1)                 # the default sampler, margin
>>> p.sampler["name"], len(p.samples) < len(wl)
('margin', True)
>>> frame = p.to_dataframe()                      # one row per sample, with its cluster
>>> list(frame.columns[:4])
['kernel_id', 'launch', 'weight', 'cluster']

```

Stand in for a simulator with the profile's own durations of the sampled launches:

```pycon
>>> launches = wl.to_dataframe()
>>> simulated = launches[launches.kernel_id.isin(p.sampled_ids)][["kernel_id", "duration_ns"]]
>>> est = simsample.estimate(p, simulated)
>>> row = est.to_dataframe().loc["duration_ns"]
>>> bool(row.ci_low <= launches.duration_ns.sum() <= row.ci_high)
True
>>> ev = simsample.evaluate(wl, repeats=3)
>>> ev.to_dataframe()[["sampler", "launches", "coverage"]]
  sampler  launches  coverage
0  margin      5320       1.0

```
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from simsample.arguments import (
    MAX_SEED,  # noqa: F401  (re-exported)
    as_path,
    as_paths,
    as_plan,
    check_confidence,
    check_evaluate_args,
    check_name,
    check_seed,
    numeric,
    numeric_columns,
)
from simsample.errors import UserError, UserTypeError, UserValueError
from simsample.outcomes import Estimate, Evaluation, half_width_pct  # noqa: F401  (half_width_pct re-exported)

if TYPE_CHECKING:
    import pandas as pd

    from simsample.planfile import Plan
    from simsample.plugin_base import Adapter, Sampler
    from simsample.sampling.metrics import Metric
    from simsample.workload import Workload

#: The sampler used when none is named (``plan``, ``evaluate``, and these functions).
DEFAULT_SAMPLER = "margin"


# --- reading ---------------------------------------------------------------------------------
def find_workloads(paths: Iterable[str | Path], *, format: str | None = None) -> tuple[list[Path], list[str]]:
    """The workloads among ``paths`` and why other inputs were passed over.

    Every command walks its inputs the same way: a file, or a folder that a reader takes as a
    whole (a trace folder, a folder of Kineto rank files), is one workload; any other folder is
    searched recursively for such inputs. Files found in a folder that no reader recognises,
    and Nsight Systems reports that must be exported first, are returned as one line each in
    the second list (commands print their count, and the lines with ``--verbose``).

    ```pycon
    >>> found, skipped = find_workloads(["examples"])
    >>> [p.as_posix() for p in found]
    ['examples/profile', 'examples/traces']

    ```
    """
    found: list[Path] = []
    skipped: list[str] = []
    for p in as_paths(paths, "paths"):  # one path is a list of one, not of its characters
        inside, passed = _workloads_in(p, format)
        found += inside
        skipped += passed
    return found, skipped


def _workloads_in(path: Path, format: str | None) -> tuple[list[Path], list[str]]:
    """The workloads ``path`` stands for, and the files passed over. A folder with nothing a
    reader recognises is returned as it is, for its reader to say what it lacks (an Nsight
    Systems report inside is named with its export command instead)."""
    from simsample.reading import discover_profiles

    passed: list[str] = []
    try:
        return [p for p, _ in discover_profiles([path], format=format, skipped=passed)], passed
    except UserError:
        if not path.is_dir() or any("nsys export" in m for m in passed):
            raise
        return [path], []


def read(
    *paths: str | Path,
    format: str | None = None,
    rank: int | None = None,
    join: str | Path | None = None,
    columns: Mapping[str, str] | str | None = None,
) -> Workload:
    """Read one run's profile or simulator traces into a ``Workload``.

    Several paths are several files of one run (Kineto rank files); a folder that holds one
    profile somewhere inside it reads as that profile, as ``simsample evaluate`` would find it.
    ``format`` names the reader instead of detecting it, ``rank`` keeps one Kineto rank,
    ``join`` attaches per-launch metrics from an Nsight Compute CSV, and ``columns`` tells the
    ``csv`` reader which column holds what (``{"name": "Name", "duration_ns": "Duration"}``).

    ```pycon
    >>> wl = read("examples/traces")
    >>> wl.format, len(wl), wl.timed
    ('accelsim', 40, False)
    >>> read("examples/no-such-file")
    Traceback (most recent call last):
    simsample.errors.UserFileNotFoundError: examples/no-such-file: no such file or directory

    ```
    """
    from simsample.io.loading import load_workload
    from simsample.manager import get_host

    if not paths:
        raise UserError("no input given")
    if len(paths) == 1 and isinstance(paths[0], (list, tuple)):  # read([a, b]) as read(a, b)
        paths = tuple(paths[0])
    for q in paths:
        as_path(q, "path")
    if format is not None:
        check_name(format, "format")
    if rank is not None and (isinstance(rank, bool) or not isinstance(rank, int)):
        raise UserTypeError(f"rank: expected a whole number (a Kineto rank), got {type(rank).__name__} {rank!r}")
    if columns is not None and not isinstance(columns, (str, Mapping)):
        raise UserTypeError(
            f"columns: expected a mapping such as {{'name': 'Name'}} or 'name=Name,...', got {type(columns).__name__}"
        )
    options: dict[str, Any] = {}
    if rank is not None:
        options["rank"] = rank
    if columns:
        if isinstance(columns, str):
            from simsample.io.csv_columns import parse_columns

            columns = parse_columns(columns)
        options["columns"] = dict(columns)
    ps = [Path(p) for p in paths]
    if len(ps) == 1 and ps[0].is_dir():
        ps = [_one_workload_in(ps[0], format)]
    return load_workload(ps, host=get_host(), format=format, options=options, join=join)


def _one_workload_in(folder: Path, format: str | None) -> Path:
    """The folder itself when a reader takes it whole, else the one workload found inside it."""
    found, _ = _workloads_in(folder, format)
    if found == [folder]:
        return folder
    if len(found) == 1:
        return found[0]
    names = ", ".join(str(f) for f in found[:3]) + (", ..." if len(found) > 3 else "")
    raise UserError(
        f"{folder}: holds {len(found)} workloads ({names}); name one of them (simsample evaluate takes the whole "
        "folder)"
    )


# --- planning --------------------------------------------------------------------------------
def get_sampler(name: str = DEFAULT_SAMPLER) -> Sampler:
    """The installed sampler called ``name`` (``simsample samplers`` lists them)."""
    from simsample.manager import get_host

    return get_host().sampler(name)


def resolve_params(sampler: str | Sampler, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The sampler's defaults overlaid with ``params`` (values or command-line strings), checked.

    Samplers plan with resolved parameters only: this is the step that turns ``{}`` into every
    default, and refuses unknown names and out-of-range values in one line.

    ```pycon
    >>> resolve_params("margin", {"eps": "0.1"})["eps"]
    0.1
    >>> resolve_params("margin", {"epsilon": 0.1})
    Traceback (most recent call last):
    simsample.errors.UserTypeError: sampler margin has no parameter epsilon (known: ...)

    ```
    """
    s = get_sampler(sampler) if isinstance(sampler, str) else sampler
    return s.resolve_params(params)


def plan(
    workload: Workload | str | Path,
    sampler: str = DEFAULT_SAMPLER,
    *,
    seed: int = 0,
    stage: Callable[[str], None] | None = None,
    **params: Any,
) -> Plan:
    """Choose the launches to simulate: a ``Plan`` (write it with ``.write``).

    ``workload``: a ``Workload``, or the path of a profile or trace folder (read as ``read()``
    reads it). ``params`` are the sampler's parameters (``eps=0.05``; ``simsample samplers``
    lists them), resolved against its defaults and validated first; ``seed`` is a whole number
    from 0 to 2**32 - 1. The same workload, parameters and seed give the same plan. ``stage``
    is told what is happening (the CLI's stage line).

    ```pycon
    >>> wl = read("examples/profile/train_step.pt.trace.json.gz")
    >>> p = plan(wl, "stem", eps=0.1, seed=3)
    >>> p.sampler["params"]["eps"], p.sampler["seed"]
    (0.1, 3)

    ```
    """
    seed = check_seed(seed)
    s = get_sampler(check_name(sampler, "sampler"))
    resolved = s.resolve_params(params)
    workload = _as_workload(workload)
    if len(workload) == 0:
        raise UserValueError(f"{workload.source or 'workload'}: no kernel launches to sample")
    if stage is not None:
        stage(f"checking {len(workload):,} launches for sampler {s.name}")
    s.check_workload(workload, resolved)
    if stage is not None:
        stage(f"planning {len(workload):,} launches with {s.name}")
    return s.plan(workload, resolved, seed)


def _as_workload(workload: Any, what: str = "workload") -> Workload:
    """A ``Workload``, or the one a path names (read as ``read()`` reads it)."""
    import os

    from simsample.workload import Workload as _Workload

    if isinstance(workload, _Workload):
        return workload
    if isinstance(workload, (str, os.PathLike)):
        return read(workload)
    raise UserTypeError(
        f"{what}: expected a Workload or the path of a profile, got {type(workload).__name__}; "
        "read a profile or trace folder with simsample.read(path)"
    )


# --- the simulator's side --------------------------------------------------------------------
def get_adapter(sim: str) -> Adapter:
    """The installed simulator adapter called ``sim``; a missing one names what to install."""
    from simsample.manager import get_host

    if not isinstance(sim, str):
        raise UserTypeError(f"sim: expected an adapter's name (a string such as 'accelsim'), got {type(sim).__name__}")
    return get_host().adapter(sim)


def apply(plan: Plan | str | Path, traces: str | Path | None, out: str | Path, *, sim: str, **options: Any) -> Path:
    """Write the simulator inputs that run only the plan's launches into the new folder ``out``.

    ``plan``: a ``Plan`` or a plan file. ``options`` are the adapter's ``apply`` options by name
    (``warmup="none"``, ``copy=True``; ``simsample apply --sim NAME --help`` lists them as
    ``--warmup``, ``--copy``), checked before anything is read. ``traces`` is never modified;
    ``out`` must be new or empty (or ``force=True``) and may not hold an input.
    """
    import os

    from simsample.adapter_support.folders import check_output_folder
    from simsample.plugin_base import resolve_options

    adapter = get_adapter(sim)
    resolved = resolve_options(adapter.apply_options, options, who=f"apply --sim {adapter.name}")
    adapter.check_apply(**resolved)  # options the adapter cannot take are refused before anything is read
    trace_path = None if traces is None else as_path(traces, "traces")
    out_path = as_path(out, "out")
    inputs = [Path(plan)] if isinstance(plan, (str, os.PathLike)) else []
    inputs += [trace_path] if trace_path is not None else []
    check_output_folder(out_path, force=bool(resolved.get("force", False)), inputs=inputs)
    return Path(adapter.apply(as_plan(plan), trace_path, out_path, **resolved))


def find_plan(outputs: str | Path | Sequence[str | Path], *, sim: str) -> Path | None:
    """The plan file that simulator outputs carry with them (a folder written by ``apply`` holds
    ``simsample-plan.json``), or None: what ``collect`` and ``estimate`` use without ``--plan``."""
    adapter = get_adapter(sim)
    return adapter.find_plan(as_paths(outputs, "outputs"))


def collect(
    outputs: str | Path | Sequence[str | Path],
    *,
    sim: str,
    plan: Plan | str | Path | None = None,
    allow_incomplete: bool = False,
    **options: Any,
) -> pd.DataFrame:
    """Per-launch results of a simulator's output(s): one row per launch, ``kernel_id``, the
    adapter's metric columns and ``status``; hand it to ``estimate()``.

    ``outputs``: the simulator's output files or folders, and/or results tables written by
    ``simsample collect -o`` (a launch found twice is refused). With ``plan``: one row per
    sampled launch, in the plan's order, ``missing`` where no output has it. A sampled launch
    without a usable result is refused unless ``allow_incomplete``. ``options``: the adapter's
    ``collect`` options (``traces=...`` for Accel-Sim). The table's ``attrs`` carry the adapter's
    metric declarations, so that ``estimate()`` knows that IPC is a ratio and ``uid`` no metric.
    """
    from simsample.adapter_support.results import (
        USABLE_STATUSES,
        against_plan_all,
        incomplete_error,
        is_results_csv,
        read_results_table,
    )
    from simsample.plugin_base import resolve_options
    from simsample.sampling.metrics import check_declarations

    adapter = get_adapter(sim)
    if not isinstance(allow_incomplete, bool):
        raise UserTypeError(f"allow_incomplete: expected True or False, got {type(allow_incomplete).__name__}")
    resolved = resolve_options(adapter.collect_options, options, who=f"collect --sim {adapter.name}")
    declared = check_declarations(adapter.metrics, who=f"adapter {adapter.name}")
    paths = as_paths(outputs, "outputs")
    p = as_plan(plan) if plan is not None else None
    tables = [q for q in paths if q.is_file() and is_results_csv(q)]
    raw = [q for q in paths if q not in tables]
    details: dict[int, str] = {}
    frames = []
    if raw:
        got = adapter.collect(raw, p, allow_incomplete=allow_incomplete or bool(tables), **resolved)
        details.update(got.attrs.get("details") or {})
        frames.append(got if not tables else got[got["status"] != "missing"])
    frames += [read_results_table(q, declared) for q in tables]
    import pandas as pd

    df = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
    if tables:
        keep = df[df["kernel_id"].isin(p.sampled_ids)] if p is not None else df
        dup = keep["kernel_id"].duplicated()
        if dup.any():
            raise UserValueError(
                f"kernel {int(keep.loc[dup, 'kernel_id'].iloc[0])} has results in more than one input; pass each once"
            )
    if p is not None:
        df = against_plan_all(df, p)
    if not allow_incomplete:
        bad = df[~df["status"].isin(USABLE_STATUSES)]
        if len(bad):
            raise incomplete_error(df, details)
    df.attrs["simsample.metrics"] = declared
    df.attrs["simsample.sim"] = adapter.name
    df.attrs["details"] = details
    df.attrs["source"] = ", ".join(str(q) for q in paths)
    return df


def estimate(
    plan: Plan | str | Path,
    results: pd.DataFrame,
    *,
    confidence: float | None = None,
    metrics: Sequence[Metric] | None = None,
    check: bool = True,
) -> Estimate:
    """Whole-workload estimate of every metric of ``results``, with intervals at ``confidence``
    (default: the plan's own, the level its bound was stated at).

    ``results`` holds the simulated launches: ``collect()``'s table, or any table with a
    ``kernel_id`` column and numeric metric columns. What each column is comes from ``metrics``,
    else from the declarations ``collect()`` attached to its table (the adapter's): counts are
    summed, a ratio such as IPC is the ratio of its two estimated totals (never a sum of
    per-launch IPCs), and ids or wall seconds are left out. A table without declarations has its
    numeric columns taken as counts, except columns named like ids (``uid``, ``launch``,
    ``*_id``). Results for launches the plan did not sample are ignored; results for launches
    the plan's workload does not have are refused (the output of another run); a sampled launch
    without a usable result (``status``) is refused. A column with no value at all is left out
    silently (a statistic the simulator never prints); a count with values for some launches
    only is left out, with its ratios, and named in ``left_out``.
    """
    import pandas as pd

    from simsample.adapter_support.results import (
        USABLE_STATUSES,
        check_results_belong,
        unusable_message,
    )
    from simsample.sampling.estimate import estimate_results
    from simsample.sampling.metrics import check_declarations, estimable, infer_metrics

    p = as_plan(plan)
    if not isinstance(results, pd.DataFrame):
        raise UserTypeError(
            "results: expected a table (a pandas DataFrame with kernel_id and metric columns, as collect() "
            f"returns), got {type(results).__name__}"
        )
    confidence = check_confidence(confidence)
    source = str(results.attrs.get("source", "results"))
    if "kernel_id" not in results.columns:
        raise UserValueError(f"{source}: results need a kernel_id column (one row per simulated launch)")
    if not len(results):
        raise UserValueError(f"{source}: no results (no rows); give one row per simulated launch")
    ids = pd.to_numeric(results["kernel_id"], errors="coerce")
    if ids.isna().any() or not (ids == ids.round()).all():
        bad = int(((ids.isna()) | (ids != ids.round())).to_numpy().nonzero()[0][0])
        raise UserValueError(
            f"{source}: kernel_id {results['kernel_id'].iloc[bad]!r} is not a launch id (a whole number)"
        )
    if metrics is not None:
        declared = check_declarations(metrics)
    elif results.attrs.get("simsample.metrics"):
        declared = check_declarations(results.attrs["simsample.metrics"])
    else:
        declared = infer_metrics(numeric_columns(results, source))
    if not any(m.kind != "none" for m in declared):
        cols = [c for c in results.columns if c != "kernel_id"]
        raise UserValueError(
            f"{source}: no metric to estimate "
            f"({'columns ' + ', '.join(map(str, cols[:6])) if cols else 'no column beside kernel_id'}: ids, labels "
            "or text); give kernel_id and one or more numeric columns such as cycles"
        )
    table = results.copy()
    table["kernel_id"] = ids.astype("int64")
    for m in declared:
        if m.kind == "count" and m.name in table.columns:
            table[m.name] = numeric(table[m.name], m.name, source)
    sampled = table[table["kernel_id"].isin(p.sampled_ids)]
    if "status" in table.columns:
        bad = sampled[~sampled["status"].isin(USABLE_STATUSES)]
        if len(bad):
            raise UserValueError(unusable_message(bad, results.attrs.get("details")))
    # with sampled launches absent from the table, the estimator names them (judged on every row)
    absent = set(p.sampled_ids) - set(sampled["kernel_id"].tolist())
    counts, ratios, left_out = estimable(table if absent else sampled, declared)
    if not counts and not ratios:
        named = ", ".join(m.name for m in declared if m.kind == "count")
        if not any(m.kind == "count" and m.name in table.columns for m in declared):
            raise UserValueError(
                f"{source}: none of the columns {named} is in the results; give the table collect() returns"
            )
        raise UserValueError(
            f"{source}: no values for the sampled launches in {named}; give the results of the run made for this plan"
        )
    if check:
        check_results_belong(table, p, counts, source)
    keep = table[["kernel_id", *counts]]
    projected = int((sampled["status"] == "projected").sum()) if "status" in sampled.columns else 0
    ests = estimate_results(p, keep, metrics=counts, ratios=ratios, confidence=confidence)
    return Estimate(p, ests, left_out=left_out, launches=int(sampled["kernel_id"].nunique()), projected=projected)


# --- evaluation ------------------------------------------------------------------------------
def evaluate(
    workloads: Workload | str | Path | Sequence[Workload | str | Path],
    sampler: str = DEFAULT_SAMPLER,
    *,
    repeats: int = 10,
    sweep: Mapping[str, Sequence[Any]] | None = None,
    against: Workload | str | Path | None = None,
    truth: pd.DataFrame | None = None,
    truth_metric: str = "value",
    min_launches: int = 1,
    format: str | None = None,
    rank: int | None = None,
    columns: Mapping[str, str] | str | None = None,
    on_progress: Callable[[int], None] | None = None,
    include: str | None = None,
    exclude: str | None = None,
    steps: str | None = None,
    time_range: str | None = None,
    **params: Any,
) -> Evaluation:
    """Score a sampler with the workload's own values as the truth (or ``truth``'s values).

    Plans are made with seeds ``0..repeats-1`` and each one's estimate is compared with the true
    total: mean and max error, harmonic-mean speedup, sampled launches, interval coverage and
    the median relative half-width of the intervals (coverage alone cannot be judged: a wide
    enough interval always covers). ``workloads``: workloads, files, or folders (searched as
    ``find_workloads()`` does; unreadable files found there are skipped and listed in
    ``skipped``). ``sweep``: values of parameters to try (all combinations). ``against``: a
    profile of the same run on other hardware to score against; ``truth``: a table of
    ``kernel_id`` and ``truth_metric`` per launch (a full simulation's results). ``format``,
    ``rank`` and ``columns`` say how profiles are read, as for ``read()`` (``columns`` tells the
    ``csv`` reader which column holds what).
    ``include``/``exclude`` (regular expressions on kernel names), ``steps`` (``"A-B"``) and
    ``time_range`` (``"20ms-60ms"``) keep the launches ``plan`` would keep with the same
    filters, so that a sampler is scored on the window one will plan on (the truth is that
    window's total).

    ```pycon
    >>> ev = evaluate("examples/profile/train_step.pt.trace.json.gz", "random", repeats=2, sweep={"rate": [0.05, 0.2]})
    >>> ev.suite_dataframe()[["rate", "coverage"]].shape
    (2, 2)

    ```
    """
    from simsample.sampling.evaluate import evaluate_workload, truth_by_launch
    from simsample.sampling.filters import LaunchFilter, parse_steps, parse_time_range
    from simsample.workload import Workload as _Workload

    check_evaluate_args(workloads, repeats, sweep, against, truth, truth_metric, min_launches, on_progress)
    s = get_sampler(check_name(sampler, "sampler"))
    points = _sweep_points(sweep)
    resolved = [s.resolve_params({**params, **pt}) for pt in points]
    flt = LaunchFilter(include, exclude, steps, time_range)
    if steps is not None:
        parse_steps(steps)  # a malformed filter is refused before anything is read
    if time_range is not None:
        parse_time_range(time_range)
    items = list(workloads) if isinstance(workloads, (list, tuple)) else [workloads]
    todo: list[tuple[Any, bool]] = []
    skipped: list[str] = []
    paths = [i for i in items if not isinstance(i, _Workload)]
    found: dict[int, list[tuple[Path, bool]]] = {}
    if paths:
        from simsample.reading import discover_profiles

        for i, item in enumerate(items):
            if not isinstance(item, _Workload):
                found[i] = discover_profiles([item], format=format, skipped=skipped)
    for i, item in enumerate(items):
        if isinstance(item, _Workload):
            todo.append((item, False))
        else:
            todo.extend(found[i])
    truth_wl = (
        against
        if against is None or isinstance(against, _Workload)
        else read(against, format=format, rank=rank, columns=columns)
    )
    if truth is not None and len(todo) != 1:
        raise UserError("a truth scores one workload: give exactly one profile (not a folder of them)")
    results = []
    for item, in_folder in todo:
        name = item.source if isinstance(item, _Workload) else str(item)
        try:
            wl = item if isinstance(item, _Workload) else read(item, format=format, rank=rank, columns=columns)
            if len(wl) >= min_launches and truth is None:
                wl.values(wl.default_metric())  # untimed traces fail here, with their reason
        except UserError as exc:
            if not in_folder:
                raise
            msg = str(exc)
            skipped.append(msg if msg.startswith(name) else f"{name}: {msg}")
            if on_progress is not None:
                on_progress(len(resolved) * repeats)
            continue
        if len(wl) < min_launches:
            skipped.append(f"{name}: {len(wl)} launches, fewer than {min_launches}")
            if on_progress is not None:
                on_progress(len(resolved) * repeats)
            continue
        if flt.active:
            from simsample.sampling.filters import prepare

            wl = prepare(wl, [item if not isinstance(item, _Workload) else wl.source], flt).workload
        truth_values = None
        if truth is not None:
            truth_values = truth_by_launch(
                wl, truth, source=str(truth.attrs.get("source", "the truth")), metric=truth_metric
            )
        tick = (lambda: on_progress(1)) if on_progress is not None else None
        for p in resolved:
            results.append(
                evaluate_workload(
                    wl,
                    s,
                    p,
                    repeats,
                    name=name,
                    against=truth_wl,
                    truth=truth_values,
                    truth_metric=truth_metric,
                    on_repeat=tick,
                )
            )
    if not results:
        raise UserError(f"no workload with at least {min_launches} launches among {len(todo)} profile(s)")
    swept = sorted({k for pt in points for k in pt})
    return Evaluation(s.name, repeats, results, swept, skipped)


def _sweep_points(sweep: Mapping[str, Sequence[Any]] | None) -> list[dict[str, Any]]:
    import itertools

    if not sweep:
        return [{}]
    axes = [[(k, v) for v in vs] for k, vs in sweep.items()]
    for k, vs in sweep.items():
        if not len(vs):
            raise UserError(f"sweep {k}: no values")
    return [dict(c) for c in itertools.product(*axes)]
