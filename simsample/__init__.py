"""simsample: kernel sampling for GPU cycle-level simulation.

A profile or a simulator's trace folder becomes a :class:`~simsample.workload.Workload`; a
sampler turns it into a :class:`~simsample.planfile.Plan`; an adapter rewrites the simulator's
inputs so that only the plan's launches run, and the estimator turns the simulator's per-launch
results back into whole-workload figures with a confidence interval.
"""

from __future__ import annotations

from simsample._version import __version__

__all__ = ["__version__", "hookimpl"]

#: The public API (see :mod:`simsample.library`): names re-exported here, imported on first use.
_LIBRARY = (
    "read",
    "find_workloads",
    "find_plan",
    "plan",
    "apply",
    "collect",
    "estimate",
    "evaluate",
    "resolve_params",
    "get_sampler",
    "get_adapter",
    "Estimate",
    "Evaluation",
    "DEFAULT_SAMPLER",
)
_TYPES = {"Workload": "simsample.workload", "Plan": "simsample.planfile", "UserError": "simsample.errors"}
__all__ += [*_LIBRARY, *_TYPES]


def __getattr__(name: str):
    """The public API and ``simsample.hookimpl``, imported on first use: the console script
    imports this package first, and keeping that import light keeps ``simsample --version`` fast
    and the window in which Ctrl-C cannot yet be turned into one line as short as Python's own
    start-up."""
    import importlib

    if name == "hookimpl":
        from simsample.hookspecs import hookimpl

        return hookimpl
    if name in _LIBRARY:
        return getattr(importlib.import_module("simsample.library"), name)
    if name in _TYPES:
        return getattr(importlib.import_module(_TYPES[name]), name)
    raise AttributeError(f"module 'simsample' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
