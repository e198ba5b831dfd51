"""Modules imported on first use, parents included.

``lazy_loader.load("scipy.sparse")`` defers the submodule but imports its parent package at once
(it has to, to find the submodule), so a plugin that names ``scipy.sparse`` at module level pays
for ``scipy`` whenever the plugins are listed. :func:`load` finds nothing until an attribute is
read: the listing commands (``simsample samplers``, ``plugins``, ``--help``) never do.

:func:`import_beside` does the opposite for a reader about to run a compiled scan: it starts the
import of a library the scan's results need on another thread, so that the two overlap.
"""

from __future__ import annotations

import importlib
import sys
import threading
import types
from collections.abc import Callable
from types import ModuleType
from typing import Any

from simsample.io.workers import usable_cpus


class LazyModule:
    """Stands for module ``name``; the first attribute read imports it."""

    __slots__ = ("_module", "_name")

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attr: str) -> Any:
        if self._module is None:
            self._module = importlib.import_module(self._name)
        return getattr(self._module, attr)

    def __repr__(self) -> str:
        return f"<module {self._name!r} ({'loaded' if self._module is not None else 'not loaded yet'})>"


def load(name: str) -> Any:
    """A stand-in for module ``name`` that imports it (and its parents) on first use."""
    return LazyModule(name)


#: The name in :mod:`simsample.sdk` (provisional), for plugins that name an optional module at their top.
lazy_module = load


_beside_lock = threading.Lock()
_beside: dict[str, threading.Thread] = {}


def _imported(name: str) -> bool:
    """Whether ``name`` is a module whose import has finished (a lazily loaded stand-in in
    ``sys.modules`` is not; ``type()`` does not trigger its import, an attribute would)."""
    module = sys.modules.get(name)
    if module is None or type(module) is not types.ModuleType:
        return False
    spec = module.__spec__
    return not (spec is not None and getattr(spec, "_initializing", False))


def _load(name: str) -> None:
    try:
        importlib.import_module(name).__dict__  # noqa: B018 (a lazily loaded module's first attribute imports it)
    except Exception:
        pass  # the caller's own use of the module raises the error, in its thread


def import_beside(name: str) -> Callable[[], None]:
    """Start importing module ``name`` on another thread, for a caller about to run compiled code
    that releases the GIL (a file scan) and that needs the module only once it is done: the
    import's Python (pandas with pyarrow: about 0.15 s) then runs beside the scan on a second core
    instead of after it. Returns ``wait``, which the caller calls before it touches the module:
    a module loaded lazily (``lazy_loader``) must not be used from two threads while its import
    runs. Nothing is started where the module is already imported or one core is usable; the
    import starts once per process, and ``wait`` returns at once where there is nothing to wait
    for."""
    with _beside_lock:
        thread = _beside.get(name)
        if thread is None:
            if _imported(name) or usable_cpus() < 2:
                return _nothing
            thread = threading.Thread(target=_load, args=(name,), name=f"simsample-import-{name}", daemon=True)
            _beside[name] = thread
            thread.start()
    return thread.join


def _nothing() -> None:
    return None
