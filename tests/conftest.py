"""Shared fixtures: the development data beside the project, and a fresh plugin host."""

from __future__ import annotations

from pathlib import Path

import pytest


from tests.helpers import SHARED_DATA


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
