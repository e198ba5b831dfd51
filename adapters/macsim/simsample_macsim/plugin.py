"""simsample plugin: the MacSim trace-folder reader and the ``macsim`` adapter."""

from __future__ import annotations

from simsample.sdk import hookimpl


@hookimpl
def register_readers(register):
    from simsample_macsim.reader import MacSimReader

    register(MacSimReader())


@hookimpl
def register_adapters(register):
    from simsample_macsim.adapter import MacSimAdapter

    register(MacSimAdapter())
