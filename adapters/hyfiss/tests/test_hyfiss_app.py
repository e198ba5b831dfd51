"""HyFiSS application folders: reading app.config / issue.config / instn.config, and refusing bad ones."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from simsample.cli import run
from simsample.errors import FormatError, UserError
from tests.helpers import shared_path

pytest.importorskip("simsample_hyfiss")

from adapters.macsim.tests.test_macsim_reader import folder_hash  # noqa: E402
from simsample_hyfiss.app import (  # noqa: E402
    parse_app_config,
    parse_instn_config,
    parse_issue_config,
    with_sampling_points,
)
from simsample_hyfiss.reader import HyFiSSReader, count_lines, load_app  # noqa: E402
from simsample_hyfiss.units import unit_class  # noqa: E402

APP = ("simulators", "hyfiss", "synthetic_app")


def copy_app(tmp_path: Path) -> Path:
    """A private copy of the synthetic app (for tests that change it)."""
    dst = tmp_path / "app"
    shutil.copytree(shared_path(*APP), dst)
    return dst


def test_synthetic_app_workload():
    wl = load_app(shared_path(*APP)).workload
    k = wl.kernels
    assert k["kernel_id"].tolist() == [1, 2]  # 1-based, as in app.config
    assert [str(n) for n in k["name"]] == ["synth_k1", "synth_k2"]
    assert k[["grid_x", "grid_y", "grid_z"]].to_numpy().tolist() == [[2, 1, 1], [2, 1, 1]]
    assert k[["block_x", "block_y", "block_z"]].to_numpy().tolist() == [[32, 1, 1], [32, 1, 1]]
    assert k["regs"].tolist() == [16, 16] and k["shmem"].tolist() == [0, 0] and k["stream"].tolist() == [0, 0]
    assert k["static_insts"].tolist() == [5, 5]  # instn.config lines per kernel
    assert k["ctas"].tolist() == [2, 2] and k["sms"].tolist() == [2, 2]
    assert k["warp_insts"].tolist() == [2 * 11, 2 * 38]  # lines of the two .sass files per kernel
    assert not wl.timed and wl.default_metric() == "warp_insts"


def test_detect():
    app = shared_path(*APP)
    r = HyFiSSReader()
    assert r.detect(app, b"")
    assert r.detect(app / "configs", b"")
    cfg = app / "configs" / "app.config"
    assert r.detect(cfg, cfg.read_bytes())
    assert not r.detect(app / "sass_traces", b"")


def test_plan_and_profile_info_through_the_cli(tmp_path, capsys):
    app = shared_path(*APP)
    assert run(["profile", "info", str(app), "--json"]) == 0
    assert '"launches": 2' in capsys.readouterr().out
    assert run(["plan", str(app), "--sampler", "random", "--param", "count=1", "-o", str(tmp_path / "p.json")]) == 0


def test_issue_and_instn_config():
    app = shared_path(*APP)
    sched = parse_issue_config(app / "configs" / "issue.config")
    assert sched.blocks(1) == {0: 0, 1: 1} and sched.blocks(2) == {0: 0, 1: 1}
    instn = parse_instn_config(app / "configs" / "instn.config")
    assert instn.opcode[1] == {0x0: "IADD3", 0x10: "FFMA", 0x20: "IADD3", 0x28: "LDG", 0x30: "EXIT"}


@pytest.mark.parametrize(
    "text, message",
    [
        ("-app_kernels_id 1,3\n-kernel_1_kernel_name a\n", "position 2 holds 3, so kernel 2 is missing"),
        ("-app_kernels_id 2\n", "position 1 holds 2"),
        ("-app_kernels_id 1,2,\n", "comma-separated list of numbers"),
        ("-device_concurrentKernels 0\n", "no -app_kernels_id"),
        ("-app_kernels_id 1\n-kernel_2_kernel_name x\n", "kernel 2 is not in -app_kernels_id"),
        ("-app_kernels_id 1\n-kernel_1_kernel_name x\n-kernel_1_grid_dim_x two\n", "expected a whole number"),
        ("-app_kernels_id 1\n-kernel_1_kernel_name x\n-kernel_1_grid_dim_x 1\n", "has no -kernel_1_grid_dim_y line"),
    ],
)
def test_bad_app_configs(tmp_path, text, message):
    p = tmp_path / "app.config"
    p.write_text(text)
    with pytest.raises(FormatError, match=message):
        parse_app_config(p)


def test_hash_lines_are_skipped_like_hyfiss_does(tmp_path):
    p = tmp_path / "app.config"
    dims = "".join(
        f"-kernel_1_{k} 1\n" for k in ("grid_dim_x", "grid_dim_y", "grid_dim_z", "tb_dim_x", "tb_dim_y", "tb_dim_z")
    )
    p.write_text(
        "# generated\n-app_kernels_id 1\n-kernel_1_kernel_name real\n-kernel_1_kernel_name old # not this\n" + dims
    )
    assert parse_app_config(p).kernels[0].name == "real"


def test_gap_in_kernel_ids_through_the_cli(tmp_path, capsys):
    app = copy_app(tmp_path)
    good_plan = tmp_path / "good.json"
    assert run(["plan", str(app), "--sampler", "random", "-o", str(good_plan)]) == 0
    cfg = app / "configs" / "app.config"
    cfg.write_text(cfg.read_text().replace("-app_kernels_id 1,2", "-app_kernels_id 1,3"))
    before = folder_hash(app)
    plan, out = tmp_path / "plan.json", tmp_path / "out"
    capsys.readouterr()
    for args in (
        ["profile", "info", str(app)],
        ["plan", str(app), "--sampler", "random", "-o", str(plan)],
        ["apply", "--sim", "hyfiss", "--plan", str(good_plan), "--traces", str(app), "--out", str(out)],
    ):
        assert run(args) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "app.config, line 1: kernel ids must run 1..N without gaps" in err
    assert folder_hash(app) == before and not plan.exists() and not out.exists()


def test_bad_issue_configs(tmp_path):
    p = tmp_path / "issue.config"
    p.write_text("-trace_issued_sm_id_0 2,0,(1,0,0),\n")
    with pytest.raises(FormatError, match="says 2 CTAs but lists 1"):
        parse_issue_config(p)
    p.write_text("-trace_issued_sm_id_0 1,0,(1,0,0),\n-trace_issued_sm_id_1 1,1,(1,0,5),\n")
    with pytest.raises(FormatError, match="placed twice"):
        parse_issue_config(p)
    p.write_text("-trace_issued_sms_num 2\n-trace_issued_sm_id_0 1,0,(1,0,0),\n-trace_issued_sms_vector 0,\n")
    with pytest.raises(FormatError, match="says 2 SMs but 1 have CTA lines"):
        parse_issue_config(p)


def test_sampling_points_rewrite_keeps_every_other_line(tmp_path):
    app = shared_path(*APP)
    cfg = parse_app_config(app / "configs" / "app.config")
    text = with_sampling_points(cfg, {1: 7})
    old = (app / "configs" / "app.config").read_text().splitlines()
    new = text.splitlines()
    assert len(new) == len(old)
    diff = [(a, b) for a, b in zip(old, new) if a != b]
    assert diff == [("-kernel_1_sampling_point 0", "-kernel_1_sampling_point 7")]
    # a kernel without the line gets one after its last entry
    p = tmp_path / "app.config"
    p.write_text("\n".join(line for line in old if "sampling_point" not in line) + "\n")
    text = with_sampling_points(parse_app_config(p), {1: 3, 2: 1})
    again = parse_app_config(_write(tmp_path / "b.config", text))
    assert [k.sampling_point for k in again.kernels] == [3, 1]
    assert (
        text.splitlines().index("-kernel_1_sampling_point 3")
        == text.splitlines().index("-kernel_1_local_base_addr 0") + 1
    )


def _write(p: Path, text: str) -> Path:
    p.write_text(text)
    return p


def test_unit_classes():
    assert unit_class("FFMA") == "sp" and unit_class("HFMA2.MMA") == "sp"
    assert unit_class("LDG.E.SYS") == "ldst" and unit_class("STS.128") == "ldst" and unit_class("TEX") == "ldst"
    assert unit_class("MUFU.EX2") == "sfu" and unit_class("DFMA") == "dp" and unit_class("HMMA.884.F32") == "tensor"
    assert unit_class("IADD3") == "int" and unit_class("EXIT") == "int" and unit_class("SOMETHING_NEW") == "int"


def test_count_lines(tmp_path):
    p = tmp_path / "f"
    for data, n in ((b"", 0), (b"a\n", 1), (b"a\nb", 2), (b"a\nb\n", 2)):
        p.write_bytes(data)
        assert count_lines(p) == n


def test_missing_app_folder_parts(tmp_path):
    with pytest.raises(UserError, match="no configs/app.config"):
        load_app(tmp_path)


def test_profile_features_counts_instructions_per_unit_class(tmp_path, capsys):
    out = tmp_path / "f.parquet"
    assert run(["profile", "features", "--sim", "hyfiss", str(shared_path(*APP)), "-o", str(out)]) == 0
    from simsample.workload import Workload

    k = Workload.from_parquet(out).kernels
    # per block: kernel 1 runs IADD3 x6 + EXIT (int 7), FFMA x3 (sp), LDG x1 (ldst); two blocks
    assert (
        k["insts_int"].tolist() == [14, 50] and k["insts_sp"].tolist() == [6, 24] and k["insts_ldst"].tolist() == [2, 2]
    )
    assert (k["insts_int"] + k["insts_sp"] + k["insts_ldst"]).tolist() == k["warp_insts"].tolist()
