"""apply: sampled trace folders the simulator's grammar accepts; every refusal is one line."""

from __future__ import annotations

import hashlib
import json
import lzma
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from simsample.cli import run as cli_run
from simsample.errors import PlanMismatchError, UserError
from simsample.planfile import Cluster, Plan
from simsample.plugin_base import Sampler
from simsample.workload import from_records
from simsample_accelsim import read_traces
from simsample_accelsim.apply import PLAN_FILE, WEIGHTS_FILE, apply_plan
from simsample_accelsim.kernelslist import parse_kernelslist
from simsample_accelsim.synth import KernelSpec, write_workload
from tests.helpers import shared_path


class _Fixed(Sampler):
    name = "fixed"

    def plan(self, workload, params, seed):  # pragma: no cover - plans are built directly below
        raise NotImplementedError


def make_plan(wl, rows, weights=None, clusters=None) -> Plan:
    rows = list(rows)
    weights = weights or [1.0] * len(rows)
    clusters = clusters or list(range(len(rows)))
    cl = [Cluster(c, f"c{c}", 1, 1, {}, [int(wl.kernels["kernel_id"].iloc[r])]) for r, c in zip(rows, clusters)]
    return Plan.build(
        wl,
        _Fixed(),
        {},
        0,
        metric="none",
        rows=rows,
        weights=weights,
        cluster_of_row=clusters,
        clusters=cl,
        kind="representative",
    )


def tree_digest(folder: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        st = p.lstat()
        h.update(f"{p.relative_to(folder)}:{st.st_size}:{st.st_mtime_ns}".encode())
    return h.hexdigest()


@pytest.fixture(scope="module")
def hetero_plan(tmp_path_factory):
    d = shared_path("simulators", "accelsim", "hetero")
    plan = tmp_path_factory.mktemp("plan") / "plan.json"
    rc = cli_run(
        ["plan", str(d), "--sampler", "explicit", "--param", f"file={d / 'sampled_ids.json'}", "-o", str(plan)]
    )
    assert rc == 0
    return d, plan


def test_hetero_sampled_list_equals_the_reference(hetero_plan, tmp_path):
    d, plan = hetero_plan
    before = tree_digest(d)
    out = tmp_path / "sampled"
    assert (
        cli_run(
            [
                "apply",
                "--sim",
                "accelsim",
                "--plan",
                str(plan),
                "--traces",
                str(d),
                "--out",
                str(out),
                "--warmup",
                "none",
            ]
        )
        == 0
    )
    # only .xz traces are stored: the list names the files that exist (the reference's .xz variant)
    assert (out / "kernelslist.g").read_text() == (d / "kernelslist.sampled.xz.g").read_text()
    assert sorted(p.name for p in out.glob("kernel-*")) == sorted(
        f"kernel-{i}.traceg.xz" for i in (29, 30, 31, 32, 38, 39, 47, 54)
    )
    assert all((out / f"kernel-{i}.traceg.xz").is_symlink() for i in (29, 54))
    weights = pd.read_csv(out / WEIGHTS_FILE)
    assert list(weights.columns) == ["kernel_id", "weight", "cluster", "launch", "trace"]
    assert dict(zip(weights["kernel_id"], weights["weight"])) == {
        29: 4,
        30: 12,
        31: 16,
        32: 4,
        38: 2,
        39: 4,
        47: 8,
        54: 6,
    }
    assert weights["launch"].tolist() == [28, 29, 30, 31, 37, 38, 46, 53]  # 0-based rows of the 1-based ids
    assert weights["trace"].tolist() == [f"kernel-{i}.traceg.xz" for i in (29, 30, 31, 32, 38, 39, 47, 54)]
    assert Plan.read(out / PLAN_FILE).sampled_ids == [29, 30, 31, 32, 38, 39, 47, 54]
    # the simulator's grammar accepts it: same memcpys before each kept kernel, only kernel lines for kernels
    lst = parse_kernelslist(out / "kernelslist.g")
    assert not lst.ignored and len(lst.memcpys) == 8
    assert tree_digest(d) == before  # the input is untouched
    assert read_traces(out).kernels["kernel_id"].tolist() == [29, 30, 31, 32, 38, 39, 47, 54]


def test_uncompressed_copy_reproduces_kernelslist_sampled_g(hetero_plan, tmp_path):
    d, plan = hetero_plan
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "kernelslist.g").write_bytes((d / "kernelslist.g").read_bytes())
    for f in d.glob("kernel-*.traceg.xz"):
        (plain / f.name[:-3]).write_bytes(lzma.decompress(f.read_bytes()))
    out = tmp_path / "sampled"
    assert (
        cli_run(
            [
                "apply",
                "--sim",
                "accelsim",
                "--plan",
                str(plan),
                "--traces",
                str(plain),
                "--out",
                str(out),
                "--copy",
                "--warmup",
                "none",
            ]
        )
        == 0
    )
    assert (out / "kernelslist.g").read_bytes() == (d / "kernelslist.sampled.g").read_bytes()
    assert not (out / "kernel-29.traceg").is_symlink()
    assert (out / "kernel-29.traceg").read_bytes() == (plain / "kernel-29.traceg").read_bytes()


def synth_folder(tmp_path: Path) -> Path:
    d = tmp_path / "traces"
    specs = [
        KernelSpec(name=n, grid=(g, 1, 1), block=(64, 1, 1))
        for n, g in [("_Z4axpyPf", 2), ("_Z4reluPf", 3), ("_Z4axpyPf", 2), ("_Z4gemmPf", 4), ("_Z4reluPf", 3)]
    ]
    write_workload(d, specs, seed=0, memcpys=[(0, 0x1000, 64), (1, 0x2000, 32), (3, 0x3000, 16), (5, 0x4000, 8)])
    with open(d / "kernelslist.g", "a") as fh:
        fh.write("# a comment the simulator ignores\n")
    return d


def test_memcpys_before_kept_kernels_are_kept_in_place(tmp_path):
    d = synth_folder(tmp_path)
    wl = read_traces(d)
    res = apply_plan(make_plan(wl, [1, 3]), d, tmp_path / "out")
    assert (tmp_path / "out" / "kernelslist.g").read_text().splitlines() == [
        "MemcpyHtoD,0x0000000000001000,64",
        "MemcpyHtoD,0x0000000000002000,32",
        "kernel-2.traceg",
        "MemcpyHtoD,0x0000000000003000,16",
        "kernel-4.traceg",
    ]
    assert res.rows == [1, 3] and res.memcpys == 3 and not res.by_position


def test_plan_from_a_profile_applies_by_launch_position(tmp_path, capsys):
    d = synth_folder(tmp_path)
    traces = read_traces(d)
    k = traces.kernels
    prof = from_records(
        {
            "name": ["axpy(float*)", "relu(float*)", "axpy(float*)", "gemm(float*)", "relu(float*)"],
            "grid_x": k["grid_x"].to_numpy(),
            "block_x": k["block_x"].to_numpy(),
            "duration_ns": [5, 6, 5, 9, 6],
        },
        source="profile.sqlite",
        format="nsys",
    )
    assert prof.shape_fingerprint == traces.shape_fingerprint and prof.fingerprint != traces.fingerprint
    plan = make_plan(prof, [3, 4], weights=[2.0, 3.0])
    res = apply_plan(plan, d, tmp_path / "out")
    assert res.by_position and res.rows == [3, 4]
    assert "applied by launch position" in capsys.readouterr().err
    assert read_traces(tmp_path / "out").kernels["kernel_id"].tolist() == [4, 5]
    w = pd.read_csv(tmp_path / "out" / WEIGHTS_FILE)
    assert w["kernel_id"].tolist() == [3, 4] and w["weight"].tolist() == [2, 3]  # the plan's own ids

    other = from_records({"name": ["x"], "grid_x": [1], "block_x": [32], "duration_ns": [1]})
    with pytest.raises(PlanMismatchError):
        apply_plan(make_plan(other, [0]), d, tmp_path / "out2")
    assert not (tmp_path / "out2").exists()


def test_refusals_are_one_line_and_leave_nothing_behind(tmp_path, capsys):
    d = synth_folder(tmp_path)
    plan_path = tmp_path / "plan.json"
    make_plan(read_traces(d), [0, 2]).write(plan_path)

    def apply(*extra, out=None):
        rc = cli_run(
            [
                "apply",
                "--sim",
                "accelsim",
                "--plan",
                str(plan_path),
                "--traces",
                str(d),
                "--out",
                str(out or tmp_path / "o"),
                *extra,
            ]
        )
        err = [ln for ln in capsys.readouterr().err.splitlines() if not ln.startswith("warning:")]
        return rc, err

    assert apply() == (0, [])
    rc, err = apply()
    assert rc == 1 and len(err) == 1 and "not empty" in err[0]
    (tmp_path / "o" / "stray").write_text("x")
    assert apply("--force")[0] == 0
    assert not (tmp_path / "o" / "stray").exists()
    rc, err = apply(out=tmp_path / "with space")
    assert rc == 1 and len(err) == 1 and "contains ' '" in err[0] and not (tmp_path / "with space").exists()
    rc, err = apply(out=d / "inside")
    assert rc == 1 and "overlaps the input" in err[0]
    os.unlink(d / "kernel-3.traceg")
    rc, err = apply(out=tmp_path / "o2")
    assert rc == 1 and len(err) == 1 and "kernel-3.traceg does not exist" in err[0]
    assert not (tmp_path / "o2").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".o")]  # no temporary folders left


def test_failure_while_writing_removes_the_partial_output(tmp_path, monkeypatch):
    d = synth_folder(tmp_path)
    plan = make_plan(read_traces(d), [0, 1, 2])
    import simsample.adapter_support.folders as folders  # the copies are made there

    calls = []

    def broken(src, dst):
        calls.append(dst)
        if len(calls) == 2:
            raise OSError("disk full")
        return Path(dst).write_bytes(Path(src).read_bytes())

    monkeypatch.setattr(folders.shutil, "copy2", broken)
    with pytest.raises(OSError, match="disk full"):
        apply_plan(plan, d, tmp_path / "out", copy=True)
    assert not (tmp_path / "out").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["traces"]


def test_plan_for_other_traces_is_refused(tmp_path):
    d = synth_folder(tmp_path)
    other = tmp_path / "other"
    write_workload(other, [KernelSpec(grid=(9, 1, 1))], seed=0)
    with pytest.raises(UserError, match="make a plan for these inputs"):
        apply_plan(make_plan(read_traces(other), [0]), d, tmp_path / "out")
    doc = json.loads(make_plan(read_traces(d), [0]).dumps())
    assert doc["workload"]["format"] == "accelsim"
    assert np.all(np.isfinite([s["weight"] for s in doc["samples"]]))
