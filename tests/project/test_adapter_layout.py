"""The simulator adapters share one layout (docs/explanation/layers.md, "One layout for every
adapter"): the same module names for the same roles, so that whoever knows one adapter finds
their way in the others, and the checks below hold every adapter under adapters/ to it."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the same parser under its old name
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parents[2]
ADAPTERS = sorted(p for p in (ROOT / "adapters").iterdir() if (p / "pyproject.toml").is_file())

#: every adapter's package holds these modules, each with its one role
ROLES = {
    "__init__.py": "the package (its version, lazily imported entry points)",
    "plugin.py": "the entry point: hook implementations only",
    "adapter.py": "the Adapter class: metric declarations, apply and collect options and methods",
    "reader.py": "the Reader plugin for the simulator's trace folders",
    "apply.py": "writing the sampled simulator inputs",
    "collect.py": "reading the simulator's results",
    "commands.py": "the click commands",
}
#: the hooks a plugin module may implement (simsample.hookspecs)
HOOKS = {"register_samplers", "register_readers", "register_adapters", "register_commands"}
#: files beside the package
BESIDE = ("pyproject.toml", "README.md")
CPP_SUFFIXES = {".cpp", ".cc", ".hpp", ".h"}


def _bases(cls: ast.ClassDef) -> set[str]:
    return {b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else "" for b in cls.bases}


def _defines_click_commands(tree: ast.Module) -> bool:
    """A decorator ``@click.command``/``@click.group`` or ``@<group>.command``/``.group``."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for dec in node.decorator_list:
                call = dec.func if isinstance(dec, ast.Call) else dec
                if isinstance(call, ast.Attribute) and call.attr in ("command", "group"):
                    return True
    return False


def _plugin_problems(path: Path) -> list[str]:
    problems = []
    tree = ast.parse(path.read_text())
    for i, node in enumerate(tree.body):
        if i == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # the docstring
        if isinstance(node, ast.ImportFrom) and node.module in ("__future__", "simsample.sdk"):
            continue
        if isinstance(node, ast.FunctionDef):
            hooked = any(
                (d.id if isinstance(d, ast.Name) else getattr(d, "attr", "")) == "hookimpl" for d in node.decorator_list
            )
            if node.name in HOOKS and hooked:
                continue
            problems.append(f"{path.name}: {node.name}() is not a hook implementation")
            continue
        what = type(node).__name__
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            what = f"module-level import of {ast.unparse(node)!r} (import inside the hook, on call)"
        elif isinstance(node, ast.ClassDef):
            what = f"class {node.name} (the adapter belongs in adapter.py, the reader in reader.py)"
        problems.append(f"{path.name}: {what}")
    return problems


def layout_problems(folder: Path) -> list[str]:
    """Every way the adapter in ``folder`` departs from the shared layout (empty: it follows it)."""
    name = folder.name
    package = f"simsample_{name}"
    pkg = folder / package
    problems = [f"missing {f}" for f in BESIDE if not (folder / f).is_file()]
    if not pkg.is_dir():
        return [*problems, f"missing the package folder {package}/"]
    problems += [f"missing {package}/{m} ({role})" for m, role in ROLES.items() if not (pkg / m).is_file()]
    tests = folder / "tests"
    if not any(tests.glob("test_*.py")):
        problems.append("missing tests/ beside the package (test_*.py files)")

    project = tomllib.loads((folder / "pyproject.toml").read_text())
    entry = project.get("project", {}).get("entry-points", {}).get("simsample", {})
    if entry != {name: f"{package}.plugin"}:
        problems.append(
            f"pyproject.toml: the simsample entry point must be {{{name!r}: '{package}.plugin'}}, not {entry}"
        )

    # compiled parts: C++ under cpp/, built by scikit-build-core with the no-compiler fallback
    cpp_files = [p for p in folder.rglob("*") if p.suffix in CPP_SUFFIXES and ".egg-info" not in str(p)]
    outside = [str(p.relative_to(folder)) for p in cpp_files if p.relative_to(folder).parts[0] != "cpp"]
    problems += [f"C++ source outside cpp/: {p}" for p in outside]
    backend = project.get("build-system", {}).get("build-backend", "")
    if (folder / "cpp").is_dir():
        if not (folder / "CMakeLists.txt").is_file():
            problems.append("cpp/ without a CMakeLists.txt beside pyproject.toml")
        if backend != "scikit_build_core.build":
            problems.append(f"cpp/ needs the scikit_build_core.build backend, not {backend!r}")
        overrides = project.get("tool", {}).get("scikit-build", {}).get("overrides", [])
        fallback = [o for o in overrides if o.get("if", {}).get("failed") and o.get("wheel", {}).get("cmake") is False]
        if not fallback:
            problems.append(
                "pyproject.toml: no pure-Python fallback ([[tool.scikit-build.overrides]] if.failed -> wheel.cmake = "
                "false)"
            )
    elif (folder / "CMakeLists.txt").is_file():
        problems.append("CMakeLists.txt without cpp/")

    # each role in its module
    adapters, readers = [], []
    for path in sorted(pkg.rglob("*.py")):
        rel = path.relative_to(pkg).as_posix()
        tree = ast.parse(path.read_text())
        classes = [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
        adapters += [(rel, c.name) for c in classes if "Adapter" in _bases(c)]
        readers += [(rel, c.name) for c in classes if "Reader" in _bases(c)]
        if _defines_click_commands(tree) and path.name != "commands.py":
            problems.append(f"{rel}: click commands outside a commands.py module")
    if [rel for rel, _ in adapters] != ["adapter.py"]:
        problems.append(f"one Adapter subclass, in adapter.py; found {adapters or 'none'}")
    if [rel for rel, _ in readers] != ["reader.py"]:
        problems.append(f"one Reader subclass, in reader.py; found {readers or 'none'}")
    if (pkg / "plugin.py").is_file():
        problems += _plugin_problems(pkg / "plugin.py")
    return problems


def test_there_are_three_adapters():
    assert [a.name for a in ADAPTERS] == ["accelsim", "hyfiss", "macsim"]


@pytest.mark.parametrize("folder", ADAPTERS, ids=[a.name for a in ADAPTERS])
def test_adapter_follows_the_shared_layout(folder):
    assert layout_problems(folder) == []


def test_the_layout_check_finds_departures(tmp_path):
    """A copy of the MacSim adapter broken in each way the check knows: every break is reported."""
    src = ROOT / "adapters" / "macsim"
    bad = tmp_path / "macsim"
    shutil.copytree(src, bad, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "tests"))
    assert layout_problems(bad) == ["missing tests/ beside the package (test_*.py files)"]
    pkg = bad / "simsample_macsim"
    # the adapter class back in plugin.py, commands in collect.py, no reader module, C++ loose in the package
    (pkg / "plugin.py").write_text((pkg / "plugin.py").read_text() + "\n" + (pkg / "adapter.py").read_text())
    (pkg / "adapter.py").unlink()
    (pkg / "collect.py").write_text((pkg / "collect.py").read_text() + "\n\n@click.command('x')\ndef x():\n    pass\n")
    (pkg / "reader.py").unlink()
    (pkg / "fast.cpp").write_text("int main() { return 0; }\n")
    (bad / "cpp").mkdir()
    found = "\n".join(layout_problems(bad))
    for expected in (
        "missing simsample_macsim/adapter.py",
        "missing simsample_macsim/reader.py",
        "plugin.py: class MacSimAdapter",
        "plugin.py: module-level import",
        "collect.py: click commands outside a commands.py module",
        "one Reader subclass, in reader.py; found none",
        "C++ source outside cpp/: simsample_macsim/fast.cpp",
        "cpp/ without a CMakeLists.txt",
        "cpp/ needs the scikit_build_core.build backend",
        "no pure-Python fallback",
    ):
        assert expected in found, (expected, found)
