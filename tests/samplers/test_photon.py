"""Photon kernel-level sampling: distance and warp-count rules, prediction, errors."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from simsample.errors import UserError
from simsample.plugins.samplers._photon.bbv import GpuBBVs
from simsample.plugins.samplers.photon import PhotonSampler, match_launches
from simsample.workload import from_records

BLOCKS = {"start_pc": [0, 32, 96, 160], "length": [4, 8, 2, 6]}
# three per-warp block-count vectors with well separated directions
TYPE = {"a": [10, 0, 0, 1], "b": [0, 7, 1, 0], "c": [1, 1, 9, 0]}


def make_wl(launches, *, cycles=None, name="k", scale=None, insts=False):
    """``launches``: per launch a list of (type letter, warps); ``scale`` multiplies block counts."""
    rows, launch, count = [], [], []
    for i, types in enumerate(launches):
        for t, w in types:
            rows.append(np.asarray(TYPE[t], dtype=float) * (1 if scale is None else scale[i]))
            launch.append(i)
            count.append(w)
    n = len(launches)
    cycles = np.full(n, 1000) if cycles is None else np.asarray(cycles)
    rec = {
        "name": [name] * n,
        "grid_x": np.ones(n, dtype=int),
        "block_x": np.full(n, 32),
        "duration_ns": cycles,
        "cycles": cycles,
    }
    wl = from_records(rec, source="test")
    wl.extras = {
        "warp_types": sp.csr_matrix(np.vstack(rows)),
        "warp_type_launch": np.asarray(launch),
        "warp_type_count": np.asarray(count),
        "bbv_blocks": BLOCKS,
    }
    return wl


def plan_of(wl, **params):
    s = PhotonSampler()
    p = s.resolve_params(params)
    s.check_workload(wl, p)
    return s.plan(wl, p, 0)


def mix(shares, total):
    return [(t, int(round(s * total))) for t, s in zip("abc", shares)]


def test_identical_launches_share_one_representative():
    wl = make_wl([[("a", 60), ("b", 40)]] * 5)
    plan = plan_of(wl)
    assert plan.sampled_ids == [0]
    assert list(plan.samples["weight"]) == [5.0]
    assert plan.estimator["kind"] == "representative" and plan.prediction["error_bound"] is None


def test_distance_threshold_is_exclusive_and_absolute():
    # same warp count; shares (0.50, 0.50) vs (0.52, 0.48): distance ≈ 0.028; vs (0.55, 0.45): ≈ 0.071
    wl = make_wl([[("a", 50), ("b", 50)], [("a", 52), ("b", 48)], [("a", 55), ("b", 45)]])
    plan = plan_of(wl)
    assert plan.sampled_ids == [0, 2]
    assert sorted(c.size for c in plan.clusters) == [1, 2]
    assert plan_of(wl, distance=0.02).sampled_ids == [0, 1, 2]
    assert plan_of(wl, distance=0.2).sampled_ids == [0]


def test_small_kernels_match_only_their_exact_warp_count():
    wl = make_wl([[("a", 60), ("b", 40)], [("a", 120), ("b", 80)], [("a", 60), ("b", 40)]])
    assert plan_of(wl).sampled_ids == [0, 1]  # 100 and 200 warps are small on a V100
    assert plan_of(wl, gpu_warps=100).sampled_ids == [0]  # both fill this GPU: they may match
    assert plan_of(wl, gpu_warps=101).sampled_ids == [0, 1]  # 100 < 101 warps: small
    assert plan_of(wl, gpu="R9Nano").prediction["gpu_warps"] == 2560


def test_other_warp_counts_nearest_count_wins():
    a = mix((0.62, 0.30, 0.08), 6000)
    b = mix((0.58, 0.30, 0.12), 9000)  # 0.057 from a: a representative of its own
    c = mix((0.60, 0.30, 0.10), 8000)  # 0.028 from both: the nearer warp count (9000) wins
    d = mix((0.60, 0.30, 0.10), 7000)  # 0.028 from both: 6000 is nearer
    wl = make_wl([a, b, c, d], cycles=[1, 10, 100, 1000])
    plan = plan_of(wl)  # all launches fill a V100 (≥ 5120 warps)
    assert plan.sampled_ids == [0, 1]
    assert [c.stats["total"] for c in plan.clusters] == [1001.0, 110.0]


def test_same_warp_count_is_searched_first():
    a = mix((0.62, 0.30, 0.08), 6000)
    b = mix((0.58, 0.30, 0.12), 9000)
    c = mix((0.595, 0.30, 0.105), 6000)  # 0.035 from a (same count), 0.021 from b (other count)
    wl = make_wl([a, b, c], cycles=[1, 10, 100])
    plan = plan_of(wl)
    assert plan.sampled_ids == [0, 1]
    assert [c.stats["total"] for c in plan.clusters] == [101.0, 10.0]


def _bbvs(vectors):
    rows = np.vstack([np.asarray(v, dtype=float).reshape(1, 16) for v in vectors])
    return GpuBBVs(rows=rows, offsets=np.arange(len(vectors) + 1), sqnorm=(rows**2).sum(axis=1))


def test_nearest_wins_and_ties_go_to_the_most_recent():
    e0 = np.eye(16)[0]
    e1 = np.eye(16)[1]
    vecs = [e0, e0 + 0.0625 * e1, e0 + 0.03125 * e1, e0 + 0.046875 * e1]
    assign, reps = match_launches(_bbvs(vecs), np.full(4, 10), 5120, 0.05)
    assert reps.tolist() == [0, 1]
    assert assign.tolist() == [0, 1, 1, 1]  # launch 2: tie at 0.03125 → the later one; launch 3: nearer to 1


def test_cpi_prediction_scales_by_instructions():
    # launch 1 has the same GPU BBV but every warp executes twice the blocks: twice the instructions
    wl = make_wl([[("a", 60), ("b", 40)], [("a", 60), ("b", 40)]], scale=[1, 2], cycles=[1000, 2100])
    plan = plan_of(wl)
    assert plan.sampled_ids == [0]
    assert plan.samples["weight"].tolist() == [pytest.approx(3.0)]  # 1 + 2 (CPI(hit) × 2× instructions)
    assert plan.prediction["instructions_column"] == "bbv"
    est = float(plan.samples["weight"].iloc[0] * 1000)
    assert est == pytest.approx(3000.0)
    assert plan_of(wl, predict="time").samples["weight"].tolist() == [2.0]
    # an instruction column, when present, is used instead of the BBV-derived count
    wl.kernels["warp_insts"] = [100, 400]
    assert plan_of(wl).samples["weight"].tolist() == [pytest.approx(5.0)]


def test_missing_features_and_unknown_gpu_are_user_errors():
    wl = from_records({"name": ["k"], "grid_x": [1], "block_x": [32], "duration_ns": [5]}, source="run.nsys-rep")
    s = PhotonSampler()
    with pytest.raises(
        UserError, match=r"run.nsys-rep has no per-warp basic-block vectors.*simsample profile features --sim accelsim"
    ):
        s.check_workload(wl, s.resolve_params({}))
    ok = make_wl([[("a", 1)]])
    with pytest.raises(UserError, match="unknown GPU"):
        s.check_workload(ok, s.resolve_params({"gpu": "nope"}))


def test_plan_round_trip_and_determinism(tmp_path):
    from simsample.planfile import Plan

    g = np.random.default_rng(0)
    launches = [mix(g.dirichlet([5, 5, 5]), int(g.integers(50, 400))) for _ in range(40)]
    wl = make_wl(launches, cycles=g.integers(100, 1000, 40))
    p1, p2 = plan_of(wl), plan_of(wl)
    p1.write(tmp_path / "p.json")
    p2.write(tmp_path / "q.json")
    assert (tmp_path / "p.json").read_bytes() == (tmp_path / "q.json").read_bytes()
    assert sum(c.size for c in Plan.read(tmp_path / "p.json").clusters) == 40


def test_bbv_keys_alias_and_cli_plan_from_parquet_with_extras(tmp_path, capsys):
    from simsample.cli import run
    from simsample.planfile import Plan
    from simsample.workload import Workload

    wl = make_wl([[("a", 60), ("b", 40)]] * 3 + [[("c", 100)]])
    wl.extras["bbv_keys"] = np.column_stack([BLOCKS["start_pc"], BLOCKS["length"]])
    del wl.extras["bbv_blocks"]
    wl.to_parquet(tmp_path / "f.parquet")
    assert set(Workload.from_parquet(tmp_path / "f.parquet").extras) >= {"warp_types", "bbv_keys"}
    assert run(["plan", str(tmp_path / "f.parquet"), "--sampler", "photon", "-o", str(tmp_path / "p.json")]) == 0
    plan = Plan.read(tmp_path / "p.json")
    assert plan.sampled_ids == [0, 3] and plan.prediction["error_bound"] is None
    assert "2 of 4 launches" in capsys.readouterr().out


@given(
    st.lists(
        st.tuples(st.floats(0.05, 0.95), st.sampled_from([64, 128, 6000, 7000]), st.sampled_from([1.0, 1.5])),
        min_size=1,
        max_size=25,
    ),
    st.sampled_from([0.02, 0.05, 0.2]),
)
@settings(max_examples=40, deadline=None)
def test_walk_invariants(launches, threshold):
    """Every launch maps to an earlier (or its own) representative within the distance, with the
    same warp count unless both fill the GPU; representatives stand for themselves."""
    from simsample.plugins.samplers._photon.bbv import WarpFeatures, gpu_bbvs

    wl = make_wl(
        [[("a", max(1, round(s * w))), ("c", w - max(1, round(s * w)))] for s, w, _ in launches],
        scale=[k for _, _, k in launches],
    )
    n = len(launches)
    feats = WarpFeatures.from_extras(wl.extras, n)
    bbvs = gpu_bbvs(feats, n)
    warps = feats.warps(n)
    assign, reps = match_launches(bbvs, warps, 5120, threshold)
    assert list(assign[reps]) == list(range(len(reps)))
    for i in range(n):
        r = reps[assign[i]]
        assert r <= i
        a, b = bbvs.vector(i), bbvs.vector(r)
        m = max(len(a), len(b))
        d = np.linalg.norm(np.pad(a, (0, m - len(a))) - np.pad(b, (0, m - len(b))))
        assert d < threshold or i == r
        if warps[i] < 5120 or warps[r] < 5120:
            assert warps[i] == warps[r]
