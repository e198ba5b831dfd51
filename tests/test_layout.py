"""The package layout: every module in a folder that names its role, and no import cycles."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "simsample"
#: Modules that stay at the top of the package: the core.
CORE = {"__init__", "__main__", "api", "console", "errors", "hookspecs", "library", "manager", "native", "planfile", "plugin_base", "progress", "sdk", "workload"}


def module_imports() -> dict[str, set[str]]:
    """Each simsample module's imports of other simsample modules, at module level (the
    ``TYPE_CHECKING`` blocks included; imports inside functions are deferred, so they cannot
    form an import-time cycle)."""
    mods: dict[str, Path] = {}
    for p in PACKAGE.rglob("*.py"):
        parts = p.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        mods[name] = p

    def top(body):
        for n in body:
            yield n
            if isinstance(n, (ast.If, ast.Try)):
                yield from top(n.body)
                yield from top(n.orelse)
                for h in getattr(n, "handlers", []):
                    yield from top(h.body)

    graph: dict[str, set[str]] = {m: set() for m in mods}
    for m, p in mods.items():
        for node in top(ast.parse(p.read_text()).body):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            else:
                continue
            graph[m].update(t for t in targets if t in mods and t != m)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(v: str) -> list[str] | None:
        state[v] = 1
        path.append(v)
        for w in sorted(graph[v]):
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


def test_no_import_cycles():
    assert find_cycle(module_imports()) is None


def test_the_checker_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]


def test_api_and_plan_do_not_import_each_other():
    graph = module_imports()
    assert "simsample.plugin_base" not in graph["simsample.planfile"]


def test_only_the_core_sits_at_the_top():
    top = {p.stem for p in PACKAGE.glob("*.py")}
    assert top <= CORE, f"modules at the top of the package that belong in a folder: {sorted(top - CORE)}"
    loose = sorted(p.name for p in (PACKAGE / "plugins").glob("*.py") if p.name != "__init__.py")
    assert not loose, f"plugins outside readers/, samplers/, commands/: {loose}"
