"""An audit beside a representative plan (simsample.sampling.audit): its math, its plans, its
intervals on real full-run cycles, and the plans a hand edit damaged."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simsample import library
from simsample.errors import UserError
from simsample.planfile import Plan
from simsample.sampling.audit import (
    DEFENSIVE,
    audit_bound,
    audit_probabilities,
    audit_size,
    member_shares,
    successive_difference_dof,
)
from simsample.sampling.estimate import estimate_ratio, estimate_total, no_interval_reason
from simsample.sampling.evaluate import score_plan, truth_by_launch
from simsample.workload import Workload
from tests.helpers import ROOT, score_sampled_run

FIXTURES = ROOT / "tests" / "fixtures" / "accelsim_workloads"


def _workload(name: str) -> tuple[Workload, np.ndarray]:
    from simsample_accelsim.collect import collect_logs

    wl = Workload.from_parquet(FIXTURES / f"{name}-features.parquet")
    return wl, truth_by_launch(wl, collect_logs([FIXTURES / f"{name}-full.out.gz"]), metric="cycles")


# --- the math ----------------------------------------------------------------------------------

positive = st.floats(min_value=0.01, max_value=1e6, allow_nan=False)


@st.composite
def _population(draw):
    n = draw(st.integers(2, 30))
    k = draw(st.integers(1, n))
    labels = np.array(draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n)))
    labels = np.unique(labels, return_inverse=True)[1].ravel()  # every cluster has members
    k = int(labels.max()) + 1
    y = np.array(draw(st.lists(positive, min_size=n, max_size=n)))
    x = np.array(draw(st.lists(st.floats(0.0, 1e6), min_size=n, max_size=n)))
    w = np.array(draw(st.lists(positive, min_size=k, max_size=k)))
    apportion = np.array(draw(st.lists(st.floats(0.0, 1e4), min_size=n, max_size=n)))
    return labels, y, x, w, apportion


@given(_population(), st.booleans())
@settings(max_examples=200, deadline=None)
def test_one_draw_is_unbiased_for_the_projections_error(pop, by_instructions):
    """Σ_j p_j·d_j is exactly B = T̂ − T, whatever the representatives and the shares: with each
    launch drawn m·p_j times on average (the next test), the audit's mean of d is unbiased, which
    is what lets its interval hold the truth."""
    labels, y, x, w, apportion = pop
    shares = member_shares(labels, w, apportion if by_instructions else None)
    reps = np.array([np.flatnonzero(labels == c)[0] for c in range(len(w))])
    np.testing.assert_allclose(np.bincount(labels, weights=shares), w, rtol=1e-9)  # the shares divide w_c
    projection = float(np.dot(w, y[reps]))
    p = audit_probabilities(x)
    d = (shares * y[reps][labels] - y) / p
    assert np.dot(p, d) == pytest.approx(projection - y.sum(), rel=1e-9, abs=1e-6 * y.sum())


class _Start:
    """A generator whose one random number is given: the systematic draws' start."""

    def __init__(self, u: float) -> None:
        self.u = u

    def random(self) -> float:
        return self.u


@given(
    st.lists(st.floats(0.0, 1e6), min_size=1, max_size=25),
    st.integers(1, 40),
    st.randoms(use_true_random=False),
)
@settings(max_examples=100, deadline=None)
def test_systematic_draws_land_on_each_launch_m_times_its_probability(x, m, rnd):
    """Over the random start, launch j is drawn m·p_j times on average, whatever the order: what
    makes the Hansen–Hurwitz estimate unbiased. The start is integrated exactly: the draws change
    only where a step crosses a cumulated probability."""
    from simsample.sampling.audit import draw_audit

    p = audit_probabilities(np.array(x))
    order = np.array(rnd.sample(range(len(x)), len(x)))
    edges = np.cumsum(p[order])
    # the starts u in [0, 1) at which some step k crosses an edge: (edge·m − k), cut into pieces
    cuts = np.unique(np.concatenate([[0.0, 1.0], (edges[:, None] * m - np.arange(m)[None, :]).ravel()]))
    cuts = cuts[(cuts >= 0) & (cuts <= 1)]
    mean = np.zeros(len(x))
    for lo, hi in zip(cuts[:-1], cuts[1:]):
        if hi - lo <= 0:
            continue
        drawn = draw_audit(p, m, _Start((lo + hi) / 2), order)  # the start in the middle of the piece
        mean += (hi - lo) * np.bincount(drawn, minlength=len(x))
    np.testing.assert_allclose(mean, m * p, rtol=1e-6, atol=1e-9)


@given(st.lists(st.floats(-10.0, 1e9) | st.just(float("nan")) | st.just(float("inf")), min_size=1, max_size=50))
def test_every_launch_can_be_drawn(x):
    p = audit_probabilities(np.array(x))
    assert p.sum() == pytest.approx(1.0)
    assert np.all(p > 0)
    assert np.all(p >= DEFENSIVE / len(x) * (1 - 1e-9)) or np.allclose(p, 1 / len(x))


@given(_population(), st.booleans())
@settings(max_examples=200, deadline=None)
def test_draws_that_follow_the_cycles_bound_every_launchs_term(pop, by_instructions):
    """With the audit's size measure on the launches' own cycles (half the projection's, half
    each launch's), a draw's d_j = (ŷ_j − y_j)/p_j is at most 2·max(T̂, T)/(1 − DEFENSIVE) in size,
    whatever the representatives and shares: no launch makes one draw's term unbounded. In
    proportion to a design metric x it is not (a launch of small x and large y)."""
    labels, y, x, w, apportion = pop
    shares = member_shares(labels, w, apportion if by_instructions else None)
    reps = np.array([np.flatnonzero(labels == c)[0] for c in range(len(w))])
    predicted = shares * y[reps][labels]
    p = audit_probabilities(audit_size(labels, reps, shares, y))
    assert p.sum() == pytest.approx(1.0) and np.all(p > 0)
    bound = 2 * max(predicted.sum(), y.sum()) / (1 - DEFENSIVE)
    assert np.all(np.abs(predicted - y) / p <= bound * (1 + 1e-9))


def test_the_size_measure_leaves_out_a_half_with_nothing_in_it():
    """Cycles all 0 or missing: nothing to follow but the projection's half, then nothing at all
    (audit_probabilities draws such a workload uniformly)."""
    labels, reps, shares = np.array([0, 0, 1]), np.array([0, 2]), np.array([1.0, 1.0, 1.0])
    assert np.all(audit_size(labels, reps, shares, np.zeros(3)) == 0)
    size = audit_size(labels, reps, shares, np.array([np.nan, 5.0, 5.0]))
    assert np.all(np.isfinite(size)) and size.sum() == pytest.approx(2.0)


def test_the_audit_follows_the_features_model_of_the_cycles():
    """On trace features the cost column is warp instructions, a proxy: the audit's cycles are
    the features' ``predicted_cycles``; a measured cost column (a profile's durations) is its own."""
    from simsample.sampling.representatives import model_cycles

    wl, _ = _workload("chains")
    x = wl.values("warp_insts")
    np.testing.assert_array_equal(model_cycles(wl, "warp_insts", x), wl.kernels["predicted_cycles"].to_numpy(float))
    measured = np.linspace(1.0, 2.0, len(wl))  # a cost column of measured times, whatever its values
    assert model_cycles(wl, "duration_ns", measured) is measured
    assert model_cycles(wl, "cycles", measured) is measured
    bare = Workload(wl.kernels.drop(columns=["predicted_cycles"]), source="bare")
    assert model_cycles(bare, "warp_insts", x) is x


def test_audit_by_cost_draws_as_the_previous_versions_did():
    """``audit_by=cost`` keeps the draws of the samplers' versions before the audit followed the
    cycles (the recorded real runs below were made with them): p in proportion to the cost column."""
    wl, _ = _workload("decoder")
    plan = library.plan(wl, "sieve", seed=3, audit=16, audit_by="cost")
    audit = plan.estimator["audit"]
    p_all = audit_probabilities(wl.values("warp_insts"))
    np.testing.assert_allclose(audit["p"], p_all[audit["launches"]])
    assert plan.clusters[-1].key == "audit: 16 draws in proportion to warp_insts"
    follows = library.plan(wl, "sieve", seed=3, audit=16)
    assert follows.sampler["params"]["audit_by"] == "cycles" and follows.estimator["audit"]["p"] != audit["p"]
    assert follows.clusters[-1].key.endswith("in proportion to the projection's and each launch's predicted_cycles")


def _audited_estimator(of, p, launches, draws):
    """An estimator section of an audit with the given draws (row positions, duplicates for a
    launch drawn more than once), each launch predicted by cluster ``of`` with share 1."""
    at = sorted(set(draws))
    return {
        "kind": "representative",
        "audit": {
            "cluster": 99,
            "draws": len(draws),
            "defensive": DEFENSIVE,
            "launches": at,
            "of": [int(of[r]) for r in at],
            "share": [1.0] * len(at),
            "p": [float(p[r]) for r in at],
        },
    }


@given(
    st.lists(st.tuples(st.integers(0, 3), st.floats(-1e3, 1e3)), min_size=2, max_size=40),
    st.randoms(use_true_random=False),
)
@settings(max_examples=100, deadline=None)
def test_the_audits_variance_takes_the_draws_in_the_order_they_were_walked(rows, rnd):
    """The successive differences are taken along the walk (cluster, probability, position),
    however the plan lists the samples: listing them shuffled gives the same bound, and the
    variance is Σ (d_r − d_{r−1})² / (2m(m − 1)) over the walked order."""
    m = len(rows)
    of = np.array([c for c, _ in rows])
    errors = np.array([e for _, e in rows])
    p = np.linspace(1.0, 2.0, m) / np.linspace(1.0, 2.0, m).sum()
    est = _audited_estimator(of, p, list(range(m)), list(range(m)))
    launch = np.arange(m)
    # representatives of clusters 0..3 with value 0: each audited launch's d is −y/p
    reps = np.arange(4)
    y = np.concatenate([np.zeros(4), -errors * p])
    shuffled = np.array(rnd.sample(range(m), m))
    bounds = [
        audit_bound(
            est,
            np.concatenate([reps, launch[o]]),
            np.concatenate([reps, np.full(m, 99)]),
            np.concatenate([y[:4], y[4:][o]]),
        )
        for o in (np.arange(m), shuffled)
    ]
    walked = errors[np.lexsort((launch, p, of))]
    variance = np.sum(np.diff(walked) ** 2) / (2 * m * (m - 1))
    for b in bounds:
        assert b.bias == pytest.approx(errors.mean(), abs=1e-9)
        assert b.std_error == pytest.approx(np.sqrt(variance), rel=1e-9, abs=1e-12)
    assert bounds[0].dof == pytest.approx(successive_difference_dof(m))


def test_errors_that_differ_between_clusters_are_not_counted_as_spread():
    """Draws whose d is constant within each cluster of the walk: the independent draws'
    s_d²/m counts the difference between clusters as spread; the successive differences see only
    the one step between them, so the interval is the narrower for what the walk stratified."""
    m = 16
    of = np.repeat([0, 1], m // 2)
    errors = np.where(of == 0, 5.0, -3.0)
    p = np.full(m, 1.0 / m)
    est = _audited_estimator(of, p, list(range(m)), list(range(m)))
    reps = np.arange(2)
    y = np.concatenate([np.zeros(2), -errors * p])
    b = audit_bound(est, np.concatenate([reps, np.arange(m)]), np.concatenate([reps, np.full(m, 99)]), y)
    assert b.std_error == pytest.approx(np.sqrt(8.0**2 / (2 * m * (m - 1))))
    assert b.std_error < 0.4 * errors.std(ddof=1) / np.sqrt(m)  # a third of it here


def test_the_successive_differences_degrees_of_freedom():
    """von Neumann's variance of the mean square successive difference, as a chi-square's: one
    degree of freedom at two draws (where it is the ordinary variance), about 2m/3 at many."""
    assert successive_difference_dof(2) == pytest.approx(1.0)
    assert successive_difference_dof(16) == pytest.approx(450 / 44)
    assert 0.6 < successive_difference_dof(1000) / 1000 < 0.67


# --- the plans ---------------------------------------------------------------------------------


@pytest.mark.parametrize("sampler", ["pka", "sieve"])
def test_an_audit_keeps_the_representatives_and_the_projection(sampler):
    wl, truth = _workload("chains")
    plain = library.plan(wl, sampler, seed=3)
    audited = library.plan(wl, sampler, seed=3, audit=8)
    assert "audit" not in plain.estimator and json.loads(plain.dumps())["simsample_plan_minor"] < 3
    audit = audited.estimator["audit"]
    rows = audited.samples[audited.samples["cluster"] != audit["cluster"]].reset_index(drop=True)
    pd.testing.assert_frame_equal(rows, plain.samples)
    assert audit["draws"] == 8 and (audited.samples["cluster"] == audit["cluster"]).sum() == 8
    ids = wl.kernels["kernel_id"].to_numpy()
    values = pd.Series(truth, index=ids)
    assert estimate_total(audited, values).estimate == pytest.approx(estimate_total(plain, values).estimate)
    assert estimate_total(plain, values).ci_low is None  # the method's own plan has no interval
    assert audited.prediction["sampled_launches"] >= plain.prediction["sampled_launches"]
    again = Plan.from_json(json.loads(audited.dumps()))
    assert again.dumps() == audited.dumps()


def test_the_interval_is_the_projection_plus_minus_the_audits_bound():
    from scipy import stats

    wl, truth = _workload("decoder")
    plan = library.plan(wl, "pka", seed=1, audit=12)
    ids = wl.kernels["kernel_id"].to_numpy()
    e = estimate_total(plan, pd.Series(truth, index=ids), confidence=0.95)
    s = plan.samples
    b = audit_bound(
        plan.estimator, s["launch"].to_numpy(np.int64), s["cluster"].to_numpy(np.int64), truth[s["launch"].to_numpy()]
    )
    assert b is not None and b.dof == pytest.approx(2 * 11**2 / 32)  # the successive differences' dof
    half = abs(b.bias) + stats.t.ppf(0.975, b.dof) * b.std_error
    assert e.ci_high - e.estimate == pytest.approx(half, rel=1e-9)
    assert e.estimate - e.ci_low == pytest.approx(half, rel=1e-9)
    assert e.dof == pytest.approx(b.dof) and e.bias == pytest.approx(b.bias)
    # the audit's bias estimate points the right way on this plan (PKA's first launches are cold)
    assert np.sign(b.bias) == np.sign(e.estimate - truth.sum())


def test_a_ratio_gets_the_same_bound_on_its_linearised_values():
    wl, truth = _workload("training")
    plan = library.plan(wl, "sieve", seed=0, audit=10)
    ids = wl.kernels["kernel_id"].to_numpy()
    inst = pd.Series(wl.values("warp_insts"), index=ids)
    cycles = pd.Series(truth, index=ids)
    r = estimate_ratio(plan, inst, cycles, metric="ipc", confidence=0.95)
    assert r.ci_low is not None and r.ci_low <= r.estimate <= r.ci_high
    assert r.ci_low <= inst.sum() / cycles.sum() <= r.ci_high


def test_an_audit_of_one_draw_says_why_it_has_no_interval():
    wl, truth = _workload("chains")
    plan = library.plan(wl, "pka", seed=0, audit=1)
    ids = wl.kernels["kernel_id"].to_numpy()
    assert estimate_total(plan, pd.Series(truth, index=ids)).ci_low is None
    assert no_interval_reason(plan) == "none: the audit needs two draws or more"


@pytest.mark.parametrize(
    ("name", "sampler"), [("decoder", "pka"), ("training", "pka"), ("decoder", "sieve"), ("chains", "sieve")]
)
def test_audited_intervals_cover_real_full_runs(name, sampler):
    """Scored against full Accel-Sim runs' cycles, as ``simsample evaluate --truth`` scores them:
    the 95% intervals of an audit of 16 cover in at least 18 of 20 seeds, and are not hundreds
    of times the error (measured: 20/20 each, at 1.7, 6.2, 3.7 and 2.6 times the mean error).
    Sieve on chains is the case of an error carried by three launches of thirty, which sixteen
    independent draws missed in 7 of 20 plans."""
    wl, truth = _workload(name)
    ids = wl.kernels["kernel_id"].to_numpy()
    scores = [score_plan(library.plan(wl, sampler, seed=s, audit=16), truth, ids) for s in range(20)]
    assert sum(bool(s.covered) for s in scores) >= 18
    errors = np.array([s.error for s in scores])
    halves = np.array([s.half_width for s in scores])
    assert np.median(halves) <= 10 * errors.mean()


# --- damaged plans -------------------------------------------------------------------------------


def _audited_document() -> dict:
    wl, _ = _workload("chains")
    return json.loads(library.plan(wl, "sieve", seed=0, audit=6).dumps())


def _audit_rows(doc: dict) -> list[dict]:
    aid = doc["estimator"]["audit"]["cluster"]
    return [s for s in doc["samples"] if s["cluster"] == aid]


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda d: _audit_rows(d)[0].update(weight=1.0), "weight 0 is for its samples"),
        (lambda d: d["estimator"]["audit"].update(draws=5), "lists 6 sample(s), the audit 5"),
        (lambda d: d["estimator"]["audit"]["p"].pop(), "its lists differ in length"),
        (lambda d: d["estimator"].update(kind="stratified"), "only a representative plan has one"),
        (lambda d: d["estimator"]["audit"]["launches"].reverse(), "not distinct and ascending"),
        (lambda d: d["estimator"].pop("audit"), "which only an audit's samples have"),
    ],
)
def test_a_damaged_audit_is_refused_in_one_line(tmp_path, damage, message):
    doc = _audited_document()
    assert len(doc["estimator"]["audit"]["launches"]) >= 2  # so that reversing them reorders them
    damage(doc)
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(UserError) as err:
        Plan.read(path)
    text = str(err.value)
    assert message in text and "\n" not in text


# --- the commands ------------------------------------------------------------------------------


def test_the_commands_plan_estimate_and_report_an_audit(tmp_path, capsys):
    """``plan`` counts the audit apart from the clusters; ``estimate`` gives the audited interval
    with its degrees of freedom; the report's clusters are the workload's (the audit's cluster,
    of every launch, counted twice their launches and time)."""
    from simsample.cli import run

    full = FIXTURES / "chains-full.out.gz"
    plan = tmp_path / "plan.json"
    assert run(["plan", str(FIXTURES / "chains-features.parquet"), "--sampler", "pka", "--param", "audit=8",
                "-o", str(plan)]) == 0  # fmt: skip
    out = capsys.readouterr().out
    clusters = len(Plan.read(plan).clusters) - 1
    assert f"launches in {clusters} clusters and an audit of 8 draw(s)" in out
    assert run(["estimate", "--sim", "accelsim", "--plan", str(plan), "--json", str(full)]) == 0
    cycles = next(e for e in json.loads(capsys.readouterr().out)["estimates"] if e["metric"] == "cycles")
    assert cycles["ci_low"] < cycles["estimate"] < cycles["ci_high"] and cycles["dof"] == pytest.approx(2 * 7**2 / 20)
    assert abs(cycles["bias"]) <= cycles["ci_high"] - cycles["estimate"]
    assert run(["estimate", "--sim", "accelsim", "--plan", str(plan), str(full)]) == 0
    off = 100 * cycles["bias"] / (cycles["estimate"] - cycles["bias"])
    assert f"audit of 8 draw(s): the representatives' projection of cycles is an estimated {off:+.2f}% off" in (
        capsys.readouterr().out.replace("\n", " ")
    )
    report = tmp_path / "report.html"
    assert run(["report", str(plan), "-o", str(report)]) == 0
    assert f"report of {clusters} clusters" in capsys.readouterr().out
    assert "draws in proportion to" not in report.read_text()  # the audit's cluster is not in the table


# --- real sampled runs -------------------------------------------------------------------------

RUNS = ROOT / "tests" / "fixtures" / "accelsim_sampled_runs" / "audit"


def _real_runs() -> list[tuple[str, str, int]]:
    return sorted(
        (log.parent.name, log.name.split("-seed-")[0], int(log.name.split("-seed-")[1].split(".")[0]))
        for log in RUNS.glob("*/*-seed-*.out.gz")
    )


#: features and full run of each workload with recorded audited runs (short_kernels: the Photon
#: page's workload, outside the calibration family)
_WORKLOAD_FILES = {
    "chains": (FIXTURES / "chains-features.parquet", FIXTURES / "chains-full.out.gz"),
    "decoder": (FIXTURES / "decoder-features.parquet", FIXTURES / "decoder-full.out.gz"),
    "short_kernels": (
        ROOT / "tests" / "fixtures" / "accelsim_photon" / "short_kernels-features.parquet",
        ROOT / "tests" / "fixtures" / "accelsim_photon" / "short_kernels_full.out.gz",
    ),
}


@pytest.mark.parametrize(
    ("name", "sampler"), [(w, s) for w in ("chains", "decoder", "short_kernels") for s in ("pka", "sieve")]
)
def test_audited_real_sampled_runs_cover_the_full_run(name, sampler):
    """Real sampled Accel-Sim runs of audited plans (``apply``'s reuse warm-up, functional; README
    in the fixtures' folder): each run simulated exactly the plan made again here, and the
    audit's 95% interval holds the full run's cycles (measured: every one). They were recorded
    with the audit drawn in proportion to the cost column (``audit_by=cost``, the samplers'
    versions before the audit followed the cycles), so their plans are made that way here."""
    import simsample

    runs = [seed for wl, s, seed in _real_runs() if (wl, s) == (name, sampler)]
    assert len(runs) >= 5, f"no recorded runs of {sampler} on {name}"
    features, full = _WORKLOAD_FILES[name]
    wl = simsample.read(features)
    truth = float(simsample.collect(full, sim="accelsim")["cycles"].sum())
    covered = 0
    for seed in runs:
        plan = simsample.plan(wl, sampler, seed=seed, audit=16, audit_by="cost")
        covered += score_sampled_run(plan, RUNS / name / f"{sampler}-seed-{seed:02d}.out.gz", truth)[1]
    assert covered >= len(runs) - 1, f"{covered} of {len(runs)} cover"


@pytest.mark.parametrize("sampler", ["pka", "sieve"])
def test_a_model_column_of_text_is_no_model(sampler):
    """A features file whose ``predicted_cycles`` holds text (a hand-edited or foreign file) gives
    the audit of a workload without the column, drawn in proportion to the cost column; it used to
    end in a ValueError from NumPy."""
    wl = Workload.from_parquet(ROOT / "tests" / "fixtures" / "accelsim_photon" / "short_kernels-features.parquet")
    bare = Workload.from_parquet(ROOT / "tests" / "fixtures" / "accelsim_photon" / "short_kernels-features.parquet")
    bare.kernels = bare.kernels.drop(columns=["predicted_cycles"])
    column = wl.kernels["predicted_cycles"].astype(object)
    column.iloc[0] = "fast"
    wl.kernels["predicted_cycles"] = column
    plan = library.plan(wl, sampler, seed=0, audit=8)
    assert (
        plan.samples["kernel_id"].tolist() == library.plan(bare, sampler, seed=0, audit=8).samples["kernel_id"].tolist()
    )
