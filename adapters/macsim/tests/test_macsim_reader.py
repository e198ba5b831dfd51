"""MacSim trace folders: reading, detection, and refusing what MacSim itself would crash on."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simsample.errors import FormatError, UserError
from tests.helpers import shared_path

pytest.importorskip("simsample_macsim")

from simsample_macsim.reader import MacSimReader, load_trace_folder  # noqa: E402
from simsample_macsim.traces import parse_kernel_config, parse_kernel_names  # noqa: E402

VMA = ("simulators", "macsim", "sst-unit-test", "traces", "nvbit", "vectormultadd", "4096")


# --- helpers shared by the other test_macsim_* modules --------------------------------------------
def folder_hash(root: Path) -> str:
    """Names, bytes and link targets of everything under ``root`` (links not followed)."""
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]):
            p = Path(dirpath) / name
            h.update(str(p.relative_to(root)).encode())
            if p.is_symlink():
                h.update(b"->" + os.readlink(p).encode())
            else:
                h.update(p.read_bytes())
                h.update(oct(p.stat().st_mode).encode())
    return h.hexdigest()


def write_trace_folder(
    root: Path,
    kernels: list[tuple[int, list[int]]],
    *,
    names: dict[int, tuple[str, tuple[int, int, int], tuple[int, int, int]]] | None = None,
    max_blocks: int = 8,
) -> Path:
    """A MacSim trace folder by hand: ``kernels`` is [(N, per-warp instruction counts)]."""
    root.mkdir(parents=True, exist_ok=True)
    lines = ["nvbit", "14", "-1"]
    for n, counts in kernels:
        d = root / f"Kernel{n}"
        d.mkdir()
        warp_ids = [i * 4 for i in range(len(counts))]  # warp ids need not be contiguous
        (d / "trace.txt").write_text(
            "nvbit\n14\n" + f"{max_blocks}\n{len(counts)}\n" + "".join(f"{w} 0\n" for w in warp_ids)
        )
        (d / "trace_info.txt").write_text("".join(f"{w} {c}\n" for w, c in zip(warp_ids, counts)))
        (d / "trace_0.raw").write_bytes(b"\x1f\x8b")  # never opened by the reader
        lines.append(f"./Kernel{n}/trace.txt")
    (root / "kernel_config.txt").write_text("\n".join(lines) + "\n")
    if names is not None:
        entries = []
        for n, (name, g, b) in names.items():
            entries.append(
                f"Kernel{n} name: {name}\n  Grid size: ({g[0]}, {g[1]}, {g[2]}), Block size: ({b[0]}, {b[1]}, {b[2]}), "
                f"maxBlockPerCore: {max_blocks}, # of regs: 32, static shared mem: 1024, dynamic shared mem: 256\n"
            )
        (root / "kernel_names.txt").write_text("".join(entries))
    return root


# --- the real vectormultadd traces ------------------------------------------------------------------
def test_real_traces_ids_instructions_and_untimed(capsys):
    wl = load_trace_folder(shared_path(*VMA)).workload
    k = wl.kernels
    assert k["kernel_id"].tolist() == [0, 1, 2]  # the KernelN numbers, 0-based
    assert [str(n) for n in k["name"]] == ["Kernel0", "Kernel1", "Kernel2"]
    assert k["warps"].tolist() == [128, 128, 128]
    # 128 warps x 14 instructions each (trace_info.txt)
    assert k["instructions"].tolist() == [1792, 1792, 1792]
    assert k["warp_insts"].tolist() == [1792, 1792, 1792]
    assert k["max_blocks_per_core"].tolist() == [16, 16, 16]
    assert k["duration_ns"].isna().all() and not wl.timed
    assert wl.default_metric() == "warp_insts"
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "one kernel per launch" in err


def test_detect_folder_config_and_list(tmp_path):
    folder = shared_path(*VMA)
    r = MacSimReader()
    assert r.detect(folder, b"")
    cfg = folder / "kernel_config.txt"
    assert r.detect(cfg, cfg.read_bytes())
    lst = tmp_path / "trace_file_list"
    lst.write_text(f"1\n{cfg}\n")
    assert r.detect(lst, lst.read_bytes())
    assert (
        load_trace_folder(lst, quiet=True).workload.fingerprint
        == load_trace_folder(folder, quiet=True).workload.fingerprint
    )
    other = tmp_path / "x.csv"
    other.write_text("kernel_id,weight\n1,2\n")
    assert not r.detect(other, other.read_bytes())
    (tmp_path / "empty").mkdir()
    assert not r.detect(tmp_path / "empty", b"")


def test_real_trace_file_list_names_a_missing_config():
    lst = shared_path("simulators", "macsim", "bin", "trace_file_list")  # points at .../65536/, not shipped
    with pytest.raises(UserError, match="65536/kernel_config.txt, which does not exist"):
        load_trace_folder(lst)


def test_kernel_names_give_names_shapes_regs_and_shared_memory(tmp_path):
    names = {
        0: ("void vecAdd<float>(float*, float*, int)", (4, 1, 1), (128, 1, 1)),
        3: ("_Z3mulPfS_i", (2, 2, 1), (32, 4, 1)),
    }
    root = write_trace_folder(tmp_path / "t", [(0, [5, 6]), (3, [7])], names=names)
    wl = load_trace_folder(root, quiet=True).workload
    k = wl.kernels
    assert k["kernel_id"].tolist() == [0, 3]
    assert [str(n) for n in k["name"]] == [names[0][0], names[3][0]]
    assert k[["grid_x", "grid_y", "grid_z"]].to_numpy().tolist() == [[4, 1, 1], [2, 2, 1]]
    assert k[["block_x", "block_y", "block_z"]].to_numpy().tolist() == [[128, 1, 1], [32, 4, 1]]
    assert k["regs"].tolist() == [32, 32]
    assert k["shmem"].tolist() == [1280, 1280]  # static + dynamic
    assert k["instructions"].tolist() == [11, 7]
    assert k["max_warp_insts"].tolist() == [6, 7]
    assert wl.meta["shapes_known"] is True


def test_kernel_names_lists_untraced_launches_too(tmp_path):
    names = {i: (f"k{i}", (1, 1, 1), (32, 1, 1)) for i in range(5)}
    root = write_trace_folder(tmp_path / "t", [(1, [3]), (4, [3])], names=names)
    parsed = parse_kernel_names(root / "kernel_names.txt")
    assert sorted(parsed) == [0, 1, 2, 3, 4]
    assert load_trace_folder(root, quiet=True).workload.kernels["kernel_id"].tolist() == [1, 4]


@pytest.mark.parametrize(
    "line, message",
    [
        ("Kernel0/trace.txt", "fewer than two path components"),
        ("trace.txt", "not a path of the form"),
        ("./Foo0/trace.txt", "expected a KernelN folder"),
        ("./Kernel0/trace", "needs an extension"),
    ],
)
def test_kernel_config_lines_macsim_would_crash_on(tmp_path, line, message):
    root = write_trace_folder(tmp_path / "t", [(0, [1])])
    (root / "kernel_config.txt").write_text(f"nvbit\n14\n-1\n{line}\n")
    with pytest.raises(FormatError, match=message) as exc:
        parse_kernel_config(root / "kernel_config.txt")
    assert exc.value.line == 4


def test_only_the_last_two_components_count(tmp_path):
    root = write_trace_folder(tmp_path / "t", [(0, [1]), (2, [1])])
    (root / "kernel_config.txt").write_text("nvbit\n14\n-1\n/some/other/abs/Kernel2/trace.txt\n./Kernel0/trace.txt\n")
    cfg = parse_kernel_config(root / "kernel_config.txt")
    assert [e.number for e in cfg.kernels] == [2, 0]
    assert cfg.kernels[0].trace == root / "Kernel2" / "trace.txt"


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda r: (r / "kernel_config.txt").write_text("x86\n14\n-1\n./Kernel0/trace.txt\n"), "trace type 'x86'"),
        (lambda r: (r / "kernel_config.txt").write_text("nvbit\n13\n-1\n./Kernel0/trace.txt\n"), "version 13"),
        (lambda r: (r / "kernel_config.txt").write_text("nvbit\n14\n128\n"), "expected -1"),
        (lambda r: (r / "kernel_config.txt").write_text("nvbit\n14\n-1\n"), "lists no kernels"),
        (
            lambda r: (r / "kernel_config.txt").write_text("nvbit\n14\n-1\n./Kernel0/trace.txt\n./Kernel0/trace.txt\n"),
            "listed twice",
        ),
        (lambda r: (r / "kernel_config.txt").write_text("nvbit\n14\n-1\n./Kernel7/trace.txt\n"), "Kernel7: folder"),
        (lambda r: (r / "Kernel0" / "trace.txt").write_text("nvbit\n14\n8\n"), "did not finish"),
        (lambda r: (r / "Kernel0" / "trace_info.txt").write_text("0 5\n"), "lists 1 warps but trace.txt says 2"),
        (lambda r: (r / "Kernel0" / "trace_info.txt").write_text("0 5\n4\n"), "middle of one"),
    ],
)
def test_bad_trace_folders_are_format_errors(tmp_path, mutate, message):
    root = write_trace_folder(tmp_path / "t", [(0, [1, 2])])
    mutate(root)
    with pytest.raises(UserError, match=message):
        load_trace_folder(root, quiet=True)


def test_without_trace_info_there_is_no_default_metric(tmp_path, capsys):
    root = write_trace_folder(tmp_path / "t", [(0, [1, 2])])
    (root / "Kernel0" / "trace_info.txt").unlink()
    wl = load_trace_folder(root).workload
    assert "instructions" not in wl.kernels.columns
    assert "no instruction counts" in capsys.readouterr().err
    with pytest.raises(UserError, match="neither durations nor cycles"):
        wl.default_metric()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.tuples(st.integers(0, 500), st.lists(st.integers(0, 10**6), min_size=1, max_size=6)),
        min_size=1,
        max_size=6,
        unique_by=lambda t: t[0],
    )
)
def test_read_back_what_was_written(tmp_path_factory, kernels):
    root = write_trace_folder(tmp_path_factory.mktemp("t") / "t", kernels)
    wl = load_trace_folder(root, quiet=True).workload
    assert wl.kernels["kernel_id"].tolist() == [n for n, _ in kernels]  # run order, not sorted
    assert wl.kernels["instructions"].tolist() == [sum(c) for _, c in kernels]
    assert wl.kernels["warps"].tolist() == [len(c) for _, c in kernels]
    assert np.array_equal(wl.values("warp_insts"), np.array([sum(c) for _, c in kernels], dtype=float))


def test_profile_features(tmp_path):
    from simsample.cli import run
    from simsample.workload import Workload

    root = write_trace_folder(
        tmp_path / "t",
        [(0, [2, 2, 8]), (1, [5])],
        names={0: ("a", (1, 1, 1), (96, 1, 1)), 1: ("b", (1, 1, 1), (32, 1, 1))},
    )
    out = tmp_path / "f.parquet"
    # --no-context: the placeholder trace_0.raw streams are not traces (the context reads them)
    assert run(["profile", "features", "--sim", "macsim", str(root), "--no-context", "-o", str(out)]) == 0
    k = Workload.from_parquet(out).kernels
    assert k["mean_warp_insts"].tolist() == [4.0, 5.0]
    assert k["warp_imbalance"].tolist() == [2.0, 1.0]  # longest warp over the mean
    assert k["warp_insts"].tolist() == [12, 5]
