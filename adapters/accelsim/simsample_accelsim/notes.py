"""Warnings for the user: one line each on standard error, prefixed ``warning:``.

Readers and commands report what the simulator would silently do (ignored list lines, traces
read under their compressed name, plans applied by launch position) without stopping.
"""

from __future__ import annotations

import sys


def warn(message: str) -> None:
    """Print one warning line to standard error."""
    print(f"warning: {message}", file=sys.stderr, flush=True)
