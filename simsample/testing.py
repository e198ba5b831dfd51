"""The conformance kit: checks that a sampler, a reader or a simulator adapter keeps the plugin contract.

Modelled on scikit-learn's ``check_estimator``. Each ``check_*`` function runs a list of named
checks and raises :class:`AssertionError` naming the first one that fails and what it saw::

    from simsample.testing import check_sampler

    check_sampler(MySampler())                      # on a small synthetic workload
    check_reader(MyReader(), "tests/data/run.prof")  # on an example file of the format
    check_adapter(MyAdapter(), "tests/data/traces", outputs=["tests/data/sim.out"])

In a test suite, :func:`parametrize_with_checks` makes one test per check, so that a failure
names its check in the test id::

    @parametrize_with_checks(sampler_checks(MySampler()), reader_checks(MyReader(), EXAMPLE))
    def test_conformance(check):
        check()

The checks hold every plugin, built in or third party, to the same rules: parameters declared
with defaults that validate; plans deterministic in the seed, byte for byte, and recording what
made them; weights that add up to the workload; refusals as :class:`~simsample.sdk.UserError`
(one line for the user, never a traceback); readers that recognise their own format and return
the canonical columns in launch order with a stable fingerprint; adapters whose results carry
only the metrics they declare. This module is public (see the SDK reference's stability policy).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from simsample.sdk import REQUIRED_COLUMNS, Param, Plan, UserError, Workload, from_records, read_head, resolve_options

if TYPE_CHECKING:
    import pandas as pd

    from simsample.sdk import Adapter, Reader, Sampler

__all__ = [
    "Check",
    "adapter_checks",
    "check_adapter",
    "check_reader",
    "check_sampler",
    "example_workload",
    "parametrize_with_checks",
    "reader_checks",
    "sampler_checks",
]

#: the verbs an adapter's ``commands()`` may offer
ADAPTER_VERBS = frozenset({"apply", "collect", "estimate", "run", "features"})
#: the kinds a metric declaration may have (count: summed; ratio: of two counts; none: not estimable)
METRIC_KINDS = frozenset({"count", "ratio", "none"})
#: result columns that are not metrics (every other column collect() returns is declared)
RESULT_KEYS = frozenset({"kernel_id", "status"})


@dataclass(frozen=True)
class Check:
    """One named check of one plugin: call it to run it (raises :class:`AssertionError`)."""

    plugin: str
    name: str
    run: Callable[[], None] = field(repr=False, compare=False)

    @property
    def id(self) -> str:
        """``plugin-check``: the test id :func:`parametrize_with_checks` gives it."""
        return f"{self.plugin}-{self.name}"

    def __call__(self) -> None:
        try:
            self.run()
        except AssertionError as exc:
            raise AssertionError(f"{self.id}: {exc}") from None
        except Exception as exc:  # an unexpected exception is a failed check too, named as such
            raise AssertionError(f"{self.id}: raised {type(exc).__name__}: {exc}") from exc


def _expect(condition: Any, message: str) -> None:
    if not condition:
        raise AssertionError(message)


def _expect_user_error(action: Callable[[], Any], what: str) -> UserError:
    """Run ``action``; it must raise a UserError (what the command line shows as one line)."""
    try:
        action()
    except UserError as exc:
        _expect(
            str(exc).strip() and "\n" not in str(exc).strip(),
            f"{what}: the refusal must be one non-empty line, got {str(exc)!r}",
        )
        return exc
    except Exception as exc:
        raise AssertionError(
            f"{what}: expected a UserError (one line for the user), got {type(exc).__name__}: {exc}"
        ) from exc
    raise AssertionError(f"{what}: expected a UserError, but nothing was raised")


def _run_all(checks: Iterable[Check]) -> None:
    for check in checks:
        check()


def parametrize_with_checks(*check_lists: Iterable[Check]) -> Any:
    """A ``pytest.mark.parametrize`` over every check of the given lists, one test each, with ids
    ``plugin-check``. The test function takes one argument, ``check``, and calls it."""
    import pytest

    checks = [c for lst in check_lists for c in lst]
    return pytest.mark.parametrize("check", checks, ids=[c.id for c in checks])


# --- a workload to plan on --------------------------------------------------------------------


def example_workload(launches: int = 240, *, columns: Sequence[str] = (), seed: int = 0) -> Workload:
    """A small synthetic workload: six kernels of different shapes and costs, interleaved, with
    durations and cycles that vary within each kernel, and any extra ``columns`` (positive values
    that grow with the launch's cost, as instruction counts and profiler metrics do)."""
    g = np.random.default_rng(np.random.SeedSequence(seed))
    kernels = [
        ("gemm_128x128", 80, 256, 40_000.0),
        ("gemm_64x64", 40, 128, 15_000.0),
        ("softmax", 16, 512, 4_000.0),
        ("layernorm", 32, 256, 6_000.0),
        ("elementwise_add", 160, 256, 1_500.0),
        ("reduce_sum", 8, 1024, 9_000.0),
    ]
    which = g.choice(len(kernels), size=launches, p=[0.15, 0.2, 0.15, 0.15, 0.3, 0.05])
    scale = np.array([k[3] for k in kernels])[which]
    duration = np.maximum(1, np.rint(scale * g.lognormal(0.0, 0.25, size=launches))).astype(np.int64)
    start = np.concatenate([[0], np.cumsum(duration[:-1] + 500)]).astype(np.int64)
    records: dict[str, Any] = {
        "name": [kernels[i][0] for i in which],
        "grid_x": np.array([k[1] for k in kernels], dtype=np.int64)[which],
        "block_x": np.array([k[2] for k in kernels], dtype=np.int64)[which],
        "start_ns": start,
        "duration_ns": duration,
        "cycles": np.rint(duration * 1.4).astype(np.int64),
    }
    for i, column in enumerate(c for c in columns if c not in records and c not in REQUIRED_COLUMNS):
        records[column] = duration * (3.0 + i) * g.uniform(0.9, 1.1, size=launches)
    return from_records(records, source="example workload", format="synthetic")


def _empty_like(workload: Workload) -> Workload:
    return Workload(workload.kernels.iloc[0:0].copy(), source="empty workload", format=workload.format, validate=False)


# --- samplers ---------------------------------------------------------------------------------


class _SamplerCase:
    """A sampler, its workload and parameters, and the plans made so far (planned once per seed)."""

    def __init__(
        self, sampler: Sampler, workload: Workload | None, params: Mapping[str, Any] | None, seed: int
    ) -> None:
        self.sampler = sampler
        self.given = dict(params or {})
        self.seed = int(seed)
        self._workload = workload
        self._plans: dict[int, Plan] = {}

    @property
    def params(self) -> dict[str, Any]:
        return self.sampler.resolve_params(self.given)

    @property
    def workload(self) -> Workload:
        if self._workload is None:
            self._workload = example_workload(columns=self.sampler.required_columns(self.params))
        return self._workload

    def plan(self, seed: int | None = None, *, fresh: bool = False) -> Plan:
        seed = self.seed if seed is None else seed
        if fresh or seed not in self._plans:
            params = self.params
            self.sampler.check_workload(self.workload, params)
            plan = self.sampler.plan(self.workload, params, seed)
            _expect(isinstance(plan, Plan), f"plan() must return a Plan, got {type(plan).__name__}")
            if fresh:
                return plan
            self._plans[seed] = plan
        return self._plans[seed]


def _sampler_declares_identity(case: _SamplerCase) -> None:
    s = case.sampler
    _expect(
        isinstance(getattr(s, "name", None), str) and s.name.strip() == s.name and s.name and " " not in s.name,
        f"name must be a non-empty word (what --sampler takes), got {getattr(s, 'name', None)!r}",
    )
    _expect(
        isinstance(s.version, str) and s.version,
        f"version must be a non-empty string (plans record it), got {s.version!r}",
    )
    _expect(isinstance(s.description, str) and s.description, "description must say in one line what the sampler does")
    _expect(
        isinstance(s.params, tuple) and all(isinstance(p, Param) for p in s.params), "params must be a tuple of Param"
    )
    names = [p.name for p in s.params]
    _expect(len(set(names)) == len(names), f"parameter names must be unique: {names}")
    _expect(
        isinstance(s.requires, tuple) and all(isinstance(c, str) for c in s.requires),
        "requires must be a tuple of column names",
    )
    _expect(isinstance(s.bounded, bool), "bounded must be a bool")
    note = s.unavailable()
    _expect(
        note is None or (isinstance(note, str) and note.strip()),
        f"unavailable() must return None or a reason, got {note!r}",
    )


def _sampler_param_defaults_validate(case: _SamplerCase) -> None:
    s = case.sampler
    for p in s.params:
        if p.default is None:
            _expect(p.nullable, f"parameter {p.name}: default None, but the parameter is not nullable")
            continue
        try:
            converted = p.convert(p.default)
        except UserError as exc:
            raise AssertionError(f"parameter {p.name}: its default {p.default!r} does not validate ({exc})") from None
        same_type = type(converted) is type(p.default) or (p.type is float and isinstance(p.default, int))  # 1 for 1.0
        _expect(
            converted == p.default and same_type,
            f"parameter {p.name}: its default {p.default!r} converts to {converted!r} (declare it as a "
            f"{p.type.__name__})",
        )
        if p.type in (str, bool):
            _expect(
                p.convert(str(p.default).lower() if p.type is bool else str(p.default)) == p.default,
                f"parameter {p.name}: the default written on the command line ({p.default}) does not read back",
            )
    resolved = s.resolve_params({})
    _expect(
        list(resolved) == [p.name for p in s.params],
        f"resolve_params({{}}) must give every parameter, got {list(resolved)}",
    )


def _sampler_params_refuse_bad_values(case: _SamplerCase) -> None:
    s = case.sampler
    _expect_user_error(lambda: s.resolve_params({"no_such_parameter_xyz": 1}), "an unknown parameter name")
    for p in s.params:
        if p.type in (int, float):
            _expect_user_error(
                lambda p=p: s.resolve_params({p.name: "not-a-number"}), f"parameter {p.name}='not-a-number'"
            )
            if p.minimum is not None:
                _expect_user_error(
                    lambda p=p: s.resolve_params({p.name: p.minimum - 1}), f"parameter {p.name} below its minimum"
                )
            if p.maximum is not None:
                _expect_user_error(
                    lambda p=p: s.resolve_params({p.name: p.maximum + 1}), f"parameter {p.name} above its maximum"
                )
        if p.type is int:
            _expect_user_error(lambda p=p: s.resolve_params({p.name: 1.5}), f"parameter {p.name}=1.5 (an int)")
        if p.choices:
            _expect_user_error(
                lambda p=p: s.resolve_params({p.name: "no-such-choice"}), f"parameter {p.name}='no-such-choice'"
            )
        if p.type is bool:
            _expect_user_error(lambda p=p: s.resolve_params({p.name: "maybe"}), f"parameter {p.name}='maybe' (a bool)")


def _sampler_plan_is_deterministic(case: _SamplerCase) -> None:
    first = case.plan().dumps()
    again = case.plan(fresh=True).dumps()
    if first != again:
        diff = (
            next(i for i, (a, b) in enumerate(zip(first.splitlines(), again.splitlines())) if a != b)
            if len(first.splitlines()) == len(again.splitlines())
            else None
        )
        raise AssertionError(
            f"two plans with seed {case.seed} differ (same workload, same parameters)"
            + (
                f"; first difference on line {diff + 1}"
                if diff is not None
                else f"; {len(first)} vs {len(again)} characters"
            )
        )


def _sampler_plan_records_itself(case: _SamplerCase) -> None:
    plan, s = case.plan(), case.sampler
    _expect(plan.sampler.get("name") == s.name, f"plan records sampler {plan.sampler.get('name')!r}, not {s.name!r}")
    _expect(
        plan.sampler.get("version") == str(s.version),
        f"plan records version {plan.sampler.get('version')!r}, not {s.version!r}",
    )
    _expect(plan.sampler.get("seed") == case.seed, f"plan records seed {plan.sampler.get('seed')!r}, not {case.seed}")
    recorded = json.loads(json.dumps(plan.sampler.get("params"), default=str))
    expected = json.loads(json.dumps(case.params, default=str))
    _expect(recorded == expected, f"plan records parameters {recorded}, not the resolved {expected}")
    _expect(
        plan.workload.get("fingerprint") == case.workload.fingerprint, "plan does not carry the workload's fingerprint"
    )


def _sampler_plan_is_valid(case: _SamplerCase) -> None:
    plan = case.plan()
    _expect(len(plan.samples) > 0, "the plan has no samples")
    text = plan.dumps()
    again = Plan.from_json(json.loads(text), source=f"plan of {case.sampler.name}")
    _expect(again.dumps() == text, "the plan read back from its JSON is not byte-identical")
    with tempfile.TemporaryDirectory(prefix="simsample-check-") as tmp:
        out = Path(tmp) / "plan.json"
        plan.write(out)  # the writer validates against the schema
        _expect(out.read_text() == text, "Plan.write and Plan.dumps give different text")


def _sampler_weights_sum_to_launches(case: _SamplerCase) -> None:
    plan = case.plan()
    weights = plan.samples["weight"].to_numpy(np.float64)
    _expect(np.all(np.isfinite(weights)) and np.all(weights > 0), "every sample's weight must be positive and finite")
    total, n = float(weights.sum()), len(case.workload)
    if math.isclose(total, n, rel_tol=1e-9, abs_tol=1e-6):
        return
    # Plans weighted by instruction share (Sieve's and Photon's CPI prediction) declare the column:
    # their weights stand for each launch's instructions once instead of each launch.
    column = plan.prediction.get("instructions_column")
    if column and case.workload.has(column):
        inst = case.workload.values(column)
        weighted = float((weights * inst[plan.samples["launch"].to_numpy(np.int64)]).sum())
        _expect(
            math.isclose(weighted, float(inst.sum()), rel_tol=1e-6),
            f"the plan weighs by {column}, but its weighted {column} ({weighted:.6g}) is not the workload's "
            f"({float(inst.sum()):.6g})",
        )
        return
    raise AssertionError(
        f"the samples' weights sum to {total:.6g}, not to the workload's {n} launches "
        "(each launch must be stood for once)"
    )


def _sampler_samples_are_launches(case: _SamplerCase) -> None:
    plan, wl = case.plan(), case.workload
    ids = wl.kernels["kernel_id"].to_numpy(np.int64)
    sampled = plan.samples["kernel_id"].to_numpy(np.int64)
    unknown = sorted(set(sampled.tolist()) - set(ids.tolist()))
    _expect(not unknown, f"samples name kernel ids that are not in the workload: {unknown[:5]}")
    launch = plan.samples["launch"].to_numpy(np.int64)
    _expect(np.all((launch >= 0) & (launch < len(wl))), "a sample's launch position is outside the workload")
    _expect(np.array_equal(ids[launch], sampled), "a sample's kernel_id is not the kernel_id at its launch position")


def _sampler_clusters_account_for_samples(case: _SamplerCase) -> None:
    plan = case.plan()
    by_id = {c.id: c for c in plan.clusters}
    used = plan.samples["cluster"].to_numpy(np.int64)
    unknown = sorted(set(used.tolist()) - set(by_id))
    _expect(not unknown, f"samples name clusters the plan does not list: {unknown[:5]}")
    counts = plan.samples.groupby("cluster").size()
    for cid, c in by_id.items():
        _expect(
            int(counts.get(cid, 0)) == c.draws,
            f"cluster {cid} says {c.draws} draws, the plan has {int(counts.get(cid, 0))} samples in it",
        )
        _expect(c.size >= 1, f"cluster {cid} has no members (size {c.size})")
    size = sum(c.size for c in plan.clusters)
    _expect(
        size == len(case.workload),
        f"the clusters' sizes sum to {size}, not to the workload's {len(case.workload)} launches",
    )


def _sampler_seed_changes_random_draws(case: _SamplerCase) -> None:
    plan = case.plan()
    if plan.estimator.get("kind") != "stratified":
        return  # representative plans choose, they do not draw: the seed may or may not matter
    choices = sum(
        math.lgamma(c.size + 1) - math.lgamma(min(c.draws, c.size) + 1) - math.lgamma(c.size - min(c.draws, c.size) + 1)
        for c in plan.clusters
    )
    if choices < math.log(1e6):  # too few ways to draw for different seeds to differ surely
        return
    samples = {
        tuple(case.plan(seed).samples["kernel_id"].tolist()) for seed in (case.seed, case.seed + 1, case.seed + 2)
    }
    _expect(
        len(samples) > 1,
        "the plan draws at random (estimator kind 'stratified') but seeds "
        f"{case.seed}, {case.seed + 1} and {case.seed + 2} give the same samples: is the seed used?",
    )


def _sampler_refuses_empty_workload(case: _SamplerCase) -> None:
    empty = _empty_like(case.workload)
    params = case.params

    def plan_empty() -> None:
        case.sampler.check_workload(empty, params)
        case.sampler.plan(empty, params, case.seed)

    _expect_user_error(plan_empty, "planning on a workload with no launches")


def _sampler_refuses_missing_columns(case: _SamplerCase) -> None:
    params = case.params
    for column in case.sampler.required_columns(params):
        if column not in case.workload.kernels.columns or column in REQUIRED_COLUMNS:
            continue
        lacking = Workload(
            case.workload.kernels.drop(columns=[column]), source="a workload without " + column, validate=False
        )
        exc = _expect_user_error(
            lambda lacking=lacking: case.sampler.check_workload(lacking, params), f"a workload without column {column}"
        )
        _expect(column in str(exc), f"the refusal of a workload without {column} must name it: {exc}")


_SAMPLER_CHECKS: tuple[tuple[str, Callable[[_SamplerCase], None]], ...] = (
    ("declares_identity", _sampler_declares_identity),
    ("param_defaults_validate", _sampler_param_defaults_validate),
    ("params_refuse_bad_values", _sampler_params_refuse_bad_values),
    ("plan_is_deterministic", _sampler_plan_is_deterministic),
    ("plan_records_itself", _sampler_plan_records_itself),
    ("plan_is_valid", _sampler_plan_is_valid),
    ("weights_sum_to_launches", _sampler_weights_sum_to_launches),
    ("samples_are_launches", _sampler_samples_are_launches),
    ("clusters_account_for_samples", _sampler_clusters_account_for_samples),
    ("seed_changes_random_draws", _sampler_seed_changes_random_draws),
    ("refuses_empty_workload", _sampler_refuses_empty_workload),
    ("refuses_missing_columns", _sampler_refuses_missing_columns),
)


def sampler_checks(
    sampler: Sampler, workload: Workload | None = None, *, params: Mapping[str, Any] | None = None, seed: int = 0
) -> list[Check]:
    """The checks of a sampler, on ``workload`` (default: :func:`example_workload` with the
    columns the sampler requires) with ``params`` overriding its defaults."""
    case = _SamplerCase(sampler, workload, params, seed)
    label = getattr(sampler, "name", type(sampler).__name__)
    return [Check(label, name, lambda fn=fn: fn(case)) for name, fn in _SAMPLER_CHECKS]


def check_sampler(
    sampler: Sampler, workload: Workload | None = None, *, params: Mapping[str, Any] | None = None, seed: int = 0
) -> None:
    """Run every sampler check; raises :class:`AssertionError` naming the first that fails."""
    _run_all(sampler_checks(sampler, workload, params=params, seed=seed))


# --- readers ----------------------------------------------------------------------------------


def _digest(path: Path) -> str:
    """Content and metadata of a file or a folder's files: what 'unchanged' means for an input."""
    h = hashlib.sha256()
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for f in files:
        st = f.stat()
        h.update(f"{f}:{st.st_size}:{st.st_mtime_ns}:{st.st_mode}".encode())
        with open(f, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()


def _head(path: Path) -> bytes:
    return b"" if path.is_dir() else read_head(path)


def _canonical(workload: Any, what: str) -> None:
    _expect(isinstance(workload, Workload), f"{what} must return a Workload, got {type(workload).__name__}")
    missing = [c for c in REQUIRED_COLUMNS if c not in workload.kernels.columns]
    _expect(not missing, f"{what}: the workload lacks the canonical column(s) {', '.join(missing)}")
    _expect(len(workload) > 0, f"{what}: the workload has no launches")
    ids = workload.kernels["kernel_id"]
    _expect(ids.is_unique, f"{what}: kernel ids are not unique")
    start = workload.kernels["start_ns"].to_numpy(np.float64)
    known = start[~np.isnan(start)]
    _expect(np.all(np.diff(known) >= 0), f"{what}: launches are not in launch order (start_ns decreases)")
    fp = workload.fingerprint
    _expect(isinstance(fp, str) and fp, f"{what}: the workload has no fingerprint")


@dataclass
class _ReaderCase:
    reader: Reader
    paths: list[Path]
    options: dict[str, Any]
    detects: bool = True
    _read: Workload | None = None

    def read(self, *, fresh: bool = False) -> Workload:
        if fresh or self._read is None:
            wl = self.reader.read(self.paths, self.options)
            if fresh:
                return wl
            self._read = wl
        return self._read


def _reader_declares_identity(case: _ReaderCase) -> None:
    r = case.reader
    _expect(
        isinstance(getattr(r, "name", None), str) and r.name and " " not in r.name,
        f"name must be a non-empty word (what --format takes), got {getattr(r, 'name', None)!r}",
    )
    _expect(isinstance(r.description, str) and r.description, "description must say which format and tool")
    _expect(isinstance(r.multi_file, bool), "multi_file must be a bool")
    _expect(isinstance(getattr(r, "reads_directories", False), bool), "reads_directories must be a bool")


def _reader_detects_its_example(case: _ReaderCase) -> None:
    for p in case.paths:
        if p.is_dir():
            _expect(
                getattr(case.reader, "reads_directories", False),
                f"{p} is a folder, but the reader does not declare reads_directories",
            )
        got = case.reader.detect(p, _head(p))
        if case.detects:
            _expect(got is True, f"detect() does not recognise its own example {p.name} (returned {got!r})")
        else:  # a reader chosen only by --format (a bare CSV says nothing about its layout or units)
            _expect(got is False, f"the reader is chosen by name only, but detect() returned {got!r} for {p.name}")


def _foreign_inputs(folder: Path) -> list[tuple[Path, str]]:
    """Files that are no profile of any kind: what detect() must turn down without raising."""
    made = []
    for name, data, what in (
        ("byte.bin", b"\x00", "a single NUL byte"),
        ("noise.bin", bytes(np.random.default_rng(7).integers(0, 256, 4096, dtype=np.uint8)), "binary noise"),
        ("doc.json", b'{"hello": [1, 2, 3]}\n', "an unrelated JSON document"),
        (
            "prose.txt",
            b"It was a bright cold day in April, and the clocks were striking thirteen.\n",
            "a line of prose",
        ),
    ):
        p = folder / name
        p.write_bytes(data)
        made.append((p, what))
    return made


def _reader_turns_down_other_files(case: _ReaderCase) -> None:
    with tempfile.TemporaryDirectory(prefix="simsample-check-") as tmp:
        for p, what in _foreign_inputs(Path(tmp)):
            got = case.reader.detect(p, _head(p))
            _expect(got is False, f"detect() on {what} must return False, got {got!r}")
        if getattr(case.reader, "reads_directories", False):
            empty = Path(tmp) / "empty-folder"
            empty.mkdir()
            got = case.reader.detect(empty, b"")
            _expect(got is False, f"detect() on an empty folder must return False, got {got!r}")


def _reader_reads_canonical_columns(case: _ReaderCase) -> None:
    _canonical(case.read(), "read()")


def _reader_fingerprint_is_stable(case: _ReaderCase) -> None:
    first, again = case.read(), case.read(fresh=True)
    _expect(first.fingerprint == again.fingerprint, "two reads of the same input give different fingerprints")
    _expect(len(first) == len(again), "two reads of the same input give different launch counts")


def _reader_leaves_input_unchanged(case: _ReaderCase) -> None:
    before = [_digest(p) for p in case.paths]
    case.read(fresh=True)
    after = [_digest(p) for p in case.paths]
    _expect(before == after, "read() changed its input (content, size, mode or modification time)")


def _reader_refuses_garbage(case: _ReaderCase) -> None:
    with tempfile.TemporaryDirectory(prefix="simsample-check-") as tmp:
        noise = Path(tmp) / "noise.bin"
        noise.write_bytes(bytes(np.random.default_rng(11).integers(0, 256, 4096, dtype=np.uint8)))
        _expect_user_error(lambda: case.reader.read([noise], case.options), "read() of binary noise")
        if getattr(case.reader, "reads_directories", False):
            empty = Path(tmp) / "empty-folder"
            empty.mkdir()
            _expect_user_error(lambda: case.reader.read([empty], case.options), "read() of an empty folder")


_READER_CHECKS: tuple[tuple[str, Callable[[_ReaderCase], None]], ...] = (
    ("declares_identity", _reader_declares_identity),
    ("detects_its_example", _reader_detects_its_example),
    ("turns_down_other_files", _reader_turns_down_other_files),
    ("reads_canonical_columns", _reader_reads_canonical_columns),
    ("fingerprint_is_stable", _reader_fingerprint_is_stable),
    ("leaves_input_unchanged", _reader_leaves_input_unchanged),
    ("refuses_garbage", _reader_refuses_garbage),
)


def reader_checks(
    reader: Reader,
    example: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    options: Mapping[str, Any] | None = None,
    detects: bool = True,
) -> list[Check]:
    """The checks of a reader on ``example``: a file (or folder, or several files of one run) in
    its format, read with ``options`` (what ``--columns`` and the like give). ``detects=False``
    for a reader that is only ever chosen by name (``--format``): its detect() must then say no."""
    paths = [Path(example)] if isinstance(example, (str, os.PathLike)) else [Path(p) for p in example]
    case = _ReaderCase(reader, paths, dict(options or {}), detects)
    label = getattr(reader, "name", type(reader).__name__)
    return [Check(label, name, lambda fn=fn: fn(case)) for name, fn in _READER_CHECKS]


def check_reader(
    reader: Reader,
    example: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    options: Mapping[str, Any] | None = None,
    detects: bool = True,
) -> None:
    """Run every reader check on ``example``; raises :class:`AssertionError` naming the first that fails."""
    _run_all(reader_checks(reader, example, options=options, detects=detects))


# --- adapters ---------------------------------------------------------------------------------


@dataclass
class _AdapterCase:
    adapter: Adapter
    traces: Path
    outputs: list[Path]
    plan: Plan | None
    apply_options: dict[str, Any]
    collect_options: dict[str, Any]
    _read: Workload | None = None

    def read(self) -> Workload:
        if self._read is None:
            self._read = self.adapter.read(self.traces)
        return self._read

    def declared(self) -> dict[str, Any]:
        return {m.name: m for m in getattr(self.adapter, "metrics", ())}


def _adapter_declares_identity(case: _AdapterCase) -> None:
    a = case.adapter
    _expect(
        isinstance(getattr(a, "name", None), str) and a.name and " " not in a.name,
        f"name must be a non-empty word (what --sim takes), got {getattr(a, 'name', None)!r}",
    )
    _expect(isinstance(a.description, str) and a.description, "description must say which simulator")
    commands = a.commands()
    _expect(isinstance(commands, Mapping), "commands() must return a mapping of verb to click command")
    import click

    for verb, cmd in commands.items():
        _expect(
            verb in ADAPTER_VERBS, f"commands() offers {verb!r}, which is not one of {', '.join(sorted(ADAPTER_VERBS))}"
        )
        _expect(isinstance(cmd, click.Command), f"commands()[{verb!r}] is not a click command")


def _adapter_declares_metrics(case: _AdapterCase) -> None:
    metrics = tuple(getattr(case.adapter, "metrics", ()))
    _expect(metrics, "the adapter declares no metrics (each column collect() returns needs a declaration)")
    names = [m.name for m in metrics]
    _expect(len(set(names)) == len(names), f"metric names must be unique: {names}")
    counts = {m.name for m in metrics if m.kind == "count"}
    for m in metrics:
        _expect(
            m.kind in METRIC_KINDS, f"metric {m.name}: kind {m.kind!r} is not one of {', '.join(sorted(METRIC_KINDS))}"
        )
        _expect(m.name not in RESULT_KEYS, f"metric {m.name}: the name is a result key, not a metric")
        if m.kind == "ratio":
            for part in (m.numerator, m.denominator):
                _expect(
                    part in counts,
                    f"ratio {m.name}: {part!r} must be a declared count (an estimate is a ratio of two totals)",
                )


def _adapter_params_declared(case: _AdapterCase) -> None:
    for attr in ("apply_options", "collect_options"):
        options = tuple(getattr(case.adapter, attr, ()))
        _expect(all(isinstance(p, Param) for p in options), f"{attr} must be a tuple of Param")
        names = [p.name for p in options]
        _expect(len(set(names)) == len(names), f"{attr}: option names must be unique: {names}")
        for p in options:
            if p.default is not None:
                try:
                    p.convert(p.default)
                except UserError as exc:
                    raise AssertionError(
                        f"{attr}: option {p.name}'s default {p.default!r} does not validate ({exc})"
                    ) from None


def _adapter_reads_its_traces(case: _AdapterCase) -> None:
    before = _digest(case.traces)
    _canonical(case.read(), "read()")
    again = case.adapter.read(case.traces)
    _expect(again.fingerprint == case.read().fingerprint, "two reads of the same traces give different fingerprints")
    _expect(_digest(case.traces) == before, "read() changed the trace folder")


def _adapter_apply_writes_a_new_folder(case: _AdapterCase) -> None:
    if not hasattr(case.adapter, "apply") or case.plan is None:
        return
    before = _digest(case.traces)
    options = resolve_options(
        tuple(getattr(case.adapter, "apply_options", ())), case.apply_options, who=f"apply --sim {case.adapter.name}"
    )
    with tempfile.TemporaryDirectory(prefix="simsample-check-") as tmp:
        out = Path(tmp) / "sampled"
        got = case.adapter.apply(case.plan, case.traces, out, **options)
        _expect(Path(got) == out, f"apply() must return the folder it wrote ({out}), got {got}")
        _expect(out.is_dir() and any(out.iterdir()), "apply() wrote no sampled inputs into the new folder")
        leftovers = [p.name for p in Path(tmp).iterdir() if p.name != "sampled"]
        _expect(not leftovers, f"apply() left files beside its output folder: {leftovers}")
    _expect(_digest(case.traces) == before, "apply() changed the trace folder")


def _collected(case: _AdapterCase, plan: Plan | None) -> pd.DataFrame:
    options = resolve_options(
        tuple(getattr(case.adapter, "collect_options", ())),
        case.collect_options,
        who=f"collect --sim {case.adapter.name}",
    )
    return case.adapter.collect(case.outputs, plan, **options)


def _adapter_collect_returns_declared_columns(case: _AdapterCase) -> None:
    if not case.outputs or not hasattr(case.adapter, "collect"):
        return
    import pandas as pd

    before = [_digest(p) for p in case.outputs]
    df = _collected(case, None)
    _expect(isinstance(df, pd.DataFrame), f"collect() must return a DataFrame, got {type(df).__name__}")
    _expect("kernel_id" in df.columns, "collect()'s table has no kernel_id column")
    _expect(len(df) > 0, "collect() found no kernels in the simulator output")
    _expect(df["kernel_id"].is_unique, "collect()'s table has a kernel_id twice (one row per simulated launch)")
    _expect(pd.api.types.is_integer_dtype(df["kernel_id"]), f"kernel_id must be integers, got {df['kernel_id'].dtype}")
    declared = case.declared()
    undeclared = [c for c in df.columns if c not in declared and c not in RESULT_KEYS]
    _expect(
        not undeclared, f"collect() returns column(s) the adapter does not declare: {', '.join(map(str, undeclared))}"
    )
    for name, m in declared.items():
        if name in df.columns and m.kind != "none":
            _expect(
                pd.api.types.is_numeric_dtype(df[name]), f"metric {name} ({m.kind}) is not numeric: {df[name].dtype}"
            )
    _expect([_digest(p) for p in case.outputs] == before, "collect() changed the simulator output")


def _adapter_collect_with_plan_covers_samples(case: _AdapterCase) -> None:
    if not case.outputs or case.plan is None or not hasattr(case.adapter, "collect"):
        return
    df = _collected(case, case.plan)
    sampled = set(case.plan.sampled_ids)
    got = set(df["kernel_id"].astype(int).tolist())
    _expect(
        sampled <= got,
        f"collect() with the plan must give a row for every sampled kernel id; missing {sorted(sampled - got)[:5]}",
    )
    _expect("status" in df.columns, "collect() with a plan must give each row a status (ok, missing, ...)")


_ADAPTER_CHECKS: tuple[tuple[str, Callable[[_AdapterCase], None]], ...] = (
    ("declares_identity", _adapter_declares_identity),
    ("declares_metrics", _adapter_declares_metrics),
    ("options_declared", _adapter_params_declared),
    ("reads_its_traces", _adapter_reads_its_traces),
    ("apply_writes_a_new_folder", _adapter_apply_writes_a_new_folder),
    ("collect_returns_declared_columns", _adapter_collect_returns_declared_columns),
    ("collect_with_plan_covers_samples", _adapter_collect_with_plan_covers_samples),
)


def adapter_checks(
    adapter: Adapter,
    traces: str | os.PathLike[str],
    *,
    outputs: Sequence[str | os.PathLike[str]] = (),
    plan: Plan | str | os.PathLike[str] | None = None,
    apply_options: Mapping[str, Any] | None = None,
    collect_options: Mapping[str, Any] | None = None,
) -> list[Check]:
    """The checks of an adapter: on its trace folder ``traces``; ``plan`` (a Plan or a plan file
    for these traces) enables the ``apply`` check, ``outputs`` (simulator output of a run of that
    plan, or of the whole workload) the ``collect`` checks."""
    if plan is not None and not isinstance(plan, Plan):
        plan = Plan.read(plan)
    case = _AdapterCase(
        adapter, Path(traces), [Path(p) for p in outputs], plan, dict(apply_options or {}), dict(collect_options or {})
    )
    label = getattr(adapter, "name", type(adapter).__name__)
    return [Check(label, name, lambda fn=fn: fn(case)) for name, fn in _ADAPTER_CHECKS]


def check_adapter(
    adapter: Adapter,
    traces: str | os.PathLike[str],
    *,
    outputs: Sequence[str | os.PathLike[str]] = (),
    plan: Plan | str | os.PathLike[str] | None = None,
    apply_options: Mapping[str, Any] | None = None,
    collect_options: Mapping[str, Any] | None = None,
) -> None:
    """Run every adapter check; raises :class:`AssertionError` naming the first that fails."""
    _run_all(
        adapter_checks(
            adapter, traces, outputs=outputs, plan=plan, apply_options=apply_options, collect_options=collect_options
        )
    )
