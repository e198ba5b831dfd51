"""simsample adapter for HyFiSS (hybrid-fidelity, stall-aware GPU simulator, MICRO'24).

The plugin registers a reader for HyFiSS application folders (``configs/app.config`` beside
``sass_traces/`` and ``memory_traces/``), the ``hyfiss`` adapter (``apply`` renders a script that
simulates each sampled kernel once, ``collect`` reads ``outputs/kernel-K-summary.txt``), and
``simsample hyfiss pick-sm``, HyFiSS's own choice of the SM to simulate within a kernel.
"""

from __future__ import annotations

__version__ = "0.1.0"
