"""Shared fixtures: the development data beside the project, and a fresh plugin host."""

from __future__ import annotations

from pathlib import Path

import pytest


from tests.helpers import SHARED_DATA


@pytest.fixture(autouse=True, scope="session")
def _private_user_cache(tmp_path_factory):
    """The user cache (GCL graphs, Accel-Sim footprints) in a folder of the test session, not the
    home folder's; a test that sets ``SIMSAMPLE_CACHE`` itself still wins."""
    import os

    if "SIMSAMPLE_CACHE" in os.environ:
        yield
        return
    os.environ["SIMSAMPLE_CACHE"] = str(tmp_path_factory.mktemp("user-cache"))
    yield
    os.environ.pop("SIMSAMPLE_CACHE", None)


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
