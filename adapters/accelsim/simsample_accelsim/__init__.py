"""Accel-Sim adapter for simsample: trace folders in, sampled trace folders out, results back.

Public entry points: :func:`read_traces` (a folder as a workload, headers only),
:func:`compute_features` (one streaming pass over the bodies), :func:`apply_plan`,
:func:`collect_logs`, and :mod:`simsample_accelsim.synth` (a trace writer).
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

from simsample_accelsim.reader import read_traces  # noqa: E402

_LAZY = {
    "compute_features": "simsample_accelsim.features",
    "apply_plan": "simsample_accelsim.apply",
    "collect_logs": "simsample_accelsim.collect",
    "parse_log": "simsample_accelsim.collect",
}


def __getattr__(name: str) -> Any:  # imported on first use: the CLI loads only what a command needs
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'simsample_accelsim' has no attribute {name!r}")


__all__ = ["__version__", "apply_plan", "collect_logs", "compute_features", "parse_log", "read_traces"]
