"""The package's version, in a module of its own: modules inside the package read it from here, so
that none of them imports the package's ``__init__`` (which re-exports the public API, and would
close an import cycle)."""

from __future__ import annotations

__version__ = "0.1.0"
