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
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from simsample.errors import UserError

if TYPE_CHECKING:
    import pandas as pd

    from simsample.plugin_base import Sampler
    from simsample.planfile import Plan
    from simsample.sampling.estimate import MetricEstimate
    from simsample.sampling.evaluate import WorkloadResult
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
    for p in paths:
        inside, passed = _workloads_in(Path(p), format)
        found += inside
        skipped += passed
    return found, skipped


def _workloads_in(path: Path, format: str | None) -> tuple[list[Path], list[str]]:
    """The workloads ``path`` stands for, and the files passed over. A folder with nothing a
    reader recognises is returned as it is, for its reader to say what it lacks (an Nsight
    Systems report inside is named with its export command instead)."""
    from simsample.sampling.evaluate import discover_profiles

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
    simsample.errors.UserError: examples/no-such-file: no such file or directory

    ```
    """
    from simsample.io.loading import load_workload

    if not paths:
        raise UserError("no input given")
    options: dict[str, Any] = {}
    if rank is not None:
        options["rank"] = rank
    if columns:
        if isinstance(columns, str):
            from simsample.plugins.readers.generic_csv import parse_columns

            columns = parse_columns(columns)
        options["columns"] = dict(columns)
    ps = [Path(p) for p in paths]
    if len(ps) == 1 and ps[0].is_dir():
        ps = [_one_workload_in(ps[0], format)]
    return load_workload(ps, format=format, options=options, join=join)


def _one_workload_in(folder: Path, format: str | None) -> Path:
    """The folder itself when a reader takes it whole, else the one workload found inside it."""
    found, _ = _workloads_in(folder, format)
    if found == [folder]:
        return folder
    if len(found) == 1:
        return found[0]
    names = ", ".join(str(f) for f in found[:3]) + (", ..." if len(found) > 3 else "")
    raise UserError(f"{folder}: holds {len(found)} workloads ({names}); name one of them (simsample evaluate takes the whole folder)")


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
    simsample.errors.UserError: sampler margin has no parameter epsilon (known: ...)

    ```
    """
    s = get_sampler(sampler) if isinstance(sampler, str) else sampler
    return s.resolve_params(params)


def plan(workload: Workload, sampler: str = DEFAULT_SAMPLER, *, seed: int = 0, stage: Callable[[str], None] | None = None, **params: Any) -> Plan:
    """Choose the launches to simulate: a ``Plan`` (write it with ``.write``).

    ``params`` are the sampler's parameters (``eps=0.05``; ``simsample samplers`` lists them),
    resolved against its defaults and validated first; the same workload, parameters and seed
    give the same plan. ``stage`` is told what is happening (the CLI's stage line).

    ```pycon
    >>> wl = read("examples/profile/train_step.pt.trace.json.gz")
    >>> p = plan(wl, "stem", eps=0.1, seed=3)
    >>> p.sampler["params"]["eps"], p.sampler["seed"]
    (0.1, 3)

    ```
    """
    s = get_sampler(sampler)
    resolved = s.resolve_params(params)
    if len(workload) == 0:
        raise UserError(f"{workload.source or 'workload'}: no kernel launches to sample")
    if stage is not None:
        stage(f"checking {len(workload):,} launches for sampler {s.name}")
    s.check_workload(workload, resolved)
    if stage is not None:
        stage(f"planning {len(workload):,} launches with {s.name}")
    return s.plan(workload, resolved, seed)


# --- the simulator's side --------------------------------------------------------------------
def get_adapter(sim: str):
    """The installed simulator adapter called ``sim``; a missing one names what to install."""
    from simsample.manager import get_host

    return get_host().adapter(sim)


def _run_adapter_command(sim: str, verb: str, args: list[str]) -> None:
    adapter = get_adapter(sim)
    cmds = adapter.commands()
    if verb not in cmds:
        raise UserError(f"adapter {sim} has no '{verb}' step (it has: {', '.join(sorted(cmds)) or 'none'})")
    cmds[verb].main(args=args, prog_name=f"simsample {verb} --sim {sim}", standalone_mode=False)


def _option_args(options: Mapping[str, Any]) -> list[str]:
    """``{"warmup": "none", "copy": True}`` → ``["--warmup", "none", "--copy"]``."""
    out: list[str] = []
    for k, v in options.items():
        flag = "--" + k.replace("_", "-")
        if v is True:
            out.append(flag)
        elif v is False or v is None:
            continue
        elif isinstance(v, (list, tuple)):
            for item in v:
                out += [flag, str(item)]
        else:
            out += [flag, str(v)]
    return out


def apply(plan: str | Path, traces: str | Path, out: str | Path, *, sim: str, **options: Any) -> Path:
    """Write the simulator inputs that run only the plan's launches into the new folder ``out``.

    ``plan`` is a plan file (write a ``Plan`` with ``.write`` first);
    ``options`` are the adapter's ``apply`` options by name (``warmup="none"``, ``copy=True``;
    ``simsample apply --sim NAME --help`` lists them). ``traces`` is never modified.
    """
    _run_adapter_command(sim, "apply", ["--plan", str(plan), "--traces", str(traces), "--out", str(out), *_option_args(options)])
    return Path(out)


def collect(outputs: str | Path | Sequence[str | Path], *, sim: str, plan: str | Path | None = None, **options: Any) -> pd.DataFrame:
    """Per-launch results of a simulator's output(s): one row per launch, ``kernel_id`` and metrics.

    The adapter's own ``collect`` step parses the output, so the table is the one
    ``simsample collect --sim NAME -o results.csv`` writes; hand it to ``estimate()``.
    """
    import contextlib
    import io
    import sys
    import tempfile

    import pandas as pd

    outs = [outputs] if isinstance(outputs, (str, Path)) else list(outputs)
    with tempfile.TemporaryDirectory(prefix="simsample-collect-") as tmp:
        target = Path(tmp) / "results.csv"
        args = [*(["--plan", str(plan)] if plan is not None else []), *map(str, outs), "-o", str(target), *_option_args(options)]
        with contextlib.redirect_stderr(io.StringIO()) as said:  # the command's "wrote TMP" line names a temporary
            try:
                _run_adapter_command(sim, "collect", args)
            finally:
                notes = [line for line in said.getvalue().splitlines() if line and not line.startswith(str(target))]
        for line in notes:
            print(line, file=sys.stderr)
        return pd.read_csv(target)


@dataclass
class Estimate:
    """Whole-workload estimates of every metric, with their intervals.

    ``estimates`` holds one ``MetricEstimate`` per metric;
    ``to_dataframe()`` gives them as a table indexed by metric, with the relative half-width
    of each interval (what to read first: how far the truth can be from the estimate).
    """

    plan: Plan
    estimates: list[MetricEstimate]

    def to_dataframe(self) -> pd.DataFrame:
        import pandas as pd

        rows = [{**e.to_json(), "half_width_pct": half_width_pct(e)} for e in self.estimates]
        cols = ["metric", "estimate", "std_error", "ci_low", "ci_high", "half_width_pct", "confidence", "samples", "kind"]
        return pd.DataFrame(rows, columns=cols).set_index("metric")

    def to_json(self) -> dict[str, Any]:
        """What ``simsample estimate --json`` prints (the report reads it)."""
        p = self.plan
        return {
            "plan": {
                "sampler": p.sampler["name"],
                "samples": int(len(p.samples)),
                "fingerprint": p.workload.get("fingerprint"),
                "digest": p.digest,
                "error_bound": p.prediction.get("error_bound"),
                "confidence": p.prediction.get("confidence"),
            },
            "estimates": [{**e.to_json(), "half_width_pct": half_width_pct(e)} for e in self.estimates],
        }


def half_width_pct(e: MetricEstimate) -> float | None:
    """Half the interval's width in percent of the estimate (None without an interval)."""
    if e.ci_low is None or e.ci_high is None or not e.estimate:
        return None
    return 100.0 * (e.ci_high - e.ci_low) / 2 / abs(e.estimate)


def estimate(plan: Plan | str | Path, results: pd.DataFrame, *, confidence: float | None = None, check: bool = True) -> Estimate:
    """Whole-workload estimate of every numeric column of ``results`` (``kernel_id`` + metrics),
    with intervals at ``confidence`` (default: the plan's own, the level its bound was stated at).

    ``results`` holds the simulated launches (from ``collect()``, or any table with a
    ``kernel_id`` column); results for launches the plan did not sample are ignored, results for
    launches the plan's workload does not have are refused (the output of another run). Columns
    with no value at all are left out: a simulator that does not print a statistic (Accel-Sim's
    per-kernel occupancy) leaves its column empty in ``collect()``'s table.
    """
    from simsample.planfile import Plan as _Plan
    from simsample.sampling.estimate import estimate_results

    p = plan if isinstance(plan, _Plan) else _Plan.read(plan)
    if "kernel_id" not in results.columns:
        raise UserError("results need a kernel_id column (one row per simulated launch)")
    empty = [c for c in results.columns if c != "kernel_id" and results[c].isna().all()]
    if empty:
        attrs = dict(results.attrs)
        results = results.drop(columns=empty)
        results.attrs.update(attrs)
    metrics = [c for c in results.columns if c != "kernel_id"]
    if check:
        from simsample.adapter_support.results import check_results_belong

        numeric = [c for c in metrics if results[c].dtype.kind in "fiu"]
        check_results_belong(results, p, numeric, str(results.attrs.get("source", "the results")))
    return Estimate(p, estimate_results(p, results, confidence=confidence))


# --- evaluation ------------------------------------------------------------------------------
@dataclass
class Evaluation:
    """A sampler scored on workloads: one ``WorkloadResult`` per
    workload and parameter set, the suite's means, and the inputs passed over."""

    sampler: str
    repeats: int
    results: list[WorkloadResult]
    swept: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    @property
    def suite(self) -> dict[str, Any] | list[dict[str, Any]]:
        """The suite's figures: one dict, or one per swept parameter set (with ``params``)."""
        from simsample.sampling.evaluate import suite_summary

        if not self.swept:
            return suite_summary(self.results)
        out = []
        seen: list[dict[str, Any]] = []
        for r in self.results:
            key = {k: r.params[k] for k in self.swept}
            if key not in seen:
                seen.append(key)
        for key in seen:
            part = [r for r in self.results if all(r.params[k] == v for k, v in key.items())]
            out.append({"params": key, **suite_summary(part)})
        return out

    def to_dataframe(self) -> pd.DataFrame:
        """One row per workload and parameter set: the figures ``simsample evaluate`` prints."""
        import pandas as pd

        rows = []
        for r in self.results:
            d = r.to_json()
            params = d.pop("params")
            rows.append({**d, **{k: params[k] for k in self.swept}})
        return pd.DataFrame(rows)

    def suite_dataframe(self) -> pd.DataFrame:
        """The suite's figures, one row per parameter set."""
        import pandas as pd

        suite = self.suite
        rows = suite if isinstance(suite, list) else [{"params": {}, **suite}]
        return pd.DataFrame([{**r["params"], **{k: v for k, v in r.items() if k != "params"}} for r in rows])

    def to_json(self) -> dict[str, Any]:
        """What ``simsample evaluate --json`` prints (the report reads it)."""
        return {"workloads": [r.to_json() for r in self.results], "suite": self.suite}


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
    on_progress: Callable[[int], None] | None = None,
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
    ``kernel_id`` and ``truth_metric`` per launch (a full simulation's results).

    ```pycon
    >>> ev = evaluate("examples/profile/train_step.pt.trace.json.gz", "random", repeats=2, sweep={"rate": [0.05, 0.2]})
    >>> ev.suite_dataframe()[["rate", "coverage"]].shape
    (2, 2)

    ```
    """
    from simsample.sampling.evaluate import evaluate_workload, truth_by_launch
    from simsample.workload import Workload as _Workload

    s = get_sampler(sampler)
    points = _sweep_points(sweep)
    resolved = [s.resolve_params({**params, **pt}) for pt in points]
    items = list(workloads) if isinstance(workloads, (list, tuple)) else [workloads]
    todo: list[tuple[Any, bool]] = []
    skipped: list[str] = []
    paths = [i for i in items if not isinstance(i, _Workload)]
    found: dict[int, list[tuple[Path, bool]]] = {}
    if paths:
        from simsample.sampling.evaluate import discover_profiles

        for i, item in enumerate(items):
            if not isinstance(item, _Workload):
                found[i] = discover_profiles([item], format=format, skipped=skipped)
    for i, item in enumerate(items):
        if isinstance(item, _Workload):
            todo.append((item, False))
        else:
            todo.extend(found[i])
    truth_wl = against if against is None or isinstance(against, _Workload) else read(against, format=format, rank=rank)
    if truth is not None and len(todo) != 1:
        raise UserError("a truth scores one workload: give exactly one profile (not a folder of them)")
    results = []
    for item, in_folder in todo:
        name = item.source if isinstance(item, _Workload) else str(item)
        try:
            wl = item if isinstance(item, _Workload) else read(item, format=format, rank=rank)
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
        truth_values = None
        if truth is not None:
            truth_values = truth_by_launch(wl, truth, source=str(truth.attrs.get("source", "the truth")), metric=truth_metric)
        tick = (lambda: on_progress(1)) if on_progress is not None else None
        for p in resolved:
            results.append(evaluate_workload(wl, s, p, repeats, name=name, against=truth_wl, truth=truth_values, on_repeat=tick))
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

