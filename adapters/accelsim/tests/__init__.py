"""The Accel-Sim adapter's tests (``adapters.accelsim.tests``, a namespace package from the repository root)."""
