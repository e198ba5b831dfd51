"""``simsample hyfiss pick-sm``: HyFiSS's SM sampling by CTA-sets, checked against hand computations.

The device configuration is written here, with values of our own (HyFiSS's DEV-Def files are
not redistributable):

    IRate (-gpgpu_num_sched_per_sm)     = 2
    sp:   4 units, latency 5            int:  1 unit,  latency 3
    ldst: 8 units, latency 4 (L1 hit)   sfu:  2 units, latency 20 (GPGPU-Sim style key)

    C_i      = N_i / units_i + (latency_i - 1)
    C_fullIR = max_i C_i * units_i / min(units_i, IRate)

The synthetic app: each kernel has two CTAs, block 0 on SM 0 and block 1 on SM 1. Per block,
kernel 1 runs pc 0 (IADD3), 10 (FFMA), 20 (IADD3) three times each, then 28 (LDG) and 30 (EXIT)
once; kernel 2 the same with twelve repetitions. EXIT counts as int.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from simsample.cli import run
from simsample.errors import UserError
from tests.helpers import shared_path

pytest.importorskip("simsample_hyfiss")

from adapters.hyfiss.tests.test_hyfiss_app import APP, copy_app  # noqa: E402
from adapters.macsim.tests.test_macsim_reader import folder_hash  # noqa: E402
from simsample_hyfiss.app import find_app, parse_app_config, parse_instn_config, parse_issue_config  # noqa: E402
from simsample_hyfiss.device import read_device  # noqa: E402
from simsample_hyfiss.picksm import c_full_issue_rate, pick_kernel  # noqa: E402

DEVICE = """\
# a small made-up device for the tests
-gpgpu_num_clusters 4
-gpgpu_num_sms_per_cluster 1
-gpgpu_num_sched_per_sm 2
-gpgpu_num_sp_units 4
-gpgpu_num_int_units 1
-gpgpu_num_mem_units 8
-gpgpu_num_sfu_units 2
-gpgpu_trace_opcode_latency_initiation_sp 5,1
-gpgpu_trace_opcode_latency_initiation_int 3,1
-gpgpu_opcode_latency_sfu 20
-gpgpu_l1d_latency 4   # L1 hit latency stands for the load/store units
"""

# Kernel 1, one block per SM: int = 3 + 3 + 1 = 7, sp = 3, ldst = 1
#   int:  (7/1 + 2) * 1 / min(1, 2) =  9.0
#   sp:   (3/4 + 4) * 4 / min(4, 2) =  9.5
#   ldst: (1/8 + 3) * 8 / min(8, 2) = 12.5   -> C_fullIR = 12.5 on both SMs; tie -> SM 0
K1 = 12.5
# Kernel 2, one block per SM: int = 12 + 12 + 1 = 25, sp = 12, ldst = 1
#   int:  (25/1 + 2) * 1 / 1        = 27.0
#   sp:   (12/4 + 4) * 4 / 2        = 14.0
#   ldst: 12.5                               -> C_fullIR = 27.0 on both SMs; tie -> SM 0
K2 = 27.0


@pytest.fixture
def device(tmp_path) -> Path:
    p = tmp_path / "TEST.config"
    p.write_text(DEVICE)
    return p


def _pick(app: Path, device: Path, k: int):
    paths = find_app(app)
    return pick_kernel(
        paths, k, parse_issue_config(paths.issue_config), parse_instn_config(paths.instn_config), read_device(device)
    )


def test_device_config(device):
    d = read_device(device)
    assert d.issue_rate == 2 and d.sms == 4
    assert (d.classes["sp"].units, d.classes["sp"].latency) == (4, 5)
    assert (d.classes["sfu"].units, d.classes["sfu"].latency) == (2, 20)  # from -gpgpu_opcode_latency_sfu
    assert (d.classes["ldst"].units, d.classes["ldst"].latency) == (8, 4)
    assert d.classes["dp"] is None and d.classes["tensor"] is None
    with pytest.raises(UserError, match="class dp need -gpgpu_num_dp_units"):
        c_full_issue_rate({"dp": 1}, d)
    assert c_full_issue_rate({"dp": 0, "int": 0}, d) == 0.0  # classes without work do not count


def test_synthetic_app_by_hand(device):
    app = shared_path(*APP)
    p1, p2 = _pick(app, device, 1), _pick(app, device, 2)
    assert [(s.sm, s.ctas, s.counts["int"], s.counts["sp"], s.counts["ldst"]) for s in p1.sms] == [
        (0, 1, 7, 3, 1),
        (1, 1, 7, 3, 1),
    ]
    assert [s.c_full_ir for s in p1.sms] == [K1, K1]
    assert [(s.counts["int"], s.counts["sp"], s.counts["ldst"]) for s in p2.sms] == [(25, 12, 1), (25, 12, 1)]
    assert [s.c_full_ir for s in p2.sms] == [K2, K2]
    assert (p1.sm, p2.sm) == (0, 0)  # ties go to the lowest SM id


def test_a_heavier_cta_set_wins(tmp_path, device):
    app = copy_app(tmp_path)
    # kernel 1: eight more FFMAs in block 1 -> sp = 11 on SM 1:
    #   sp: (11/4 + 4) * 4 / 2 = 13.5 > 12.5 (ldst)          -> SM 1 wins with 13.5
    trace = app / "sass_traces" / "kernel-1" / "kernel_1_block_1.sass"
    trace.write_text(trace.read_text() + "10 ! 1\n" * 8)
    # kernel 2: both CTAs on SM 3 -> int = 50, sp = 24, ldst = 2:
    #   int: (50 + 2) * 1 / 1 = 52; sp: (6 + 4) * 4 / 2 = 20; ldst: (2/8 + 3) * 8 / 2 = 13 -> 52
    (app / "configs" / "issue.config").write_text(
        "-trace_issued_sms_num 3\n"
        "-trace_issued_sm_id_0 1,0,(1,0,0),\n"
        "-trace_issued_sm_id_1 1,1,(1,1,0),\n"
        "-trace_issued_sm_id_3 2,3,(2,0,10),(2,1,1a),\n"
        "-trace_issued_sms_vector 0,1,3,\n"
    )
    p1, p2 = _pick(app, device, 1), _pick(app, device, 2)
    assert {s.sm: s.c_full_ir for s in p1.sms} == {0: 12.5, 1: 13.5} and p1.sm == 1
    assert [(s.sm, s.ctas, s.c_full_ir) for s in p2.sms] == [(3, 2, 52.0)] and p2.sm == 3


def test_pick_sm_command_writes_a_copy_of_app_config(tmp_path, device, capsys):
    app = copy_app(tmp_path)
    trace = app / "sass_traces" / "kernel-2" / "kernel_2_block_1.sass"
    trace.write_text(trace.read_text() + "0 ! 1\n")  # kernel 2: int 26 on SM 1 -> 28 > 27
    before = folder_hash(app)
    out = tmp_path / "app.picked.config"
    assert run(["hyfiss", "pick-sm", str(app), "--device-config", str(device), "-o", str(out), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [(k["kernel"], k["sampling_point"], k["previous"]) for k in doc["kernels"]] == [(1, 0, 0), (2, 1, 0)]
    assert [s["c_full_ir"] for s in doc["kernels"][1]["sms"]] == [27.0, 28.0]
    assert folder_hash(app) == before  # the app is never modified
    picked = parse_app_config(out)
    assert [k.sampling_point for k in picked.kernels] == [0, 1]
    # refuses to overwrite the app's own app.config
    assert (
        run(["hyfiss", "pick-sm", str(app), "--device-config", str(device), "-o", str(app / "configs" / "app.config")])
        == 1
    )
    assert "inputs are never modified" in capsys.readouterr().err
    assert folder_hash(app) == before
    # the table form, one kernel
    assert run(["hyfiss", "pick-sm", str(app), "--device-config", str(device), "--kernels", "2"]) == 0
    assert "synth_k2" in capsys.readouterr().out


@pytest.mark.parametrize(
    "change, message",
    [
        (
            lambda app: (app / "sass_traces" / "kernel-1" / "kernel_1_block_0.sass").write_text("0 ! 0\n99 ! 0\n"),
            "pc 99 of kernel 1 is not in instn.config",
        ),
        (
            lambda app: (app / "sass_traces" / "kernel-1" / "kernel_1_block_0.sass").write_text("0 ! 0\n10 !\n"),
            "ends in the middle",
        ),
        (
            lambda app: (app / "sass_traces" / "kernel-1" / "kernel_1_block_1.sass").unlink(),
            "block 1 of kernel 1 is scheduled but has no trace",
        ),
        (lambda app: shutil.rmtree(app / "sass_traces" / "kernel-1"), "kernel 1 has no split SASS traces"),
        (
            lambda app: (app / "configs" / "issue.config").write_text("-trace_issued_sm_id_9 2,9,(1,0,0),(1,1,0),\n"),
            "SM 9, but TEST.config has 4 SMs",
        ),
    ],
)
def test_pick_sm_refuses_inconsistent_apps(tmp_path, device, change, message, capsys):
    app = copy_app(tmp_path)
    change(app)
    assert run(["hyfiss", "pick-sm", str(app), "--device-config", str(device), "--kernels", "1"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err
