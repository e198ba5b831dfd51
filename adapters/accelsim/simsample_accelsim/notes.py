"""Warnings for the user: one line each on standard error, prefixed ``warning:``.

Readers and commands report what the simulator would silently do (ignored list lines, traces
read under their compressed name) without stopping. Notes shared by every adapter (a plan
applied by launch position) come from :func:`simsample.adapter_support.note`.
"""

from __future__ import annotations

import sys


def warn(message: str) -> None:
    """Print one warning line to standard error."""
    print(f"warning: {message}", file=sys.stderr, flush=True)
