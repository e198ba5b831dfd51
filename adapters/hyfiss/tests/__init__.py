"""The HyFiSS adapter's tests (``adapters.hyfiss.tests``, a namespace package from the repository root)."""
