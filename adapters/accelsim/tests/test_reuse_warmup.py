"""The reuse-window warm-up and the choice of functional warm-up by the simulator found."""

from __future__ import annotations

import stat
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from adapters.accelsim.tests.test_accelsim_apply import make_plan
from simsample.cli import run as cli_run
from simsample.errors import UserError
from simsample_accelsim import read_traces
from simsample_accelsim.simulator import ORDER_MARK, PATCH_MARK, find_simulator, is_patched, patch_revision
from simsample_accelsim.synth import KernelSpec, write_workload
from simsample_accelsim.warmup import DEFAULT_L2_LINES, l2_lines_of_configs, parse_warmup, reuse_window


def _table(lines_of):
    def footprint(row):
        reads = np.array(sorted(lines_of[row]), np.uint64)
        return reads, np.zeros(0, np.uint64), 10

    return footprint


@given(st.lists(st.sets(st.integers(0, 60), max_size=12), min_size=2, max_size=25), st.data())
def test_window_goes_back_until_the_l2_has_turned_over(lines_of, data):
    n = len(lines_of)
    samples = sorted(data.draw(st.sets(st.integers(0, n - 1), min_size=1, max_size=5)))
    l2 = data.draw(st.integers(1, 30))
    reach = data.draw(st.sampled_from([0.5, 1.0, 1.5]))
    for shared in (True, False):
        out = reuse_window(samples, _table(lines_of), l2_lines=l2, reach=reach, shared=shared)
        for s in samples:
            # a reference walk: launches back from s until the distinct lines they touched reach the limit
            seen: set[int] = set()
            expected = []
            for j in range(s - 1, -1, -1):
                expected.append(j)
                seen |= lines_of[j]
                if len(seen) >= reach * l2:
                    break
            if shared:
                expected = [j for j in expected if j not in samples]
            assert out[s] == sorted(expected)


def test_window_of_a_small_workload_is_everything_before_the_sample():
    lines_of = [{i} for i in range(10)]
    out = reuse_window([4, 9], _table(lines_of), l2_lines=DEFAULT_L2_LINES)
    assert out == {4: [0, 1, 2, 3], 9: [0, 1, 2, 3, 5, 6, 7, 8]}


def test_tracer_selection_window_follows_applys_warmup_setting():
    from simsample_accelsim.selection import window_of

    assert [window_of(w, 7) for w in ("auto", "reuse", "targeted", "3", "none", "0")] == [7, 7, 7, 3, 0, 0]
    with pytest.raises(UserError, match="'reuse'"):
        window_of("lots", 7)


def test_window_refuses_nonsense():
    with pytest.raises(UserError, match="reach"):
        reuse_window([1], _table([{0}, {1}]), l2_lines=10, reach=0)
    with pytest.raises(UserError, match="L2 holds 0 lines"):
        reuse_window([1], _table([{0}, {1}]), l2_lines=0)


def test_l2_lines_from_the_config(tmp_path):
    cfg = tmp_path / "gpgpusim.config"
    cfg.write_text(
        "-gpgpu_n_mem 32\n-gpgpu_n_sub_partition_per_mchannel 2 \n"
        "-gpgpu_cache:dl2 S:32:128:24,L:B:m:L:P,A:192:4,32:0,32\n"
    )
    assert l2_lines_of_configs([cfg]) == DEFAULT_L2_LINES == 32 * 24 * 64  # SM7_QV100: 6 MiB
    half = tmp_path / "half.config"
    half.write_text("-gpgpu_n_mem 16\n")
    assert l2_lines_of_configs([cfg, half]) == DEFAULT_L2_LINES // 2
    bad = tmp_path / "bad.config"
    bad.write_text("-gpgpu_cache:dl2 lots\n")
    with pytest.raises(UserError, match="SETS:LINE:WAYS"):
        l2_lines_of_configs([bad])
    assert parse_warmup("reuse").reuse and not parse_warmup("reuse").targeted and not parse_warmup("reuse").none


def _binary(path: Path, patched: bool | int, pad: int = 0) -> Path:
    """An accel-sim.out look-alike: the strings a real build's trace-driven code holds (the option
    table is in libcudart.so, so a real patched accel-sim.out never holds the option name)."""
    revision = (2 if patched else 0) if isinstance(patched, bool) else patched
    marks = {
        0: b"Processing kernel %s\0",
        1: PATCH_MARK + b" %s: %llu warp insts\0",
        2: PATCH_MARK + b" " + ORDER_MARK + b"\n\0",
    }
    body = b"\x7fELF" + b"\0" * pad + marks[min(revision, 1)] + (marks[2] if revision >= 2 else b"") + b"\0" * 64
    path.write_bytes(body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.mark.parametrize("pad", [0, (1 << 20) - 5, (1 << 20) + 3, (1 << 20) - 40])
def test_patch_found_wherever_it_lies_in_the_binary(tmp_path, pad):
    assert is_patched(_binary(tmp_path / "a.out", True, pad))  # across the 1 MiB read boundary too
    assert not is_patched(_binary(tmp_path / "b.out", False, pad))
    assert patch_revision(_binary(tmp_path / "c.out", 1, pad)) == 1
    assert patch_revision(_binary(tmp_path / "d.out", 2, pad)) == 2


def test_a_binary_with_only_the_option_name_is_not_taken_for_patched(tmp_path):
    """The option's name lives in GPGPU-Sim's libcudart.so; what plays warm-up lines is the
    trace-driven code in accel-sim.out. Looking for the option name found no real patched build."""
    lib = tmp_path / "libcudart.so"
    lib.write_bytes(b"\x7fELF" + b"-functional_warmup\0play the global accesses\0")
    assert patch_revision(lib) == 0


def test_simulator_found_by_option_environment_then_path(tmp_path, monkeypatch):
    monkeypatch.delenv("ACCELSIM_ROOT", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    assert find_simulator() is None
    on_path = tmp_path / "bin"
    on_path.mkdir()
    _binary(on_path / "accel-sim.out", False)
    monkeypatch.setenv("PATH", str(on_path))
    sim = find_simulator()
    assert sim is not None and sim.how == "PATH" and not sim.patched
    root = tmp_path / "root"
    (root / "bin" / "release").mkdir(parents=True)
    _binary(root / "bin" / "release" / "accel-sim.out", True)
    monkeypatch.setenv("ACCELSIM_ROOT", str(root))
    sim = find_simulator()
    assert sim is not None and sim.how == "$ACCELSIM_ROOT" and sim.patched
    given = _binary(tmp_path / "mine.out", False)
    assert find_simulator(given).how == "--accelsim"
    with pytest.raises(UserError, match="no such file"):
        find_simulator(tmp_path / "missing.out")


def _folder(tmp_path: Path) -> Path:
    specs = [
        KernelSpec(f"_Z1{c}Pf", grid=(4, 1, 1), block=(64, 1, 1), base_address=0x7F0000000000 + i * (1 << 20))
        for i, c in enumerate("abcdef")
    ]
    folder = tmp_path / "traces"
    write_workload(folder, specs, memcpys=[(0, 0x7F0000000000, 4096)])
    return folder


def test_apply_auto_is_functional_reuse_with_a_patched_build_and_targeted_without(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("ACCELSIM_ROOT", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    folder = _folder(tmp_path)
    plan = make_plan(read_traces(folder, quiet=True), [2, 5])
    plan.write(tmp_path / "plan.json")
    base = ["apply", "--sim", "accelsim", "--plan", str(tmp_path / "plan.json"), "--traces", str(folder)]

    assert (
        cli_run([*base, "--out", str(tmp_path / "p"), "--accelsim", str(_binary(tmp_path / "patched.out", True))]) == 0
    )
    err = capsys.readouterr().err
    cmds = (tmp_path / "p" / "kernelslist.g").read_text().splitlines()
    # every launch before each sample (a tiny workload never turns the L2 over), replayed functionally
    assert [c for c in cmds if not c.startswith("Memcpy")] == [
        "warmup kernel-1.traceg",
        "warmup kernel-2.traceg",
        "kernel-3.traceg",
        "warmup kernel-4.traceg",
        "warmup kernel-5.traceg",
        "kernel-6.traceg",
    ]
    assert "is patched: functional warm-up" in err and "-functional_warmup 1" in err

    # a build of the first warm-up patch: functional still, with the rebuild named in one line
    assert cli_run([*base, "--out", str(tmp_path / "o"), "--accelsim", str(_binary(tmp_path / "first.out", 1))]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "first warm-up patch" in err[0] and "rebuild it with the current" in err[0]
    assert any(c.startswith("warmup ") for c in (tmp_path / "o" / "kernelslist.g").read_text().splitlines())

    assert (
        cli_run([*base, "--out", str(tmp_path / "u"), "--accelsim", str(_binary(tmp_path / "plain.out", False))]) == 0
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("warning: ") and "lacks simsample's warm-up patch" in err[-1]
    cmds = (tmp_path / "u" / "kernelslist.g").read_text().splitlines()
    assert not any(c.startswith("warmup ") for c in cmds)

    assert cli_run([*base, "--out", str(tmp_path / "n")]) == 0
    assert "no Accel-Sim found" in capsys.readouterr().err
    assert (
        cli_run(
            [
                *base,
                "--out",
                str(tmp_path / "r"),
                "--warmup",
                "reuse",
                "--warmup-mode",
                "functional",
                "--warmup-reach",
                "0",
            ]
        )
        == 1
    )
    assert "--warmup-reach" in capsys.readouterr().err


def test_outputs_never_hold_the_configs_or_the_plan(tmp_path, capsys):
    folder = _folder(tmp_path)
    plan = make_plan(read_traces(folder, quiet=True), [2, 5])
    cfgdir = tmp_path / "cfg"
    cfgdir.mkdir()
    cfg = cfgdir / "gpgpusim.config"
    cfg.write_text("-gpgpu_n_clusters 4\n")
    plan.write(cfgdir / "plan.json")
    before = {p.name: p.read_bytes() for p in cfgdir.iterdir()}
    base = [
        "apply",
        "--sim",
        "accelsim",
        "--plan",
        str(cfgdir / "plan.json"),
        "--traces",
        str(folder),
        "--warmup",
        "none",
    ]
    # with --force, OUT would be replaced: the folder holding the plan and the config is refused
    for extra in ([], ["--warmup-config", str(cfg)]):
        assert cli_run([*base, *extra, "--out", str(cfgdir), "--force"]) == 1
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "overlaps the input" in err[0]
    assert cli_run(["profile", "features", "--sim", "accelsim", str(folder), "-o", str(cfg), "--config", str(cfg)]) == 1
    assert "the input" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in cfgdir.iterdir()} == before


def test_previous_samples_gives_up_to_count_sampled_rows_before_each():
    from simsample_accelsim.split import previous_samples

    assert previous_samples([9, 2, 5, 7], 1) == {5: (2,), 7: (5,), 9: (7,)}
    assert previous_samples([9, 2, 5, 7], 2) == {5: (2,), 7: (2, 5), 9: (5, 7)}
    assert previous_samples([9, 2, 5, 7, 11]) == {5: (2,), 7: (2, 5), 9: (2, 5, 7), 11: (5, 7, 9)}  # three by default
    assert previous_samples([2, 5], 0) == {}


def test_split_jobs_run_the_chosen_number_of_previous_samples_in_detail(tmp_path, capsys):
    folder = _folder(tmp_path)
    plan = make_plan(read_traces(folder, quiet=True), [0, 1, 3, 5])
    plan.write(tmp_path / "plan.json")
    base = [
        "apply",
        "--sim",
        "accelsim",
        "--plan",
        str(tmp_path / "plan.json"),
        "--traces",
        str(folder),
        "--split",
        "--warmup",
        "reuse",
        "--warmup-mode",
        "functional",
    ]
    assert cli_run([*base, "--out", str(tmp_path / "d2"), "--split-detailed", "2"]) == 0
    last = (tmp_path / "d2" / "jobs" / "k6" / "kernelslist.g").read_text().splitlines()
    assert [c for c in last if not c.startswith("Memcpy")] == [
        "warmup kernel-1.traceg",
        "kernel-2.traceg",
        "warmup kernel-3.traceg",
        "kernel-4.traceg",
        "warmup kernel-5.traceg",
        "kernel-6.traceg",
    ]
    assert cli_run([*base, "--out", str(tmp_path / "d1"), "--split-detailed", "1"]) == 0
    last = (tmp_path / "d1" / "jobs" / "k6" / "kernelslist.g").read_text().splitlines()
    assert [c for c in last if c.startswith("kernel")] == ["kernel-4.traceg", "kernel-6.traceg"]
    assert cli_run([*base, "--out", str(tmp_path / "d3")]) == 0  # the default: the three before
    last = (tmp_path / "d3" / "jobs" / "k6" / "kernelslist.g").read_text().splitlines()
    assert [c for c in last if c.startswith("kernel")] == [
        "kernel-1.traceg",
        "kernel-2.traceg",
        "kernel-4.traceg",
        "kernel-6.traceg",
    ]
    capsys.readouterr()
    assert cli_run([*base, "--out", str(tmp_path / "bad"), "--split-detailed", "-1"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--split-detailed -1" in err[0] and not (tmp_path / "bad").exists()


def test_both_adapters_read_the_warmup_choice_alike():
    from simsample.adapter_support.warmup import warmup_choice
    from simsample_macsim.warmup import parse_warmup as macsim_warmup

    assert [warmup_choice(t, ("targeted", "reuse")) for t in (" Reuse", "targeted", "none", "3", 0)] == [
        "reuse",
        "targeted",
        0,
        3,
        0,
    ]
    assert parse_warmup("reuse").reuse and parse_warmup("2").k == 2 and parse_warmup("none").k == 0
    assert macsim_warmup("targeted").k is None and macsim_warmup("none").k == 0
    with pytest.raises(UserError, match="'none', 'targeted'$"):
        macsim_warmup("reuse")  # MacSim has no reuse window: named choices are its own
    with pytest.raises(UserError, match="'none', 'targeted', 'reuse'"):
        parse_warmup("soon")
    with pytest.raises(UserError, match="K must be >= 0"):
        warmup_choice("-1", ())
