"""simsample plugin: the HyFiSS application reader, the ``hyfiss`` adapter, and
``simsample hyfiss pick-sm``."""

from __future__ import annotations

from simsample.sdk import hookimpl


@hookimpl
def register_readers(register):
    from simsample_hyfiss.reader import HyFiSSReader

    register(HyFiSSReader())


@hookimpl
def register_adapters(register):
    from simsample_hyfiss.adapter import HyFiSSAdapter

    register(HyFiSSAdapter())


@hookimpl
def register_commands(cli):
    from simsample_hyfiss.commands import hyfiss_group

    cli.add_command(hyfiss_group)
