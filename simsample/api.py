"""Deprecated alias of :mod:`simsample.plugin_base` (the plugin base classes), kept for one release.

This module never held the public API (that is :mod:`simsample.library`, re-exported as
``simsample.read``, ``simsample.plan``, ...); its name said otherwise, so its contents moved.
Plugins import the base classes from :mod:`simsample.sdk`.
"""

from __future__ import annotations

import warnings

from simsample.plugin_base import *  # noqa: F403
from simsample.plugin_base import Adapter, Param, Reader, Sampler  # noqa: F401

warnings.warn(
    "simsample.api is deprecated and will be removed in the next release; import the plugin base classes from "
    "simsample.sdk",
    DeprecationWarning,
    stacklevel=2,
)
