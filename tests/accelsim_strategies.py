"""Hypothesis strategies shared by the Accel-Sim trace tests (imported, not collected).

The scanners are compared on launches from the synthetic trace writer; every comparison draws the
launch from the same space (grid, block, loops, access patterns, address modes, divergence), so
that a case one engine is tested on is a case the others are tested on too.
"""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import strategies as st

from simsample_accelsim.synth import KernelSpec


def kernel_specs(
    bodies: st.SearchStrategy[tuple[str, ...]], binary_versions: Sequence[int]
) -> st.SearchStrategy[KernelSpec]:
    """One-dimensional blocks of up to 100 threads in grids of up to 3 x 2 blocks, running one of
    ``bodies`` in loops of fixed or varying trip count, for one of ``binary_versions``."""
    return st.builds(
        KernelSpec,
        name=st.just("_Z1kPf"),
        grid=st.tuples(st.integers(1, 3), st.integers(1, 2), st.just(1)),
        block=st.tuples(st.integers(1, 100), st.just(1), st.just(1)),
        body=bodies,
        iters=st.one_of(st.integers(0, 3), st.tuples(st.integers(0, 2), st.integers(2, 4))),
        pattern=st.sampled_from(["coalesced", "strided", "random", "broadcast"]),
        stride=st.sampled_from([4, 8, 12, 33, 128, -4]),
        address_mode=st.sampled_from([None, 0, 1, 2]),
        divergence=st.sampled_from([0.0, 0.5, 1.0]),
        binary_version=st.sampled_from(list(binary_versions)),
        lineinfo=st.booleans(),
    )
