"""simsample adapter for MacSim (GPU traces from MacSim's NVBit tracer).

The plugin registers a reader for MacSim trace folders (``kernel_config.txt`` with one
``KernelN`` folder per launch) and the ``macsim`` adapter: ``apply`` writes a folder that runs
only the sampled kernels (and the tracer's ``SAMPLED_KERNEL_INFO`` file, to trace only those in
the first place), ``collect`` turns MacSim's stdout into per-kernel cycles and instructions, and
``estimate`` gives the whole-workload estimate.
"""

from __future__ import annotations

__version__ = "0.1.0"
