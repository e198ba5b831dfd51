"""How much to do at once: the cores a reader may use and whether it can start worker processes.

The readers spread large inputs over threads (compiled scanners, which release the GIL) or worker
processes (the Python paths); both ask here, so that a container's CPU limit or a program read
from standard input is handled the same way everywhere. Imports only the standard library, for
worker processes that start quickly.
"""

from __future__ import annotations

import os
import sys


def usable_cpus() -> int:
    """The cores this process may run on (its affinity mask where the system has one, which a
    container or ``taskset`` narrows below ``os.cpu_count()``): how many threads or workers the
    readers start."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def can_spawn() -> bool:
    """Whether worker processes can be started: a spawned child re-imports the main script, which
    fails for programs read from standard input (``python - < script``)."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    return path is None or os.path.exists(path)


__all__ = ["can_spawn", "usable_cpus"]
