"""GCL-Sampler's inputs without torch: warp selection, trace reading, graphs, clustering, cache."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simsample.errors import UserError
from simsample.gcl.streams import MEM_LOAD, MEM_STORE, InstructionTraces, StreamBuilder, WarpSelection
from simsample.plugins.samplers._gcl.build import launch_graphs
from simsample.plugins.samplers._gcl.cluster import choose_k
from simsample.plugins.samplers._gcl.graphs import (
    CONTROL,
    DEF,
    INSTRUCTION,
    MEM,
    PSEUDO,
    USE,
    VARIABLE,
    KernelGraph,
    _group_stats,
    _versions,
    build_graph,
)
from simsample_accelsim import scan_python
from simsample_accelsim.synth import write_kernel
from simsample_accelsim.warps import read_warps
from tests.accelsim_strategies import kernel_specs
from tests.helpers import ROOT, shared_path

ALL = WarpSelection(sms=1, sm=0, warps=10**9, max_insts=10**9)


def edges_of(g: KernelGraph, rel: int) -> set[tuple[int, int]]:
    m = g.edge_type == rel
    return set(zip(g.edge_index[0, m].tolist(), g.edge_index[1, m].tolist()))


def test_versions_follow_writes_and_reads_see_the_latest():
    b = StreamBuilder()
    b.add(0, 0x00, "MOV", ["R1"], ["R255"])  # 0: R1 v1 (RZ is no variable)
    b.add(0, 0x10, "IADD", ["R2"], ["R1", "R1"])  # 1: reads R1 v1 twice
    b.add(0, 0x20, "IADD", ["R1"], ["R1", "R2"])  # 2: reads R1 v1 and R2 v1, writes R1 v2
    b.add(0, 0x30, "STG.E", [], ["R1", "R2"], MEM_STORE, "global", 4, [0x1000, 0x1004])  # 3: store to line 0x1000
    b.add(0, 0x40, "LDG.E", ["R3"], ["R1"], MEM_LOAD, "global", 4, [0x1008])  # 4: loads what 3 stored
    b.add(0, 0x50, "LDG.E", ["R4"], ["R7"], MEM_LOAD, "global", 4, [0x9000, 0x9010])  # 5: R7 and line 0x9000 unwritten
    b.add(1, 0x00, "MOV", ["R1"], ["R255"])  # another warp: its own R1
    g = build_graph(b.build())
    inst = np.flatnonzero(g.kind == INSTRUCTION)
    assert len(inst) == 7
    assert np.count_nonzero(g.kind == PSEUDO) == 3
    # variables: R1 v1, R2, R1 v2, R3, R4, R1 (warp 1) written; memory line written by 3;
    # initial R7 and initial line 0x9000
    assert np.count_nonzero(g.kind == VARIABLE) == 9
    assert edges_of(g, CONTROL) == {(int(inst[i]), int(inst[i + 1])) for i in range(5)}  # not across warps
    defs = edges_of(g, DEF)
    uses = edges_of(g, USE)
    var_of = {src: dst for src, dst in defs if src in set(inst.tolist())}  # instruction -> its register version
    r1_v1, r2, r1_v2 = var_of[inst[0]], var_of[inst[1]], var_of[inst[2]]
    assert (r1_v1, inst[1]) in uses and (r1_v1, inst[2]) in uses and (r2, inst[2]) in uses
    assert (r1_v2, inst[3]) in uses and (r1_v2, inst[4]) in uses
    assert (r1_v1, inst[3]) not in uses
    refs = np.flatnonzero(g.kind == PSEUDO)
    mem = edges_of(g, MEM)
    assert (inst[3], refs[0]) in mem and (refs[1], inst[4]) in mem and (refs[2], inst[5]) in mem
    stored = [dst for src, dst in defs if src == refs[0]]
    assert len(stored) == 1 and (stored[0], refs[1]) in uses  # the load reads the stored version
    # the unwritten line carries the statistics of its lanes' offsets (0 and 16 bytes / 4 = 4 elements)
    (initial,) = [src for src, dst in uses if dst == refs[2]]
    assert g.stats[initial][3] == 0.0 and g.stats[initial][4] == pytest.approx(np.log1p(4))
    assert not g.stats[g.kind == INSTRUCTION].any()
    assert g.tokens[g.token[refs[0]]] == "MEMREF.global.store"
    assert KernelGraph.from_bytes(g.to_bytes()).edge_index.tolist() == g.edge_index.tolist()


def _naive_versions(key, inst, is_write):
    latest: dict[int, int] = {}
    out = {}
    for e in sorted(range(len(key)), key=lambda e: (inst[e], is_write[e])):
        if is_write[e]:
            latest[key[e]] = e
        else:
            out[e] = latest.get(key[e], -1)
    return out


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 12), st.booleans()), max_size=40))
def test_versioning_equals_a_sequential_walk(events):
    key = np.array([e[0] for e in events], np.int64)
    inst = np.array([e[1] for e in events], np.int64)
    is_write = np.array([e[2] for e in events], bool)
    reads, seen = _versions(key, inst, is_write)
    want = _naive_versions(key.tolist(), inst.tolist(), is_write.tolist())
    got = dict(zip(reads.tolist(), seen.tolist()))
    assert set(got) == set(want)
    for r, w in got.items():  # a read sees the last write to its key before its instruction
        if want[r] < 0:
            assert w < 0
        else:
            assert w >= 0 and key[w] == key[r] and inst[w] == inst[want[r]] and inst[w] < inst[r]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.floats(-1e3, 1e3)), min_size=1, max_size=50))
def test_group_statistics_match_numpy(pairs):
    g = np.array([p[0] for p in pairs], np.int64)
    v = np.array([p[1] for p in pairs], np.float64)
    out = _group_stats(g, v, 5)
    for k in range(5):
        x = np.sort(v[g == k])
        if len(x) == 0:
            assert not out[k].any()
            continue
        assert out[k][0] == pytest.approx(x.mean(), abs=1e-9)
        assert out[k][1] == pytest.approx(x.std(), abs=1e-9)
        assert (out[k][3], out[k][4]) == (x[0], x[-1])
        assert out[k][2] == x[int(np.floor(0.5 * (len(x) - 1)))]


def test_selection_takes_one_sms_ctas_and_is_repeatable():
    sel = WarpSelection(sms=80, sm=3, warps=16, seed=7)
    pairs = sel.chosen(ctas=1000, warps_per_cta=8, kernel_id=12)
    assert len(pairs) == 16 and (pairs[:, 0] % 80 == 3).all()
    assert pairs.tolist() == sel.chosen(1000, 8, 12).tolist()
    assert pairs.tolist() != WarpSelection(sms=80, sm=3, warps=16, seed=8).chosen(1000, 8, 12).tolist()
    assert sorted(map(tuple, pairs.tolist())) == list(map(tuple, pairs.tolist()))
    # fewer CTAs than SMs: the SM's position wraps into the grid, so a small launch is never empty
    assert len(WarpSelection(sms=80, sm=50).chosen(ctas=4, warps_per_cta=2, kernel_id=1)) == 2


_bodies = st.lists(
    st.sampled_from(
        [
            "FFMA",
            "IMAD",
            "LDG.E",
            "LDG.E.128",
            "STG.E",
            "LDS",
            "STS.128",
            "LDL",
            "STL",
            "ATOMG.E.ADD.STRONG.GPU",
            "LD.E",
            "ST.E",
            "BAR.SYNC",
        ]
    ),
    min_size=1,
    max_size=5,
).map(tuple)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(spec=kernel_specs(_bodies, binary_versions=[70, 61]), seed=st.integers(0, 3))
def test_reading_every_warp_sees_every_instruction_the_scanner_counts(tmp_path, spec, seed):
    path = tmp_path / f"k-{seed}.traceg"
    write_kernel(path, spec, 1, seed)
    _, feats = scan_python.scan_file(path)
    s = read_warps(path, ALL)
    assert len(s) == feats.counts["warp_insts"]
    assert s.n_warps == feats.counts["warps"]
    mem = feats.counts
    loads = sum(mem[k] for k in ("global_ld", "local_ld", "shared_ld"))
    stores = sum(mem[k] for k in ("global_st", "local_st", "shared_st"))
    assert np.count_nonzero(s.mem == MEM_LOAD) == loads
    assert np.count_nonzero(s.mem == MEM_STORE) == stores
    g = build_graph(s)
    assert np.count_nonzero(g.kind == INSTRUCTION) == len(s)
    assert g.edge_index.max(initial=-1) < g.n_nodes


def test_hetero_and_tinytrace_traces_read_and_build():
    hetero = shared_path("simulators", "accelsim", "hetero")
    s = read_warps(hetero / "kernel-10.traceg.xz", WarpSelection())
    assert s.n_warps == 16 and len(s) == 16 * 99  # sgemm: 99 instructions per warp
    assert {"LDG.E.128", "FFMA", "BAR.SYNC", "STG.E.128"} <= set(s.opcodes)
    g = build_graph(s)
    assert {"MEMREF.global.load", "MEMREF.shared.store", "MEM.global", "REG.R"} <= set(g.tokens)
    capped = read_warps(hetero / "kernel-10.traceg.xz", WarpSelection(warps=2, max_insts=10))
    assert capped.n_warps == 2 and len(capped) == 20
    tiny = shared_path("simulators", "accelsim", "tinytrace3")
    s = read_warps(tiny / "kernel-2.traceg.xz", WarpSelection(warps=4))  # 3000 CTAs, xz: read up to the SM's last block
    assert s.n_warps == 4 and len(s) > 0


def test_bundled_example_traces_build_graphs():
    files = sorted((ROOT / "examples" / "traces").glob("kernel-*.traceg.xz"))[:5]
    assert files
    for f in files:
        g = build_graph(read_warps(f, WarpSelection(warps=4)))
        assert g.n_nodes > 0 and g.n_edges > 0


def test_graphs_are_cached_per_file_and_a_bad_entry_is_rebuilt(tmp_path):
    hetero = shared_path("simulators", "accelsim", "hetero")
    files = [hetero / f"kernel-{k}.traceg.xz" for k in (1, 2, 1)]
    traces = InstructionTraces(files, read_warps, "test")
    sel = WarpSelection(warps=2)
    first, hits = launch_graphs(traces, sel, cache=tmp_path, jobs=1)
    assert hits == 0 and len(first) == 3 and len(list(tmp_path.glob("*.npz"))) == 2
    again, hits = launch_graphs(traces, sel, cache=tmp_path, jobs=2)
    assert hits == 2 and [g.n_nodes for g in again] == [g.n_nodes for g in first]
    victims = sorted(tmp_path.glob("*.npz"))
    victims[0].write_bytes(b"not an npz")
    victims[1].write_bytes(victims[1].read_bytes()[:40])  # a truncated zip
    rebuilt, hits = launch_graphs(traces, sel, cache=tmp_path, jobs=1)
    assert hits == 0 and [g.n_nodes for g in rebuilt] == [g.n_nodes for g in first]
    _, hits = launch_graphs(traces, WarpSelection(warps=3), cache=tmp_path, jobs=1)
    assert hits == 0  # another selection is another graph


def test_k_is_chosen_by_silhouette_preferring_the_smaller():
    rng = np.random.default_rng(0)
    centers = np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 10.0]])
    x = np.concatenate([c + rng.normal(scale=0.1, size=(20, 2)) for c in centers])
    c = choose_k(x, k_max=8)
    assert c.k == 3 and len(np.unique(c.labels)) == 3
    assert all(len(np.unique(c.labels[i * 20 : (i + 1) * 20])) == 1 for i in range(3))
    assert choose_k(np.ones((5, 4))).k == 1  # all alike: one cluster
    assert choose_k(np.array([[0.0], [0.0], [1.0]])).k == 2


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_malformed_trace_is_one_error_naming_it(tmp_path, jobs):
    """Also from worker processes: the reader's error reaches the user as its own text."""
    hetero = shared_path("simulators", "accelsim", "hetero")
    bad = tmp_path / "kernel-2.traceg"
    lines = lzma_text(hetero / "kernel-2.traceg.xz").splitlines(keepends=True)
    i = next(n for n, ln in enumerate(lines) if ln[:1] in "0123456789abcdef" and len(ln.split()) > 4)
    lines[i] = "00zz ffffffff 1 R1 MOV\n"  # cut short: no source count
    bad.write_text("".join(lines))
    traces = InstructionTraces([hetero / "kernel-1.traceg.xz", bad], read_warps, "test")
    with pytest.raises(UserError) as info:
        launch_graphs(traces, ALL, cache=None, jobs=jobs)
    assert str(bad) in str(info.value) and "malformed instruction line" in str(info.value)


def lzma_text(path) -> str:
    import lzma

    return lzma.decompress(path.read_bytes()).decode()
