"""Reading Accel-Sim trace folders: headers only, the simulator's header grammar, bad inputs."""

from __future__ import annotations

import json
import lzma
import shutil
from pathlib import Path

import numpy as np
import pytest

from simsample.errors import FormatError, UserError
from simsample.reading import load_workload
from simsample_accelsim import read_traces
from simsample_accelsim.reader import scan_folder
from simsample_accelsim.synth import KernelSpec, header_text, write_workload
from simsample_accelsim.traceg import read_header
from tests.helpers import shared_path


def hetero() -> Path:
    return shared_path("simulators", "accelsim", "hetero")


def test_hetero_launches_match_the_generator_manifest(capsys):
    wl = read_traces(hetero())
    ref = json.loads((hetero() / "workload.json").read_text())["kernels"]
    k = wl.kernels
    assert len(wl) == 56 and wl.format == "accelsim"
    assert k["kernel_id"].tolist() == list(range(1, 57))
    assert k["name"].astype(str).tolist() == [r["name"] for r in ref]
    assert [tuple(x) for x in k[["grid_x", "grid_y", "grid_z"]].to_numpy().tolist()] == [tuple(r["grid"]) for r in ref]
    assert [tuple(x) for x in k[["block_x", "block_y", "block_z"]].to_numpy().tolist()] == [
        tuple(r["block"]) for r in ref
    ]
    assert k["shmem"].tolist() == [r["shmem"] for r in ref]
    assert k["regs"].tolist() == [r["nregs"] for r in ref]
    assert set(k["binary_version"]) == {70} and set(k["tracer_version"]) == {4}
    assert k["duration_ns"].isna().all() and not wl.timed
    # memcpys in order: seven before the first launch, one before launch 29 (row 28)
    assert wl.memcpy_count == 8
    assert [m[0] for m in wl.meta["memcpys"]] == [0] * 7 + [28]
    assert wl.meta["memcpys"][4] == [0, "0x00007f5a3d000000", 524288]
    # the list names .traceg files while only .xz files are stored: read those, with a warning
    assert "exist only under the other name" in capsys.readouterr().err


def test_both_lists_of_hetero_give_the_same_workload():
    a = read_traces(hetero())
    b = read_traces(hetero() / "kernelslist.xz.g")
    assert a.fingerprint == b.fingerprint and len(b) == 56


def test_header_fields_and_pascal_traces():
    h = read_header(hetero() / "kernel-11.traceg.xz")
    assert (h.name, h.kernel_id, h.grid, h.block, h.shmem, h.nregs) == (
        "_Z17masked_row_reducePKfPfii",
        11,
        (80, 1, 1),
        (128, 1, 1),
        512,
        32,
    )
    assert (h.binary_version, h.stream, h.tracer_version, h.lineinfo, h.nvbit_version) == (70, 0, 4, 0, "1.5.5")
    assert h.shmem_base == 0x7F5B00000000 and h.local_base == 0x7F5B01000000 and h.compressed
    mm = shared_path(
        "simulators", "accelsim", "microgpusim", "test-apps", "matrixmul", "traces", "matrixmul-32-32-trace"
    )
    wl = read_traces(mm)
    assert wl.kernels["binary_version"].tolist() == [61] and wl.memcpy_count == 2
    assert wl.kernels[["block_x", "block_y"]].to_numpy().tolist() == [[32, 32]]


def test_header_read_stops_at_the_header(tmp_path):
    """Only the first compressed kilobytes are read: a trace cut short still has a readable header."""
    src = hetero() / "kernel-10.traceg.xz"  # 7.5 MB of text, 22 kB compressed
    cut = tmp_path / "kernel-10.traceg.xz"
    cut.write_bytes(src.read_bytes()[:3000])
    h = read_header(cut)
    assert h.kernel_id == 10 and h.grid == (22, 20, 1)
    from simsample_accelsim.features import scan_trace

    with pytest.raises(FormatError, match="truncated or corrupt xz"):
        scan_trace(cut)


def test_detected_by_the_plugin_host_for_folders_and_lists():
    wl = load_workload([hetero()])
    assert wl.format == "accelsim" and len(wl) == 56
    wl2 = load_workload([hetero() / "kernelslist.xz.g"])
    assert wl2.fingerprint == wl.fingerprint


def test_tinytrace3_warns_about_ignored_lines(capsys):
    wl = read_traces(shared_path("simulators", "accelsim", "tinytrace3"))
    err = capsys.readouterr().err
    assert "line 3: ignored by the simulator: '# a comment line'" in err
    assert "line 6: ignored by the simulator: 'bogus line'" in err
    assert wl.kernels["name"].astype(str).tolist() == ["_Z5firstPf", "_Z6secondPf", "_Z5thirdPf"]
    assert wl.meta["ignored_lines"][1] == [4, "MemcpyDtoH,0x00007f1000000000,65536"]


# --- bad inputs --------------------------------------------------------------------------------
def folder(tmp_path: Path, n: int = 2, **kw) -> Path:
    d = tmp_path / "traces"
    write_workload(d, [KernelSpec(grid=(2, 1, 1), block=(64, 1, 1))] * n, seed=1, **kw)
    return d


def test_trace_without_header(tmp_path):
    d = folder(tmp_path)
    body = (d / "kernel-2.traceg").read_text().split("#traces format", 1)[1].split("\n", 1)[1]
    (d / "kernel-2.traceg").write_text(body)
    with pytest.raises(FormatError, match="no header"):
        read_traces(d)


def test_header_followed_directly_by_begin_tb(tmp_path):
    d = folder(tmp_path)
    text = (d / "kernel-1.traceg").read_text()
    head, rest = text.split("\n\n#traces format", 1)
    (d / "kernel-1.traceg").write_text(head + "\n" + rest.split("\n", 1)[1].lstrip("\n"))
    with pytest.raises(FormatError, match="followed directly by #BEGIN_TB"):
        read_traces(d)


def test_xz_name_that_is_not_xz_and_xz_content_under_plain_name(tmp_path):
    d = folder(tmp_path)
    shutil.copy(d / "kernel-1.traceg", d / "kernel-1.traceg.xz")
    (d / "kernelslist.g").write_text("kernel-1.traceg.xz\nkernel-2.traceg\n")
    with pytest.raises(FormatError, match="not an xz file"):
        read_traces(d)
    (d / "kernel-1.traceg.xz").unlink()
    (d / "kernel-1.traceg").write_bytes(lzma.compress((d / "kernel-2.traceg").read_bytes()))
    (d / "kernelslist.g").write_text("kernel-1.traceg\nkernel-2.traceg\n")
    with pytest.raises(FormatError, match="xz-compressed but named"):
        read_traces(d)


def test_missing_trace_names_the_list_line(tmp_path):
    d = folder(tmp_path)
    (d / "kernelslist.g").write_text("MemcpyHtoD,0x1,4\nkernel-1.traceg\nkernel-7.traceg\n")
    with pytest.raises(FormatError) as exc:
        read_traces(d)
    assert exc.value.line == 3 and "kernel-7.traceg does not exist" in str(exc.value)


def test_duplicate_and_missing_kernel_ids(tmp_path, capsys):
    d = folder(tmp_path)
    (d / "kernelslist.g").write_text("kernel-1.traceg\nkernel-2.traceg\nkernel-1.traceg\n")
    with pytest.raises(FormatError, match="both have '-kernel id = 1'"):
        read_traces(d)
    (d / "kernelslist.g").write_text("kernel-1.traceg\nkernel-2.traceg\n")
    text = (d / "kernel-2.traceg").read_text().replace("-kernel id = 2\n", "")
    (d / "kernel-2.traceg").write_text(text)
    wl = read_traces(d)
    assert wl.kernels["kernel_id"].tolist() == [1, 2]
    assert "no '-kernel id' line" in capsys.readouterr().err


def test_folder_without_list_names_other_lists(tmp_path):
    d = folder(tmp_path)
    (d / "kernelslist.g").rename(d / "other.g")
    with pytest.raises(UserError, match="no kernelslist.g in this folder.*other.g"):
        read_traces(d)


def test_many_headers_are_read_in_parallel_and_in_order(tmp_path):
    d = tmp_path / "many"
    d.mkdir()
    lines = []
    for i in range(1, 201):
        # header-only files are enough for reading (bodies are never touched)
        (d / f"kernel-{i}.traceg").write_text(
            header_text(KernelSpec(name=f"_Z1k{i % 7}v", grid=(i, 1, 1)), i) + "#BEGIN_TB\n"
        )
        lines.append(f"kernel-{i}.traceg")
    (d / "kernelslist.g").write_text("\n".join(lines) + "\n")
    tf = scan_folder(d)
    assert [h.kernel_id for h in tf.headers] == list(range(1, 201))
    wl = read_traces(d)
    assert np.array_equal(wl.kernels["grid_x"].to_numpy(), np.arange(1, 201))
