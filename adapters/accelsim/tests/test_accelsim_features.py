"""Trace-derived features: both scanners against each other, against the writer's manifest and
against the real simulator's counts; the features table, its extras, its cache; bad traces."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simsample.cli import run as cli_run
from simsample.errors import FormatError
from simsample.workload import Workload
from simsample_accelsim import read_traces, scan_numpy, scan_python
from simsample_accelsim.collect import collect_logs
from simsample_accelsim.features import compute_features, feature_columns
from simsample_accelsim.synth import (
    KernelSpec,
    example_kernels,
    write_kernel,
    write_workload,
)
from tests.accelsim_strategies import kernel_specs
from tests.helpers import shared_path

MEM = (
    "global_ld",
    "global_st",
    "local_ld",
    "local_st",
    "shared_ld",
    "shared_st",
    "global_atom",
    "global_red",
    "shared_atom",
)


def same(a, b) -> bool:
    a, b = a.canonical(), b.canonical()
    return (
        a.counts == b.counts
        and np.array_equal(a.bbv_keys, b.bbv_keys)
        and np.array_equal(a.bbv_values, b.bbv_values)
        and all(
            np.array_equal(getattr(a, k), getattr(b, k))
            for k in ("types_indptr", "types_indices", "types_data", "type_counts")
        )
    )


def check_against_manifest(feats, man) -> None:
    c = feats.counts
    assert (c["ctas"], c["warps"], c["warp_insts"], c["thread_insts"]) == (
        man.ctas,
        man.warps,
        man.warp_insts,
        man.thread_insts,
    )
    for k in MEM:
        assert c[k] == man.mem.get(k, 0), k
    # every instruction lies in exactly one basic block; warp types add up to the launch
    assert feats.bbv_values.sum() == man.warp_insts
    assert feats.type_counts.sum() == man.warps


_bodies = st.lists(
    st.sampled_from(
        [
            "FFMA",
            "IMAD",
            "LDG.E",
            "LDG.E.128",
            "LDG.E.64",
            "STG.E",
            "STG.E.128",
            "LDS",
            "STS.128",
            "LDL",
            "STL",
            "ATOMG.E.ADD.STRONG.GPU",
            "RED.E.ADD.F32.FTZ.RN.STRONG.GPU",
            "LD.E",
            "ST.E",
            "BAR.SYNC",
            "MUFU.EX2",
            "ATOMS.ADD",
        ]
    ),
    min_size=1,
    max_size=6,
).map(tuple)


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(spec=kernel_specs(_bodies, binary_versions=[70, 61, 35]), seed=st.integers(0, 5))
def test_engines_agree_with_each_other_and_the_manifest(tmp_path, spec, seed):
    path = tmp_path / f"k-{seed}.traceg"
    man = write_kernel(path, spec, 1, seed)
    _, a = scan_python.scan_file(path)
    _, b = scan_numpy.scan_file(path, chunk_size=4096)  # small chunks: state carried across many chunks
    assert same(a, b)
    check_against_manifest(b, man)


def test_sector_counts_of_simple_patterns(tmp_path):
    def sectors(**kw):
        spec = KernelSpec(grid=(1, 1, 1), block=(32, 1, 1), iters=1, **kw)
        write_kernel(tmp_path / "k.traceg", spec, 1)
        return scan_numpy.scan_file(tmp_path / "k.traceg")[1].counts

    assert sectors(body=("LDG.E",))["sectors_global_ld"] == 4  # 32 lanes x 4 B coalesced
    assert sectors(body=("LDG.E.128",))["sectors_global_ld"] == 16
    assert sectors(body=("STG.E",), pattern="broadcast")["sectors_global_st"] == 1
    assert sectors(body=("LDG.E",), pattern="strided", stride=32)["sectors_global_ld"] == 32
    assert sectors(body=("LDL",), pattern="coalesced")["sectors_local_ld"] == 4
    # the three address modes describe the same addresses: same features
    got = [sectors(body=("LDG.E", "STG.E.64"), pattern="strided", stride=12, address_mode=m) for m in (0, 1, 2)]
    assert got[0] == got[1] == got[2]


def test_basic_blocks_of_a_loop(tmp_path):
    spec = KernelSpec(grid=(1, 1, 1), block=(32, 1, 1), body=("FFMA",), iters=2)
    write_kernel(tmp_path / "k.traceg", spec, 1)
    f = scan_numpy.scan_file(tmp_path / "k.traceg")[1].canonical()
    # prologue (3) + first iteration (4) up to the branch; the loop body again; EXIT after the last branch
    assert f.bbv_keys.tolist() == [[0x0, 7], [0x30, 4], [0x70, 1]]
    assert f.bbv_values.tolist() == [7, 4, 1]
    assert f.type_counts.tolist() == [1]


def test_warp_types_group_identical_warps(tmp_path):
    spec = KernelSpec(grid=(4, 1, 1), block=(128, 1, 1), body=("FFMA", "LDG.E"), iters=(1, 3))
    man = write_kernel(tmp_path / "k.traceg", spec, 1, seed=7)
    f = scan_numpy.scan_file(tmp_path / "k.traceg")[1]
    assert 1 < len(f.type_counts) <= 3  # three possible trip counts
    assert f.type_counts.sum() == man.warps == 16
    # sum over types of count x row == the launch's BBV
    total = np.zeros(len(f.bbv_values), np.int64)
    for t in range(len(f.type_counts)):
        lo, hi = f.types_indptr[t], f.types_indptr[t + 1]
        np.add.at(total, f.types_indices[lo:hi], f.types_data[lo:hi] * f.type_counts[t])
    assert np.array_equal(total, f.bbv_values)


# --- the real traces ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def hetero_features(tmp_path_factory):
    d = shared_path("simulators", "accelsim", "hetero")
    out = tmp_path_factory.mktemp("feat") / "features.parquet"
    rc = cli_run(["profile", "features", "--sim", "accelsim", str(d), "-o", str(out), "--jobs", "2"])
    assert rc == 0
    return d, out


def test_hetero_features_match_the_manifest_and_the_simulator(hetero_features):
    d, out = hetero_features
    wl = Workload.from_parquet(out)
    k = wl.kernels
    ref = json.loads((d / "workload.json").read_text())["kernels"]
    assert k["warp_insts"].tolist() == [r["warp_insts"] for r in ref]
    assert k["smsp__inst_executed.sum"].tolist() == [r["warp_insts"] for r in ref]
    assert k["warps"].tolist() == [r["warps"] for r in ref] and k["ctas"].tolist() == [r["ctas"] for r in ref]
    assert k["smsp__inst_executed_op_global_ld.sum"].tolist() == [r["opcode_mix"].get("LDG", 0) for r in ref]
    assert k["smsp__inst_executed_op_global_st.sum"].tolist() == [r["opcode_mix"].get("STG", 0) for r in ref]
    assert k["smsp__sass_inst_executed_op_global_red.sum"].tolist() == [r["opcode_mix"].get("RED", 0) for r in ref]
    assert k["smsp__sass_inst_executed_op_global_atom.sum"].tolist() == [r["opcode_mix"].get("ATOMG", 0) for r in ref]
    # the simulator's own counts from the full run: thread instructions and L1 global sector accesses
    full = collect_logs([d / "full.out.gz"])
    assert k["thread_insts"].tolist() == full["instructions"].astype(int).tolist()
    sectors = k["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] + k["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"]
    assert sectors.tolist() == full["l1_accesses"].astype(int).tolist()
    ratio = k["smsp__thread_inst_executed_per_inst_executed.ratio"]
    assert np.allclose(ratio, k["thread_insts"] / k["warp_insts"])
    assert k["launch__grid_size"].tolist() == [r["ctas"] for r in ref]


def test_features_table_keeps_the_folder_fingerprint_and_its_extras(hetero_features):
    d, out = hetero_features
    wl = Workload.from_parquet(out)
    assert wl.fingerprint == read_traces(d).fingerprint
    assert set(feature_columns()) <= set(wl.kernels.columns)
    bbv = wl.extras["bbv"]
    assert bbv.shape == (56, len(wl.extras["bbv_blocks"])) == (56, len(wl.extras["bbv_block_kernel"]))
    assert np.array_equal(np.asarray(bbv.sum(axis=1)).ravel(), wl.kernels["warp_insts"].to_numpy())
    types, launch, count = wl.extras["warp_types"], wl.extras["warp_type_launch"], wl.extras["warp_type_count"]
    assert types.shape[0] == len(launch) == len(count)
    assert np.array_equal(np.bincount(launch, weights=count, minlength=56).astype(int), wl.kernels["warps"].to_numpy())
    rebuilt = np.zeros(bbv.shape)
    for r in range(types.shape[0]):
        rebuilt[launch[r]] += count[r] * types[r].toarray().ravel()
    assert np.array_equal(rebuilt, bbv.toarray())
    # blocks of one kernel never mix with another's
    names = wl.kernels["name"].astype(str).to_numpy()
    rows, cols = bbv.nonzero()
    assert (wl.extras["bbv_block_kernel"][cols] == names[rows]).all()


def test_plan_from_features_applies_to_the_folder(hetero_features, tmp_path):
    d, out = hetero_features
    plan = tmp_path / "plan.json"
    assert (
        cli_run(
            ["plan", str(out), "--sampler", "explicit", "--param", f"file={d / 'sampled_ids.json'}", "-o", str(plan)]
        )
        == 0
    )
    doc = json.loads(plan.read_text())
    assert doc["workload"]["fingerprint"] == read_traces(d).fingerprint
    assert doc["estimator"]["kind"] == "stratified"  # members known and a metric (warp_insts) to take statistics from
    assert (
        cli_run(["apply", "--sim", "accelsim", "--plan", str(plan), "--traces", str(d), "--out", str(tmp_path / "s")])
        == 0
    )


def test_cache_reuses_unchanged_files_and_rescans_changed_ones(tmp_path, monkeypatch):
    d = tmp_path / "t"
    write_workload(d, example_kernels()[:3], seed=2)
    cache = tmp_path / "cache"
    first = compute_features(d, cache_dir=cache, quiet=True)
    assert len(list(cache.glob("*.npz"))) == 3
    calls = []
    import simsample_accelsim.features as features_mod  # whichever engine is the default here

    real = features_mod._scan_job  # one call per file scanned, whichever scanner it uses

    def counting(args):
        calls.append(Path(args[0]).name)
        return real(args)

    monkeypatch.setattr(features_mod, "_scan_job", counting)
    again = compute_features(d, cache_dir=cache, quiet=True)
    assert calls == [] and again.kernels.equals(first.kernels)
    st = (d / "kernel-2.traceg").stat()
    os.utime(d / "kernel-2.traceg", ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    compute_features(d, cache_dir=cache, quiet=True)
    assert calls == ["kernel-2.traceg"]
    assert len(list(cache.glob("*.npz"))) == 3  # the stale entry was pruned


def test_parallel_and_xz_give_the_same_table(tmp_path):
    kernels = example_kernels()[:4]
    write_workload(tmp_path / "plain", kernels, seed=5)
    write_workload(tmp_path / "xz", kernels, seed=5, xz=True)
    a = compute_features(tmp_path / "plain", jobs=1, quiet=True)
    b = compute_features(tmp_path / "xz", jobs=2, quiet=True)
    cols = feature_columns()
    assert a.kernels[cols].equals(b.kernels[cols])
    assert (a.extras["bbv"] != b.extras["bbv"]).nnz == 0
    c = compute_features(tmp_path / "plain", engine="python", quiet=True)
    assert a.kernels[cols].equals(c.kernels[cols])


# --- bad traces --------------------------------------------------------------------------------
def body_trace(tmp_path) -> tuple[Path, str]:
    d = tmp_path / "bad"
    write_workload(d, [KernelSpec(grid=(3, 1, 1), block=(64, 1, 1), body=("LDG.E", "FFMA"))], seed=0)
    p = d / "kernel-1.traceg"
    return p, p.read_text()


@pytest.mark.parametrize("engine", [scan_numpy, scan_python])
def test_truncated_trace_fewer_thread_blocks_than_the_grid(tmp_path, engine):
    p, text = body_trace(tmp_path)
    p.write_text(text[: text.rindex("#BEGIN_TB")])
    with pytest.raises(FormatError, match="has 2 thread blocks but the grid \\(3, 1, 1\\) needs 3"):
        engine.scan_file(p)
    p.write_text(text[: text.rindex("#END_TB")])  # cut inside a thread block
    with pytest.raises(FormatError, match="ends inside a thread block"):
        engine.scan_file(p)


@pytest.mark.parametrize("engine", [scan_numpy, scan_python])
@pytest.mark.parametrize(
    "mutate, fragment",
    [
        (lambda t: t.replace("insts = ", "insts = 1", 1), "declares insts"),
        (lambda t: t.replace("warp = 1\n", "warp = 5\n", 1), "warp"),
        (lambda t: t.rstrip("\n"), "newline"),
        (lambda t: t.replace(" LDG.E 2 R2 R3 4 1 ", " LDG.E 2 R2 R3 4 7 ", 1), "address mode"),
        (lambda t: t.replace("#END_TB\n", "", 1), "#BEGIN_TB"),
    ],
)
def test_malformed_bodies(tmp_path, engine, mutate, fragment):
    p, text = body_trace(tmp_path)
    p.write_text(mutate(text))
    with pytest.raises(FormatError, match=fragment):
        engine.scan_file(p)


def test_features_cli_errors_are_one_line(tmp_path, capsys):
    p, text = body_trace(tmp_path)
    p.write_text(text[: text.rindex("#BEGIN_TB")])
    rc = cli_run(["profile", "features", "--sim", "accelsim", str(p.parent), "-o", str(tmp_path / "f.parquet")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 1 and len(err) == 1 and err[0].startswith("error: ") and "truncated trace" in err[0]
    assert not (tmp_path / "f.parquet").exists()
    (p.parent / "kernel-1.traceg.xz").write_text("not xz at all\n")
    (p.parent / "kernelslist.g").write_text("kernel-1.traceg.xz\n")
    rc = cli_run(["profile", "features", "--sim", "accelsim", str(p.parent), "-o", str(tmp_path / "f.parquet")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 1 and len(err) == 1 and "not an xz file" in err[0]


def test_whitespace_the_simulator_tolerates(tmp_path):
    """CRLF line ends, tabs and repeated spaces parse like the tracer's single spaces (both engines)."""
    spec = KernelSpec(
        grid=(2, 1, 1),
        block=(64, 1, 1),
        body=("LDG.E", "STG.E.64", "FFMA"),
        pattern="strided",
        stride=12,
        divergence=0.5,
    )
    clean = tmp_path / "clean.traceg"
    write_kernel(clean, spec, 1, seed=3)
    text = clean.read_text()
    messy = tmp_path / "messy.traceg"
    lines = text.split("\n")
    lines = [
        ln.replace(" ", "  ", 2) if i % 3 == 0 else ln.replace(" ", "\t", 1) if i % 3 == 1 else ln
        for i, ln in enumerate(lines)
    ]
    messy.write_bytes("\r\n".join(lines).encode())
    ref = scan_python.scan_file(clean)[1]
    for engine in (scan_numpy, scan_python):
        assert same(engine.scan_file(messy)[1], ref)


def test_extras_are_saved_beside_the_parquet_and_checked(tmp_path):
    """Workload.to_parquet/from_parquet keep extras in <file>.extras.npz, tied to the table."""
    from simsample.errors import FormatError as FE
    from simsample.workload import extras_path

    d = tmp_path / "t"
    write_workload(d, example_kernels()[:3], seed=1)
    wl = compute_features(d, quiet=True)
    out = tmp_path / "f.parquet"
    wl.to_parquet(out)
    back = Workload.from_parquet(out)
    assert set(back.extras) == set(wl.extras)
    assert (back.extras["bbv"] != wl.extras["bbv"]).nnz == 0
    assert back.extras["bbv_block_kernel"].tolist() == wl.extras["bbv_block_kernel"].tolist()
    other = read_traces(write_workload(tmp_path / "u", example_kernels()[3:5], seed=1)[0].path.parent)
    keep = extras_path(out).read_bytes()
    other.to_parquet(out)  # no extras: the stale file goes
    assert not extras_path(out).exists()
    extras_path(out).write_bytes(keep)  # extras of another table
    with pytest.raises(FE, match="belongs to another workload"):
        Workload.from_parquet(out)


# --- the footprint store that apply reads --------------------------------------------------------
def _same_fp(a, b) -> bool:
    return (
        a.warp_insts == b.warp_insts
        and np.array_equal(a.reads, b.reads)
        and np.array_equal(a.writes, b.writes)
        and np.array_equal(a.read_counts, b.read_counts)
    )


def test_features_leave_each_traces_footprint_for_apply(tmp_path, monkeypatch):
    from simsample_accelsim import footprints

    monkeypatch.setenv("SIMSAMPLE_CACHE", str(tmp_path / "cache"))
    write_workload(tmp_path / "t", example_kernels()[:4], seed=2)
    tf = read_traces(tmp_path / "t")
    compute_features(tmp_path / "t", quiet=True)
    store = footprints.FootprintStore()
    assert store.folder == tmp_path / "cache" / "accelsim-footprints"
    for f in dict.fromkeys(Path(p) for p in _trace_files(tmp_path / "t")):
        assert _same_fp(store.get(f), scan_numpy.scan_footprint(f))
    assert len(tf.kernels) == 4
    before = sorted(p.name for p in (tmp_path / "t").iterdir())
    # apply's warm-up takes them from the store: no trace body is read again
    monkeypatch.setattr(footprints, "scan_footprint_fresh", lambda path: pytest.fail(f"{path} scanned again"))
    for f in _trace_files(tmp_path / "t"):
        assert footprints.footprint_of(f).warp_insts > 0
    assert sorted(p.name for p in (tmp_path / "t").iterdir()) == before  # the trace folder is an input


def _trace_files(folder: Path) -> list[Path]:
    from simsample_accelsim.reader import scan_folder

    return list(scan_folder(folder).files)


def test_a_stale_footprint_is_never_used(tmp_path):
    """An entry is for the trace as it was: a changed body (new mtime), a changed header at the same
    size and mtime, or a damaged entry all mean a new scan, never the old lines."""
    from simsample_accelsim.footprints import FootprintStore, footprint_of

    store = FootprintStore(tmp_path / "store")
    spec = KernelSpec(grid=(2, 1, 1), block=(64, 1, 1), body=("LDG.E", "STG.E"), iters=2)
    path = tmp_path / "kernel-1.traceg"
    write_kernel(path, spec, 1, seed=0)
    first = footprint_of(path, store)
    assert _same_fp(store.get(path), first)
    # a different body: other lines
    text = path.read_text()
    other = text.replace("0x7f", "0x6f")
    assert other != text and len(other) == len(text)
    st_before = path.stat()
    path.write_text(other)
    os.utime(path, ns=(st_before.st_atime_ns, st_before.st_mtime_ns + 1_000_000))
    assert store.get(path) is None
    fresh = footprint_of(path, store)
    assert _same_fp(fresh, scan_numpy.scan_footprint(path)) and not np.array_equal(fresh.reads, first.reads)
    # the same size and modification time, another header: still told apart
    st_now = path.stat()
    stream = other.replace("-cuda stream id = 0", "-cuda stream id = 1", 1)
    assert stream != other
    path.write_text(stream)
    os.utime(path, ns=(st_now.st_atime_ns, st_now.st_mtime_ns))
    assert path.stat().st_size == st_now.st_size and path.stat().st_mtime_ns == st_now.st_mtime_ns
    assert store.get(path) is None
    # a damaged entry is ignored and rewritten
    path.write_text(other)
    entry = store._file(path)
    footprint_of(path, store)
    entry.write_bytes(b"not a footprint")
    assert store.get(path) is None
    assert _same_fp(footprint_of(path, store), fresh)


def test_footprints_unused_for_a_month_are_pruned(tmp_path):
    from simsample_accelsim.footprints import KEEP_DAYS, FootprintStore, footprint_of

    store = FootprintStore(tmp_path / "store")
    write_workload(tmp_path / "t", example_kernels()[:2], seed=1)
    old, recent = _trace_files(tmp_path / "t")[:2]
    footprint_of(old, store)
    footprint_of(recent, store)
    month_ago = store._file(old).stat().st_mtime - (KEEP_DAYS + 1) * 86400
    os.utime(store._file(old), (month_ago, month_ago))
    assert store.prune() == 1
    assert store.get(old) is None and store.get(recent) is not None
    # reading an entry keeps it
    os.utime(store._file(recent), (month_ago, month_ago))
    assert store.get(recent) is not None and store.prune() == 0
