"""Test helpers importable from any test module (``from tests.helpers import shared_path``)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"


def shared_path(*parts: str) -> Path:
    """A path under ../shared/data; the calling test is skipped when it is absent."""
    p = SHARED_DATA.joinpath(*parts)
    if not p.exists():
        pytest.skip(f"development data not available: {'/'.join(parts)}")
    return p


def kineto_traces() -> list[Path]:
    """Every Kineto trace of the development data (plain or compressed), sorted; empty when the
    data is absent (tests parametrized over it then skip through :func:`shared_path`)."""
    root = SHARED_DATA / "profiles" / "kineto"
    return sorted(root.rglob("*.json*")) if root.is_dir() else []
