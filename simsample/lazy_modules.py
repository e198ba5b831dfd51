"""Modules imported on first use, parents included.

``lazy_loader.load("scipy.sparse")`` defers the submodule but imports its parent package at once
(it has to, to find the submodule), so a plugin that names ``scipy.sparse`` at module level pays
for ``scipy`` whenever the plugins are listed. :func:`load` finds nothing until an attribute is
read: the listing commands (``simsample samplers``, ``plugins``, ``--help``) never do.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


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
