"""The conformance kit catches what it promises to catch: each check fails on a plugin that breaks
its rule, naming the check, and the SDK module exports what it lists."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from simsample import sdk
from simsample.sdk import (
    Adapter,
    Param,
    Plan,
    Reader,
    Sampler,
    UserError,
    count,
    from_records,
    hookimpl,
    make_cluster,
    ratio,
    rng,
)
from simsample.testing import (
    Check,
    adapter_checks,
    check_reader,
    check_sampler,
    example_workload,
    parametrize_with_checks,
    reader_checks,
    sampler_checks,
)


class Uniform(Sampler):
    """A correct sampler: every other launch at random, weight N/m, one cluster."""

    name = "uniform-test"
    description = "half the launches at random"
    params = (Param("share", float, 0.5, "share drawn", minimum=0.01, maximum=1.0),)

    def draw(self, workload, params, seed):
        n = len(workload)
        m = max(1, int(n * params["share"]))
        return np.sort(rng(seed).choice(n, size=m, replace=False))

    def weights(self, n, rows):
        return np.full(len(rows), n / len(rows))

    def plan(self, workload, params, seed):
        n = len(workload)
        if n == 0:
            raise UserError("the workload has no launches")
        rows = self.draw(workload, params, seed)
        ids = workload.kernels["kernel_id"].to_numpy(np.int64)
        values = workload.values("auto")
        cluster = make_cluster(0, "all", np.arange(n), rows, values, ids)
        return Plan.build(
            workload,
            self,
            params,
            seed,
            metric=workload.default_metric(),
            rows=rows,
            weights=self.weights(n, rows),
            cluster_of_row=np.zeros(len(rows), dtype=np.int64),
            clusters=[cluster],
        )


_counter = itertools.count()


class Nondeterministic(Uniform):
    def draw(self, workload, params, seed):
        return super().draw(workload, params, seed + next(_counter))


class SeedIgnored(Uniform):
    def draw(self, workload, params, seed):
        return super().draw(workload, params, 0)


class Overweight(Uniform):
    def weights(self, n, rows):
        return np.full(len(rows), 2 * n / len(rows))


class AcceptsEmpty(Uniform):
    def plan(self, workload, params, seed):
        if len(workload) == 0:
            raise IndexError("no launches")  # not a UserError: the CLI would call it an internal error
        return super().plan(workload, params, seed)


class BadDefault(Uniform):
    params = (Param("share", float, 2.0, "share drawn", minimum=0.01, maximum=1.0),)


class NeedsColumn(Uniform):
    requires = ("dram_bytes",)


def failing(checks: list[Check]) -> dict[str, str]:
    """The checks that fail, with their messages."""
    out = {}
    for c in checks:
        try:
            c()
        except AssertionError as exc:
            out[c.name] = str(exc)
    return out


def test_a_correct_sampler_passes_every_check():
    check_sampler(Uniform())
    check_sampler(NeedsColumn())  # the example workload gets the required column


@pytest.mark.parametrize(
    ("sampler", "check", "words"),
    [
        (Nondeterministic(), "plan_is_deterministic", "differ"),
        (SeedIgnored(), "seed_changes_random_draws", "same samples"),
        (Overweight(), "weights_sum_to_launches", "sum to"),
        (AcceptsEmpty(), "refuses_empty_workload", "IndexError"),
        (BadDefault(), "param_defaults_validate", "does not validate"),
    ],
)
def test_a_broken_sampler_fails_the_check_that_names_its_fault(sampler, check, words):
    failed = failing(sampler_checks(sampler))
    assert check in failed, f"{check} passed on {type(sampler).__name__}; failed: {sorted(failed)}"
    assert failed[check].startswith(f"uniform-test-{check}: ") and words in failed[check]
    with pytest.raises(AssertionError, match=check):
        check_sampler(sampler)


def test_a_sampler_that_does_not_name_the_missing_column_fails():
    class Silent(NeedsColumn):
        def check_workload(self, workload, params):
            if not workload.has("dram_bytes"):
                raise UserError("a column is missing")

    assert "refuses_missing_columns" in failing(sampler_checks(Silent()))


def test_samples_outside_the_workload_are_caught():
    class Foreign(Uniform):
        def plan(self, workload, params, seed):
            plan = super().plan(workload, params, seed)
            plan.samples.loc[0, "kernel_id"] = 10**9
            return plan

    failed = failing(sampler_checks(Foreign()))
    assert "samples_are_launches" in failed and "not in the workload" in failed["samples_are_launches"]


def test_the_example_workload_is_deterministic_and_has_what_was_asked():
    a, b = example_workload(columns=("insts",)), example_workload(columns=("insts",))
    assert a.fingerprint == b.fingerprint and a.has("insts") and a.has("cycles") and len(a) == 240
    assert a.kernels["name"].nunique() == 6


# --- readers ---------------------------------------------------------------------------------


class Lines(Reader):
    """A correct reader: one ``name duration`` pair per line after a ``#lines`` header."""

    name = "lines-test"
    description = "a test format: '#lines' then 'name duration_ns' per line"

    def detect(self, path, head):
        return head.startswith(b"#lines\n")

    def read(self, paths, options):
        text = Path(paths[0]).read_bytes()
        if not text.startswith(b"#lines\n"):
            raise UserError(f"{paths[0]}: not a #lines file")
        rows = [ln.split() for ln in text.decode().splitlines()[1:] if ln.strip()]
        return from_records(
            {
                "name": [r[0] for r in rows],
                "grid_x": [1] * len(rows),
                "block_x": [32] * len(rows),
                "duration_ns": [int(r[1]) for r in rows],
            },
            source=str(paths[0]),
            format=self.name,
        )


@pytest.fixture
def lines_file(tmp_path):
    f = tmp_path / "run.lines"
    f.write_text("#lines\nk1 100\nk2 250\nk1 110\n")
    return f


def test_a_correct_reader_passes(lines_file):
    check_reader(Lines(), lines_file)


def test_a_greedy_detector_fails(lines_file):
    class Greedy(Lines):
        def detect(self, path, head):
            return True

    assert "turns_down_other_files" in failing(reader_checks(Greedy(), lines_file))


def test_a_reader_that_crashes_on_garbage_fails(lines_file):
    class Crashing(Lines):
        def read(self, paths, options):
            text = Path(paths[0]).read_bytes().decode()  # UnicodeDecodeError on binary input
            return super().read(paths, options) if text else None

    failed = failing(reader_checks(Crashing(), lines_file))
    assert "refuses_garbage" in failed and "UnicodeDecodeError" in failed["refuses_garbage"]


def test_a_reader_that_touches_its_input_fails(lines_file):
    class Touching(Lines):
        def read(self, paths, options):
            wl = super().read(paths, options)
            Path(paths[0]).write_text(Path(paths[0]).read_text())  # same text, new mtime
            return wl

    assert "leaves_input_unchanged" in failing(reader_checks(Touching(), lines_file))


def test_a_reader_out_of_launch_order_fails(lines_file):
    class Backwards(Lines):
        def read(self, paths, options):
            wl = super().read(paths, options)
            k = wl.kernels.copy()
            k["start_ns"] = np.arange(len(k))[::-1] * 1000
            return type(wl)(k, source=wl.source, format=wl.format, validate=False)

    assert "reads_canonical_columns" in failing(reader_checks(Backwards(), lines_file))


# --- adapters --------------------------------------------------------------------------------


class Toy(Adapter):
    """An adapter of a made-up simulator whose output is ``kernel_id cycles insts`` lines."""

    name = "toy-test"
    description = "a made-up simulator"
    metrics = (count("cycles"), count("insts"), ratio("ipc", "insts", "cycles"))
    extra_column: str | None = None

    def read(self, path):
        ids = [int(p.stem.split("-")[1]) for p in sorted(Path(path).glob("kernel-*.trace"))]
        return from_records(
            {
                "kernel_id": ids,
                "name": ["k"] * len(ids),
                "grid_x": [1] * len(ids),
                "block_x": [32] * len(ids),
                "duration_ns": [np.nan] * len(ids),
            },
            source=str(path),
            format=self.name,
        )

    def apply(self, plan, traces, out, **options):
        out.mkdir()
        (out / "list.txt").write_text("".join(f"kernel-{k}.trace\n" for k in plan.sampled_ids))
        return out

    def collect(self, outputs, plan=None, *, allow_incomplete=False, **options):
        rows = [ln.split() for p in outputs for ln in Path(p).read_text().splitlines()]
        df = pd.DataFrame(
            {
                "kernel_id": [int(r[0]) for r in rows],
                "cycles": [float(r[1]) for r in rows],
                "insts": [float(r[2]) for r in rows],
            }
        )
        df["ipc"] = df["insts"] / df["cycles"]
        df["status"] = "ok"
        if self.extra_column:
            df[self.extra_column] = 1.0
        return df

    def commands(self):
        return {}


@pytest.fixture
def toy(tmp_path):
    traces = tmp_path / "traces"
    traces.mkdir()
    for k in range(4):
        (traces / f"kernel-{k}.trace").write_text("x\n")
    out = tmp_path / "sim.out"
    out.write_text("0 100 50\n1 120 60\n2 90 40\n3 100 55\n")
    wl = Toy().read(traces)
    plan = Plan.build(
        wl,
        Uniform(),
        {"share": 1.0},
        0,
        metric="none",
        rows=np.arange(4),
        weights=np.ones(4),
        cluster_of_row=np.zeros(4, dtype=np.int64),
        clusters=[make_cluster(0, "all", np.arange(4), np.arange(4), np.ones(4), np.arange(4))],
    )
    return traces, [out], plan


def test_a_correct_adapter_passes(toy):
    traces, outputs, plan = toy
    assert failing(adapter_checks(Toy(), traces, outputs=outputs, plan=plan)) == {}


def test_an_undeclared_result_column_fails(toy):
    traces, outputs, plan = toy
    a = Toy()
    a.extra_column = "wall_seconds"
    failed = failing(adapter_checks(a, traces, outputs=outputs, plan=plan))
    assert "collect_returns_declared_columns" in failed and "wall_seconds" in failed["collect_returns_declared_columns"]


def test_a_ratio_of_undeclared_counts_fails(toy):
    traces, outputs, plan = toy
    a = Toy()
    a.metrics = (count("cycles"), ratio("ipc", "insts", "cycles"))
    failed = failing(adapter_checks(a, traces, outputs=outputs, plan=plan))
    assert "declares_metrics" in failed and "'insts' must be a declared count" in failed["declares_metrics"]


@parametrize_with_checks(sampler_checks(Uniform()))
def test_parametrize_with_checks_makes_one_test_per_check(check):
    check()


def test_parametrize_with_checks_ids_name_plugin_and_check():
    mark = parametrize_with_checks(sampler_checks(Uniform()))
    assert mark.kwargs["ids"][0] == "uniform-test-declares_identity" and len(mark.args[1]) == len(mark.kwargs["ids"])


# --- the SDK module ---------------------------------------------------------------------------


def test_every_sdk_name_resolves_and_all_is_complete():
    assert sorted(sdk.__all__) == sorted([*sdk._EXPORTS, "PROVISIONAL"])
    for name in sdk.__all__:
        assert getattr(sdk, name) is not None, name
    assert sdk.PROVISIONAL <= set(sdk.__all__)
    assert sdk.hookimpl is hookimpl and set(dir(sdk)) >= set(sdk.__all__)
    with pytest.raises(AttributeError, match="no attribute 'internal_thing'"):
        sdk.internal_thing  # noqa: B018


def test_the_reader_contract_declares_reads_directories():
    assert Reader.reads_directories is False and "reads_directories" in Reader.__dict__
