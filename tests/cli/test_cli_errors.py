"""Errors a user can cause: one line on stderr, exit code 1, no traceback."""

from __future__ import annotations

import json

import numpy as np
import pytest

from simsample.cli import run
from simsample.planfile import PLAN_FORMAT_VERSION
from simsample.workload import from_records


def _one_line_error(capsys, *needles):
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    assert out.err.startswith("error: "), out.err
    assert out.err.count("\n") == 1, out.err
    for n in needles:
        assert n in out.err, out.err


@pytest.fixture
def wl_file(tmp_path):
    wl = from_records(
        {"name": ["a", "b"] * 50, "grid_x": [1] * 100, "block_x": [32] * 100, "duration_ns": np.arange(100) + 1}
    )
    wl.to_parquet(tmp_path / "w.parquet")
    return tmp_path / "w.parquet"


def test_empty_file(tmp_path, capsys):
    (tmp_path / "empty.sqlite").write_bytes(b"")
    assert run(["profile", "info", str(tmp_path / "empty.sqlite")]) == 1
    _one_line_error(capsys, "empty")


def test_directory_where_a_file_is_expected(tmp_path, capsys, wl_file):
    assert run(["plan", str(wl_file), "--sampler", "random", "-o", str(tmp_path)]) == 1
    _one_line_error(capsys, "is a directory")
    assert run(["estimate", "--plan", str(tmp_path), str(wl_file)]) == 1
    _one_line_error(capsys, "is a directory")


def test_unknown_format_and_missing_file(tmp_path, capsys):
    (tmp_path / "x.bin").write_bytes(b"\x00\x01garbage")
    assert run(["profile", "info", str(tmp_path / "x.bin")]) == 1
    _one_line_error(capsys, "unrecognised file format", "--format")
    assert run(["profile", "info", str(tmp_path / "nope.csv")]) == 1
    _one_line_error(capsys, "no such file")


def test_newer_plan(tmp_path, capsys, wl_file):
    assert run(["plan", str(wl_file), "--sampler", "random", "-o", str(tmp_path / "p.json")]) == 0
    doc = json.loads((tmp_path / "p.json").read_text())
    doc["simsample_plan"] = PLAN_FORMAT_VERSION + 1
    (tmp_path / "p.json").write_text(json.dumps(doc))
    (tmp_path / "v.csv").write_text("kernel_id,value\n0,1\n")
    capsys.readouterr()
    assert run(["estimate", "--plan", str(tmp_path / "p.json"), str(tmp_path / "v.csv")]) == 1
    _one_line_error(capsys, "newer", "upgrade simsample")


def test_unknown_sampler_and_adapter(capsys, wl_file, tmp_path):
    assert run(["plan", str(wl_file), "--sampler", "nope", "-o", str(tmp_path / "p.json")]) == 1
    _one_line_error(capsys, "no sampler named nope; installed:")
    assert run(["apply", "--sim", "nosuchsim", "--plan", "p.json"]) == 1
    _one_line_error(capsys, "no adapter named nosuchsim; installed:")


def test_usage_errors_exit_1(capsys):
    assert run(["plan"]) == 1
    _one_line_error(capsys, "Missing argument")
    assert run(["no-such-command"]) == 1
    _one_line_error(capsys, "No such command")


def test_bad_param_syntax(capsys, wl_file, tmp_path):
    assert run(["plan", str(wl_file), "--sampler", "random", "--param", "rate", "-o", str(tmp_path / "p.json")]) == 1
    _one_line_error(capsys, "expected NAME=VALUE")
    assert not (tmp_path / "p.json").exists()


def test_internal_errors_exit_2(monkeypatch, capsys, wl_file, tmp_path):
    from simsample.plugins.samplers.random import RandomSampler

    def boom(*a, **k):
        raise ZeroDivisionError("oops")

    monkeypatch.setattr(RandomSampler, "plan", boom)
    assert run(["plan", str(wl_file), "--sampler", "random", "-o", str(tmp_path / "p.json")]) == 2
    err = capsys.readouterr().err
    assert "internal error: ZeroDivisionError" in err and "Traceback" not in err


def test_delegated_commands_need_a_simulator(capsys):
    assert run(["apply", "--sim=nosuchsim", "--plan", "p.json"]) == 1
    _one_line_error(capsys, "no adapter named nosuchsim")
    assert run(["collect", "--plan", "p.json", "log"]) == 1
    _one_line_error(capsys, "needs --sim NAME")
    assert run(["apply", "--sim"]) == 1
    _one_line_error(capsys, "--sim needs a simulator name")
