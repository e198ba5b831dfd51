"""The plugin host: registration, isolation of broken plugins, entry points, hookspec docs."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from simsample import hookspecs
from simsample.cli import run
from simsample.manager import PluginHost, builtin_plugins
from simsample.sdk import Param, Plan, Sampler, hookimpl, make_cluster

ROOT = Path(__file__).resolve().parents[2]


class FirstOnly(Sampler):
    name = "first-only"
    description = "the first launch, weight N"
    params = (Param("unused", int, 3, "nothing"),)

    def plan(self, workload, params, seed):
        n = len(workload)
        values = workload.values()
        ids = workload.kernels["kernel_id"].to_numpy()
        c = make_cluster(0, "all", np.arange(n), np.array([0]), values, ids)
        return Plan.build(
            workload,
            self,
            params,
            seed,
            metric=workload.default_metric(),
            rows=[0],
            weights=[float(n)],
            cluster_of_row=[0],
            clusters=[c],
            kind="representative",
        )


class GoodPlugin:
    @hookimpl
    def register_samplers(self, register):
        register(FirstOnly())


class RaisingPlugin:
    @hookimpl
    def register_samplers(self, register):
        raise ValueError("cannot register")


class MisspelledPlugin:
    @hookimpl
    def register_sampler(self, register):  # missing "s": not a hook
        register(FirstOnly())


class DuplicatePlugin:
    @hookimpl
    def register_samplers(self, register):
        from simsample.plugins.samplers.random import RandomSampler

        register(RandomSampler())


def test_registered_object_is_usable(fresh_host, tmp_path):
    fresh_host.load()
    fresh_host.add_plugin(GoodPlugin(), "good")
    assert "first-only" in fresh_host.samplers()
    assert fresh_host.infos["good"].registers["samplers"] == ["first-only"]
    assert fresh_host.infos["good"].error is None


def test_failing_plugin_is_recorded_not_fatal(fresh_host):
    fresh_host.load()
    fresh_host.add_plugin(RaisingPlugin(), "raising")
    assert "cannot register" in fresh_host.infos["raising"].error
    assert "random" in fresh_host.samplers()  # the others still work


def test_misspelled_hook_is_an_error(fresh_host):
    fresh_host.load()
    fresh_host.add_plugin(MisspelledPlugin(), "misspelled")
    err = fresh_host.infos["misspelled"].error
    assert err is not None and "register_sampler" in err
    assert "first-only" not in fresh_host.samplers()


def test_duplicate_sampler_name_is_an_error(fresh_host):
    fresh_host.load()
    fresh_host.add_plugin(DuplicatePlugin(), "dup")
    assert "already registered" in fresh_host.infos["dup"].error


def test_disable_plugins_env(monkeypatch):
    monkeypatch.setenv("SIMSAMPLE_DISABLE_PLUGINS", "random, explicit")
    host = PluginHost(load_entrypoints=False)
    assert "random" not in host.samplers()
    assert "explicit" not in host.samplers()
    assert "random" not in host.infos


def test_builtins_are_the_public_plugin_modules():
    mods = builtin_plugins()
    assert "simsample.plugins.samplers.random" in mods
    assert all(not m.rsplit(".", 1)[1].startswith("_") for m in mods)


def test_every_hookspec_is_documented():
    specs = [f for n, f in inspect.getmembers(hookspecs, inspect.isfunction) if n.startswith("register_")]
    assert {f.__name__ for f in specs} == {
        "register_samplers",
        "register_readers",
        "register_adapters",
        "register_commands",
    }
    for f in specs:
        doc = inspect.getdoc(f) or ""
        assert len(doc.split()) >= 20, f"hookspec {f.__name__} needs a real docstring"
        assert f.__annotations__, f"hookspec {f.__name__} needs type hints"


def test_plugins_command_json(fresh_host, capsys):
    assert run(["plugins", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    names = {p["name"]: p for p in doc["plugins"]}
    assert names["random"]["registers"]["samplers"] == ["random"]
    assert names["random"]["distribution"] == "simsample"


@pytest.fixture(scope="module")
def fake_dist(tmp_path_factory):
    """The fake third-party distribution under tests/, installed into a folder of its own."""
    target = tmp_path_factory.mktemp("site")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--target",
            str(target),
            str(ROOT / "tests" / "fake_plugin"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        pytest.fail(f"could not install the fake plugin distribution: {proc.stderr[-2000:]}")
    return target


def _simsample(args, site, **env):
    e = dict(os.environ)
    e["PYTHONPATH"] = str(site) + os.pathsep + e.get("PYTHONPATH", "")
    e.update(env)
    return subprocess.run(
        [sys.executable, "-m", "simsample", *args], capture_output=True, text=True, env=e, check=False
    )


def test_entry_point_plugin_is_discovered(fake_dist):
    proc = _simsample(["plugins", "--json"], fake_dist)
    assert proc.returncode == 0, proc.stderr
    by_name = {p["name"]: p for p in json.loads(proc.stdout)["plugins"]}
    fake = by_name["fake"]
    assert fake["origin"] == "entrypoint"
    assert fake["distribution"] == "simsample-fake-plugin"
    assert fake["version"] == "0.0.1"
    assert fake["registers"]["samplers"] == ["fake-every-nth"]
    assert fake["registers"]["commands"] == ["fake-hello"]
    broken = by_name["fake_broken"]
    assert "broken on purpose" in broken["error"]
    # the plugin's command runs, and the broken plugin did not take the CLI down
    hello = _simsample(["fake-hello"], fake_dist)
    assert hello.returncode == 0 and "hello from simsample-fake-plugin" in hello.stdout


def test_entry_point_plugin_can_be_disabled(fake_dist):
    proc = _simsample(["plugins", "--json"], fake_dist, SIMSAMPLE_DISABLE_PLUGINS="fake,fake_broken")
    names = {p["name"] for p in json.loads(proc.stdout)["plugins"]}
    assert "fake" not in names and "fake_broken" not in names


def test_entry_point_sampler_plans(fake_dist, tmp_path):
    from simsample.workload import from_records

    wl = from_records(
        {"name": ["a", "b"] * 5, "grid_x": [1] * 10, "block_x": [32] * 10, "duration_ns": list(range(10, 20))}
    )
    wl.to_parquet(tmp_path / "w.parquet")
    proc = _simsample(
        [
            "plan",
            str(tmp_path / "w.parquet"),
            "--sampler",
            "fake-every-nth",
            "--param",
            "n=5",
            "-o",
            str(tmp_path / "p.json"),
        ],
        fake_dist,
    )
    assert proc.returncode == 0, proc.stderr
    plan = Plan.read(tmp_path / "p.json")
    assert plan.sampled_ids == [0, 5]
    assert plan.sampler["params"] == {"n": 5}


@pytest.fixture(scope="module")
def example_dist(tmp_path_factory):
    """The example plugin distribution (examples/plugin-example), installed from its own folder
    into a folder of its own, as a user installs a third party's plugin."""
    import shutil

    target = tmp_path_factory.mktemp("example-site")
    source = tmp_path_factory.mktemp("example-source") / "plugin-example"  # a build writes into its source folder
    shutil.copytree(
        ROOT / "examples" / "plugin-example",
        source,
        ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"),
    )
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target), str(source)],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        pytest.fail(f"could not install the example plugin distribution: {proc.stderr[-2000:]}")
    return target


def test_example_plugin_works_from_the_command_line(example_dist, tmp_path):
    """Installed, the example's sampler, reader and adapter are found through the entry point and
    take the same path as the built-in ones: plan, apply (the host's generic command, built from the
    adapter's declared options) and estimate, the ratio estimated as a ratio."""
    data = ROOT / "examples" / "plugin-example" / "tests" / "data"
    proc = _simsample(["plugins", "--json"], example_dist)
    assert proc.returncode == 0, proc.stderr
    example = {p["name"]: p for p in json.loads(proc.stdout)["plugins"]}["example"]
    assert (
        example["origin"] == "entrypoint"
        and example["distribution"] == "simsample-plugin-example"
        and example["error"] is None
    )
    assert example["registers"] == {"samplers": ["every-nth"], "readers": ["klog"], "adapters": ["listsim"]}
    plan = tmp_path / "plan.json"
    proc = _simsample(
        ["plan", str(data / "run.klog"), "--sampler", "every-nth", "--param", "n=4", "-o", str(plan)], example_dist
    )
    assert proc.returncode == 0, proc.stderr
    assert Plan.read(plan).sampler["name"] == "every-nth" and len(Plan.read(plan).samples) == 10
    out = tmp_path / "sampled"
    proc = _simsample(
        ["apply", "--sim", "listsim", "--plan", str(plan), "--traces", str(data / "run-traces"), "--out", str(out)],
        example_dist,
    )
    assert proc.returncode == 0, proc.stderr
    assert len([ln for ln in (out / "launches.txt").read_text().splitlines() if not ln.startswith("#")]) == 10
    proc = _simsample(
        ["estimate", "--sim", "listsim", "--plan", str(plan), str(data / "run-full.out"), "--json"], example_dist
    )
    assert proc.returncode == 0, proc.stderr
    by_metric = {e["metric"]: e for e in json.loads(proc.stdout)["estimates"]}
    assert set(by_metric) == {"cycles", "instructions", "ipc"}
    assert by_metric["ipc"]["estimate"] == pytest.approx(
        by_metric["instructions"]["estimate"] / by_metric["cycles"]["estimate"]
    )


def test_implementations_name_every_compiled_part(monkeypatch):
    """`simsample plugins` says, for each compiled module, whether it or its fallback runs."""
    from simsample.native import COMPILED_MODULES, implementations

    monkeypatch.delenv("SIMSAMPLE_PURE_PYTHON", raising=False)  # the pure-Python leg sets it
    got = implementations()
    assert list(got) == list(COMPILED_MODULES.values())
    assert all(v == "native (C++ extension)" or v.startswith("pure Python (not built: ") for v in got.values())
    monkeypatch.setenv("SIMSAMPLE_PURE_PYTHON", "1")
    assert set(implementations().values()) == {"pure Python (SIMSAMPLE_PURE_PYTHON is set)"}


def test_usable_cpus_follow_the_affinity_mask():
    from simsample.io.workers import usable_cpus

    want = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert usable_cpus() == want and 1 <= usable_cpus() <= (os.cpu_count() or 1)
