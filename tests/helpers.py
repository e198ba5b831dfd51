"""Test helpers importable from any test module (``from tests.helpers import shared_path``)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"


def shared_path(*parts: str) -> Path:
    """A path under ../shared/data; the calling test is skipped when it is absent."""
    p = SHARED_DATA.joinpath(*parts)
    if not p.exists():
        pytest.skip(f"development data not available: {'/'.join(parts)}")
    return p


def kineto_traces() -> list[Path]:
    """Every Kineto trace of the development data (plain or compressed), sorted; empty when the
    data is absent (tests parametrized over it then skip through :func:`shared_path`)."""
    root = SHARED_DATA / "profiles" / "kineto"
    return sorted(root.rglob("*.json*")) if root.is_dir() else []


def assert_kineto_engines_agree(path: Path) -> None:
    """The compiled extractor, the typed decoder, the regex scanner and json.loads read exactly
    the same launches from ``path`` (each engine hands what it cannot take to the next, and a
    real file goes through the bulk path)."""
    import numpy as np

    from simsample.plugins.readers._kineto import decode as kd
    from simsample.plugins.readers._kineto import native as kn
    from simsample.plugins.readers.kineto import read_file

    slow = read_file(path, fast=False)
    for engine in ("scan", "decode", "native"):
        fast = read_file(path, engine=engine)
        assert fast["memcpy"] == slow["memcpy"]
        a, b = fast["arrays"], slow["arrays"]
        assert set(a) == set(b)
        oa = np.lexsort((a["correlation"], a["start_ns"]))
        ob = np.lexsort((b["correlation"], b["start_ns"]))
        for col in a:
            assert np.array_equal(np.asarray(a[col], dtype=object)[oa], np.asarray(b[col], dtype=object)[ob]), col
        assert fast["scan"]["decoded_alone"] == 0
        if engine == "decode" and kd.AVAILABLE:
            assert fast["scan"]["engine"] == "decode"
        if engine == "native":
            assert fast["scan"]["engine"] == ("native" if kn.AVAILABLE else "decode" if kd.AVAILABLE else "scan")


def score_sampled_run(plan, log: Path, truth: float) -> tuple[float, bool, float]:
    """(relative error, covered, relative half-width) of the cycles estimated from a recorded
    sampled Accel-Sim run ``log`` of ``plan`` against the full run's total ``truth``. The run must
    be the plan's: the launches it simulated in detail are exactly the sampled ones (a change that
    makes the sampler draw other launches fails here first), and the estimate must have an
    interval."""
    import simsample

    simulated = simsample.collect(log, sim="accelsim")
    assert sorted(simulated["kernel_id"].tolist()) == sorted(set(plan.sampled_ids)), log.name
    est = simsample.estimate(plan, simsample.collect(log, sim="accelsim", plan=plan))
    cycles = next(e for e in est.estimates if e.metric == "cycles")
    assert cycles.ci_low is not None and cycles.ci_high is not None, log.name
    return (
        cycles.estimate / truth - 1.0,
        bool(cycles.ci_low <= truth <= cycles.ci_high),
        (cycles.ci_high - cycles.ci_low) / 2 / cycles.estimate,
    )


def benchmark_module(script: str):
    """``benchmarks/SCRIPT`` loaded as a module (the folder is no package): its functions and
    ``main`` to call as a user's command line would."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(Path(script).stem, ROOT / "benchmarks" / script)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def generated_traces_digest(script: str, out: Path) -> str:
    """sha256 of ``kernelslist.g`` followed by every ``kernel-N.traceg`` (N from 1) that
    ``benchmarks/SCRIPT`` writes into ``out`` with its defaults: a held-out workload's test checks
    that the generator still writes the traces its recorded runs simulated."""
    import hashlib

    mod = benchmark_module(script)
    assert mod.main([str(out)]) == 0
    h = hashlib.sha256((out / "kernelslist.g").read_bytes())
    n = len(list(out.glob("kernel-*.traceg")))
    for i in range(1, n + 1):
        h.update((out / f"kernel-{i}.traceg").read_bytes())
    return h.hexdigest()


def recorded_runs_scores(
    fixtures: Path, name: str, sampler: str, seeds: range, runs: str = "runs", full: str | None = None, **params
) -> list[tuple[float, bool, float]]:
    """:func:`score_sampled_run` of each recorded run ``fixtures/RUNS/SAMPLER-seed-NN.out.gz`` of
    a workload whose features and full run are ``fixtures/NAME-features.parquet`` and
    ``NAME-full.out.gz`` (or ``full``), its plan made again here with ``params``."""
    import simsample

    wl = simsample.read(fixtures / f"{name}-features.parquet")
    full_run = fixtures / (full or f"{name}-full.out.gz")
    truth = float(simsample.collect(full_run, sim="accelsim")["cycles"].sum())
    return [
        score_sampled_run(
            simsample.plan(wl, sampler, seed=seed, **params),
            fixtures / runs / f"{sampler}-seed-{seed:02d}.out.gz",
            truth,
        )
        for seed in seeds
    ]


def assert_runs_hold(
    scores: list[tuple[float, bool, float]], *, covered: int, mean_error: float, max_error: float, median_half: float
) -> None:
    """The recorded runs of :func:`recorded_runs_scores`: at least ``covered`` intervals hold the
    full run, the mean and largest |error| are below the bounds, and the median relative
    half-width is below ``median_half`` and none is 0 (an interval of no width is a bug)."""
    import numpy as np

    errors = np.abs([e for e, _, _ in scores])
    assert sum(c for _, c, _ in scores) >= covered
    assert errors.mean() < mean_error and errors.max() < max_error
    half = np.array([h for _, _, h in scores])
    assert np.median(half) < median_half and half.min() > 0


def without_model_spread(plan):
    """``plan`` as the estimator read it before plans recorded the features' model of the
    cycles: no ``model_cov`` or ``model_tail``, so the design metric's spread stands alone."""
    from simsample.planfile import Plan

    doc = plan.to_json()
    for c in doc["clusters"]:
        c["stats"].pop("model_cov", None)
        c["stats"].pop("model_tail", None)
    return Plan.from_json(doc)


def without_sample_model(plan):
    """``plan`` as a plan of format 1.3 holds it: its samples without the features' model of
    their cycles, so that no cluster fits the cycles on it."""
    import dataclasses

    return dataclasses.replace(plan, samples=plan.samples.drop(columns=["model"]))


def sampled_values(workload, plan, per_launch) -> dict:
    """``{kernel id: value}`` of the launches ``plan`` samples, from ``per_launch`` (one value per
    launch of ``workload``, in its order): what a simulator's results give the estimator."""
    import numpy as np

    ids = workload.kernels["kernel_id"].to_numpy()
    rows = plan.samples["launch"].to_numpy()
    return dict(zip(ids[rows].tolist(), np.asarray(per_launch, dtype=np.float64)[rows].tolist()))


def assert_sample_model_never_widens(
    workload, plan, *, base: float, slope: float, noise: float, seed: int, confidence: float
):
    """Cycles ``base + slope·model·(1 + noise·ε)`` (ε standard normal, the factor at least 0.05)
    of ``workload``'s launches, ``model`` its ``predicted_cycles``: the interval ``plan`` gives
    them with its samples' model values is never wider than without them (a plan of format 1.3),
    and the estimate is the same."""
    import numpy as np

    from simsample.sampling.estimate import estimate_total

    model = workload.kernels["predicted_cycles"].to_numpy(np.float64)
    g = np.random.default_rng(seed)
    cycles = base + slope * model * (1.0 + noise * g.standard_normal(model.size)).clip(0.05)
    values = sampled_values(workload, plan, cycles)
    with_model = estimate_total(plan, values, metric="cycles", confidence=confidence)
    without = estimate_total(without_sample_model(plan), values, metric="cycles", confidence=confidence)
    assert with_model.estimate == without.estimate
    assert with_model.ci_high - with_model.ci_low <= (without.ci_high - without.ci_low) * (1 + 1e-9)


def full_run_design(fixtures: Path, name: str, full: str | None = None):
    """``(workload, cycles, kernel ids)``: the features ``fixtures/NAME-features.parquet`` and the
    full run's cycles of each launch in launch order (``NAME-full.out.gz``, or ``full``), what
    ``simsample evaluate --truth`` scores plans on."""
    import simsample
    from simsample.sampling.evaluate import truth_by_launch
    from simsample_accelsim.collect import collect_logs

    wl = simsample.read(fixtures / f"{name}-features.parquet")
    truth = truth_by_launch(wl, collect_logs([fixtures / (full or f"{name}-full.out.gz")]), metric="cycles")
    return wl, truth, wl.kernels["kernel_id"].to_numpy()


def design_scores(design, sampler: str, seeds=range(20), **params) -> list:
    """:func:`~simsample.sampling.evaluate.score_plan` of the plans of ``seeds`` on a
    :func:`full_run_design`, each interval the one ``simsample estimate`` gives the cycles."""
    import simsample
    from simsample.sampling.evaluate import score_plan

    wl, truth, ids = design
    return [score_plan(simsample.plan(wl, sampler, seed=s, **params), truth, ids, metric="cycles") for s in seeds]


def estimate_cli(plan, values: dict, folder: Path, *args: str):
    """``simsample estimate --plan PLAN VALUES ARGS`` as a user runs it (a fresh interpreter, a
    wide terminal, nothing on PATH): ``plan`` written to ``folder/plan.json`` and ``values`` (the
    cycles by kernel id) to ``folder/v.csv``. The finished process, its output as text."""
    import subprocess
    import sys

    plan.write(folder / "plan.json")
    (folder / "v.csv").write_text("kernel_id,cycles\n" + "".join(f"{k},{v}\n" for k, v in values.items()))
    cmd = [sys.executable, "-m", "simsample", "estimate", "--plan", str(folder / "plan.json"), str(folder / "v.csv")]
    env = {"COLUMNS": "200", "PATH": ""}
    return subprocess.run([*cmd, *args], capture_output=True, text=True, env=env, check=False)
