"""Principal Kernel Projection (PKP): end a long kernel's simulation once its IPC is stable.

The monitor knows nothing of a particular simulator: it sees a kernel's cycles, instructions and
completed CTAs every period, so any simulator with a hook can use it (Accel-Sim's patch does;
the Accel-Sim adapter's ``simsample pkp`` commands replay its logs through it, with the generic
replay of :mod:`simsample.pkp.replay`).

The monitor exists twice with identical behaviour: the C++ header ``cpp/pkp_hook/pkp_monitor.hpp``
(compiled into ``simsample._pkp`` with pybind11, and included by the Accel-Sim patch) and the
pure-Python twin :mod:`simsample.pkp.monitor`. This module picks the compiled one when it can be
imported, like msgpack does, and the twin otherwise or when ``SIMSAMPLE_PURE_PYTHON=1``.

Rules (PKA, MICRO'21, section 3.2, and where the public artifact differs):

* a sample every ``period`` cycles of the cumulative in-kernel IPC (instructions / cycles);
* stable once the last ``window / period`` samples have a coefficient of variation
  (100 * sample std / mean) below ``threshold`` percent; stability is latched;
* stop at the first sample, at or after stability, where the completed CTAs make one wave
  (max resident CTAs per SM x SMs); grids smaller than one wave need no wave (``paper``) or
  ``small_grid_fraction`` of the grid (``artifact``); at least one CTA must have completed;
* ``settle`` S (0 = off): stable also needs the cumulative IPC samples of the last S of the
  run so far (after the launch latency) to have a CoV below the threshold; a kernel whose IPC
  holds for one short window but keeps drifting over its run is not stopped (a fixed history
  of 128 samples, thinned by half whenever it fills, covers the whole run);
* ``min_remaining`` (0 = off): a stop also needs that share of the grid still to be issued,
  counting one wave as resident (a late stop saves little and cannot see the kernel's tail);
* projected total = value at the stop x total CTAs / completed CTAs (``paper``) or
  / (completed + 1) (``artifact``), for cycles and instructions alike;
* ``launch_latency`` L > 0 keeps the simulator's fixed launch latency apart: no sample before
  cycle L, IPC = instructions / (cycle - L), projected cycles = L + (cycle - L) x total /
  completed (L = 0 is the paper's formula);
* ``instructions`` projection, when the kernel's instructions are known ahead (``total_insns``,
  counted from its trace: ``simsample pkp totals``): projected cycles = L + (cycle - L) x
  total_insns / instructions so far, projected instructions = total_insns. With CTAs running in
  synchronised waves the completed count moves in steps and the CTA projection depends on where
  in a wave the stop falls; instructions grow smoothly. Without a total it projects by CTAs.
* ``drain_tail`` (applied by ``finish()`` once the stopped kernel has ended): after a stop the
  simulator lets the resident CTAs run out, which is what the kernel's own last CTAs do at its
  real end, alone and at a lower IPC that no sample before the stop sees. The drain is that
  tail measured: the final projection scales only the rest (the total less what the drain
  ran, in instructions or CTAs) at the stop's rate and adds the drain's cycles as they were.

Choices where neither source is explicit: the standard deviation is the sample one (n - 1, as
the artifact's pandas ``rolling().std()``); stability is latched, so the stop is the later of
the first stable sample and the first sample with a full wave (the artifact's rule); completed
CTAs are counted up to and including the current sample (the artifact lags one interval);
at least one completed CTA is required so that the projection is defined.
"""

from __future__ import annotations

from typing import Any

from simsample.native import import_optional
from simsample.pkp import monitor as _twin

_native: Any
_REASON: str | None
_native, _REASON = import_optional("_pkp", unavailable="C++ extension not available")

if _native is not None:
    Monitor: Any = _native.Monitor
    round_projection: Any = _native.round_projection
    IMPLEMENTATION = "native"
else:
    Monitor = _twin.Monitor
    round_projection = _twin.round_projection
    IMPLEMENTATION = "python"

PythonMonitor = _twin.Monitor
WAVE_RULES = _twin.WAVE_RULES
PROJECTIONS = _twin.PROJECTIONS


def implementation() -> str:
    """Which monitor is active, in words (shown by ``simsample plugins``)."""
    if IMPLEMENTATION == "native":
        return "native (C++ extension)"
    return f"pure Python ({_REASON})"


#: The name the SDK exports :func:`implementation` under (an adapter's ``simsample pkp`` says which monitor ran).
pkp_implementation = implementation


def native_module() -> Any:
    """The compiled module, or ``None`` when it is absent or disabled."""
    return _native


__all__ = [
    "IMPLEMENTATION",
    "Monitor",
    "PROJECTIONS",
    "PythonMonitor",
    "WAVE_RULES",
    "implementation",
    "native_module",
    "pkp_implementation",
    "round_projection",
]
