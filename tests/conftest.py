"""Shared fixtures: the development data beside the project, and a fresh plugin host."""

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


@pytest.fixture
def shared_data() -> Path:
    """The ../shared/data folder (tests skip when it is absent)."""
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not available")
    return SHARED_DATA


@pytest.fixture
def fresh_host():
    """A plugin host of its own for the test, installed as the process-wide host."""
    from simsample.manager import PluginHost, set_host

    host = PluginHost()
    set_host(host)
    yield host
    set_host(None)
