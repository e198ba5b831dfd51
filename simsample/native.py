"""Optional compiled modules: import one if it can be used, else say why not.

The C++ parts of simsample (listed in :data:`COMPILED_MODULES`) and of its adapters each have a
Python fallback: a source install without a compiler has no compiled module, and
``SIMSAMPLE_PURE_PYTHON=1`` (any value but empty or ``0``) turns them all off, for tests and for
comparing the two. Every user of a compiled module, in the core or in an adapter's distribution
(through the SDK's ``import_optional``), chooses the same way, so that the switch means the same
thing everywhere; :func:`implementations` says which are active (``simsample plugins``, with the
compiled parts that the installed adapters declare in ``Adapter.compiled_parts``).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from types import ModuleType

#: The environment variable that disables every compiled module.
PURE_PYTHON_VARIABLE = "SIMSAMPLE_PURE_PYTHON"

#: Each compiled module (``simsample.<name>``) and what it does, as ``simsample plugins`` shows it.
COMPILED_MODULES: dict[str, str] = {
    "_pkp": "pkp monitor",
    "_sqlite_scan": "nsys sqlite column reader",
    "_csv_columns": "csv column scanner",
    "_kineto_events": "kineto event scanner",
}


def pure_python_requested() -> bool:
    """Whether ``SIMSAMPLE_PURE_PYTHON`` asks for the Python fallbacks (read at each call)."""
    return os.environ.get(PURE_PYTHON_VARIABLE, "").strip() not in ("", "0")


def import_optional(name: str, *, unavailable: str) -> tuple[ModuleType | None, str | None]:
    """The compiled module and ``None``, or ``None`` and why it cannot be used.

    ``name`` is a module of the core without its package (``_pkp``: ``simsample._pkp``) or a
    dotted name (``simsample_accelsim._trace_scan``: an adapter's own compiled module).
    ``unavailable`` starts the reason given when the import fails (the import error follows it
    after a colon); a disabled module's reason is that ``SIMSAMPLE_PURE_PYTHON`` is set.
    """
    if pure_python_requested():
        return None, f"{PURE_PYTHON_VARIABLE} is set"
    try:
        return importlib.import_module(name if "." in name else f"simsample.{name}"), None
    except ImportError as exc:  # no compiler at install time, or a broken build
        return None, f"{unavailable}: {exc}"


def implementations(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """Each compiled part, by what it does: ``native (C++ extension)`` or ``pure Python (why)``.

    ``extra``: more compiled parts (dotted module name -> what it does), as the installed
    adapters declare theirs; listed after the core's."""
    out: dict[str, str] = {}
    for name, label in {**COMPILED_MODULES, **(extra or {})}.items():
        module, reason = import_optional(name, unavailable="not built")
        out[label] = "native (C++ extension)" if module is not None else f"pure Python ({reason})"
    return out


__all__ = ["COMPILED_MODULES", "PURE_PYTHON_VARIABLE", "implementations", "import_optional", "pure_python_requested"]
