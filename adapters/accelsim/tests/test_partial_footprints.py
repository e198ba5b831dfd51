"""A partial folder's warm-up takes footprints from the store, as the whole-run warm-up does.

Folders of selected ranges (profile first, trace the windows) choose their targeted or reuse
warm-up among the launches that were traced; they used to scan every footprint again with the
numpy scanner. They now go through the footprint store (filled by ``profile features``, else one
compiled scan each, stored): the same choices, and a second apply reads no trace body.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from simsample.planfile import Plan
from simsample_accelsim import footprints, partial, scan_native, scan_numpy
from simsample_accelsim.merge import merge_runs
from simsample_accelsim.reader import scan_folder
from simsample_accelsim.scan_numpy import scan_footprint
from simsample_accelsim.warmup import parse_warmup
from tests.plans.test_profile_first import process_folder, runs_of, synth_plan


@pytest.fixture
def partial_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("SIMSAMPLE_CACHE", str(tmp_path / "cache"))  # a store of this test's own
    full, _ = process_folder(tmp_path)
    plan = Plan.read(synth_plan(tmp_path, full, [9, 17, 26]))
    merge_runs(runs_of(full, [(5, 9), (12, 17), (22, 26)], tmp_path / "runs"), tmp_path / "part")
    tf = scan_folder(tmp_path / "part")
    numbers = partial.folder_numbers(tf)
    assert partial.is_partial(numbers)
    rows = [int(np.searchsorted(numbers, n)) for n in (9, 17, 26)]
    return tf, plan, rows, numbers


def numpy_footprints(tf):
    return lambda i: scan_footprint(tf.files[i])


@pytest.mark.parametrize("warmup", ["targeted", "reuse"])
def test_partial_warmup_from_the_store_is_the_numpy_scans(partial_folder, warmup):
    tf, plan, rows, numbers = partial_folder
    spec = parse_warmup(warmup, budget=None)  # no cost cap: the targeted choice takes what shares lines
    if spec.reuse:
        spec = replace(spec, l2_lines=4)  # a small L2: the window stops inside the traced ranges
    before = partial.choose_warmup_traced(tf, plan, rows, spec, numbers, footprint=numpy_footprints(tf))
    now = partial.choose_warmup_traced(tf, plan, rows, spec, numbers)
    assert now == before
    assert any(now.values())  # the warm-up chose launches: the comparison could fail
    store = footprints.FootprintStore()
    assert any(store.has(f) for f in tf.files)


def test_a_second_partial_warmup_reads_no_trace_body(partial_folder, monkeypatch):
    tf, plan, rows, numbers = partial_folder
    spec = parse_warmup("targeted")
    first = partial.choose_warmup_traced(tf, plan, rows, spec, numbers)

    def no_scan(path):
        raise AssertionError(f"scanned {path} again")

    monkeypatch.setattr(footprints, "scan_footprint_fresh", no_scan)
    monkeypatch.setattr(scan_numpy, "scan_footprint", no_scan)
    monkeypatch.setattr(scan_native, "scan_footprint", no_scan)
    assert partial.choose_warmup_traced(tf, plan, rows, spec, numbers) == first


def test_stored_footprints_equal_numpy_scans(partial_folder):
    tf, *_ = partial_folder
    stored = partial._stored_footprints(tf)
    for i in range(len(tf.files)):
        a, b = stored(i), scan_footprint(tf.files[i])
        assert a.reads.tolist() == b.reads.tolist() and a.writes.tolist() == b.writes.tolist()
        assert a.warp_insts == b.warp_insts and a.read_counts.tolist() == b.read_counts.tolist()
