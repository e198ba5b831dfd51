"""The package layout: every module in a folder that names its role, no import cycle (imports
inside functions count: they run sooner or later, and a cycle among them is a tangle all the
same), and the layer contracts of ``[tool.importlinter]`` in pyproject.toml kept."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "simsample"
#: Modules that stay at the top of the package: the core, the public API, the SDK and the plugin host.
CORE = {
    "__init__",
    "__main__",
    "_version",
    "api",
    "arguments",
    "console",
    "errors",
    "hookspecs",
    "lazy_modules",
    "library",
    "manager",
    "native",
    "outcomes",
    "plan_checks",
    "plan_columns",
    "planfile",
    "plugin_base",
    "progress",
    "reading",
    "sdk",
    "testing",
    "workload",
}


#: the package and the simulator adapters' packages (their own distributions, under adapters/)
PACKAGES = [PACKAGE, *sorted(p for p in ROOT.glob("adapters/*/simsample_*") if (p / "__init__.py").is_file())]


def _modules() -> dict[str, Path]:
    mods: dict[str, Path] = {}
    for package in PACKAGES:
        for p in package.rglob("*.py"):
            if "__pycache__" in p.parts or "build" in p.relative_to(package.parent).parts:
                continue
            parts = p.relative_to(package.parent).with_suffix("").parts
            mods[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = p
    return mods


def _absolute(module: str, node: ast.ImportFrom, is_package: bool) -> str | None:
    """The absolute name an ``ImportFrom`` refers to (relative imports resolved)."""
    if node.level == 0:
        return node.module
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
    return ".".join([*base, *([node.module] if node.module else [])])


def module_imports() -> dict[str, set[str]]:
    """Each simsample module's imports of other simsample modules: every import statement in it,
    at module level, under ``TYPE_CHECKING`` and inside functions alike. ``from a import b`` is an
    edge to ``a.b`` when that is a module, else to ``a`` (the module that holds the name); as in
    grimp, importing ``a.b`` is not counted as importing the package ``a``."""
    mods = _modules()

    def resolve(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {m: set() for m in mods}
    for m, p in mods.items():
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [resolve(a.name) for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _absolute(m, node, p.name == "__init__.py")
                if not base:
                    continue
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else resolve(base) for a in node.names]
            else:
                continue
            graph[m].update(t for t in targets if t is not None and t != m)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(v: str) -> list[str] | None:
        state[v] = 1
        path.append(v)
        for w in sorted(graph.get(v, ())):
            if state.get(w) == 1:
                return path[path.index(w) :] + [w]
            if w not in state and (found := visit(w)):
                return found
        state[v] = 2
        path.pop()
        return None

    for v in sorted(graph):
        if v not in state and (found := visit(v)):
            return found
    return None


def test_no_import_cycles_counting_function_level_imports():
    graph = module_imports()
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_graph_sees_imports_inside_functions():
    graph = module_imports()
    assert "simsample_accelsim.adapter" in graph  # the adapters are checked too
    # library.read imports the loader inside the function, to keep 'import simsample' light
    assert "simsample.io.loading" in graph["simsample.library"]
    # and the command line module imports its commands inside build_cli
    assert "simsample.cli.commands" in graph["simsample.cli"]


def test_the_checker_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_plugin_base_and_planfile_do_not_import_each_other():
    graph = module_imports()
    assert "simsample.plugin_base" not in graph["simsample.planfile"]


def test_the_core_never_imports_the_command_line():
    graph = module_imports()
    cli = {m for m in graph if m == "simsample.cli" or m.startswith(("simsample.cli.", "simsample.report"))}
    core = [
        m
        for m in graph
        if m.startswith(
            (
                "simsample.sampling",
                "simsample.io",
                "simsample.planfile",
                "simsample.workload",
                "simsample.library",
                "simsample.adapter_support",
                "simsample.sdk",
                "simsample.plugin_base",
            )
        )
    ]
    for m in core:
        assert not graph[m] & cli, f"{m} imports the command line: {sorted(graph[m] & cli)}"


def _lint_imports() -> str | None:
    exe = Path(sys.executable).with_name("lint-imports")
    return str(exe) if exe.exists() else shutil.which("lint-imports")


def test_import_contracts_are_kept():
    """``lint-imports`` (import-linter, the test extra) checks the contracts of pyproject.toml."""
    pytest.importorskip("importlinter")
    exe = _lint_imports()
    if exe is None:
        pytest.skip("lint-imports not installed (pip install -e .[test])")
    done = subprocess.run([exe, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


def test_import_contracts_list_no_exceptions():
    """No contract ignores an import: a module that serves one plugin is that plugin's (a private
    package beside it), what plugins share comes from the SDK, and what the core needs from the
    plugin host (the installed readers) is passed in; an ``ignore_imports`` would hide a debt."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    section = re.split(r"^\[tool\.", text.split("\n[tool.importlinter]\n", 1)[1], maxsplit=1, flags=re.M)[0]
    assert "[[tool.importlinter.contracts]]" in section
    assert "ignore_imports" not in section, "pyproject.toml: an import contract ignores imports"


def test_only_the_core_sits_at_the_top():
    top = {p.stem for p in PACKAGE.glob("*.py")}
    assert top <= CORE, f"modules at the top of the package that belong in a folder: {sorted(top - CORE)}"
    loose = sorted(p.name for p in (PACKAGE / "plugins").glob("*.py") if p.name != "__init__.py")
    assert not loose, f"plugins outside readers/, samplers/, commands/: {loose}"


#: the folders pytest collects (``testpaths`` of pyproject.toml): the core's tests, then each adapter's
ADAPTERS = sorted(p.parent for p in ROOT.glob("adapters/*/pyproject.toml"))


def _test_modules(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("test_*.py") if "fixtures" not in p.relative_to(folder).parts)


def test_core_tests_are_grouped_by_area():
    """Every test module of the core is in a folder of tests/ named for its area (readers, samplers,
    cli, ...), a package (``__init__.py``) so that its module name is ``tests.<area>.<name>``;
    the top of tests/ holds only the shared helpers."""
    tests = ROOT / "tests"
    top = sorted(p.name for p in tests.glob("test_*.py"))
    assert not top, f"test modules at the top of tests/ (move them into the folder of their area): {top}"
    for module in _test_modules(tests):
        folder = module.parent
        assert folder.parent == tests, f"{module.relative_to(ROOT)}: one folder level under tests/"
        assert (folder / "__init__.py").is_file(), f"{folder.relative_to(ROOT)} has no __init__.py"


def test_adapter_tests_live_beside_their_adapter():
    """An adapter's tests are in adapters/<name>/tests (not in the core's tests/, nor in another
    adapter's folder), and pytest collects every such folder (``testpaths``)."""
    names = [a.name for a in ADAPTERS]
    assert names, "no adapters found under adapters/"
    misplaced = [
        str(m.relative_to(ROOT))
        for m in _test_modules(ROOT / "tests")
        if any(m.name.startswith(f"test_{name}_") for name in names)
    ]
    for adapter in ADAPTERS:
        modules = _test_modules(adapter / "tests")
        assert modules, f"adapters/{adapter.name} has no tests in adapters/{adapter.name}/tests"
        assert all(m.parent == adapter / "tests" for m in modules), f"adapters/{adapter.name}/tests: keep it flat"
        misplaced += [
            str(m.relative_to(ROOT))
            for m in modules
            if any(m.name.startswith(f"test_{other}_") for other in names if other != adapter.name)
        ]
    assert not misplaced, f"adapter tests outside their adapter's tests folder: {misplaced}"
    testpaths = re.search(r"^testpaths = \[(.*)\]$", (ROOT / "pyproject.toml").read_text(), re.M)
    assert testpaths, "pyproject.toml: [tool.pytest.ini_options] testpaths not found"
    collected = re.findall(r'"([^"]+)"', testpaths.group(1))
    expected = {"tests", *(f"adapters/{name}/tests" for name in names)}
    assert set(collected) == expected, f"testpaths {collected}: expected {sorted(expected)}"
