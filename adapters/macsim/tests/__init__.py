"""The MacSim adapter's tests (``adapters.macsim.tests``, a namespace package from the repository root)."""
