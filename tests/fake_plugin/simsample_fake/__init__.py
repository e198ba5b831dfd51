"""Test-only third-party plugin distribution for simsample."""
