"""simsample plugin entry point: the Accel-Sim adapter, its trace-folder reader, and the
``simsample accelsim`` and ``simsample pkp`` command groups."""

from __future__ import annotations

from simsample.sdk import hookimpl


@hookimpl
def register_adapters(register):
    from simsample_accelsim.adapter import AccelSimAdapter

    register(AccelSimAdapter())


@hookimpl
def register_readers(register):
    from simsample_accelsim.reader import AccelSimReader

    register(AccelSimReader())


@hookimpl
def register_commands(cli):
    from simsample_accelsim.commands import accelsim_group
    from simsample_accelsim.pkp.commands import pkp_group

    cli.add_command(accelsim_group)
    cli.add_command(pkp_group)
