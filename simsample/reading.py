"""Paths to workloads with the installed readers: the core's loaders over the plugin host.

The core (:mod:`simsample.io.loading`, :func:`simsample.sampling.evaluate.discover_profiles`)
knows no plugin host: it detects formats and dispatches to readers it is given. This module, in
the public API's layer, gives them the readers that are installed (built in and from other
distributions), so the public API, the command line and scripts read files the same way.
:func:`simsample.read` is the public function; these are its building blocks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from simsample.workload import Workload


def detect_format(path: Path) -> str:
    """Name of the first installed reader whose ``detect`` accepts ``path`` (content-based)."""
    from simsample.io import loading
    from simsample.manager import get_host

    return loading.detect_format(Path(path), get_host())


def load_workload(
    paths: Sequence[str | Path],
    *,
    format: str | None = None,
    options: Mapping[str, Any] | None = None,
    join: str | Path | None = None,
) -> Workload:
    """Read one profile (or several files of one run) with the installed readers; ``join``: a
    per-launch metrics file (Nsight Compute CSV) to attach to the launches."""
    from simsample.io import loading
    from simsample.manager import get_host

    return loading.load_workload(paths, host=get_host(), format=format, options=options, join=join)


def discover_profiles(
    paths: Sequence[str | Path], *, format: str | None = None, skipped: list[str] | None = None
) -> list[tuple[Path, bool]]:
    """``(path, found_in_folder)`` for each workload that the installed readers find under
    ``paths`` (see :func:`simsample.sampling.evaluate.discover_profiles`)."""
    from simsample.manager import get_host
    from simsample.sampling import evaluate

    return evaluate.discover_profiles(paths, host=get_host(), format=format, skipped=skipped)
