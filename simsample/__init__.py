"""simsample: kernel sampling for GPU cycle-level simulation.

A profile or a simulator's trace folder becomes a :class:`~simsample.workload.Workload`; a
sampler turns it into a :class:`~simsample.plan.Plan`; an adapter rewrites the simulator's
inputs so that only the plan's launches run, and the estimator turns the simulator's per-launch
results back into whole-workload figures with a confidence interval.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]

__all__ += ["hookimpl"]


def __getattr__(name: str):
    """``simsample.hookimpl``, imported on first use: the console script imports this package
    first, and keeping that import light keeps the window in which Ctrl-C cannot yet be turned
    into one line as short as Python's own start-up."""
    if name == "hookimpl":
        from simsample.hookspecs import hookimpl

        return hookimpl
    raise AttributeError(f"module 'simsample' has no attribute {name!r}")
