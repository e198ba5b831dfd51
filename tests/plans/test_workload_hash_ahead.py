"""Fingerprints hashed ahead in a background thread (while a sampler runs) are the fingerprints."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import simsample.workload as workload_module
from simsample.library import plan
from simsample.workload import HASH_AHEAD_MIN, Workload, from_records


def _workload(n: int, seed: int = 0) -> Workload:
    rng = np.random.default_rng(seed)
    return from_records(
        {
            "name": rng.choice(["void k<1>(int)", "void k<2>(int)", "gemm"], n),
            "grid_x": rng.integers(1, 300, n),
            "block_x": np.full(n, 128),
            "duration_ns": rng.integers(1, 10_000, n),
        },
        source="synthetic",
    )


def test_hashed_ahead_are_the_fingerprints():
    ahead, plain = _workload(HASH_AHEAD_MIN), _workload(HASH_AHEAD_MIN)
    ahead.hash_ahead()
    assert "_ahead" in ahead.__dict__
    assert ahead.fingerprint == plain.fingerprint
    assert ahead.shape_fingerprint == plain.shape_fingerprint
    assert "_ahead" not in ahead.__dict__  # nothing kept once both are read


def test_a_plan_records_the_same_fingerprints_either_way(monkeypatch):
    started = []
    real = Workload.hash_ahead

    def hash_ahead(self):
        real(self)
        started.append("_ahead" in self.__dict__)

    monkeypatch.setattr(Workload, "hash_ahead", hash_ahead)
    wl = _workload(HASH_AHEAD_MIN, seed=3)
    p = plan(wl, "margin", seed=1)
    assert started == [True]  # the sampler started the hash ahead
    plain = _workload(HASH_AHEAD_MIN, seed=3)
    assert p.workload["fingerprint"] == plain.fingerprint
    assert p.workload["shape_fingerprint"] == plain.shape_fingerprint
    assert p.dumps() == plan(plain, "margin", seed=1).dumps()


def test_small_workloads_hash_when_asked():
    wl = _workload(100)
    wl.hash_ahead()
    assert "_ahead" not in wl.__dict__


def test_a_table_replaced_meanwhile_is_hashed_again():
    wl, other = _workload(HASH_AHEAD_MIN), _workload(HASH_AHEAD_MIN, seed=1)
    wl.hash_ahead()
    wl.kernels = other.kernels
    assert wl.fingerprint == other.fingerprint
    assert wl.shape_fingerprint == other.shape_fingerprint


def test_a_failure_in_the_thread_is_computed_again(monkeypatch):
    real = workload_module._fingerprint

    def fails_off_the_main_thread(*args, **kwargs):
        if threading.current_thread() is not threading.main_thread():
            raise MemoryError("no memory in the thread")
        return real(*args, **kwargs)

    monkeypatch.setattr(workload_module, "_fingerprint", fails_off_the_main_thread)
    wl, plain = _workload(HASH_AHEAD_MIN), _workload(HASH_AHEAD_MIN)
    wl.hash_ahead()
    assert wl.fingerprint == plain.fingerprint
    assert wl.shape_fingerprint == plain.shape_fingerprint


@pytest.mark.parametrize("first", ["fingerprint", "shape_fingerprint"])
def test_either_order(first):
    wl, plain = _workload(HASH_AHEAD_MIN), _workload(HASH_AHEAD_MIN)
    wl.hash_ahead()
    second = "shape_fingerprint" if first == "fingerprint" else "fingerprint"
    assert getattr(wl, first) == getattr(plain, first)
    assert getattr(wl, second) == getattr(plain, second)
    assert "_ahead" not in wl.__dict__
