"""Photon's GPU BBVs (random projection, warp types) and the named GPU configurations."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from simsample.errors import UserError
from simsample.plugins.samplers._photon import gpus
from simsample.plugins.samplers._photon.bbv import WarpFeatures, block_addresses, gpu_bbvs, projection_weights


def go_count_weights(pc: int) -> list[int]:
    """Transcription of profiler/wf_feature.go ``Count``: four interleaved drand48 streams."""
    a, c, m = 0x5DEECE66D, 0xB, (1 << 48) - 1
    s = [((pc + lane) << 16) + 0x330E for lane in range(4)]
    out = [0] * 16
    for i in range(0, 16, 4):
        for lane in range(4):
            s[lane] = (a * s[lane] + c) & m
            out[i + lane] = (s[lane] >> 16) & 0xFFFF
    return out


@given(st.lists(st.integers(min_value=0, max_value=2**40), min_size=1, max_size=20))
@settings(max_examples=50, deadline=None)
def test_projection_weights_match_the_official_generator(pcs):
    w = projection_weights(np.array(pcs, dtype=np.int64))
    assert w.shape == (len(pcs), 16)
    for row, pc in zip(w, pcs):
        assert row.tolist() == [float(x) for x in go_count_weights(pc)]


def features(types, launch, count, start_pc=(0, 16, 48), length=(4, 8, 2)):
    return WarpFeatures.from_extras(
        {
            "warp_types": sp.csr_matrix(np.asarray(types, dtype=float)),
            "warp_type_launch": np.asarray(launch),
            "warp_type_count": np.asarray(count),
            "bbv_blocks": {"start_pc": list(start_pc), "length": list(length)},
        },
        n_launches=max(launch) + 1,
    )


def test_gpu_bbv_is_share_scaled_unit_vectors_in_descending_share():
    f = features([[1, 0, 0], [2, 5, 1]], launch=[0, 0], count=[1, 3])
    b = gpu_bbvs(f, 1)
    w = projection_weights(np.array([0, 16, 48]))  # rows hold instructions per block: no length factor
    va, vb = np.array([1, 0, 0]) @ w, np.array([2, 5, 1]) @ w
    expected = np.concatenate([0.75 * vb / np.linalg.norm(vb), 0.25 * va / np.linalg.norm(va)])
    assert np.allclose(b.vector(0), expected, rtol=1e-14)
    assert b.sqnorm[0] == pytest.approx(0.75**2 + 0.25**2)
    assert list(f.warps(1)) == [4]
    assert f.instructions(1)[0] == 1 * 1 + 3 * (2 + 5 + 1)


def test_identical_launches_get_identical_vectors_whatever_the_type_order():
    rows = [[1, 2, 0], [0, 1, 1], [3, 0, 0]]
    f1 = features(rows + rows[::-1], launch=[0, 0, 0, 1, 1, 1], count=[5, 5, 2, 2, 5, 5])
    b = gpu_bbvs(f1, 2)
    assert np.array_equal(b.vector(0), b.vector(1))


def test_types_with_equal_projections_merge_and_zero_warp_types_drop():
    f = features([[1, 0, 0], [1, 0, 0], [0, 1, 0]], launch=[0, 0, 0], count=[1, 1, 0])
    b = gpu_bbvs(f, 1)
    assert b.length(0) == 16  # one type with all the warps
    assert b.sqnorm[0] == pytest.approx(1.0)


def test_launch_without_warps_has_an_empty_vector():
    f = features([[1, 0, 0]], launch=[1], count=[2])
    b = gpu_bbvs(f, 2)
    assert b.length(0) == 0 and b.sqnorm[0] == 0 and b.length(1) == 16


def test_bad_extras_are_user_errors():
    good = {
        "warp_types": sp.csr_matrix(np.ones((2, 3))),
        "warp_type_launch": [0, 1],
        "warp_type_count": [1, 1],
        "bbv_blocks": np.array([[0, 1], [8, 1], [16, 1]]),
    }
    assert WarpFeatures.from_extras(good, 2).types.shape == (2, 3)
    with pytest.raises(UserError, match="simsample profile features"):
        WarpFeatures.from_extras({}, 2, source="traces/")
    with pytest.raises(UserError, match="warp_type_launch"):
        WarpFeatures.from_extras({**good, "warp_type_launch": [0]}, 2)
    with pytest.raises(UserError, match="block columns"):
        WarpFeatures.from_extras({**good, "bbv_blocks": np.array([[0, 1]])}, 2)
    with pytest.raises(UserError, match="outside"):
        WarpFeatures.from_extras({**good, "warp_type_launch": [0, 5]}, 2)


# --- named GPUs ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name,warps",
    [
        ("QV100", 80 * 64),
        ("SM7_QV100", 80 * 64),
        ("Tesla V100-SXM2-32GB", 80 * 64),
        ("NVIDIA A100-SXM4-80GB", 108 * 64),
        ("a10", 72 * 48),
        ("H100", 132 * 64),
        ("H100 PCIe", 114 * 64),
        ("GeForce RTX 2080 Ti", 68 * 32),
        ("GeForce GTX 1080 Ti", 28 * 64),
        ("GeForce GTX 1080", 20 * 64),
        ("R9 Nano", 2560),
    ],
)
def test_named_gpus(name, warps):
    assert gpus.resident_warps(name) == warps


def test_unknown_gpu_lists_the_known_ones():
    with pytest.raises(UserError, match=r"unknown GPU 'Voodoo2'.*QV100.*gpu_warps"):
        gpus.lookup("Voodoo2")


# --- block identity: trace PCs are relative to their kernel ---------------------------------


def test_block_addresses_give_each_kernel_its_own_range():
    pcs = np.array([0, 0x40, 0, 0x1000, 0x30, 0])
    names = np.array(["b", "b", "a", "a", "c", "b"])
    addr = block_addresses(pcs, names)
    # a (largest PC 0x1000) first, then b, then c, each on a page boundary past the previous one
    assert addr.tolist() == [0x2000, 0x2040, 0, 0x1000, 0x3030, 0x2000]
    assert block_addresses(pcs, None).tolist() == pcs.tolist()
    order = np.array([5, 3, 1, 4, 0, 2])  # the layout follows the names, not the column order
    assert block_addresses(pcs[order], names[order]).tolist() == addr[order].tolist()


@given(st.lists(st.tuples(st.sampled_from("pqrs"), st.integers(0, 1 << 16)), min_size=1, max_size=40))
@settings(max_examples=60, deadline=None)
def test_block_addresses_never_share_a_seed_across_kernels(blocks):
    names = np.array([n for n, _ in blocks])
    pcs = np.array([p for _, p in blocks], dtype=np.int64)
    addr = block_addresses(pcs, names)
    for i in range(len(blocks)):
        for j in range(len(blocks)):
            if names[i] == names[j]:
                assert addr[i] - addr[j] == pcs[i] - pcs[j]  # relative PCs kept within a kernel
            else:
                assert abs(int(addr[i]) - int(addr[j])) > 3  # seeds pc + 0..3 never coincide


def two_kernel_features(kernel):
    """Launches 0 and 2 run kernel A, launch 1 kernel B: two straight-line programs (one block
    each, ended by EXIT) of different code and length, both starting at relative PC 0."""
    return WarpFeatures.from_extras(
        {
            "warp_types": sp.csr_matrix(np.array([[20, 0], [0, 24], [20, 0]], dtype=float)),
            "warp_type_launch": np.array([0, 1, 2]),
            "warp_type_count": np.array([64, 64, 64]),
            "bbv_blocks": {"start_pc": [0, 0], "length": [20, 24]},
            **({"bbv_block_kernel": np.array(kernel)} if kernel is not None else {}),
        },
        n_launches=3,
    )


def test_different_kernels_with_equal_relative_pcs_are_not_merged():
    from simsample.plugins.samplers.photon import match_launches

    merged = two_kernel_features(None)  # PCs taken as addresses: both first blocks share weights
    assign, _ = match_launches(gpu_bbvs(merged, 3), merged.warps(3), 5120, 0.05)
    assert assign.tolist() == [0, 0, 0]  # what keying on the relative PC alone did
    f = two_kernel_features(["_Z1Av", "_Z1Bv"])
    b = gpu_bbvs(f, 3)
    assign, reps = match_launches(b, f.warps(3), 5120, 0.05)
    assert assign.tolist() == [0, 1, 0] and reps.tolist() == [0, 1]  # A's two launches still merge
    assert np.array_equal(b.vector(0), b.vector(2))
    assert np.linalg.norm(b.vector(0) - b.vector(1)) > 0.2


def test_kernel_names_must_cover_every_block():
    with pytest.raises(UserError, match="bbv_block_kernel names 3"):
        two_kernel_features(["a", "b", "b"])


def test_code_that_cannot_be_told_apart_is_a_user_error():
    with pytest.raises(UserError, match="does not fit in the 2\\*\\*32 addresses"):
        block_addresses(np.array([(1 << 32) - 4096, 0]), np.array(["a", "b"]))
    assert block_addresses(np.array([(1 << 32) - 8192, 0]), np.array(["a", "a"]))[0] == (1 << 32) - 8192
