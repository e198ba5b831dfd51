"""Principal Kernel Projection on Accel-Sim: the ``simsample pkp`` commands and what they read.

The monitor itself is the core's (:mod:`simsample.pkp`; its C++ header is what the simulator
patch embeds) and so is the replay of a kernel's samples through it; here are Accel-Sim's side:
its visualizer log and stdout (:mod:`.visualizer`), a whole run's replay (:mod:`.replay`) and
the ``simsample pkp replay|totals`` commands (:mod:`.commands`, registered by the adapter's
plugin).
"""
